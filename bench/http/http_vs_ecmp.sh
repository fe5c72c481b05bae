#!/bin/bash
# http_vs_ecmp.sh - HTTP through the VIP (wrk from the client namespace)
# in the netns topology of scripts/lib/topology.sh, against the same
# topology with plain kernel ECMP: the router sends the VIP straight to the
# three reals (multipath route, L4 hash) instead of to the LB.  A third mode
# sends the VIP to a second LB host that runs MINLB_OBJ (minlb.bpf.c: hash,
# IPIP, XDP_TX, nothing else): the least any LB tier costs here, so the
# run also prints how much of xlb's gap to ECMP is the tier's extra hops
# and how much is xlb's own work.  The three modes run in this one run,
# interleaved (a round runs each mode once, the rounds go through the six
# orders), the route switched between runs; ratios are taken within rounds.
#
# ROUTER says what the router namespace forwards with: "stack" (the
# kernel's IP forwarding, as in the integration tests) or the path of
# router.bpf.o (the same FIB, ECMP and neighbours, forwarded in XDP as a
# switch would: see router.bpf.c).  Through an LB a client packet crosses
# the router twice, directly once, so a stack router charges the LB tier a
# second router pass that a real network's switch does not.  All modes of
# a run share the router; the run checks that it forwarded what it says.
#
#   http_vs_ecmp.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ MINLB_OBJ JSON_OUT ROUTER [ROUNDS] [SECONDS]
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5 MINLB_OBJ=$6 JSON=$7 ROUTER=$8 ROUNDS=${9:-5} SECS=${10:-5}
MINLB_ADDR=10.10.2.2
T=xlbt-perf-http-$$
source "$(dirname "$0")/../../scripts/lib/topology.sh"
if [ "$ROUTER" != stack ]; then
	[ -f "$ROUTER" ] || { echo "FAIL: no router object $ROUTER"; exit 1; }
	TOPO_ROUTER_OBJ=$ROUTER
fi
[ -f "$MINLB_OBJ" ] || { echo "FAIL: no minimal LB object $MINLB_OBJ"; exit 1; }
topo_check
command -v wrk >/dev/null || topo_skip "wrk missing"
TOPO_TMP=$(mktemp -d /tmp/$T.XXXXXX)
trap 'xlbd_teardown; topo_down; ip netns del $T-m 2>/dev/null; rm -rf "$TOPO_TMP"' EXIT
fail() { echo "FAIL: $*"; tail -20 "$TOPO_TMP/xlbd.log" 2>/dev/null; exit 1; }

topo_up "$DECAP" "$DECAP_OBJ" || fail topology
xlbd_prepare || fail bpffs
xlbd_start "$XLBD" "$LB_OBJ" || fail xlbd
lbctl vip add $VIP:80/tcp >/dev/null || fail vip
for r in "${REALS[@]}"; do lbctl real add $VIP:80 $r >/dev/null || fail "real $r"; done
ip netns exec $T-sw sysctl -qw net.ipv4.fib_multipath_hash_policy=1

xdp_map() { # NS DEV NAME: the ID of the map NAME of the XDP program on DEV in NS
	python3 - "$@" <<'PY'
import json, subprocess, sys
ns, dev, name = sys.argv[1:]
def run(*cmd):
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
prog = run("ip", "-n", ns, "-j", "-d", "link", "show", "dev", dev)[0]["xdp"]["prog"]["id"]
for m in run("bpftool", "-j", "prog", "show", "id", str(prog))["map_ids"]:
    if run("bpftool", "-j", "map", "show", "id", str(m))["name"] == name:
        print(m)
        sys.exit(0)
sys.exit(1)
PY
}
percpu_sum() { # ID [FIELD]: a per-CPU map's values (or their FIELD) summed over entries and CPUs
	bpftool -j map dump id "$1" | python3 -c '
import json, sys
field = sys.argv[1] if len(sys.argv) > 1 else None
print(sum(v["value"][field] if field else v["value"]
          for entry in json.load(sys.stdin) for v in entry["formatted"]["values"]))' ${2:+"$2"}
}

# The minimal LB's host, wired as the LB's: its router port forwards the
# same way, or (stack router) takes its XDP_TX frames through xlb-decap.
ip netns add $T-m && ip -n $T-m link set lo up || fail "minimal LB netns"
topo_link m m0 $MINLB_ADDR s-m 10.10.2.1 || fail "minimal LB link"
if [ "$ROUTER" != stack ]; then
	ip -n $T-sw link set dev s-m xdpdrv obj "$ROUTER" sec xdp || fail "router on s-m"
else
	ip netns exec $T-sw "$DECAP" attach s-m --object "$DECAP_OBJ" || fail "decap on s-m"
