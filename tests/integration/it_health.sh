#!/bin/bash
# HTTP health check: stop a real's nginx -> the check takes it out of the
# ring and traffic continues error-free on the others; start it again -> it
# returns.  A TCP check is exercised on a second VIP port.
# Usage: it_health.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5
T=xlbt-c7-hlt-$$
source "$(dirname "$0")/it_lib.sh"
it_begin

it_up
lbctl vip add $VIP:80/tcp hc http hc-path / hc-interval 200 hc-timeout 150 hc-rise 2 hc-fall 2 ||
	fail "vip add"
for r in "${REALS[@]}"; do
	lbctl real add $VIP:80 "$r" || fail "real add $r"
done

wait_health() { # REAL STATE
	for _ in $(seq 100); do
		lbctl -j health | python3 -c "
import json, sys
h = json.load(sys.stdin)
sys.exit(0 if any(r['real'] == '$1' and r['health'] == '$2' for r in h['reals']) else 1)" && return 0
		sleep 0.1
	done
	return 1
}
for r in "${REALS[@]}"; do
	wait_health "$r" up || fail "$r never became healthy"
done
lbctl health

nginx_stop 2
wait_health ${REALS[1]} down || fail "stopped real not marked down"
lbctl health
lbctl -j vip show $VIP:80 | python3 -c "
import json, sys
v = json.load(sys.stdin)
r2 = [r for r in v['reals'] if r['address'] == '${REALS[1]}'][0]
assert not r2['in_ring'] and v['reals_in_ring'] == 2, v" || fail "down real still in the ring"
out=$(client spread $VIP 60)
echo "with r2 down: $out"
echo "$out" | grep -q '"fails": 0' || fail "traffic not error-free with a real down: $out"
echo "$out" | grep -q '"r2"' && fail "down real got traffic: $out"

nginx_start 2 || fail "nginx restart"
wait_health ${REALS[1]} up || fail "restarted real not marked up"
out=$(client spread $VIP 60)
echo "r2 back: $out"
echo "$out" | grep -q '"r2"' || fail "healthy again real gets no traffic: $out"
echo "$out" | grep -q '"fails": 0' || fail "errors after return: $out"
grep -q "unhealthy: out of the ring" "$TOPO_TMP/xlbd.log" || fail "no health transition logged"

# Probes through the encapsulated path (healthcheck tc program): a real that
# answers on its own address but lost the VIP is down for clients, and only
# an encapsulated probe sees it.
lbctl -j status | grep -q '"attached": *true, *"message": *"attached on tc egress' ||
	lbctl -j status | python3 -c 'import json,sys; h=json.load(sys.stdin)["dataplane"]["healthcheck_program"]; sys.exit(0 if h["attached"] else 1)' ||
	fail "healthcheck tc program not attached"
lbctl vip set $VIP:80 hc http hc-via encap hc-interval 200 hc-timeout 150 hc-rise 2 hc-fall 2 || fail "vip set hc-via"
lbctl -j vip show $VIP:80 | grep -q '"via": *"encap"' || fail "via not stored"
sleep 1
for r in "${REALS[@]}"; do
	wait_health "$r" up || fail "$r not healthy through the encapsulated path"
done
ip -n $T-r3 addr del $VIP/32 dev lo
wait_health ${REALS[2]} down || fail "real without the VIP not detected by the encapsulated probe"
lbctl health
ip netns exec $T-cl curl -s --max-time 2 "http://${REALS[2]}/" | grep -q r3 || fail "r3 should still answer on its own address"
out=$(client spread $VIP 60)
echo "r3 lost the VIP: $out"
echo "$out" | grep -q '"fails": 0' || fail "traffic not error-free: $out"
ip -n $T-r3 addr add $VIP/32 dev lo
wait_health ${REALS[2]} up || fail "r3 not back after the VIP returned"

# A new real of a checked VIP waits for its first successful probe before it
# takes traffic (new-real-wait probe): one that never answers stays out.
lbctl vip set $VIP:80 hc tcp hc-interval 200 hc-timeout 150 hc-rise 2 hc-fall 2 || fail "tcp check"
lbctl real add $VIP:80 10.10.19.2 || fail "add an unreachable real"
lbctl -j real list $VIP:80 | python3 -c '
import json, sys
r = [x for x in json.load(sys.stdin)["reals"] if x["address"] == "10.10.19.2"][0]
assert r["health"] == "waiting" and r["slots"] == 0, r' || fail "new real not waiting"
sleep 1
lbctl -j real list $VIP:80 | python3 -c '
import json, sys
r = [x for x in json.load(sys.stdin)["reals"] if x["address"] == "10.10.19.2"][0]
assert r["slots"] == 0 and r["health"] in ("waiting", "down"), r' || fail "a real never probed up took slots"
lbctl real del $VIP:80 10.10.19.2 || fail "del"
# (its check port answers nothing at first, then the check moves to nginx's)
lbctl vip add $VIP:8080/tcp hc tcp hc-port 81 hc-interval 200 hc-timeout 150 || fail "vip 8080"
lbctl real add $VIP:8080 ${REALS[0]} || fail "real on 8080"
sleep 1
[ "$(lbctl -j real list $VIP:8080 | python3 -c 'import json,sys; print(json.load(sys.stdin)["reals"][0]["slots"])')" = 0 ] ||
	fail "new real in the ring before a probe passed"
lbctl vip set $VIP:8080 hc tcp hc-port 80 hc-interval 200 hc-timeout 150 || fail "check port 80"
for _ in $(seq 50); do
	[ "$(lbctl -j real list $VIP:8080 | python3 -c 'import json,sys; print(json.load(sys.stdin)["reals"][0]["slots"])')" = 65537 ] && break
	sleep 0.1
done
[ "$(lbctl -j real list $VIP:8080 | python3 -c 'import json,sys; print(json.load(sys.stdin)["reals"][0]["slots"])')" = 65537 ] ||
	fail "real not in the ring after its first probe"

# Health verdicts survive a restart: r2 down with rise 2 and a 60 s interval
# stays down after xlbd restarts, although its server is back (one pass
# would not be enough; without the stored verdict it would start "unknown"
# and count as up).
lbctl vip set $VIP:80 hc tcp hc-interval 60000 hc-timeout 150 hc-rise 2 hc-fall 1 || fail "slow check"
nginx_stop 2
lbctl vip set $VIP:80 hc tcp hc-interval 200 hc-timeout 150 hc-rise 2 hc-fall 1 || fail "fast check"
wait_health ${REALS[1]} down || fail "r2 not down"
lbctl vip set $VIP:80 hc tcp hc-interval 60000 hc-timeout 150 hc-rise 2 hc-fall 1 || fail "slow check"
xlbd_stop
nginx_start 2 || fail "nginx r2"
xlbd_start "$XLBD" "$LB_OBJ" || fail "xlbd restart"
sleep 1
lbctl -j health | python3 -c "
import json, sys
r = [x for x in json.load(sys.stdin)['reals'] if x['real'] == '${REALS[1]}' and x['vip'].endswith(':80/tcp')][0]
assert r['health'] == 'down' and r['slots'] == 0, r" || fail "health verdict not kept across the restart"
echo PASS
