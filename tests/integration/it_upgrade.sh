#!/bin/bash
# Hitless program upgrades and where pins live.
#  1. Under load (24 keep-alive connections whose client moves between
#     CPUs, new connections all along), xlbd is restarted with another
#     build of the balancer (same source for -mcpu=v2: other instructions,
#     same maps): the new program replaces the old in one step on the
#     interface, no connection breaks, status shows the new tag running
#     (the kernel's tag, read with bpftool, of the program attached);
#     after a ring change the held connections keep their reals (the
#     connection table was carried over).
#  2. A build whose xlb_vips key changed cannot be migrated: xlbd refuses
#     before touching anything, and the running program keeps serving.
#  3. kill -9 and every pin removed: the next start recognises xlb's own
#     program on the interface, pins its maps again, keeps the flows.
#  4. A pin root that is not on a bpffs is refused (no private mount).
# Usage: it_upgrade.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ ALT_OBJ BAD_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5 ALT_OBJ=$6 BAD_OBJ=$7
T=xlbt-d6-upg-$$
source "$(dirname "$0")/it_lib.sh"
it_begin

prog_id() { lbctl -j status | python3 -c 'import json,sys; print(json.load(sys.stdin)["dataplane"]["interfaces"][0]["prog_id"])'; }
# spread_loop FILE: new connections until the file "stop" appears; all must succeed.
spread_loop() {
	while [ ! -e "$TOPO_TMP/stop" ]; do client spread $VIP 5 >> "$1"; done
}
spread_check() {
	python3 - "$1" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fails = sum(r['fails'] for r in runs)
assert runs and fails == 0, ('new connections failed during the change', fails, runs[-3:])
print(sum(sum(r['counts'].values()) for r in runs), 'new connections during the change, none failed')
PY
}

