#!/bin/bash
# One daemon per state, and no start that silently wipes the dataplane
# (issue 13, defects 1 and 2), on one namespace with a veth pair:
#  - a second xlbd on the same state dir, or the same pin root, or the same
#    socket exits non-zero naming the first one's pid, and the first keeps
#    its socket and answers;
#  - an empty store over pins that hold VIPs is refused (the maps keep their
#    VIPs); --adopt-dataplane imports them without moving a ring slot;
#    --reset removes them.
# Usage: it_state.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 LB_OBJ=$4
T=xlbt-c7-st-$$
source "$(dirname "$0")/it_lib.sh"
topo_check
TOPO_TMP=$(mktemp -d /tmp/$T.XXXXXX)
cleanup() { [ -n "${B_PID:-}" ] && kill $B_PID 2>/dev/null; xlbd_teardown; ip netns del $T-lb 2>/dev/null; rm -rf "$TOPO_TMP"; }
trap cleanup EXIT

ip netns add $T-lb || fail netns
ip -n $T-lb link add l0 type veth peer name l1 && ip -n $T-lb link set l0 up && ip -n $T-lb link set l1 up || fail veth
GW_MAC=02:00:00:00:00:01
xlbd_prepare || fail bpffs
xlbd_start "$XLBD" "$LB_OBJ" || fail "xlbd start"
lbctl vip add 10.200.0.1:80/tcp || fail "vip add"
lbctl real add 10.200.0.1:80 10.10.11.2 weight 1 || fail "real add"
lbctl real add 10.200.0.1:80 10.10.12.2 weight 3 || fail "real add"
lbctl vip add 10.200.0.2:53/udp encap gue flags no-sport || fail "vip add 2"
lbctl real add 10.200.0.2:53/udp 10.10.13.2 || fail "real add 3"

# second_xlbd NAME ARGS...: runs a second daemon to completion (it must refuse).
second_xlbd() {
	local name=$1
	shift
	timeout 20 ip netns exec $T-lb "$XLBD" -i l0 -g "$GW_MAC" --src4 $SRC4 -o "$LB_OBJ" -m 0 "$@" \
		</dev/null > "$TOPO_TMP/$name.log" 2>&1
	echo $?
}
mkdir -p "$TOPO_TMP/state2" "$TOPO_TMP/bpf/other"
# 1. Same state dir (other pins, other socket).
rc=$(second_xlbd same-state -d "$TOPO_TMP/state" --pin-root "$TOPO_TMP/bpf/other" -s "$TOPO_TMP/b.sock")
cat "$TOPO_TMP/same-state.log"
[ "$rc" != 0 ] || fail "second daemon on the same state dir ran"
grep -q "state dir .* in use by another xlbd (pid $XLBD_PID)" "$TOPO_TMP/same-state.log" || fail "no holder pid"
# 2. Same pin root (other state, other socket).
rc=$(second_xlbd same-pins -d "$TOPO_TMP/state2" --pin-root "$XLBD_PINS" -s "$TOPO_TMP/b.sock")
cat "$TOPO_TMP/same-pins.log"
[ "$rc" != 0 ] || fail "second daemon on the same pin root ran"
grep -q "pin root .* in use by another xlbd (pid $XLBD_PID)" "$TOPO_TMP/same-pins.log" || fail "no holder pid (pins)"
# 3. Same socket (other state, other pins): refused before it touches anything.
rc=$(second_xlbd same-sock -d "$TOPO_TMP/state2" --pin-root "$TOPO_TMP/bpf/other" -s "$XLBD_SOCK")
cat "$TOPO_TMP/same-sock.log"
[ "$rc" != 0 ] || fail "second daemon on the same socket ran"
grep -q "served by another process" "$TOPO_TMP/same-sock.log" || fail "socket message"
[ -S "$XLBD_SOCK" ] || fail "the first daemon's socket was unlinked"
lbctl status > /dev/null || fail "the first daemon stopped answering"
[ "$(lbctl -j vip list | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["vips"]))')" = 2 ] ||
	fail "the first daemon's state changed"
