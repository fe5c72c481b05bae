#!/bin/bash
# Attach paths: libxdp's dispatcher where the kernel allows it, else
# single-program mode; native XDP, else generic with a warning; several
# interfaces.  On this kernel the dispatcher is refused, so `--xdp-mode
# dispatcher` must fail cleanly (nothing left attached), `auto` must fall
# back to single-program mode, and a bridge device (no native XDP) must
# fall back to generic XDP while the veth runs native.
# Usage: it_xdp_modes.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5
T=xlbt-c7-xdp-$$
source "$(dirname "$0")/it_lib.sh"
it_begin

topo_up "$DECAP" "$DECAP_OBJ" || fail "topology"
xlbd_prepare || fail "bpffs"
# A bridge device has no native XDP: the generic fallback must kick in.
ip -n $T-lb link add d0 type bridge && ip -n $T-lb link set d0 up || fail "bridge device"

# Dispatcher only.
if ip netns exec $T-lb "$XLBD" -i l0 -g "$GW_MAC" --src4 $SRC4 -s "$TOPO_TMP/x.sock" \
	-d "$TOPO_TMP/state" --pin-root "$XLBD_PINS" -o "$LB_OBJ" -m 0 --xdp-mode dispatcher \
	> "$TOPO_TMP/disp.log" 2>&1; then
	# A kernel that grants the dispatcher: then it must really be in use.
	echo "dispatcher granted on this kernel"
else
	cat "$TOPO_TMP/disp.log"
	grep -q "dispatcher" "$TOPO_TMP/disp.log" || fail "no clear dispatcher error"
	ip -n $T-lb link show l0 | grep -q "prog/xdp" && { ip -n $T-lb link show l0; fail "program left attached after refusal"; }
fi

# Auto, two interfaces: l0 native, d0 generic.
xlbd_start "$XLBD" "$LB_OBJ" -i d0 || fail "xlbd auto"
lbctl status | tee "$TOPO_TMP/status"
lbctl -j status | python3 -c '
import json, sys
s = json.load(sys.stdin)
i = {x["name"]: x for x in s["dataplane"]["interfaces"]}
assert i["l0"]["mode"] == "native" and i["l0"]["attached"], i
assert i["d0"]["mode"] == "generic" and i["d0"]["attached"], i
assert i["l0"]["libxdp"] in ("dispatcher", "single-program"), i
print("l0:", i["l0"]["libxdp"], i["l0"]["mode"], "d0:", i["d0"]["libxdp"], i["d0"]["mode"])
' || fail "attach modes"
grep -q "d0: native XDP attach failed.*falling back to generic" "$TOPO_TMP/xlbd.log" ||
	fail "no warning for the generic fallback"
lbctl vip add $VIP:80/tcp && lbctl real add $VIP:80 ${REALS[0]} || fail "vip"
out=$(client spread $VIP 20)
echo "$out" | grep -q '"fails": 0' || fail "traffic: $out"
xlbd_stop
ip netns exec $T-lb "$XLBD" --cleanup -i l0 -i d0 -s "$XLBD_SOCK" -d "$TOPO_TMP/state" \
	--pin-root "$XLBD_PINS" -o "$LB_OBJ" -m 0 >> "$TOPO_TMP/xlbd.log" 2>&1 || fail "cleanup"

# Single-program mode asked for explicitly.
xlbd_start "$XLBD" "$LB_OBJ" --xdp-mode single || fail "xlbd single"
lbctl -j status | grep -q '"libxdp": *"single-program"' || fail "not single-program"
out=$(client spread $VIP 20)
echo "$out" | grep -q '"fails": 0' || fail "traffic in single mode: $out"
echo PASS
