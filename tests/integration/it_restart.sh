#!/bin/bash
# kill -9 xlbd in the middle of a stream of long-lived connections, start it
# again: it adopts the pinned program and maps, no connection is reset or
# moved, the desired state is identical, and it keeps serving changes.
# Then SIGTERM: programs stay attached and pinned (hitless stop).
# Usage: it_restart.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5
T=xlbt-c7-rst-$$
source "$(dirname "$0")/it_lib.sh"
it_begin

it_up
lbctl vip add $VIP:80/tcp hc tcp hc-interval 200 hc-timeout 100 || fail "vip add"
for r in "${REALS[@]}"; do
	lbctl real add $VIP:80 "$r" weight 10 || fail "real add $r"
done
lbctl -j export > "$TOPO_TMP/before.json"
prog_before=$(lbctl -j status | python3 -c 'import json,sys; print(json.load(sys.stdin)["dataplane"]["interfaces"][0]["prog_id"])')

client hold $VIP 24 6 "$TOPO_TMP/ready" > "$TOPO_TMP/hold.json" &
holder=$!
topo_shuffle cl $holder &
for _ in $(seq 300); do [ -e "$TOPO_TMP/ready" ] && break; sleep 0.1; done
[ -e "$TOPO_TMP/ready" ] || fail "long-lived connections not established"
kill -9 $XLBD_PID
wait $XLBD_PID 2>/dev/null
XLBD_PID=
sleep 1
xlbd_start "$XLBD" "$LB_OBJ" || fail "xlbd restart"
lbctl status | tee "$TOPO_TMP/status"
grep -q "(adopted)" "$TOPO_TMP/status" || fail "restarted xlbd did not adopt the running program"
lbctl -j export > "$TOPO_TMP/after.json"
cmp -s "$TOPO_TMP/before.json" "$TOPO_TMP/after.json" || fail "state differs after restart"
prog_after=$(lbctl -j status | python3 -c 'import json,sys; print(json.load(sys.stdin)["dataplane"]["interfaces"][0]["prog_id"])')
[ "$prog_before" = "$prog_after" ] || fail "program replaced ($prog_before -> $prog_after)"
# A change while the connections still run.
lbctl real add $VIP:80 10.10.14.2 weight 1 state down || fail "change after restart"
wait $holder || fail "holder"
python3 - "$TOPO_TMP/hold.json" <<'PY' || fail "connections disturbed by the restart"
import json, sys
hold = json.load(open(sys.argv[1]))
bad = [c for c in hold if c['errors'] or len(c['reals']) != 1]
assert not bad, bad
print(len(hold), 'connections kept their real across kill -9 and restart')
PY
lbctl real del $VIP:80 10.10.14.2 || fail "del"

# SIGTERM leaves the dataplane running: traffic still flows with xlbd gone.
xlbd_stop
grep -q "programs stay attached" "$TOPO_TMP/xlbd.log" || fail "no clean stop"
out=$(client spread $VIP 30)
echo "with xlbd stopped: $out"
echo "$out" | grep -q '"fails": 0' || fail "traffic broke after SIGTERM: $out"
ls "$XLBD_PINS"/maps/xlb_conns >/dev/null || fail "maps not pinned after stop"
# Reconciliation: the store is the truth.  Change it behind xlbd's back
# (r1 down) while the dataplane still runs the old state; the next start
# adopts the dataplane and pushes the difference.
python3 - "$TOPO_TMP/state/xlb.db" ${REALS[0]} <<'PY' || fail "store edit"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE reals SET state='down' WHERE address=?", (sys.argv[2],))
db.commit()
PY
out=$(client spread $VIP 30)
echo "$out" | grep -q '"r1"' || fail "r1 should still serve before the restart: $out"
xlbd_start "$XLBD" "$LB_OBJ" || fail "xlbd start after store edit"
grep -q "reconciling with the store" "$TOPO_TMP/xlbd.log" || fail "no reconcile"
out=$(client spread $VIP 60)
echo "after reconcile: $out"
echo "$out" | grep -q '"r1"' && fail "dataplane not reconciled with the store: $out"
echo "$out" | grep -q '"fails": 0' || fail "traffic after reconcile: $out"
xlbd_stop

# --cleanup removes program and pins.
ip netns exec $T-lb "$XLBD" --cleanup -i l0 -s "$XLBD_SOCK" -d "$TOPO_TMP/state" \
	--pin-root "$XLBD_PINS" -o "$LB_OBJ" -m 0 >> "$TOPO_TMP/xlbd.log" 2>&1 || fail "cleanup"
[ -e "$XLBD_PINS/maps/xlb_conns" ] && fail "pins left after --cleanup"
ip -n $T-lb link show l0 | grep -q "prog/xdp" && fail "program left attached after --cleanup"
echo PASS