it_up
lbctl vip add $VIP:80/tcp || fail "vip add"
lbctl real add $VIP:80 ${REALS[0]} weight 10 || fail "real add"
lbctl real add $VIP:80 ${REALS[1]} weight 10 || fail "real add"
old=$(prog_id)
# The tag the kernel reports for the program attached to l0 (not xlbd's word).
kernel_tag() { ip netns exec "$T-lb" bpftool -j net show dev l0 | python3 -c '
import json, subprocess, sys
xdp = json.load(sys.stdin)[0]["xdp"]
assert len(xdp) == 1, xdp
out = subprocess.run(["bpftool", "-j", "prog", "show", "id", str(xdp[0]["id"])], capture_output=True, check=True).stdout
print(xdp[0]["id"], json.loads(out)["tag"])'; }
read -r kid0 ktag0 <<< "$(kernel_tag)"
[ "$kid0" = "$old" ] || fail "status prog id $old, kernel runs $kid0"

# 1. another build under load
client hold $VIP 24 8 "$TOPO_TMP/ready" > "$TOPO_TMP/hold1.json" &
holder=$!
topo_shuffle cl $holder &
for _ in $(seq 300); do [ -e "$TOPO_TMP/ready" ] && break; sleep 0.1; done
[ -e "$TOPO_TMP/ready" ] || fail "connections not established"
spread_loop "$TOPO_TMP/spread1" &
spreader=$!
sleep 0.5
xlbd_stop
xlbd_start "$XLBD" "$ALT_OBJ" || fail "xlbd with the other build"
new=$(prog_id)
lbctl status | tee "$TOPO_TMP/status1"
[ "$new" != "$old" ] || fail "the program was not replaced ($old)"
grep -q "(upgraded)" "$TOPO_TMP/status1" || fail "status does not say upgraded"
grep -q "^running:   the object " "$TOPO_TMP/status1" || fail "status does not say the object runs"
grep -q "replaced by .* in one step" "$TOPO_TMP/xlbd.log" || fail "no replacement logged"
read -r kid1 ktag1 <<< "$(kernel_tag)"
[ "$kid1" = "$new" ] || fail "status prog id $new, kernel runs $kid1"
[ "$ktag1" != "$ktag0" ] || fail "the kernel still runs tag $ktag0"
stag=$(lbctl -j status | python3 -c 'import json,sys; d=json.load(sys.stdin)["dataplane"]; print(d["object_tag"], d["interfaces"][0]["tag"])')
[ "$stag" = "$ktag1 $ktag1" ] || fail "status says tags '$stag', the kernel runs $ktag1"
kill -0 $holder 2>/dev/null || fail "the held connections ended before the upgrade was done"
sleep 1
lbctl real add $VIP:80 ${REALS[2]} weight 10 || fail "ring change after the upgrade"
wait $holder
touch "$TOPO_TMP/stop"
wait $spreader
rm -f "$TOPO_TMP/stop" "$TOPO_TMP/ready"
hold_check "$TOPO_TMP/hold1.json" "an upgrade and a ring change" || fail "upgrade broke connections"
spread_check "$TOPO_TMP/spread1" || fail "upgrade broke new connections"

# 2. a layout that cannot be migrated: refused, the running program stays
before=$(prog_id)
xlbd_stop
ip netns exec "$T-lb" "$XLBD" -i l0 -g "$GW_MAC" --src4 $SRC4 -s "$XLBD_SOCK" -d "$TOPO_TMP/state" \
	--pin-root "$XLBD_PINS" -o "$BAD_OBJ" -m 0 --verify off > "$TOPO_TMP/refused.log" 2>&1 &
refused=$!
for _ in $(seq 100); do kill -0 $refused 2>/dev/null || break; sleep 0.1; done
kill -0 $refused 2>/dev/null && { kill $refused; fail "xlbd started with an incompatible layout"; }
wait $refused && fail "xlbd exited 0 on an incompatible layout"
cat "$TOPO_TMP/refused.log"
grep -q "map xlb_vips changed its layout" "$TOPO_TMP/refused.log" || fail "the refusal does not name the map"
out=$(client spread $VIP 20)
echo "$out" | grep -q '"fails": 0' || fail "traffic broke after the refusal: $out"
xlbd_start "$XLBD" "$ALT_OBJ" || fail "xlbd after the refusal"
[ "$(prog_id)" = "$before" ] || fail "the refused start changed the program"

# 3. every pin gone after kill -9: xlb's own program is recognised
client hold $VIP 16 4 "$TOPO_TMP/ready2" > "$TOPO_TMP/hold3.json" &
holder=$!
for _ in $(seq 300); do [ -e "$TOPO_TMP/ready2" ] && break; sleep 0.1; done
kill -9 $XLBD_PID
wait $XLBD_PID 2>/dev/null
XLBD_PID=
rm -rf "$XLBD_PINS"/maps "$XLBD_PINS"/prog_*
xlbd_start "$XLBD" "$ALT_OBJ" || fail "xlbd after its pins vanished"
grep -q "re-adopting it" "$TOPO_TMP/xlbd.log" || fail "own program not recognised"
[ "$(prog_id)" = "$before" ] || fail "the program was replaced instead of re-adopted"
ls "$XLBD_PINS"/maps/xlb_conns >/dev/null || fail "maps not pinned again"
lbctl real set-weight $VIP:80 ${REALS[0]} 1 || fail "ring change after re-adoption"
wait $holder
hold_check "$TOPO_TMP/hold3.json" "lost pins and a ring change" || fail "re-adoption lost flows"

# 4. a pin root off any bpffs is refused, with the reason
mkdir -p "$TOPO_TMP/plain"
out=$(ip netns exec "$T-lb" "$XLBD" -i l0 -g "$GW_MAC" --src4 $SRC4 -s "$TOPO_TMP/x.sock" \
	-d "$TOPO_TMP/state2" --pin-root "$TOPO_TMP/plain/xlb" -o "$LB_OBJ" -m 0 2>&1) &&
	fail "xlbd accepted a pin root off bpffs"
echo "$out" | grep -q "is not on a bpffs" || fail "no reason given: $out"
out=$(ip netns exec "$T-lb" "$XLBD" -i l0 -g "$GW_MAC" --src4 $SRC4 -s "$TOPO_TMP/x.sock" \
	-d "$TOPO_TMP/state2" --pin-root /sys/fs/bpf/xlbt-$$ -o "$LB_OBJ" -m 0 2>&1) &&
	fail "xlbd mounted a private bpffs"
echo "$out" | grep -q "private mount namespace" || fail "no reason given: $out"
echo PASS
