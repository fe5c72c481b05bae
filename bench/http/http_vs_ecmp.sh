#!/bin/bash
# http_vs_ecmp.sh - HTTP through the VIP (wrk from the client namespace)
# in the netns topology of scripts/lib/topology.sh, against the same
# topology with plain kernel ECMP: the router sends the VIP straight to the
# three reals (multipath route, L4 hash) instead of to the LB.  Both modes
# run in this one run, interleaved (xlb, ecmp, xlb, ecmp ...), the route
# switched between runs; the ratio is taken per pair.
#
# ROUTER says what the router namespace forwards with: "stack" (the
# kernel's IP forwarding, as in the integration tests) or the path of
# router.bpf.o (the same FIB, ECMP and neighbours, forwarded in XDP as a
# switch would: see router.bpf.c).  Through the LB a client packet crosses
# the router twice, directly once, so a stack router charges the LB tier a
# second router pass that a real network's switch does not.  Both modes of
# a run share the router; the run checks that it forwarded what it says.
#
#   http_vs_ecmp.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ JSON_OUT ROUTER [PAIRS] [SECONDS]
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5 JSON=$6 ROUTER=$7 PAIRS=${8:-5} SECS=${9:-5}
T=xlbt-perf-http-$$
source "$(dirname "$0")/../../scripts/lib/topology.sh"
if [ "$ROUTER" != stack ]; then
	[ -f "$ROUTER" ] || { echo "FAIL: no router object $ROUTER"; exit 1; }
	TOPO_ROUTER_OBJ=$ROUTER
fi
topo_check
command -v wrk >/dev/null || topo_skip "wrk missing"
TOPO_TMP=$(mktemp -d /tmp/$T.XXXXXX)
trap 'xlbd_teardown; topo_down; rm -rf "$TOPO_TMP"' EXIT
fail() { echo "FAIL: $*"; tail -20 "$TOPO_TMP/xlbd.log" 2>/dev/null; exit 1; }

topo_up "$DECAP" "$DECAP_OBJ" || fail topology
xlbd_prepare || fail bpffs
xlbd_start "$XLBD" "$LB_OBJ" || fail xlbd
lbctl vip add $VIP:80/tcp >/dev/null || fail vip
for r in "${REALS[@]}"; do lbctl real add $VIP:80 $r >/dev/null || fail "real $r"; done
ip netns exec $T-sw sysctl -qw net.ipv4.fib_multipath_hash_policy=1

route() {
	if [ "$1" = xlb ]; then
		ip -n $T-sw route replace $VIP/32 via $LB_ADDR
	else
		ip -n $T-sw route replace $VIP/32 nexthop via ${REALS[0]} nexthop via ${REALS[1]} \
			nexthop via ${REALS[2]}
	fi
}

vip_packets() { # what the LB counted at the VIP (xlb mode must move it, ECMP must not)
	lbctl -j stats | python3 -c '
import json, sys
def walk(o):
    if isinstance(o, dict):
        if "vip" in o and "counters" in o:
            return o["counters"]["packets"]
        return sum(walk(v) for v in o.values())
    if isinstance(o, list):
        return sum(walk(v) for v in o)
    return 0
print(walk(json.load(sys.stdin)))'
}

router_forwarded() { # frames the XDP router forwarded: its ports' maps, summed over CPUs
	python3 - "$T-sw" <<'PY'
import json, subprocess, sys
def run(*cmd):
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
maps = set()
for dev in ("s-cl", "s-lb", "s-r1", "s-r2", "s-r3"):
    prog = run("ip", "-n", sys.argv[1], "-j", "-d", "link", "show", "dev", dev)[0]["xdp"]["prog"]["id"]
    maps.update(run("bpftool", "-j", "prog", "show", "id", str(prog))["map_ids"])
total = 0
for m in maps:
    for entry in run("bpftool", "-j", "map", "dump", "id", str(m)):
        total += sum(v["value"]["forwarded"] for v in entry["formatted"]["values"])
print(total)
PY
}

rps() { # one wrk run: requests per second
	ip netns exec $T-cl wrk -t2 -c40 -d${SECS}s "http://$VIP/" 2>&1 |
		awk '/^Requests\/sec:/ { print $2 } / errors: / { print "errors " $0 > "/dev/stderr" }'
}

xs=() es=()
for p in $(seq 1 "$PAIRS"); do
	for mode in xlb ecmp; do
		route $mode
		ip netns exec $T-cl curl -s -m 2 "http://$VIP/" >/dev/null || fail "$mode: no answer through the VIP"
		before=$(vip_packets) || fail "lbctl stats"
		[ "$ROUTER" = stack ] || fwd_before=$(router_forwarded) || fail "router counters"
		v=$(rps) || fail "$mode: wrk"
		[ -n "$v" ] || fail "$mode: wrk printed no rate"
		moved=$(( $(vip_packets) - before ))
		# the path checks: requests in this run, at least one client packet each through the LB
		# (xlb) and, with the XDP router, at least one packet each forwarded by it in XDP
		reqs=$(python3 -c "print(int(float('$v') * $SECS * 0.5))")
		if [ $mode = xlb ] && [ "$moved" -lt "$reqs" ]; then fail "xlb run: the LB counted $moved VIP packets"; fi
		if [ $mode = ecmp ] && [ "$moved" -ne 0 ]; then fail "ECMP run: $moved packets went through the LB"; fi
		if [ "$ROUTER" != stack ]; then
			fwd=$(( $(router_forwarded) - fwd_before ))
			[ "$fwd" -ge "$reqs" ] || fail "$mode run: the XDP router forwarded only $fwd frames"
		fi
		[ $mode = xlb ] && xs+=("$v") || es+=("$v")
		echo "pair $p $mode: $v requests/s"
	done
done
lbctl stats >"$TOPO_TMP/stats.txt" 2>&1 || true
python3 - "$JSON" "${xs[*]}" "${es[*]}" "$ROUTER" <<'PY'
import json, statistics, sys
out, xs, es = sys.argv[1], [float(v) for v in sys.argv[2].split()], [float(v) for v in sys.argv[3].split()]
st = lambda v: {"min": min(v), "median": statistics.median(v), "max": max(v), "n": len(v)}
ratios = [x / e for x, e in zip(xs, es)]
xdp = sys.argv[4] != "stack"
row = {"bench": "http", "name": "HTTP requests/s through the VIP (wrk -t2 -c40)" + ("" if xdp else ", stack router"),
       "unit": "req/s", "ref": "kernel ECMP to the reals, same topology, %s router" % ("XDP" if xdp else "stack"),
       "value": st(xs), "ref_value": st(es), "ratio": st(ratios)}
with open(out, "a") as f:
    f.write(json.dumps(row) + "\n")
print("xlb %.0f req/s (median), ECMP %.0f, ratio per pair min/median/max %.3f/%.3f/%.3f" %
      (row["value"]["median"], row["ref_value"]["median"], min(ratios), statistics.median(ratios), max(ratios)))
PY
