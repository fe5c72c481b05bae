#!/bin/bash
# A whole site in network namespaces (scripts/lib/site.sh): a client, a
# router running BIRD with ECMP over three LBs (BGP + BFD), each LB running
# BIRD, xlbd on one etcd state (three members) and the XDP balancer, four
# nginx reals with xlb's decap.  Every change goes through lbctl on one LB.
#
#  1. the state written through lb1 runs on all LBs; the router has 3 next hops
#  2. 1,000 connections: over the reals and over the LBs within +-15%
#  3. graceful drain of lb2 during long-lived connections: routes withdrawn
#     (time measured), 100% survive on their real; resume: 100% again
#  4. a real added, drained, removed through lb1: on every LB within a
#     measured time, rings byte-identical (read from the maps) after each
#  5. an etcd member killed and restarted changes nothing
#  6. one LB loses the store: keeps forwarding its last state, reports it,
#     reconverges (time measured) when the store comes back
#  7. bad input: documents another client writes that break the schema are
#     refused by every LB (last good state kept, refused revision reported)
#  8. lb2's xlbd stopped (SIGTERM), then its program detached: routes
#     withdrawn each time (timed); a restarted xlbd announces again
#  9. host failure: lb3's link dies and its processes are killed during
#     long-lived connections: the router withdraws it (time measured via
#     BFD), its flows move to the other LBs, >= 99% survive on their real
# The figures are printed as "FIGURE:" lines (README, "Scaling out").
# Usage: it_site.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ BLACKHOLE_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5 BH_OBJ=$6
T=xlbt-fl-site-$$
HERE=$(cd "$(dirname "$0")" && pwd)
SITE_REALS=4
source "$HERE/../../scripts/lib/site.sh"
site_check
[ -f "$BH_OBJ" ] || topo_skip "blackhole.bpf.o not built"
TOPO_TMP=$(mktemp -d /tmp/$T.XXXXXX)
trap 'site_down; rm -rf "$TOPO_TMP"' EXIT
LBS="1 2 3"
V=$SITE_VIP:80

fail() {
	echo "FAIL: $*"
	for n in $LBS; do echo "--- lb$n xlbd"; tail -8 "$TOPO_TMP/lb$n/xlbd.log" 2>/dev/null; done
	site_lbctl 1 fleet status 2>/dev/null
	site_birdc rt show protocols 2>/dev/null
	grep -h "State changed to down\|Cease\|Error\|BFD" "$TOPO_TMP/rt/bird.log" 2>/dev/null | tail -20
	exit 1
}
figure() { echo "FIGURE: $*"; }
now() { date +%s.%N; }
ms_since() { python3 -c "import sys,time; print('%.0f' % ((time.time() - float(sys.argv[1])) * 1000))" "$1"; }
client() { ip netns exec "$T-cl" python3 "$HERE/../integration/client.py" "$@"; }
stats() { site_lbctl $1 -j stats > "$2"; }
rings_identical() { # what
	for n in $LBS; do
		python3 "$HERE/rings.py" "$TOPO_TMP/bpf/lb$n" > "$TOPO_TMP/rings.$n" || fail "read rings lb$n"
	done
	python3 "$HERE/site.py" rings $(for n in $LBS; do echo "$TOPO_TMP/rings.$n"; done) ||
		fail "rings differ $1"
}
# change WHAT LBCTL-ARGS...: through lb1, then time until every LB runs it.
change() {
	local what=$1 t0 rev
	shift
	t0=$(now)
	site_lbctl 1 "$@" >/dev/null || fail "lbctl $* on lb1"
	rev=$(site_revision 1)
	site_wait_revision "$rev" 10 $LBS || fail "$what: revision $rev not on every LB"
	figure "propagation ($what): lbctl on lb1 -> revision $rev on all 3 LBs, seen by polling in $(ms_since $t0) ms;" \
		"written -> running (each host's own account): lb2 $(latency 2) ms, lb3 $(latency 3) ms"
}
latency() { site_lbctl $1 -j host status | grep -oE '"apply_latency_ms":-?[0-9]+' | grep -oE -- '-?[0-9]+$'; }
# hold_start N SECONDS: long-lived connections in the background ($HOLDER).
hold_start() {
	rm -f "$TOPO_TMP/ready"
	client hold "$SITE_VIP" "$1" "$2" "$TOPO_TMP/ready" > "$TOPO_TMP/hold.json" &
	HOLDER=$!
	for _ in $(seq 300); do [ -e "$TOPO_TMP/ready" ] && return 0; sleep 0.05; done
	fail "long-lived connections not established"
}
monitor_start() {
	ip -n "$T-rt" -ts monitor route > "$TOPO_TMP/monitor.log" 2>&1 &
	MONITOR=$!
	sleep 0.2
}
monitor_ms() { # T0 WANT
	python3 "$HERE/site.py" withdraw "$TOPO_TMP/monitor.log" "$1" "$SITE_VIP" "$2"
}

