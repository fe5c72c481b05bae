#!/bin/bash
# Concurrent lbctl clients: 6 writers each add and remove their own reals
# while readers list and export; every command succeeds, the final state
# holds exactly what the writers left, and the dataplane matches it.
# Usage: it_concurrent.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5
T=xlbt-c7-con-$$
source "$(dirname "$0")/it_lib.sh"
it_begin

it_up
lbctl vip add $VIP:80/tcp || fail "vip add"
for r in "${REALS[@]}"; do
	lbctl real add $VIP:80 "$r" || fail "real add $r"
done

writer() { # W: adds 10.20.W.1..8, removes the odd ones
	local w=$1 i
	for i in $(seq 8); do
		lbctl real add $VIP:80 10.20.$w.$i weight $i state down || { echo "writer $w add $i" >> "$TOPO_TMP/errors"; }
	done
	for i in 1 3 5 7; do
		lbctl real del $VIP:80 10.20.$w.$i || { echo "writer $w del $i" >> "$TOPO_TMP/errors"; }
	done
}
reader() {
	local i
	for i in $(seq 15); do
		lbctl -j vip list > /dev/null || echo "reader list" >> "$TOPO_TMP/errors"
		lbctl -j export > /dev/null || echo "reader export" >> "$TOPO_TMP/errors"
	done
}
pids=()
for w in 1 2 3 4 5 6; do writer $w & pids+=($!); done
for _ in 1 2; do reader & pids+=($!); done
# Traffic runs meanwhile: the added reals are "down", so nothing may fail.
client spread $VIP 150 > "$TOPO_TMP/spread.json" &
pids+=($!)
for p in "${pids[@]}"; do wait $p; done
[ -s "$TOPO_TMP/errors" ] && fail "commands failed: $(cat "$TOPO_TMP/errors")"
grep -q '"fails": 0' "$TOPO_TMP/spread.json" || fail "traffic failed: $(cat "$TOPO_TMP/spread.json")"
lbctl -j real list $VIP:80 | python3 -c '
import json, sys
reals = {r["address"] for r in json.load(sys.stdin)["reals"]}
want = {"10.10.11.2", "10.10.12.2", "10.10.13.2"} | {"10.20.%d.%d" % (w, i) for w in range(1, 7) for i in (2, 4, 6, 8)}
assert reals == want, (sorted(reals ^ want))
print(len(reals), "reals as expected")' || fail "final state wrong"
changes=$(lbctl -j status | python3 -c 'import json,sys; print(json.load(sys.stdin)["changes"])')
[ "$changes" -eq $((4 + 6 * 12)) ] || fail "expected $((4 + 6 * 12)) changes, xlbd counted $changes"
echo PASS
