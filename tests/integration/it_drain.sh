#!/bin/bash
# Drain a real -> its established connections keep working on it while new
# connections avoid it; undrain brings it back for new connections.
# Usage: it_drain.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5
T=xlbt-c7-drn-$$
source "$(dirname "$0")/it_lib.sh"
it_begin

it_up
lbctl vip add $VIP:80/tcp || fail "vip add"
for r in "${REALS[@]}"; do
	lbctl real add $VIP:80 "$r" || fail "real add $r"
done

# 24 long-lived connections for 5 s; r1 is drained after 1 s.
client hold $VIP 24 5 "$TOPO_TMP/ready" > "$TOPO_TMP/hold.json" &
holder=$!
topo_shuffle cl $holder &
for _ in $(seq 300); do [ -e "$TOPO_TMP/ready" ] && break; sleep 0.1; done
[ -e "$TOPO_TMP/ready" ] || fail "long-lived connections not established"
lbctl real drain $VIP:80 ${REALS[0]} || fail "drain"
lbctl real list $VIP:80
lbctl -j real list $VIP:80 | grep -q '"state": *"draining"' || fail "state not draining"
new=$(client spread $VIP 90)
echo "new connections after drain: $new"
wait $holder || fail "holder"
python3 - "$new" "$TOPO_TMP/hold.json" <<'PY' || fail "drain semantics"
import json, sys
new = json.loads(sys.argv[1])
hold = json.load(open(sys.argv[2]))
assert new['fails'] == 0, new
assert 'r1' not in new['counts'], ('drained real got new flows', new)
errs = [c for c in hold if c['errors']]
assert not errs, ('established connections broke', errs)
moved = [c for c in hold if len(c['reals']) != 1]
assert not moved, ('established connections changed real', moved)
on_r1 = sum(1 for c in hold if c['reals'] == ['r1'])
from collections import Counter
print('established connections per real:', dict(Counter(c['reals'][0] for c in hold if c['reals'])))
assert on_r1 > 0, 'no established connection was on the drained real (test vacuous)'
print('established on drained r1 kept working:', on_r1, 'of', len(hold))
PY
lbctl real undrain $VIP:80 ${REALS[0]} || fail "undrain"
new=$(client spread $VIP 90)
echo "$new" | grep -q '"r1"' || fail "undrained real gets no new flows: $new"
echo PASS
