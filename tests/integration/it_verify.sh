#!/bin/bash
# Pre-validation: xlbd runs xlb's verifier on balancer.bpf.o before the
# kernel sees it.  With --verify enforce (the default) it refuses to attach
# an object the verifier rejects, leaving the interface untouched; what the
# verifier accepts is attached and `lbctl status` shows the verdict and the
# stack depths.  `lbctl verify` gives the same verdict with `xbpf verify`'s
# exit codes: 0 accepted, 1 rejected, 2 unusable input.
# Usage: it_verify.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5
T=xlbt-c7-vfy-$$
source "$(dirname "$0")/it_lib.sh"
it_begin

"$LBCTL" verify "$LB_OBJ" 2>"$TOPO_TMP/verify.err"
verdict=$?
case $verdict in
0) echo "xlb's verifier accepts $LB_OBJ" ;;
1) echo "xlb's verifier rejects $LB_OBJ" ;;
2) grep -q "no xlb verifier" "$TOPO_TMP/verify.err" && topo_skip "this build has no xlb verifier"
   fail "lbctl verify could not read $LB_OBJ: $(cat "$TOPO_TMP/verify.err")" ;;
*) fail "lbctl verify exit code $verdict" ;;
esac
"$LBCTL" -j verify "$LB_OBJ" | python3 -c '
import json, sys
v = json.load(sys.stdin)
assert v["programs"] and all("stack_depth" in p for p in v["programs"]), v
assert v["accepted"] == all(p["accepted"] for p in v["programs"]), v' || fail "verify JSON"
# Junk is unusable input (exit 2), not crashed on.
head -c 4096 /dev/urandom > "$TOPO_TMP/junk.o"
"$LBCTL" verify "$TOPO_TMP/junk.o" >/dev/null 2>&1
[ $? -eq 2 ] || fail "junk object not refused with exit 2"
"$LBCTL" verify "$TOPO_TMP/no-such.o" >/dev/null 2>&1
[ $? -eq 2 ] || fail "missing object not refused with exit 2"

topo_up "$DECAP" "$DECAP_OBJ" || fail "topology"
xlbd_prepare || fail "bpffs"
if [ $verdict = 1 ]; then
	XLBD_VERIFY=enforce xlbd_start "$XLBD" "$LB_OBJ" 2>/dev/null && fail "xlbd attached a rejected object"
	grep -q "xlb verifier rejected" "$TOPO_TMP/xlbd.log" || fail "no refusal message"
	ip -n $T-lb link show l0 | grep -q "prog/xdp" && fail "interface touched after refusal"
	# --verify warn (or off) overrides, loudly.
	XLBD_VERIFY=warn xlbd_start "$XLBD" "$LB_OBJ" || fail "xlbd --verify warn"
	grep -q "loading anyway" "$TOPO_TMP/xlbd.log" || fail "no warning for the override"
	lbctl -j status | grep -q '"result": *"rejected"' || fail "status hides the rejection"
else
	XLBD_VERIFY=enforce xlbd_start "$XLBD" "$LB_OBJ" || fail "xlbd refused an accepted object"
	lbctl -j status | grep -q '"result": *"accepted"' || fail "status does not show acceptance"
fi
lbctl status
lbctl -j status | python3 -c '
import json, sys
h = json.load(sys.stdin)["dataplane"]["healthcheck_program"]
assert h["verifier"]["result"] == "accepted" and h["attached"], h' || fail "healthcheck object not verified"

# Every object xlbd loads goes through the gate, read once: the bytes verified
# are the bytes loaded.  A healthcheck object xlb's verifier rejects is not
# loaded under enforce (probes fall back to direct ones).
xlbd_stop
ip netns exec $T-lb "$XLBD" --cleanup -i l0 --pin-root "$XLBD_PINS" -d "$TOPO_TMP/state" -o "$LB_OBJ" \
	>> "$TOPO_TMP/xlbd.log" 2>&1 || fail "cleanup"
mkdir "$TOPO_TMP/objs"
cp "$LB_OBJ" "$TOPO_TMP/objs/balancer.bpf.o"
cat > "$TOPO_TMP/bad_hc.c" <<'C'
#include <linux/bpf.h>
__attribute__((section("tc"), used)) int xlb_healthcheck(struct __sk_buff *skb)
{
	/* reads the packet without checking it against data_end */
	return *(volatile int *)(long)skb->data;
}
char _license[] __attribute__((section("license"), used)) = "GPL";
C
clang -target bpf -O2 -I/usr/include/$(uname -m)-linux-gnu -c "$TOPO_TMP/bad_hc.c" \
	-o "$TOPO_TMP/objs/healthcheck.bpf.o" || fail "build the rejected healthcheck object"
"$LBCTL" verify "$TOPO_TMP/objs/healthcheck.bpf.o" >/dev/null 2>&1
[ $? = 1 ] || fail "xlb's verifier accepts the bad healthcheck object"
XLBD_SOCK_SAVE=$XLBD_SOCK
ip netns exec $T-lb strace -f -qq -e trace=openat -o "$TOPO_TMP/strace" "$XLBD" -i l0 -g "$GW_MAC" \
	--src4 $SRC4 -s "$XLBD_SOCK" -d "$TOPO_TMP/state" --pin-root "$XLBD_PINS" \
	-o "$TOPO_TMP/objs/balancer.bpf.o" -m 0 </dev/null >> "$TOPO_TMP/xlbd.log" 2>&1 &
XLBD_PID=$!
for _ in $(seq 100); do "$LBCTL" -s "$XLBD_SOCK" status >/dev/null 2>&1 && break; sleep 0.1; done
lbctl -j status | python3 -c '
import json, sys
d = json.load(sys.stdin)["dataplane"]
h = d["healthcheck_program"]
assert d["verifier"]["result"] == "accepted", d["verifier"]
assert h["verifier"]["result"] == "rejected" and not h["attached"], h' || fail "rejected healthcheck loaded"
for o in balancer healthcheck; do
	n=$(grep -c "openat(.*objs/$o.bpf.o" "$TOPO_TMP/strace")
	[ "$n" = 1 ] || fail "$o.bpf.o opened $n times (verified bytes must be the loaded ones)"
done
echo "balancer.bpf.o and healthcheck.bpf.o: each opened once, verified and loaded from memory"
# Stop the traced xlbd itself (its pid starts strace's lines), then strace.
kill "$(awk 'NR == 1 {print $1}' "$TOPO_TMP/strace")"
wait $XLBD_PID
XLBD_PID=
echo PASS
