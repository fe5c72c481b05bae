#!/usr/bin/env bash
# bench/dpdk/bench.sh - the DPDK path's benchmark, run by scripts/bench.sh:
#
#   bench/dpdk/bench.sh BUILD_DIR ROWS_JSONL SMOKE(0|1)
#
# In one run, pairs interleaved (kernel, DPDK+JIT, DPDK+interpreter, ...):
#  - kernel: balancer.bpf.o in native XDP on a veth (netns), driven by lbgen
#    (BPF_PROG_RUN live frames) from one thread; the LB runs in that
#    thread's softirq, so the figure is the LB's own VIP packets per second
#    on that core (path check: the LB counted what lbgen sent, all XDP_TX);
#  - DPDK: the same object in xlb-dpdk on one lcore, net_pcap replaying
#    64-byte TCP ACKs of the same number of flows (infinite_rx; TX dropped
#    by the PMD), programmed by xlbd's userspace backend; the figure is the
#    lcore's received packets per second of its own time
#    (xlb-bench-dpdk-window: path check = every packet balanced for the
#    VIP, an LRU hit, XDP_TX), once on the JIT, once on the interpreter;
#  - the call-free program on xlb's JIT and interpreter next to librte_bpf's
#    (xlb-bench-rte-bpf), the only program librte_bpf can run.
# Both Mpps figures are of ONE CPU on purpose: lbgen's thread and xlb-dpdk's
# lcore are pinned to the same CPU (1).  Appends rows to ROWS_JSONL; prints
# the figures.  The machine is shared: read the ratios, taken within a pair.
set -euo pipefail
b=$1 rows=$2 smoke=${3:-0}
here=$(cd "$(dirname "$0")" && pwd)
if [ "$smoke" = 1 ]; then pairs=1 secs=1 flows=4096 rounds=3 repeat=5; else pairs=5 secs=3 flows=16384 rounds=11 repeat=50; fi
cpu=1
[ "$(nproc)" -gt 1 ] || cpu=0
vip=198.18.0.42 gw=02:00:00:00:00:fe
tmp=$(mktemp -d /tmp/xlb-bench-dpdk.XXXXXX)
ns=lbdn$$ a=lbdA$$ bdev=lbdB$$ prefix=xlbbd$$
dpdk_pid= xlbd_pid=
cleanup() {
	[ -n "$xlbd_pid" ] && kill "$xlbd_pid" 2>/dev/null && wait "$xlbd_pid" 2>/dev/null
	[ -n "$dpdk_pid" ] && kill "$dpdk_pid" 2>/dev/null && wait "$dpdk_pid" 2>/dev/null
	ip netns del "$ns" 2>/dev/null || true
	ip link del "$a" 2>/dev/null || true
	rm -rf "$tmp" "/var/run/dpdk/$prefix"
}
trap cleanup EXIT

# ---- the kernel path: native XDP on veth, lbgen from one thread ---------------
ip netns add "$ns"
# A queue per CPU, so lbgen's CPU sends into a queue of its own, whose NAPI
# (the LB) its own xmit schedules; no IPv6 on the pair: a stray neighbour
# discovery packet sent from the other CPU could start the LB's NAPI there,
# and under lbgen's unbroken traffic it would stay there (another core).
q=$(nproc)
ip link add "$a" numtxqueues $q numrxqueues $q type veth peer name "$bdev" numtxqueues $q numrxqueues $q netns "$ns"
sysctl -qw net.ipv6.conf."$a".disable_ipv6=1
ip netns exec "$ns" sysctl -qw net.ipv6.conf."$bdev".disable_ipv6=1
ip link set "$a" up
ip -n "$ns" link set "$bdev" up
kernel_run() { # PAIR -> $tmp/kernel-PAIR.json
	ip -n "$ns" link set dev "$bdev" xdp off 2>/dev/null || true
	ip netns exec "$ns" "$b/tests/dataplane/xlb-testctl" balancer "$b/dataplane/balancer.bpf.o" \
		"$bdev" $gw 10.255.0.0/16 $vip 80 ip 10.1.0.1 10.1.0.2 10.1.0.3 >/dev/null
	"$b/lbgen/lbgen" -i "$a" -d $vip -t 1 -f $cpu --flows $flows --duration $secs -q \
		--lb-dev "$bdev@$ns" --egress "$bdev@$ns" --json "$tmp/kernel-$1.json" >/dev/null
}