fi
ip -n $T-m link set dev m0 xdpdrv obj "$MINLB_OBJ" sec xdp || fail "minimal LB attach"
# struct minlb_config: vip, src, nreals, reals[8], addresses in network order
cfg_hex=$(python3 -c '
import socket, struct, sys
a = lambda s: socket.inet_aton(s)
reals = sys.argv[3:]
v = a(sys.argv[1]) + a(sys.argv[2]) + struct.pack("=I", len(reals)) + b"".join(map(a, reals))
v += bytes(4 * (8 - len(reals)))
print(" ".join("%02x" % b for b in v))' $VIP $MINLB_ADDR "${REALS[@]}") || fail "minimal LB config"
cfg_map=$(xdp_map $T-m m0 minlb_config) && sent_map=$(xdp_map $T-m m0 minlb_sent) ||
	fail "minimal LB maps"
bpftool map update id "$cfg_map" key hex 00 00 00 00 value hex $cfg_hex || fail "minimal LB config"
minlb_sent() { percpu_sum "$sent_map"; } # frames the minimal LB sent toward a real

route() {
	if [ "$1" = xlb ]; then
		ip -n $T-sw route replace $VIP/32 via $LB_ADDR
	elif [ "$1" = minlb ]; then
		ip -n $T-sw route replace $VIP/32 via $MINLB_ADDR
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

# The XDP router's counters: a map per port (each attach loads its own)
router_maps=
if [ "$ROUTER" != stack ]; then
	for dev in s-cl s-lb s-m s-r1 s-r2 s-r3; do
		router_maps+=" $(xdp_map $T-sw $dev xlb_router_cnt)" || fail "router counters on $dev"
	done
fi
router_forwarded() { # frames the XDP router forwarded, all ports and CPUs
	local id total=0
	for id in $router_maps; do
		total=$(( total + $(percpu_sum "$id" forwarded) ))
	done
	echo $total
}

rps() { # one wrk run: requests per second
	ip netns exec $T-cl wrk -t2 -c40 -d${SECS}s "http://$VIP/" 2>&1 |
		awk '/^Requests\/sec:/ { print $2 } / errors: / { print "errors " $0 > "/dev/stderr" }'
}

modes=(xlb ecmp minlb)
# one unrecorded second through each mode first: the run that came first
# otherwise paid for the fresh topology (nginx, caches, neighbours)
for mode in "${modes[@]}"; do
	route $mode
	ip netns exec $T-cl wrk -t2 -c40 -d1s "http://$VIP/" >/dev/null 2>&1 || fail "$mode: warm-up"
done
orders=("xlb ecmp minlb" "ecmp minlb xlb" "minlb xlb ecmp" "xlb minlb ecmp" "minlb ecmp xlb" "ecmp xlb minlb")
xs=() es=() ms=()
for p in $(seq 1 "$ROUNDS"); do
	# the rounds go through the six orders of the three modes: each mode
	# comes first, second and last, and after each other mode, equally often
	for mode in ${orders[(p - 1) % 6]}; do
		route $mode
		ip netns exec $T-cl curl -s -m 2 "http://$VIP/" >/dev/null || fail "$mode: no answer through the VIP"
		before=$(vip_packets) || fail "lbctl stats"
		sent_before=$(minlb_sent) || fail "minimal LB counter"
		[ "$ROUTER" = stack ] || fwd_before=$(router_forwarded) || fail "router counters"
		v=$(rps) || fail "$mode: wrk"
		[ -n "$v" ] || fail "$mode: wrk printed no rate"
		moved=$(( $(vip_packets) - before ))
		sent=$(( $(minlb_sent) - sent_before ))
		# the path checks: requests in this run, at least one client packet each through the
		# LB of the mode and none through the other; with the XDP router, at least one packet
		# each forwarded by it in XDP
		reqs=$(python3 -c "print(int(float('$v') * $SECS * 0.5))")
		case $mode in
		xlb) [ "$moved" -ge "$reqs" ] && [ "$sent" -eq 0 ] ||
			fail "xlb run: the LB counted $moved VIP packets, the minimal LB sent $sent";;
		minlb) [ "$sent" -ge "$reqs" ] && [ "$moved" -eq 0 ] ||
			fail "minimal LB run: it sent $sent frames, xlb counted $moved";;
		ecmp) [ "$moved" -eq 0 ] && [ "$sent" -eq 0 ] ||
			fail "ECMP run: $moved packets went through xlb, $sent through the minimal LB";;
		esac
		if [ "$ROUTER" != stack ]; then
			fwd=$(( $(router_forwarded) - fwd_before ))
			[ "$fwd" -ge "$reqs" ] || fail "$mode run: the XDP router forwarded only $fwd frames"
		fi
		case $mode in xlb) xs+=("$v");; ecmp) es+=("$v");; minlb) ms+=("$v");; esac
		echo "round $p $mode: $v requests/s"
	done
done
lbctl stats >"$TOPO_TMP/stats.txt" 2>&1 || true
python3 - "$JSON" "${xs[*]}" "${es[*]}" "${ms[*]}" "$ROUTER" <<'PY'
import json, statistics, sys
out = sys.argv[1]
xs, es, ms = ([float(v) for v in a.split()] for a in sys.argv[2:5])
xdp = sys.argv[5] != "stack"
st = lambda v: {"min": min(v), "median": statistics.median(v), "max": max(v), "n": len(v)}
router = "" if xdp else ", stack router"
ecmp = "kernel ECMP to the reals, same topology, %s router" % ("XDP" if xdp else "stack")
rows = []
for name, ref, a, b in (
        ("HTTP requests/s through the VIP (wrk -t2 -c40)", ecmp, xs, es),
        ("HTTP requests/s through a minimal LB (hash, IPIP, XDP_TX)", ecmp, ms, es),
        ("HTTP requests/s through the VIP, xlb vs the minimal LB", "minimal LB (minlb.bpf.c), same run", xs, ms)):
    ratios = [x / y for x, y in zip(a, b)]
    rows.append({"bench": "http", "name": name + router, "unit": "req/s", "ref": ref,
                 "value": st(a), "ref_value": st(b), "ratio": st(ratios)})
with open(out, "a") as f:
    for row in rows:
        f.write(json.dumps(row) + "\n")
for row in rows:
    r = row["ratio"]
    print("%s: %.0f req/s vs %.0f (medians), ratio per round min/median/max %.3f/%.3f/%.3f" %
          (row["name"], row["value"]["median"], row["ref_value"]["median"], r["min"], r["median"], r["max"]))
PY