# ---- the site -------------------------------------------------------------------
site_up "$DECAP" "$DECAP_OBJ" || fail "topology"
site_etcd_up || fail "etcd cluster"
site_router_up || fail "router BIRD"
site_bpffs || fail "bpffs"
for n in $LBS; do
	site_lb_bird_up $n || fail "BIRD on lb$n"
	site_xlbd_start $n "$XLBD" "$LB_OBJ" || fail "xlbd on lb$n"
done

# 1. One state for all, written through lb1.
site_lbctl 1 vip add $SITE_VIP:80/tcp >/dev/null || fail "vip add"
for r in 1 2 3; do
	site_lbctl 1 real add $V "$(site_real_addr $r)" weight 100 >/dev/null || fail "real add r$r"
done
site_wait_revision "$(site_revision 1)" 10 $LBS || fail "state not on every LB"
site_wait_nexthops 3 20 || fail "router: $(site_route_nexthops | tr '\n' ' ') (want 3 next hops)"
site_lbctl 1 fleet status
rings_identical "after the first state"

# 2. Spread over reals and LBs.
for n in $LBS; do stats $n "$TOPO_TMP/s0.$n"; done
client spread "$SITE_VIP" 1000 > "$TOPO_TMP/spread.json" || fail "client"
for n in $LBS; do stats $n "$TOPO_TMP/s1.$n"; done
python3 "$HERE/site.py" spread "$TOPO_TMP/spread.json" 1000 0.15 || fail "spread over reals"
python3 "$HERE/site.py" lbspread 0.15 $(for n in $LBS; do echo "$TOPO_TMP/s0.$n $TOPO_TMP/s1.$n"; done) ||
	fail "spread over LBs"

# 3. Graceful drain of lb2, then resume, under 150 long-lived connections.
site_wait_nexthops 3 20 || fail "not 3 next hops before the drain"
monitor_start
hold_start 150 9
sleep 1
t0=$(now)
site_lbctl 2 host drain >/dev/null || fail "host drain"
site_wait_nexthops 2 5 || fail "lb2 not withdrawn"
figure "graceful drain: lbctl host drain -> router down to 2 next hops in $(monitor_ms $t0 2) ms"
site_lbctl 2 host drain --wait --wait-timeout 15 || fail "lb2 not drained"
site_lbctl 2 host status | grep -q "drain: *drained" || fail "lb2 does not report drained"
t0=$(now)
site_lbctl 2 host resume >/dev/null || fail "host resume"
site_wait_nexthops 3 10 || fail "lb2 not announced again"
figure "resume: lbctl host resume -> router back to 3 next hops in $(monitor_ms $t0 3) ms"
wait $HOLDER || fail "holder"
kill $MONITOR 2>/dev/null
python3 "$HERE/site.py" survival "$TOPO_TMP/hold.json" 100 || fail "connections lost in a graceful drain"

# 4. A real added, drained and removed through lb1.
change "real add" real add $V "$(site_real_addr 4)" weight 100
rings_identical "after real add"
client spread "$SITE_VIP" 200 > "$TOPO_TMP/s4.json"
grep -q '"r4"' "$TOPO_TMP/s4.json" || fail "the added real gets no traffic: $(cat "$TOPO_TMP/s4.json")"
change "real drain" real drain $V "$(site_real_addr 4)"
rings_identical "after real drain"
change "real del" real del $V "$(site_real_addr 4)"
rings_identical "after real del"

