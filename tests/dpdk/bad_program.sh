#!/bin/bash
# Programs and maps xlb must not run or program:
#  - xlb-dpdk given an object xlb's verifier rejects (JIT and interpreter):
#    it says so and exits before any lcore starts (no "running", no lcore
#    counters created, its EAL files gone);
#  - xlbd's userspace backend over a valid xlb-dpdk's maps: --verify
#    enforce refuses the rejected object, warn starts and says it;
#  - xlbd over maps of another layout (xlb_vips with other values): refused.
# Usage: bad_program.sh XLB_DPDK XLBD REJECTED_OBJ BALANCER_OBJ MAP_POKE
set -u
dpdk=$1 xlbd=$2 rejected=$3 balancer=$4 poke=$5
[ "$(id -u)" = 0 ] || { echo "SKIP: DPDK's EAL needs root here"; exit 77; }
tmp=$(mktemp -d /tmp/xlbt-dp-bad.XXXXXX)
prefix=xlbtbad$$
trap 'rm -rf "$tmp" /var/run/dpdk/$prefix' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# one lcore on every CPU we may use: not pinned (the EAL would pin -l 0 to CPU 0)
cpus=$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0)))))')
run_dpdk() { # OBJ RUN_DIR ENGINE [DURATION]
	timeout 60 "$dpdk" --no-huge -m 128 --no-pci --file-prefix=$prefix --lcores="0@($cpus)" --no-telemetry \
		--vdev=net_ring0 -- --obj "$1" --run-dir "$2" --engine "$3" --mbufs 1023 \
		${4:+--duration $4}
}

for engine in jit interp; do
	run_dpdk "$rejected" "$tmp/bad-$engine" $engine 2 > "$tmp/log" 2>&1
	rc=$?
	sed -n '/xlb-dpdk/p' "$tmp/log" | head -3
	[ $rc -ne 0 ] || fail "xlb-dpdk ran a rejected program ($engine)"
	grep -q "xlb's verifier rejects xlb_unchecked" "$tmp/log" || fail "no verifier message ($engine)"
	grep -q "invalid access to packet" "$tmp/log" || fail "no verifier log ($engine)"
	grep -q "xlb-dpdk: running" "$tmp/log" && fail "lcores started ($engine)"
	[ -e "$tmp/bad-$engine/maps/xlb_dpdk_lcore_stats" ] && fail "lcore counters created ($engine)"
	[ -e /var/run/dpdk/$prefix ] && fail "EAL files left ($engine)"
done

# a valid dataplane's maps, then xlbd with the rejected object over them
run_dpdk "$balancer" "$tmp/ok" jit 1 > "$tmp/log" 2>&1 || { cat "$tmp/log"; fail "xlb-dpdk on the balancer"; }
xlbd_run() { # extra args...
	timeout 20 "$xlbd" --backend userspace --dpdk-run-dir "$tmp/ok" --dpdk-wait 1 \
		-s "$tmp/s.sock" -d "$tmp/state" -m 0 "$@" > "$tmp/xlbd.log" 2>&1
}
xlbd_run -o "$rejected" --verify enforce
rc=$?
cat "$tmp/xlbd.log"
[ $rc -ne 0 ] || fail "xlbd drove a dataplane for a rejected object"
grep -q "xlb's verifier rejects $rejected" "$tmp/xlbd.log" || fail "no verifier message from xlbd"
[ -e "$tmp/s.sock" ] && fail "socket left behind"
# warn: starts, says so (stopped by timeout's SIGTERM)
timeout -s TERM 3 "$xlbd" --backend userspace --dpdk-run-dir "$tmp/ok" -s "$tmp/s.sock" \
	-d "$tmp/state" -m 0 -o "$rejected" --verify warn > "$tmp/xlbd.log" 2>&1
grep -q "xlb-dpdk will refuse to run it" "$tmp/xlbd.log" || { cat "$tmp/xlbd.log"; fail "warn policy"; }
grep -q "ready" "$tmp/xlbd.log" || fail "warn policy did not start"

"$poke" --mislay "$tmp/ok/maps" || fail "cannot mislay xlb_vips"
xlbd_run -o "$balancer"
rc=$?
cat "$tmp/xlbd.log"
[ $rc -ne 0 ] || fail "xlbd programmed maps of another layout"
grep -q "xlb_vips is a hash map of 20-byte keys and 20-byte values" "$tmp/xlbd.log" ||
	fail "no layout message"
echo PASS
