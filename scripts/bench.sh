#!/usr/bin/env bash
# scripts/bench.sh - xlb's benchmark suite: every benchmark, each against
# the reference it is measured with in the same run (interleaved), into one
# table, one JSON file and PNG plots.  Speed is measured and reported,
# never asserted: the suite fails only when a benchmark cannot run or
# times another path than it names.
#
#   scripts/bench.sh [--smoke] [--out DIR] [--publish] [--no-build [--build DIR]]
#     --smoke     seconds-long runs (CI runs it, suite bench-smoke, so it cannot rot)
#     --out DIR   results directory (default build/bench-results)
#     --publish   copy the table and plots into doc/bench/ and README
#     --no-build  use an existing build (DIR, default build) as it is
#
# The machine is what it is: on a shared 2-vCPU host, read figures as
# ranges; the ratios, each taken within one pair of runs, are what to
# compare.
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=0 publish=0 out=build/bench-results build=1 b=build
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1 ;;
	--publish) publish=1 ;;
	--out) out=$2; shift ;;
	--no-build) build=0 ;;
	--build) b=$2; shift ;;
	*) echo "usage: scripts/bench.sh [--smoke] [--out DIR] [--publish] [--no-build [--build DIR]]" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || { echo "bench.sh: needs root (BPF, netns)" >&2; exit 1; }
if [ $build = 1 ]; then
	scripts/install-deps.sh >/dev/null
	scripts/build.sh >/dev/null
fi
seeds_dir=${XLB_SEEDS_DIR:-../shared/seeds}
[ -d "$seeds_dir" ] || seeds_dir=$(cd .. && pwd)/shared/seeds
rm -rf "$out"
mkdir -p "$out/seeds" "$out/live"
rows=$out/rows.jsonl
: > "$rows"
if [ $smoke = 1 ]; then
	bal="--rounds 5 --repeat 2000" jit="--rounds 5 --repeat 300" ver=1 mag=5 pairs=1 secs=1 hrounds=1 hrounds_stack=1 hsecs=1
else
	bal="--rounds 11 --repeat 20000" jit="--rounds 15 --repeat 4000" ver=5 mag=15 pairs=5 secs=3 hrounds=12 hrounds_stack=6 hsecs=3
fi
# HTTP runs of one round spread 0.8-1.15 against each other (the host, wrk
# and three nginx on two vCPUs): many short rounds for a steadier median;
# the stack router's rows, which have no target, get half as many.
step() { echo "== $*" >&2; }
seed_args=(--seed-script testbed/build-seed-progs.py --seeds-dir "$seeds_dir" --workdir "$out/seeds")

step "balancer paths (xlb-bench-balancer)"
$b/bench/dataplane/xlb-bench-balancer --balancer $b/dataplane/balancer.bpf.o \
	--pristine $b/bench/lib/pristine.bpf.o "${seed_args[@]}" $bal --json "$rows" \
	> "$out/balancer.txt" 2>&1 || { cat "$out/balancer.txt"; exit 1; }

step "engines: interpreter, JIT, kernel (xbpf-bench-jit)"
$b/bench/jit/xbpf-bench-jit --seeds-dir "$seeds_dir" --workdir "$out/seeds" $jit --json "$rows" \
	> "$out/engines.txt" 2>&1 || { cat "$out/engines.txt"; exit 1; }

step "verifier time (xbpf-bench-verifier)"
$b/bench/verifier/xbpf-bench-verifier --rounds $ver --build-seeds testbed/build-seed-progs.py \
	"$seeds_dir" "$out/seeds" $b/dataplane/balancer.bpf.o $b/dataplane/decap.bpf.o \
	$b/dataplane/healthcheck.bpf.o > "$out/verifier.txt" 2>&1 || { cat "$out/verifier.txt"; exit 1; }

step "Maglev build (bench_maglev)"
$b/bench/control/bench_maglev --rounds $mag --json "$rows" > "$out/maglev.txt"

step "control-plane update latency (bench_api.sh)"
bench/control/bench_api.sh $b/control/xlbd $b/control/lbctl $b/control/xlb-decap \
	$b/dataplane/balancer.bpf.o $b/dataplane/decap.bpf.o > "$out/control.txt" 2>&1 ||
	{ cat "$out/control.txt"; exit 1; }

step "live veth Mpps, flows {1, 16k, 1M} x cores {1, 2} (lbgen, live_veth.sh)"
# the seed as a load balancer: every flow forwarded by its ring (build-seed-progs.py)
seed_obj=$out/seeds/test_xdp_noinline_fwd.o
[ -f "$seed_obj" ] || seed_obj=-
bench/live/live_veth.sh $b "$seed_obj" "$out/live" $pairs $secs

step "HTTP through the VIP vs kernel ECMP and a minimal LB (wrk, http_vs_ecmp.sh), XDP router, then stack router"
: > "$out/http.txt"
for router in $b/bench/http/router.bpf.o stack; do
	rounds=$hrounds
	[ $router = stack ] && rounds=$hrounds_stack
	bench/http/http_vs_ecmp.sh $b/control/xlbd $b/control/lbctl $b/control/xlb-decap \
		$b/dataplane/balancer.bpf.o $b/dataplane/decap.bpf.o $b/bench/http/minlb.bpf.o \
		"$rows" $router $rounds $hsecs \
		>> "$out/http.txt" 2>&1 || { cat "$out/http.txt"; exit 1; }
done

# The DPDK path: its engineer's benchmark plugs in here.  bench/dpdk/bench.sh
# BUILD_DIR ROWS_JSONL SMOKE(0|1) appends rows like every benchmark above.
step "DPDK path"
if [ -x bench/dpdk/bench.sh ]; then
	bench/dpdk/bench.sh $b "$rows" $smoke > "$out/dpdk.txt" 2>&1 || { cat "$out/dpdk.txt"; exit 1; }
else
	echo '{"bench": "dpdk", "name": "DPDK path", "error": "not built yet (hook: bench/dpdk/bench.sh)"}' >> "$rows"
fi
# lbgen's own DPDK TX (into net_null: the generator, not the LB)
$b/lbgen/lbgen -i dpdk --transport dpdk --duration $secs -q --json "$out/lbgen-dpdk.json" \
	--dpdk "--no-huge -m 256 --no-pci --file-prefix=xlbbench$$ --vdev=net_null0 -l 0 --log-level=3" \
	> "$out/lbgen-dpdk.txt" 2>&1 || echo "(lbgen DPDK TX not measured: $(tail -1 "$out/lbgen-dpdk.txt"))" >&2

step "report"
/usr/bin/python3 scripts/bench_report.py "$out" $([ $publish = 1 ] && echo --publish)