# ---- the DPDK path: xlb-dpdk on net_pcap, xlbd programs it --------------------
python3 "$here/gen_flows.py" "$tmp/flows.pcap" $vip $flows
dpdk_run() { # ENGINE PAIR -> $tmp/dpdk-ENGINE-PAIR.json
	local run=$tmp/run-$1-$2
	"$b/dpdk/xlb-dpdk" --no-huge -m 512 --no-pci --file-prefix=$prefix -l $cpu --no-telemetry \
		--log-level=lib.eal:warning --vdev="net_pcap0,rx_pcap=$tmp/flows.pcap,infinite_rx=1" -- \
		--obj "$b/dataplane/balancer.bpf.o" --run-dir "$run" --engine "$1" \
		--mbufs $((2 * flows + 4095)) --quiet > "$tmp/dpdk.log" 2>&1 &
	dpdk_pid=$!
	for _ in $(seq 200); do [ -e "$run/maps/xlb_dpdk_lcore_stats" ] && break; sleep 0.05; done
	"$b/control/xlbd" --backend userspace --dpdk-run-dir "$run" -g $gw --src4 10.255.0.0/16 \
		-s "$tmp/xlbd.sock" -d "$tmp/state-$1-$2" -m 0 -o "$b/dataplane/balancer.bpf.o" \
		> "$tmp/xlbd.log" 2>&1 &
	xlbd_pid=$!
	for _ in $(seq 200); do "$b/control/lbctl" -s "$tmp/xlbd.sock" status >/dev/null 2>&1 && break; sleep 0.05; done
	"$b/control/lbctl" -s "$tmp/xlbd.sock" vip add $vip:80/tcp >/dev/null
	for r in 10.1.0.1 10.1.0.2 10.1.0.3; do
		"$b/control/lbctl" -s "$tmp/xlbd.sock" real add $vip:80 $r >/dev/null
	done
	sleep 0.5 # every flow seen once: the connection table holds them all
	"$b/bench/dpdk/xlb-bench-dpdk-window" "$run/maps" $secs 0 > "$tmp/dpdk-$1-$2.json" ||
		{ cat "$tmp/dpdk.log" "$tmp/xlbd.log" >&2; exit 1; }
	kill "$xlbd_pid" && wait "$xlbd_pid" 2>/dev/null || true
	kill "$dpdk_pid" && wait "$dpdk_pid" 2>/dev/null || true
	xlbd_pid= dpdk_pid=
}

for pair in $(seq 1 $pairs); do
	kernel_run "$pair"
	dpdk_run jit "$pair"
	dpdk_run interp "$pair"
done

# ---- the call-free program next to librte_bpf --------------------------------
"$b/bench/dpdk/xlb-bench-rte-bpf" "$b/tests/dpdk/callfree.bpf.o" --rounds $rounds --repeat $repeat \
	--json "$rows"

python3 - "$tmp" "$rows" $pairs $flows <<'PY'
import json, statistics, sys
tmp, rows, pairs, flows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

def st(v):
    return {"min": min(v), "median": statistics.median(v), "max": max(v), "n": len(v)}

kern, jit, interp = [], [], []
for p in range(1, pairs + 1):
    k = json.load(open('%s/kernel-%d.json' % (tmp, p)))
    lb = k.get('lb', {})
    # path check: the LB balanced what lbgen sent, and sent it back (XDP_TX)
    if not k['sent'] or lb.get('packets', 0) < 0.9 * k['sent'] or lb.get('tx', 0) < 0.9 * lb.get('packets', 0):
        sys.exit('kernel pair %d: lbgen sent %d, the LB balanced %d, XDP_TX %d: not the path named'
                 % (p, k['sent'], lb.get('packets', 0), lb.get('tx', 0)))
    # and lbgen's CPU worked: an idle generator times its waits (lbgen/live.c)
    if k.get('sender_cpu_idle', 0) > 0.10:
        sys.exit('kernel pair %d: lbgen\'s CPU idled %.0f%% of the run: not the path named'
                 % (p, 100 * k['sender_cpu_idle']))
    kern.append(lb['pps'] / 1e6)
    j = json.load(open('%s/dpdk-jit-%d.json' % (tmp, p)))
    i = json.load(open('%s/dpdk-interp-%d.json' % (tmp, p)))
    if j['engine'] != 'jit' or i['engine'] != 'interp':
        sys.exit('pair %d: engines ran: %s, %s' % (p, j['engine'], i['engine']))
    jit.append(j['mpps'])
    interp.append(i['mpps'])
    print('pair %d: kernel %.3f Mpps/core, xlb-dpdk JIT %.3f Mpps/lcore (busy %.0f%%; %.3f per CPU-second), '
          'interpreter %.3f (%.3f per CPU-second)'
          % (p, kern[-1], jit[-1], 100 * j['busy'], j['mpps_cpu'], interp[-1], i['mpps_cpu']))
with open(rows, 'a') as f:
    f.write(json.dumps({"bench": "dpdk", "engine": "jit",
                        "name": "balancer Mpps per lcore, xlb-dpdk vs kernel native XDP (%d flows)" % flows,
                        "unit": "Mpps", "value": st(jit),
                        "ref": "kernel native XDP on veth, one core (lbgen live frames)",
                        "ref_value": st(kern), "ratio": st([a / b for a, b in zip(jit, kern)])}) + "\n")
    f.write(json.dumps({"bench": "dpdk", "engine": "interp",
                        "name": "balancer Mpps per lcore, xlb-dpdk JIT over interpreter (%d flows)" % flows,
                        "unit": "Mpps", "value": st(interp), "ref": "xlb-dpdk on the JIT, same pair",
                        "ref_value": st(jit), "ratio": st([a / b for a, b in zip(jit, interp)])}) + "\n")
print('xlb-dpdk JIT / kernel per core: median %.2fx; JIT / interpreter: median %.2fx'
      % (statistics.median([a / b for a, b in zip(jit, kern)]),
         statistics.median([a / b for a, b in zip(jit, interp)])))
PY