# 5. An etcd member killed (lb1's first endpoint) and restarted changes nothing.
rev=$(site_revision 1)
cp "$TOPO_TMP/rings.1" "$TOPO_TMP/rings.before"
site_etcd_kill 1
sleep 1
for n in $LBS; do [ "$(site_revision $n)" = "$rev" ] || fail "lb$n moved off revision $rev"; done
client spread "$SITE_VIP" 100 > "$TOPO_TMP/s5.json"
grep -q '"fails": 0' "$TOPO_TMP/s5.json" || fail "traffic with a member down: $(cat "$TOPO_TMP/s5.json")"
change "set-weight, one etcd member down" real set-weight $V "$(site_real_addr 1)" 100
site_etcd_start 1 existing
sleep 2
change "set-weight, member back" real set-weight $V "$(site_real_addr 2)" 100
rings_identical "after the member came back"
cmp -s <(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])))' "$TOPO_TMP/rings.before") \
	<(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])))' "$TOPO_TMP/rings.1") ||
	fail "the rings changed across a member's death"
for n in $LBS; do
	site_lbctl $n -j host status | grep -q '"reachable":true' || fail "lb$n: store not reachable"
done

# 6. lb3 loses the store: last state kept and reported, reconverges when it is back.
rev=$(site_revision 3)
ip -n "$T-lb3" link set m0 down
for _ in $(seq 50); do
	site_lbctl 3 -j host status | grep -q '"reachable":false' && break
	sleep 0.1
done
site_lbctl 3 host status | grep -q "UNREACHABLE" || fail "lb3 does not report the store lost"
site_lbctl 3 real add $V "$(site_real_addr 4)" >/dev/null 2>&1 && fail "lb3 took a change without the store"
site_lbctl 1 real add $V "$(site_real_addr 4)" weight 100 >/dev/null || fail "real add on lb1"
sleep 0.5
[ "$(site_revision 3)" = "$rev" ] || fail "lb3 changed revision without the store"
client spread "$SITE_VIP" 100 > "$TOPO_TMP/s6.json"
grep -q '"fails": 0' "$TOPO_TMP/s6.json" || fail "traffic while lb3 is cut: $(cat "$TOPO_TMP/s6.json")"
t0=$(now)
ip -n "$T-lb3" link set m0 up
site_wait_revision "$(site_revision 1)" 15 3 || fail "lb3 did not reconverge"
figure "store back on lb3 (link up) -> lb3 runs the site's revision after $(ms_since $t0) ms"
rings_identical "after lb3 reconverged"

# 7. Bad input from another client: refused everywhere, the last good state kept.
rev=$(site_revision 1)
for doc in '{"xlb_state":1,"next_real_id":1,"vips":[{"id":0}]}' \
	'{"xlb_state":1,"next_real_id":9,"vips":[{"id":0,"address":"10.200.0.1","port":80,"proto":"tcp","reals":[{"id":1,"address":"10.32.1.2"},{"id":1,"address":"10.32.2.2"}]}]}' \
	'not json at all'; do
	site_etcdctl 2 put "/xlb/$T/state" "$doc" >/dev/null || fail "etcdctl put"
	bad=$(site_etcdctl 2 get "/xlb/$T/state" -w json | grep -oE '"mod_revision":[0-9]+' | grep -oE '[0-9]+')
	for n in $LBS; do
		for _ in $(seq 50); do
			site_lbctl $n -j host status | grep -q "\"refused_revision\":$bad[,}]" && break
			sleep 0.05
		done
		site_lbctl $n -j host status | grep -q "\"refused_revision\":$bad[,}]" ||
			fail "lb$n did not refuse revision $bad"
		[ "$(site_revision $n)" = "$rev" ] || fail "lb$n left revision $rev for a bad document"
	done
