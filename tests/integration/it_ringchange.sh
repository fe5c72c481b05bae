#!/bin/bash
# Ring changes under long-lived connections whose client moves between
# CPUs: a real added, a weight changed, a real drained, while 48
# keep-alive connections run.  The client starts on CPU 0 and, once the
# ring has changed, is moved to another CPU every 100 ms (topo_shuffle's
# gate): every flow then meets CPUs it never met before the change, the
# case a per-CPU connection table gets wrong (it re-hashes such a flow to
# the new ring; this test fails with one).  Not one connection may break
# or change its real; new connections meanwhile all succeed.
# Usage: it_ringchange.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5
T=xlbt-d6-rch-$$
source "$(dirname "$0")/it_lib.sh"
it_begin
[ "$(nproc)" -ge 2 ] || topo_skip "one CPU: nothing to move between"

it_up
lbctl vip add $VIP:80/tcp || fail "vip add"
lbctl real add $VIP:80 ${REALS[0]} weight 10 || fail "real add r1"
lbctl real add $VIP:80 ${REALS[1]} weight 10 || fail "real add r2"

# Connections open while the client sits on CPU 0; the ring changes before
# they send anything more; then they run while the client moves.
touch "$TOPO_TMP/gate"
client hold $VIP 48 6 "$TOPO_TMP/ready" "$TOPO_TMP/go" > "$TOPO_TMP/hold.json" &
holder=$!
topo_shuffle cl $holder "$TOPO_TMP/gate" &
for _ in $(seq 300); do [ -e "$TOPO_TMP/ready" ] && break; sleep 0.1; done
[ -e "$TOPO_TMP/ready" ] || fail "long-lived connections not established"
lbctl real add $VIP:80 ${REALS[2]} weight 10 || fail "real add r3"
lbctl real set-weight $VIP:80 ${REALS[0]} 40 || fail "set-weight"
rm "$TOPO_TMP/gate"
touch "$TOPO_TMP/go"
sleep 2
new=$(client spread $VIP 60)
echo "new connections after the changes: $new"
lbctl real drain $VIP:80 ${REALS[1]} || fail "drain"
sleep 1
lbctl real set-weight $VIP:80 ${REALS[0]} 1 || fail "set-weight back"
wait $holder || fail "holder"
lbctl stats | grep -E "lru|new_flow" | head -5
python3 - "$new" "$TOPO_TMP/hold.json" <<'PY' || fail "ring changes broke connections"
import json, sys
from collections import Counter
new = json.loads(sys.argv[1])
hold = json.load(open(sys.argv[2]))
assert new['fails'] == 0, new
errs = [c for c in hold if c['errors']]
moved = [c for c in hold if len(c['reals']) != 1]
print('connections per real:', dict(Counter(c['reals'][0] for c in hold if c['reals'])))
assert not errs, ('connections broke', len(errs), errs[:3])
assert not moved, ('connections changed real', len(moved), moved[:3])
assert len(set(c['reals'][0] for c in hold)) >= 2, 'all on one real: the test proves nothing'
print(len(hold), 'connections kept their real across 4 ring changes, client moved between CPUs after them')
PY
echo PASS
