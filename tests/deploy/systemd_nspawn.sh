#!/bin/bash
# xlbd under a real systemd: a Debian 12 root (debootstrap from the package
# mirror, cached in /var/cache/xlb-test/) booted with systemd-nspawn, the
# package installed inside, then:
#  - Type=notify: the unit is active only once xlbd serves (READY=1), with
#    its status text;
#  - systemctl reload: a live setting changes, same main pid;
#  - the watchdog: a stalled xlbd (SIGSTOP) is killed and restarted by
#    systemd, and the restarted one adopts the running dataplane;
#  - journald: a change carries XLB_AUDIT/XLB_UID/XLB_PID/XLB_CHANGE fields;
#  - systemd-analyze security: exposure <= 3.1.
# Usage: systemd_nspawn.sh SOURCE_ROOT BUILD_DIR
set -u
src=$1 out=$2
fail() { echo "FAIL: $*"; [ -n "${leader:-}" ] && in_ct journalctl -u xlbd --no-pager | tail -30; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root"
command -v systemd-nspawn >/dev/null || skip "systemd-nspawn missing (systemd-container)"
command -v debootstrap >/dev/null || skip "debootstrap missing"
cache=/var/cache/xlb-test
base=$cache/bookworm-root
tag=xlbn$$
tmp=$(mktemp -d /tmp/xlbt-nspawn.XXXXXX)
in_ct() { nsenter -t "$leader" -a "$@"; }
cleanup() {
	if [ -n "${leader:-}" ]; then
		in_ct systemctl poweroff >/dev/null 2>&1
		for _ in $(seq 50); do kill -0 "$nspawn" 2>/dev/null || break; sleep 0.2; done
		kill "$nspawn" 2>/dev/null
	fi
	ip link del ${tag}a 2>/dev/null
	mountpoint -q "$tmp/bpf" && umount "$tmp/bpf"
	rm -rf "$tmp"
}
trap cleanup EXIT

# 1. The root, built once and kept (a few minutes the first time).
if [ ! -x "$base/usr/bin/systemctl" ]; then
	mkdir -p "$cache"
	rm -rf "$base.new"
	debootstrap --variant=minbase \
		--include=systemd,systemd-sysv,dbus,iproute2,procps,libbpf1,libxdp1,libsqlite3-0,libmicrohttpd12,libjansson4,libyaml-0-2,libsystemd0 \
		bookworm "$base.new" http://deb.debian.org/debian > "$tmp/debootstrap.log" 2>&1 ||
		{ tail -20 "$tmp/debootstrap.log"; fail "debootstrap"; }
	mv "$base.new" "$base"
fi
deb=$("$src/scripts/build-deb.sh" "$out") || fail "build the package"
mkdir -p "$tmp/deb" && cp "$deb" "$tmp/deb/xlb.deb"

# 2. An interface to attach to, a lasting bpffs for the pins, and the boot.
ip link add ${tag}a type veth peer name ${tag}b || fail "veth"
ip link set ${tag}a up && ip link set ${tag}b up
mkdir -p "$tmp/bpf" && mount -t bpf bpf "$tmp/bpf" || fail "bpffs"
systemd-nspawn -q --register=no --keep-unit --ephemeral -D "$base" -b --console=pipe \
	--capability=CAP_BPF,CAP_PERFMON,CAP_NET_ADMIN --system-call-filter="bpf perf_event_open" \
	--bind="$tmp/bpf:/sys/fs/bpf" \
	--bind-ro="$tmp/deb:/mnt/deb" > "$tmp/console.log" 2>&1 < /dev/null &
nspawn=$!
for _ in $(seq 100); do
	leader=$(cat /proc/$nspawn/task/$nspawn/children 2>/dev/null | awk '{print $1}')
	[ -n "$leader" ] && [ "$(cat /proc/$leader/comm 2>/dev/null)" = systemd ] &&
		in_ct systemctl is-system-running --wait >/dev/null 2>&1 && break
	leader=
	sleep 0.3
done
[ -n "$leader" ] || { cat "$tmp/console.log"; fail "the container did not boot"; }
echo "container booted: $(in_ct systemctl is-system-running)"

# 3. The package inside (its dependencies from the mirror), configured.
in_ct sh -c 'apt-get install -y --allow-downgrades /mnt/deb/xlb.deb > /var/tmp/apt.log 2>&1 ||
	{ apt-get update > /dev/null 2>&1 && apt-get install -y --allow-downgrades /mnt/deb/xlb.deb > /var/tmp/apt.log 2>&1; }' ||
	{ in_ct tail -20 /var/tmp/apt.log; fail "install in the container"; }
in_ct systemctl is-enabled xlbd >/dev/null 2>&1 && fail "an unconfigured package enabled xlbd"
in_ct mkdir -p /etc/systemd/system/xlbd.service.d
in_ct sh -c 'printf "[Service]\nWatchdogSec=3s\n" > /etc/systemd/system/xlbd.service.d/test.conf'
in_ct sh -c "cat > /etc/xlb/xlbd.yaml" <<YAML
interfaces: [${tag}a]
gateway_mac: "02:00:00:00:00:01"
src4: 10.255.0.0/16
metrics_port: 0
max_new_flows_per_sec: 0
YAML
in_ct systemctl daemon-reload
score=$(in_ct systemd-analyze security xlbd.service 2>/dev/null | sed -n 's/.*Overall exposure level for xlbd.service: \([0-9.]*\).*/\1/p')
echo "systemd-analyze security: exposure $score"
[ -n "$score" ] && python3 -c "import sys; sys.exit(0 if float('$score') <= 3.1 else 1)" ||
	fail "exposure $score over 3.1"

# 4. Type=notify: active means serving.
in_ct systemctl start xlbd || fail "systemctl start"
[ "$(in_ct systemctl show -P ActiveState xlbd)" = active ] || fail "not active after start"
in_ct systemctl show -P StatusText xlbd | grep -q "serving" || fail "no READY status text"
in_ct lbctl status > /dev/null || fail "lbctl status in the container"
pid=$(in_ct systemctl show -P MainPID xlbd)
prog=$(in_ct lbctl -j status | python3 -c 'import json,sys; print(json.load(sys.stdin)["dataplane"]["interfaces"][0]["prog_id"])')

# 5. journald fields of a change.
in_ct lbctl vip add 10.200.0.1:80 > /dev/null || fail "vip add"
in_ct journalctl -o json --no-pager XLB_AUDIT=1 | python3 -c '
import json, sys
e = [json.loads(l) for l in sys.stdin]
assert e and e[-1]["XLB_UID"] == "0" and "vip add 10.200.0.1:80/tcp" in e[-1]["XLB_CHANGE"] and e[-1]["XLB_PID"], e' ||
	fail "no audit fields in the journal"

# 6. systemctl reload: a live setting, same process.
in_ct sed -i 's/^max_new_flows_per_sec: 0/max_new_flows_per_sec: 5000/' /etc/xlb/xlbd.yaml
in_ct systemctl reload xlbd || fail "systemctl reload"
[ "$(in_ct systemctl show -P MainPID xlbd)" = "$pid" ] || fail "reload restarted xlbd"
for _ in $(seq 30); do in_ct journalctl -u xlbd --no-pager | grep -q "reloaded: 1 setting" && break; sleep 0.2; done
in_ct journalctl -u xlbd --no-pager | grep -q "reload: max-new-flows-per-sec changed" || fail "reload not applied"

# 7. The watchdog: a stalled xlbd is killed and restarted; the new one adopts the dataplane.
restarts=$(in_ct systemctl show -P NRestarts xlbd)
in_ct kill -STOP "$pid"
for _ in $(seq 100); do
	[ "$(in_ct systemctl show -P NRestarts xlbd)" != "$restarts" ] &&
		[ "$(in_ct systemctl show -P ActiveState xlbd)" = active ] && break
	sleep 0.2
done
[ "$(in_ct systemctl show -P NRestarts xlbd)" != "$restarts" ] || fail "the watchdog did not restart a stalled xlbd"
in_ct journalctl -u xlbd --no-pager | grep -qi "watchdog timeout" || fail "no watchdog timeout in the journal"
[ "$(in_ct systemctl show -P MainPID xlbd)" != "$pid" ] || fail "same pid after the watchdog restart"
in_ct lbctl -j status | python3 -c "
import json, sys
i = json.load(sys.stdin)['dataplane']['interfaces'][0]
assert i['adopted'] and i['prog_id'] == $prog, i" || fail "the restarted xlbd did not adopt the dataplane"
[ "$(in_ct lbctl -j vip list | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["vips"]))')" = 1 ] ||
	fail "state lost across the watchdog restart"
echo "PASS: Type=notify, reload, watchdog restart (adopted prog $prog), journald fields, exposure $score"
