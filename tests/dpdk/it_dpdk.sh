#!/bin/bash
# End to end on the DPDK path: the netns topology of the integration tests
# (scripts/lib/topology.sh), its LB run by xlb-dpdk on net_af_packet or
# net_af_xdp over l0 with a net_tap exception port (scripts/lib/dpdk.sh),
# xlbd with the userspace backend over xlb-dpdk's shared maps, three nginx
# reals behind xlb's decap, IPv4 and IPv6 VIPs; everything through lbctl:
#  - health: HTTP probes from xlbd leave through the exception port and
#    their answers come back through xlb-dpdk (ARP/ND too); a real whose
#    nginx stops leaves the ring and comes back;
#  - curl: 1,000 new connections per VIP, spread within +-15% of a third;
#  - wrk through each VIP, no error;
#  - drain: established connections stay on the drained real, new ones avoid it;
#  - kill -9 of xlb-dpdk, then of xlbd, during 24 long-lived connections
#    per VIP: none is reset or moves to another real, the state is the same;
#  - bad input while traffic flows: malformed changes through lbctl and
#    malformed updates of the shared maps themselves (map_poke) are
#    refused, nothing disturbed;
#  - encapsulated health probes: the healthcheck tc program on the tap
#    encapsulates them, and a real that lost the VIP is seen down.
# Usage: it_dpdk.sh PMD XLB_DPDK XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ MAP_POKE
set -u
PMD=$1 DPDK_BIN=$2 XLBD=$3 LBCTL=$4 DECAP=$5 LB_OBJ=$6 DECAP_OBJ=$7 MAP_POKE=$8
T=xlbt-dp-${PMD#af_}-$$
here=$(dirname "$0")
source "$here/../integration/it_lib.sh"
source "$here/../../scripts/lib/dpdk.sh"
topo_check
[ -x "$DPDK_BIN" ] || topo_skip "xlb-dpdk not built"
command -v curl >/dev/null || topo_skip "curl missing"
command -v wrk >/dev/null || topo_skip "wrk missing"
TOPO_TMP=$(mktemp -d /tmp/$T.XXXXXX)
trap 'xlbd_stop; dpdk_down; topo_down; rm -rf "$TOPO_TMP"' EXIT
fail() {
	echo "FAIL: $*"
	for f in xlbd.log dpdk.log; do
		echo "--- $f"
		tail -15 "$TOPO_TMP/$f" 2>/dev/null
	done
	exit 1
}
step() { echo "== $* ($(date +%T))"; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

step "topology, xlb-dpdk on $PMD, xlbd --backend userspace"
topo_up "$DECAP" "$DECAP_OBJ" || fail "topology"
dpdk_v6_up "$DECAP" "$DECAP_OBJ" || fail "IPv6 topology"
# The dataplane's sizes are xlb-dpdk's: they size its shared maps, and xlbd
# takes them from there (small ones, so that the limits can be reached).
SIZES="--max-vips 4 --max-reals 16 --ring-size 1021"
dpdk_lb_start "$PMD" $SIZES || fail "xlb-dpdk start"
XLBD_SOCK=$TOPO_TMP/xlbd.sock XLBD_PINS=$TOPO_TMP/unused-pins
mkdir -p "$TOPO_TMP/state"
xlbd_start_userspace "$XLBD" -m 9100 || fail "xlbd start"
HC="hc http hc-interval 300 hc-timeout 250 hc-rise 1 hc-fall 3"
lbctl vip add $VIP:80/tcp $HC || fail "vip add v4"
lbctl vip add "[$VIP6]:80/tcp" $HC || fail "vip add v6"
for i in 0 1 2; do
	lbctl real add $VIP:80 "${REALS[i]}" weight 100 || fail "real add ${REALS[i]}"
	lbctl real add "[$VIP6]:80" "${REALS6[i]}" weight 100 || fail "real add ${REALS6[i]}"
done
lbctl status | tee "$TOPO_TMP/status"
grep -q "^backend: *userspace" "$TOPO_TMP/status" || fail "status: backend"
grep -q "^xlb-dpdk: *running (pid $DPDK_PID), engine jit" "$TOPO_TMP/status" || fail "status: xlb-dpdk"
grep -q "^net_$PMD"'0 *data' "$TOPO_TMP/status" || fail "status: data port"
grep -q "^net_tap0 *exception" "$TOPO_TMP/status" || fail "status: exception port"
[ "$(lbctl -j status | json '[d["settings"][k] for k in ("max_vips", "max_reals", "ring_size")]')" = \
	"[4, 16, 1021]" ] || fail "xlbd's sizes are not xlb-dpdk's ($SIZES)"

# Every real healthy: the probes went out through the tap and xlb-dpdk.
wait_health() { # VIP_KEY REAL STATE
	for _ in $(seq 100); do
		lbctl -j health | python3 -c "
import json, sys
h = json.load(sys.stdin)['reals']
sys.exit(0 if any(r['vip'] == '$1' and r['real'] == '$2' and r['health'] == '$3' for r in h) else 1)
" && return 0
		sleep 0.1
	done
	lbctl health
	return 1
}
step "health probes through the exception port"
for i in 0 1 2; do
	wait_health $VIP:80/tcp "${REALS[i]}" up || fail "${REALS[i]} not healthy"
	wait_health "[$VIP6]:80/tcp" "${REALS6[i]}" up || fail "${REALS6[i]} not healthy"
done

# curl: N new connections (Connection: close), the reals' answers counted.
curl_spread() { # URL_HOST N
	ip netns exec "$T-cl" curl -s --max-time 30 -H 'Connection: close' \
		"http://$1/[1-$2]" | sort | uniq -c
}
check_spread() { # COUNTS N
	python3 - "$1" "$2" <<'PY'
import sys
n = int(sys.argv[2])
counts = {}
for line in sys.argv[1].split('\n'):
    if line.strip():
        c, name = line.split()
        counts[name] = int(c)
print('answers per real:', counts)
assert sorted(counts) == ['r1', 'r2', 'r3'], counts
assert sum(counts.values()) == n, ('lost requests', counts)
for name, c in counts.items():
    assert abs(c - n / 3) <= 0.15 * n / 3, ('outside +-15% of a third', name, c)
PY
}
step "sizes: the VIP's ring has 1021 slots, a fifth VIP does not fit"
slots=$(lbctl -j real list $VIP:80 | json 'sum(r["slots"] for r in d["reals"])')
[ "$slots" = 1021 ] || fail "the reals hold $slots ring slots, not --ring-size 1021"
lbctl vip add 10.200.0.2:80/tcp >/dev/null || fail "third VIP"
lbctl vip add 10.200.0.3:80/tcp >/dev/null || fail "fourth VIP"
lbctl vip add 10.200.0.4:80/tcp >/dev/null 2>&1 && fail "a fifth VIP accepted with --max-vips 4"
lbctl vip del 10.200.0.2:80/tcp >/dev/null && lbctl vip del 10.200.0.3:80/tcp >/dev/null || fail "vip del"

for v in "$VIP" "[$VIP6]"; do
	step "curl: 1000 new connections to $v"
	out=$(curl_spread "$v" 1000)
	check_spread "$out" 1000 || fail "spread through $v"
	step "wrk through $v"
	ip netns exec "$T-cl" wrk -t2 -c16 -d2s "http://$v/" > "$TOPO_TMP/wrk" 2>&1
	cat "$TOPO_TMP/wrk"
	grep -q "Socket errors\|Non-2xx" "$TOPO_TMP/wrk" && fail "wrk saw errors through $v"
	reqs=$(awk '/requests in/ {print $1}' "$TOPO_TMP/wrk")
	[ "${reqs:-0}" -ge 500 ] || fail "wrk: only ${reqs:-0} requests through $v"
done
# Counters: the program's (as on the kernel path) and xlb-dpdk's own per
# port and per lcore, through lbctl stats and the Prometheus endpoint.
lbctl stats | tee "$TOPO_TMP/stats"
grep -q "^PORT .*RX-PACKETS" "$TOPO_TMP/stats" || fail "lbctl stats: no port table"
grep -q "^LCORE .*REDIRECT" "$TOPO_TMP/stats" || fail "lbctl stats: no lcore table"
# xlb-dpdk publishes its ports' counters every 100 ms, the lcores' are
# live: up to one period of a port's counters may be missing while the
# health probes still flow, so the check is retried for a second or two.
check_counters() {
	lbctl -j stats > "$TOPO_TMP/stats.json"
	python3 - "$TOPO_TMP/stats.json" "net_${PMD}0" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
vip_pk = sum(v['counters']['packets'] for v in s['vips'])
ports = {p['name']: p for p in s['ports']}
data, exc = ports[sys.argv[2]], ports['net_tap0']
assert data['role'] == 'data' and exc['role'] == 'exception', ports
l = s['lcores'][0]
print('VIP packets', vip_pk, 'data port rx', data['rx_packets'], 'tx', data['tx_packets'],
      'lcore', {k: l[k] for k in ('rx', 'tx', 'pass', 'drop', 'tx_failed')})
assert vip_pk > 5000, vip_pk
# every balanced packet came in on the data port and left by it (XDP_TX)
assert data['rx_packets'] >= vip_pk and l['rx'] >= vip_pk and l['tx'] >= vip_pk, (vip_pk, data, l)
assert data['tx_packets'] >= l['tx'] - l['tx_failed'], (data, l)
# what the lcore received got exactly one verdict (a burst may be in flight: 64)
verdicts = sum(l[k] for k in ('tx', 'redirect', 'pass', 'drop', 'aborted', 'bad_mbuf'))
assert 0 <= l['rx'] - verdicts <= 64, (l['rx'], verdicts)
# host traffic (ARP, ND, health probes' answers) went to the tap
assert l['pass'] > 0 and exc['tx_packets'] > 0 and exc['rx_packets'] > 0, (l, exc)
PY
}
counters_ok=
for try in 1 2 3 4 5 6 7 8; do
	if check_counters; then counters_ok=1; break; fi
	sleep 0.25
done
[ -n "$counters_ok" ] || fail "stats counters"
ip netns exec "$T-lb" curl -s --max-time 5 http://127.0.0.1:9100/metrics > "$TOPO_TMP/metrics" ||
	fail "metrics endpoint"
for m in "xlb_vip_packets_total{vip=\"$VIP\"" "xlb_reason_packets_total{reason=\"pass_not_ip\"}" \
	"xlb_port_rx_packets_total{port=\"net_${PMD}0\",role=\"data\"}" \
	"xlb_port_tx_packets_total{port=\"net_tap0\",role=\"exception\"}" \
	'xlb_lcore_tx_total{lcore="0",cpu="0"}' 'xlb_lcore_pass_total{lcore="0",cpu="0"}' \
	'xlb_lcore_load{lcore="0",cpu="0"}'; do
	grep -qF "$m" "$TOPO_TMP/metrics" || fail "metrics lack $m"
done
grep -F 'xlb_lcore_tx_total{lcore="0",cpu="0"}' "$TOPO_TMP/metrics" | awk '{exit !($2 > 5000)}' ||
	fail "metrics: lcore tx counter too low"

step "health: r3's nginx stops, r3 leaves both rings; it starts, r3 is back"
nginx_stop 3
wait_health $VIP:80/tcp "${REALS[2]}" down || fail "r3 not marked down"
wait_health "[$VIP6]:80/tcp" "${REALS6[2]}" down || fail "r3 (v6) not marked down"
out=$(client spread $VIP 60)
echo "with r3 down: $out"
echo "$out" | grep -q '"r3"' && fail "unhealthy r3 still gets new flows: $out"
echo "$out" | grep -q '"fails": 0' || fail "failures with r3 down: $out"
nginx_start 3 || fail "nginx r3 restart"
wait_health $VIP:80/tcp "${REALS[2]}" up || fail "r3 not back up"
wait_health "[$VIP6]:80/tcp" "${REALS6[2]}" up || fail "r3 (v6) not back up"

# hold_start SECONDS: 24 long-lived connections to each VIP; hold_check
# checks none broke or changed real.  While xlb-dpdk restarts (EAL, the
# verifier, the JIT: 1.5 s idle, up to ~5 s on this shared machine) the
# LB forwards nothing and TCP retransmits (200 ms, then doubling): an
# answer may take that long, so the clients wait up to 15 s for one
# before they count an error.
hold_start() {
	rm -f "$TOPO_TMP"/ready4 "$TOPO_TMP"/ready6
	XLB_CLIENT_TIMEOUT=15 client hold $VIP 24 "$1" "$TOPO_TMP/ready4" > "$TOPO_TMP/hold4.json" &
	holder4=$!
	XLB_CLIENT_TIMEOUT=15 client hold "$VIP6" 24 "$1" "$TOPO_TMP/ready6" > "$TOPO_TMP/hold6.json" &
	holder6=$!
	for _ in $(seq 300); do
		[ -e "$TOPO_TMP/ready4" ] && [ -e "$TOPO_TMP/ready6" ] && return 0
		sleep 0.1
	done
	return 1
}
hold_check() { # WHAT [DRAINED_REAL]
	wait $holder4 || fail "$1: v4 holder"
	wait $holder6 || fail "$1: v6 holder"
	python3 - "$1" "${2:-}" "$TOPO_TMP/hold4.json" "$TOPO_TMP/hold6.json" <<'PY'
import json, sys
from collections import Counter
what, drained = sys.argv[1], sys.argv[2]
for f in sys.argv[3:]:
    hold = json.load(open(f))
    bad = [c for c in hold if c['errors'] or len(c['reals']) != 1]
    assert not bad, (what, 'connections reset or moved', bad)
    per = Counter(c['reals'][0] for c in hold)
    print(what, f.split('/')[-1], ': every connection kept its real', dict(per))
    assert not drained or per[drained] > 0, 'no connection on the drained real (vacuous)'
PY
}

step "drain r1: established connections stay, new ones avoid it"
hold_start 4 || fail "long-lived connections not established"
lbctl real drain $VIP:80 "${REALS[0]}" || fail "drain"
lbctl real drain "[$VIP6]:80" "${REALS6[0]}" || fail "drain v6"
for v in $VIP $VIP6; do
	out=$(client spread $v 90)
	echo "new connections to $v after the drain: $out"
	echo "$out" | grep -q '"r1"' && fail "drained r1 got new flows to $v: $out"
	echo "$out" | grep -q '"fails": 0' || fail "failures after the drain ($v): $out"
done
hold_check "drain" r1 || fail "drain disturbed established connections"
lbctl real undrain $VIP:80 "${REALS[0]}" || fail "undrain"
lbctl real undrain "[$VIP6]:80" "${REALS6[0]}" || fail "undrain v6"

# While xlb-dpdk is down, r1 leaves both rings (weight 0): connections on
# r1 can stay there only if the connection table survived the kill (shared
# maps), and the packets after the restart must all hit it (no LRU miss).
step "kill -9 xlb-dpdk during long-lived connections, r1 out of the rings, start it again"
lbctl -j export > "$TOPO_TMP/before.json"
misses0=$(lbctl -j stats | json 'd["lru"]["misses"]')
hold_start 6 || fail "long-lived connections not established"
kill -9 "$DPDK_PID"
wait "$DPDK_PID" 2>/dev/null
DPDK_PID=
t0=$(date +%s%N)
rm -rf "/var/run/dpdk/$DPDK_PREFIX"
lbctl real set-weight $VIP:80 "${REALS[0]}" 0 || fail "weight 0 while xlb-dpdk is down"
lbctl real set-weight "[$VIP6]:80" "${REALS6[0]}" 0 || fail "weight 0 (v6) while xlb-dpdk is down"
# maps of other sizes are refused, never reinterpreted or remade
dpdk_lb_start "$PMD" --max-vips 8 --max-reals 16 --ring-size 1021 2>/dev/null &&
	fail "xlb-dpdk took maps of other sizes"
grep -q "xlb_vips holds another map" "$TOPO_TMP/dpdk.log" || fail "no message about the maps' sizes"
rm -rf "/var/run/dpdk/$DPDK_PREFIX"
dpdk_lb_start "$PMD" $SIZES || fail "xlb-dpdk restart"
echo "xlb-dpdk back in $((($(date +%s%N) - t0) / 1000000)) ms"
hold_check "kill -9 xlb-dpdk" r1 || fail "xlb-dpdk's restart disturbed established connections"
misses1=$(lbctl -j stats | json 'd["lru"]["misses"]')
[ "$misses1" = "$misses0" ] || fail "connection-table misses $misses0 -> $misses1: the table did not survive"
grep -q "^xlb-dpdk: *running (pid $DPDK_PID)" <(lbctl status) || fail "status after the restart"
out=$(client spread $VIP 60)
echo "new connections with r1 at weight 0: $out"
echo "$out" | grep -q '"r1"' && fail "r1 at weight 0 got new flows: $out"
lbctl real set-weight $VIP:80 "${REALS[0]}" 100 || fail "weight back"
lbctl real set-weight "[$VIP6]:80" "${REALS6[0]}" 100 || fail "weight back (v6)"

step "kill -9 xlbd during long-lived connections, start it again"
hold_start 5 || fail "long-lived connections not established"
kill -9 "$XLBD_PID"
wait "$XLBD_PID" 2>/dev/null
XLBD_PID=
xlbd_start_userspace "$XLBD" || fail "xlbd restart"
lbctl -j export > "$TOPO_TMP/after.json"
cmp -s "$TOPO_TMP/before.json" "$TOPO_TMP/after.json" || fail "state differs after the restarts"
# bad input while the connections run: refused, the state unchanged
lbctl real add $VIP:80 10.10.11.2 weight 1 >/dev/null 2>&1 && fail "duplicate real accepted"
lbctl real add $VIP:80 300.1.1.1 >/dev/null 2>&1 && fail "bad address accepted"
lbctl real set-weight $VIP:80 "${REALS[1]}" 99999999999 >/dev/null 2>&1 && fail "bad weight accepted"
lbctl vip add "[$VIP6]:80/tcp" encap frob >/dev/null 2>&1 && fail "bad encap accepted"
"$MAP_POKE" "$DPDK_RUN/maps" || fail "a malformed map update was not refused"
lbctl -j export > "$TOPO_TMP/after-bad.json"
cmp -s "$TOPO_TMP/before.json" "$TOPO_TMP/after-bad.json" || fail "refused changes changed the state"
hold_check "kill -9 xlbd" || fail "xlbd's restart disturbed established connections"
lbctl status | grep -q "^xlb-dpdk: *running" || fail "status after xlbd's restart"
out=$(client spread $VIP6 60)
echo "$out" | grep -q '"fails": 0' || fail "traffic after the restarts: $out"

# The verbs that read and change the connection table and the allow-list
# work on this backend as on the kernel's (one maps code, kernel_mapio.c).
step "connection table and allow-list through the userspace backend"
n=$(lbctl -j conn list $VIP:80 | json 'd["count"]')
[ "$n" -gt 0 ] || fail "conn list: no entry in the connection table"
lbctl -j conn list $VIP:80 on "${REALS[1]}" | json 'all(c["real"] == "'"${REALS[1]}"'" for c in d["conns"])' |
	grep -q True || fail "conn list on a real lists other reals' flows"
lbctl vip set $VIP:80 allow 192.0.2.0/24 || fail "allow-list"
out=$(client spread $VIP 5)
echo "outside the allow-list: $out"
echo "$out" | grep -q '"fails": 5' || fail "a source outside the allow-list got through: $out"
lbctl -j stats | json 'd["reasons"]["drop_not_allowed"]' | awk '{exit !($1 >= 5)}' ||
	fail "drop_not_allowed not counted"
lbctl vip set $VIP:80 allow 10.10.1.0/24 || fail "allow-list with the client"
out=$(client spread $VIP 30)
echo "$out" | grep -q '"fails": 0' || fail "an allowed source is refused: $out"
lbctl vip set $VIP:80 allow none || fail "allow none"

# Probes through the encapsulated path: xlbd sets the healthcheck tc program
# up on the egress of the exception port's tap (again for each xlb-dpdk: this
# one was restarted above), which encapsulates them toward their real before
# xlb-dpdk sends them out.  A real that answers on its own address but lost
# the VIP is down for clients, and only an encapsulated probe sees it.
step "health probes through the encapsulated path (healthcheck program on the tap)"
lbctl vip set $VIP:80 hc http hc-via encap hc-interval 200 hc-timeout 150 hc-rise 2 hc-fall 2 ||
	fail "vip set hc-via encap"
for r in "${REALS[@]}"; do
	wait_health $VIP:80/tcp "$r" up || fail "$r not healthy through the encapsulated path"
done
lbctl -j status | python3 -c '
import json, sys
h = json.load(sys.stdin)["dataplane"]["healthcheck_program"]
print("healthcheck program:", h["message"])
sys.exit(0 if h["attached"] and "'"$DPDK_TAP"'" in h["message"] else 1)' ||
	fail "healthcheck program not attached on the tap $DPDK_TAP"
ip -n $T-r3 addr del $VIP/32 dev lo
wait_health $VIP:80/tcp "${REALS[2]}" down || fail "a real without the VIP not seen by the encapsulated probe"
ip netns exec $T-cl curl -s --max-time 2 "http://${REALS[2]}/" | grep -q r3 ||
	fail "r3 should still answer on its own address"
ip -n $T-r3 addr add $VIP/32 dev lo
wait_health $VIP:80/tcp "${REALS[2]}" up || fail "r3 not back after the VIP returned"
lbctl vip set $VIP:80 $HC || fail "direct probes again"
echo PASS