done
site_lbctl 2 host status | grep "refused"
client spread "$SITE_VIP" 100 > "$TOPO_TMP/s7.json"
grep -q '"fails": 0' "$TOPO_TMP/s7.json" || fail "traffic after bad input: $(cat "$TOPO_TMP/s7.json")"
rings_identical "after bad input"
change "repair through lbctl" real set-weight $V "$(site_real_addr 4)" 50
rings_identical "after the repair"

# 8. Shutdown and a dataplane that fails withdraw lb2's routes; a restart announces again.
site_wait_nexthops 3 20 || fail "not 3 next hops before lb2's stop"
monitor_start
t0=$(now)
site_xlbd_stop 2 || fail "xlbd on lb2 did not stop"
site_wait_nexthops 2 10 || fail "lb2's routes stayed after its xlbd stopped"
figure "xlbd stopped (SIGTERM) on lb2 -> router down to 2 next hops in $(monitor_ms $t0 2) ms"
site_xlbd_start 2 "$XLBD" "$LB_OBJ" || fail "xlbd restart on lb2"
site_wait_nexthops 3 10 || fail "lb2 not announced after its restart"
[ "$(site_revision 2)" = "$(site_revision 1)" ] || fail "lb2 restarted on another revision"
t0=$(now)
ip -n "$T-lb2" link set dev l0 xdpdrv off 2>/dev/null
ip -n "$T-lb2" link set dev l0 xdpgeneric off 2>/dev/null
site_wait_nexthops 2 10 || fail "lb2's routes stayed without its dataplane"
figure "lb2's XDP program detached -> router down to 2 next hops in $(monitor_ms $t0 2) ms (checked every 500 ms)"
kill $MONITOR 2>/dev/null
site_lbctl 2 host status | grep -q "dataplane: NOT ATTACHED" || fail "lb2 does not report its dataplane"
site_xlbd_stop 2 || fail "xlbd on lb2 did not stop"
site_xlbd_start 2 "$XLBD" "$LB_OBJ" || fail "xlbd restart on lb2"
site_wait_nexthops 3 10 || fail "lb2 not announced after its dataplane came back"
client spread "$SITE_VIP" 100 > "$TOPO_TMP/s8.json"
grep -q '"fails": 0' "$TOPO_TMP/s8.json" || fail "traffic after lb2's restarts: $(cat "$TOPO_TMP/s8.json")"
rings_identical "after lb2's restarts"

# 9. Host failure: lb3's link goes dead and its processes die, under 200 connections.
site_wait_nexthops 3 20 || fail "not 3 next hops before the host failure"
monitor_start
hold_start 200 8
for n in 1 2; do stats $n "$TOPO_TMP/f0.$n"; done
sleep 1.5
t0=$(now)
site_blackhole 3 "$BH_OBJ" || fail "blackhole"
site_ns_kill lb3 KILL
site_wait_nexthops 2 5 || fail "lb3 not withdrawn"
figure "host failure: lb3's link dead -> router down to 2 next hops in $(monitor_ms $t0 2) ms (BFD $SITE_BFD_MS ms x $SITE_BFD_MULT)"
wait $HOLDER || fail "holder"
kill $MONITOR 2>/dev/null
for n in 1 2; do stats $n "$TOPO_TMP/f1.$n"; done
moved=$(python3 - "$TOPO_TMP" <<'PY'
import json, sys
d = sys.argv[1]
nf = lambda f: sum(v['counters']['new_flows'] for v in json.load(open(f))['vips'])
print(sum(nf('%s/f1.%d' % (d, n)) - nf('%s/f0.%d' % (d, n)) for n in (1, 2)))
PY
)
figure "host failure: $moved of 200 established flows moved to lb1/lb2 (connection-table misses -> same ring)"
[ "$moved" -ge 20 ] || fail "too few flows moved ($moved): the test did not exercise the failover"
python3 "$HERE/site.py" survival "$TOPO_TMP/hold.json" 99 || fail "connections lost in a host failure"
site_lbctl 1 fleet status
figure "BGP sessions that went down on the router other than lb3's death: $(grep "State changed to down" "$TOPO_TMP/rt/bird.log" | grep -cv "lb3:") (BFD flaps under load; lb2's drain is a withdrawal, not one)"
echo PASS