slots_before=$(lbctl -j vip list | python3 -c '
import json, sys
print(sorted((r["address"], r["slots"]) for v in json.load(sys.stdin)["vips"] for r in v["reals"]))')
echo "slots: $slots_before"

# 4. An empty store over the populated pins: refused, nothing touched.
xlbd_stop
rc=$(second_xlbd empty -d "$TOPO_TMP/state2" --pin-root "$XLBD_PINS" -s "$TOPO_TMP/b.sock")
cat "$TOPO_TMP/empty.log"
[ "$rc" != 0 ] || fail "empty store over populated pins was accepted"
grep -q "refusing to wipe it.*--adopt-dataplane.*--reset" "$TOPO_TMP/empty.log" || fail "refusal message"
[ ! -e "$TOPO_TMP/b.sock" ] || fail "a refused daemon left a socket"
# The pins still hold both VIPs: the first store adopts them as before.
xlbd_start "$XLBD" "$LB_OBJ" || fail "restart on the first store"
[ "$(lbctl -j vip list | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["vips"]))')" = 2 ] ||
	fail "VIPs lost after a refused start"
prog=$(lbctl -j status | python3 -c 'import json,sys; print(json.load(sys.stdin)["dataplane"]["interfaces"][0]["prog_id"])')
xlbd_stop

# 5. --adopt-dataplane: the maps' VIPs and reals come into the new store, rings untouched.
rm -rf "$TOPO_TMP/state"
mkdir "$TOPO_TMP/state"
xlbd_start "$XLBD" "$LB_OBJ" --adopt-dataplane || fail "--adopt-dataplane"
grep -q "adopted from the dataplane: 2 VIP(s), 3 real(s)" "$TOPO_TMP/xlbd.log" || fail "adoption log"
lbctl vip list
slots_after=$(lbctl -j vip list | python3 -c '
import json, sys
print(sorted((r["address"], r["slots"]) for v in json.load(sys.stdin)["vips"] for r in v["reals"]))')
[ "$slots_after" = "$slots_before" ] || fail "ring slots moved on adoption: $slots_before -> $slots_after"
lbctl -j vip show 10.200.0.2:53/udp | python3 -c '
import json, sys
v = json.load(sys.stdin)
assert v["encap"] == "gue" and v["flags"] == ["no-sport"], v' || fail "flags/encap not adopted"
lbctl -j real list 10.200.0.1:80 | python3 -c '
import json, sys
w = {r["address"]: r["weight"] for r in json.load(sys.stdin)["reals"]}
assert 2.5 < w["10.10.12.2"] / w["10.10.11.2"] < 3.5, w' || fail "weights not from the slots"
p2=$(lbctl -j status | python3 -c 'import json,sys; print(json.load(sys.stdin)["dataplane"]["interfaces"][0]["prog_id"])')
[ "$p2" = "$prog" ] || fail "program replaced on adoption"
lbctl real add 10.200.0.1:80 10.10.14.2 || fail "a change after adoption"
xlbd_stop
# --adopt-dataplane over a store that has VIPs is refused.
rc=$(second_xlbd adopt-full -d "$TOPO_TMP/state" --pin-root "$XLBD_PINS" -s "$TOPO_TMP/b.sock" --adopt-dataplane)
[ "$rc" != 0 ] && grep -q "already holds" "$TOPO_TMP/adopt-full.log" || fail "adopt over a full store"

# 6. --reset: an empty store wipes them, as asked.
rm -rf "$TOPO_TMP/state"
mkdir "$TOPO_TMP/state"
xlbd_start "$XLBD" "$LB_OBJ" --reset || fail "--reset"
[ "$(lbctl -j vip list | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["vips"]))')" = 0 ] ||
	fail "--reset kept VIPs"
grep -q "reset: removing the 2 VIP(s)" "$TOPO_TMP/xlbd.log" || fail "reset log"
# Defect 7: ring membership is the slots a real holds, not "has weight": a
# weight of 1 next to 1000000 holds no slot of a 65537-slot ring.
lbctl vip add 10.200.0.3:80 || fail "vip add 3"
lbctl real add 10.200.0.3:80 10.10.11.2 weight 1 || fail "light real"
lbctl real add 10.200.0.3:80 10.10.12.2 weight 1000000 || fail "heavy real"
lbctl real list 10.200.0.3:80
lbctl -j real list 10.200.0.3:80 | python3 -c '
import json, sys
r = {x["address"]: x for x in json.load(sys.stdin)["reals"]}
light, heavy = r["10.10.11.2"], r["10.10.12.2"]
assert light["slots"] == 0 and not light["in_ring"], light
assert heavy["slots"] == 65537 and heavy["in_ring"] and abs(heavy["share"] - 1) < 1e-9, heavy' ||
	fail "slot counts"
lbctl vip del 10.200.0.3:80 || fail "vip del 3"
xlbd_stop
rm -rf "$TOPO_TMP/state"
mkdir "$TOPO_TMP/state"
xlbd_start "$XLBD" "$LB_OBJ" || fail "start over the emptied pins"
xlbd_stop
rc=$(second_xlbd both -d "$TOPO_TMP/state" --pin-root "$XLBD_PINS" -s "$TOPO_TMP/b.sock" --reset --adopt-dataplane)
[ "$rc" = 2 ] || fail "--reset with --adopt-dataplane: rc $rc"
echo PASS
