#!/bin/bash
# Add a VIP and three reals through lbctl -> HTTP requests succeed and
# spread over the reals; stats and status report them; removing the VIP
# stops the traffic.
# Usage: it_spread.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5
T=xlbt-c7-spr-$$
source "$(dirname "$0")/it_lib.sh"
it_begin

it_up

lbctl vip add $VIP:80/tcp || fail "vip add"
for r in "${REALS[@]}"; do
	lbctl real add $VIP:80 "$r" weight 100 || fail "real add $r"
done
lbctl vip list
out=$(client spread $VIP 300) || fail "client"
echo "$out"
python3 - "$out" <<'PY' || fail "spread"
import json, sys
r = json.loads(sys.argv[1])
assert r['fails'] == 0, r
c = r['counts']
assert sorted(c) == ['r1', 'r2', 'r3'], c
for k, v in c.items():
    assert 300 * 0.2 <= v <= 300 * 0.47, (k, v)
PY
lbctl stats
pk=$(lbctl -j stats | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["vips"][0]["counters"]["packets"])')
[ "$pk" -gt 600 ] || fail "VIP packet counter $pk too low"
lbctl status | tee "$TOPO_TMP/status"
grep -q "l0 .*native" "$TOPO_TMP/status" || fail "status does not show native attach"

# Weights are honoured: r3 at 0 leaves the ring.
lbctl real set-weight $VIP:80 ${REALS[2]} 0 || fail "set-weight"
out=$(client spread $VIP 60)
echo "$out" | grep -q '"r3"' && fail "weight 0 real still gets new flows: $out"
echo "$out" | grep -q '"fails": 0' || fail "failures after set-weight: $out"

lbctl vip del $VIP:80/tcp || fail "vip del"
out=$(client spread $VIP 3)
echo "$out" | grep -q '"fails": 3' || fail "VIP still answers after vip del: $out"
echo PASS
