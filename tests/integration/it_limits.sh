#!/bin/bash
# The dataplane's sizes are load-time settings (issue 13, defect 6): xlbd at
# 4096 VIPs x 16 reals (max-vips 4096, max-reals 65538, ring-size 4099 to
# keep the kernel memory of CI runs near 270 MB; the default ring, 65537,
# takes 16x that), one apply through lbctl, the maps sized and filled, a
# connection to the last VIP (dataplane id 4095) answered by the real its
# ring names, and again after a weight change moves it.  Then the pinned
# sizes: a restart without size options keeps them (stored with the state),
# a start with other sizes is refused without touching the dataplane,
# --resize-dataplane to sizes the state does not fit is refused too, and
# --resize-dataplane to sizes it fits replaces the dataplane.  Apply time
# and memory are printed (FIGURE lines).
# Usage: it_limits.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5
T=xlbt-lim-$$
source "$(dirname "$0")/it_lib.sh"
it_begin
command -v bpftool >/dev/null || topo_skip "bpftool missing"

NV=${XLB_LIMITS_VIPS:-4096} NR=16 RING=${XLB_LIMITS_RING:-4099}
MAXR=$((NV * NR + 2)) # and one real more (r3 joins the last VIP)
SIZES=(--max-vips "$NV" --max-reals "$MAXR" --ring-size "$RING")
it_up "${SIZES[@]}" --api-max-request 67108864

# NV-1 VIPs in 10.100/16 and the topology's VIP (10.200.0.1, sorting last),
# 16 reals each; the last VIP's ring holds r2 only (the others weigh 0).
python3 - "$NV" "$NR" "$VIP" "${REALS[1]}" > "$TOPO_TMP/big.yaml" <<'PY'
import sys
nv, nr, vip, r2 = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
print('vips:')
for i in range(nv):
    last = i == nv - 1
    addr = vip if last else '10.100.%d.%d' % ((i + 1) >> 8, (i + 1) & 255)
    print('  - address: %s\n    port: 80\n    proto: tcp\n    reals:' % addr)
    for j in range(nr):
        n = i * nr + j
        real = r2 if last and j == 0 else '172.%d.%d.%d' % (16 + (n >> 16), (n >> 8) & 255, n & 255)
        w = 1 if not last or j == 0 else 0
        print('      - {address: %s, weight: %d}' % (real, w))
PY
t0=$(date +%s%N)
lbctl --timeout 300 apply -f "$TOPO_TMP/big.yaml" || fail "apply of $NV x $NR"
t1=$(date +%s%N)
echo "FIGURE apply ${NV}x${NR} ring $RING: $(( (t1 - t0) / 1000000 )) ms"

# The maps as the kernel sees them: sized by the settings, filled by the apply.
pins="$XLBD_PINS/maps"
maxent() { bpftool -j map show pinned "$pins/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["max_entries"])'; }
[ "$(maxent xlb_vips)" = "$NV" ] || fail "xlb_vips max_entries $(maxent xlb_vips), want $NV"
[ "$(maxent xlb_reals)" = "$MAXR" ] || fail "xlb_reals max_entries $(maxent xlb_reals)"
[ "$(maxent xlb_rings)" = "$((NV * 2 * RING))" ] || fail "xlb_rings max_entries $(maxent xlb_rings)"
bpftool -j map dump pinned "$pins/xlb_vips" > "$TOPO_TMP/vips.json"
python3 - "$TOPO_TMP/vips.json" "$NV" <<'PY' || fail "xlb_vips content"
import json, sys
vips = json.load(open(sys.argv[1]))
nv = int(sys.argv[2])
assert len(vips) == nv, '%d VIPs in xlb_vips, want %d' % (len(vips), nv)
nums = sorted(int.from_bytes(bytes(int(b, 16) for b in e['value'][:4]), 'little') for e in vips)
assert nums == list(range(nv)), 'VIP ids are not 0..%d' % (nv - 1)
# the topology's VIP (10.200.0.1:80/tcp) holds the last id
last = [e for e in vips if [int(b, 16) for b in e['key'][:4]] == [10, 200, 0, 1]]
num = int.from_bytes(bytes(int(b, 16) for b in last[0]['value'][:4]), 'little')
assert num == nv - 1, 'the last VIP has id %d' % num
print('xlb_vips: %d VIPs, ids 0..%d, 10.200.0.1 is %d' % (len(vips), nv - 1, num))
PY
# memlock of each map xlbd holds, once per map id (libbpf and xlbd hold a map twice)
mem=$(for f in /proc/"$XLBD_PID"/fdinfo/*; do grep -s -E '^(map_id|memlock):' "$f" | tr '\n' ' '; echo; done |
	awk '/map_id/ { for (i = 1; i < NF; i++) { if ($i == "map_id:") id = $(i + 1); if ($i == "memlock:") m = $(i + 1) }
		if (!(id in seen)) { seen[id] = 1; s += m } } END { print s + 0 }')
rss=$(awk '/VmHWM/ {print $2}' /proc/"$XLBD_PID"/status)
echo "FIGURE memory ${NV}x${NR} ring $RING: BPF maps $((mem / 1048576)) MiB (memlock of the maps xlbd holds), xlbd peak RSS $((rss / 1024)) MiB"

spread_to() { # REAL_NAME: 20 new connections, all answered by it
	client spread "$VIP" 20 > "$TOPO_TMP/spread.json"
	python3 - "$TOPO_TMP/spread.json" "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s['fails'] == 0 and s['counts'] == {sys.argv[2]: 20}, s
print('20 connections to the last VIP, all answered by', sys.argv[2])
PY
}
spread_to r2 || fail "last VIP not balanced by its ring"
t0=$(date +%s%N)
lbctl real add "$VIP:80" "${REALS[2]}" weight 1 || fail "add r3"
echo "FIGURE one real added to the last VIP: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
lbctl real set-weight "$VIP:80" "${REALS[1]}" 0 || fail "r2 weight 0"
spread_to r3 || fail "last VIP's ring change not followed"
prog=$(bpftool -j prog show pinned "$XLBD_PINS/prog_l0" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')

# The sizes stay with the state: a restart without size options adopts
# (and republishes 4096 identical rings: give it time).
XLBD_WAIT=1200
xlbd_stop
t0=$(date +%s%N)
xlbd_start "$XLBD" "$LB_OBJ" --api-max-request 67108864 || fail "restart without size options"
echo "FIGURE restart (adopt) with ${NV}x${NR}: $(( ($(date +%s%N) - t0) / 1000000 )) ms to serving"
lbctl status | grep -q "(adopted)" || fail "restart did not adopt"
xlbd_stop
# Other sizes over the pinned dataplane: refused, the dataplane untouched.
for args in "--max-vips 512" "--ring-size 65537" "--max-reals 4096" \
	"--max-vips 100 --resize-dataplane"; do
	: > "$TOPO_TMP/xlbd.log"
	# shellcheck disable=SC2086
	if xlbd_start "$XLBD" "$LB_OBJ" $args 2>/dev/null; then
		fail "xlbd started with $args over a dataplane of other sizes"
	fi
	XLBD_PID=
	grep -E "sizes|does not fit" "$TOPO_TMP/xlbd.log" | head -2
	case $args in
	*resize*) grep -q "does not fit the new sizes" "$TOPO_TMP/xlbd.log" || fail "$args: no reason" ;;
	*) grep -q "resize-dataplane" "$TOPO_TMP/xlbd.log" || fail "$args: the way out is not named" ;;
	esac
	now=$(bpftool -j prog show pinned "$XLBD_PINS/prog_l0" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
	[ "$now" = "$prog" ] || fail "$args replaced the program ($prog -> $now)"
	[ "$(maxent xlb_vips)" = "$NV" ] || fail "$args changed xlb_vips"
	spread_to r3 || fail "traffic disturbed by a refused start ($args)"
done
# --resize-dataplane to sizes the state fits: a new dataplane, refilled.
xlbd_start "$XLBD" "$LB_OBJ" --max-vips $((NV + 1)) --resize-dataplane \
	--api-max-request 67108864 || fail "--resize-dataplane"
now=$(bpftool -j prog show pinned "$XLBD_PINS/prog_l0" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
[ "$now" != "$prog" ] || fail "--resize-dataplane kept the old program"
[ "$(maxent xlb_vips)" = "$((NV + 1))" ] || fail "--resize-dataplane: xlb_vips $(maxent xlb_vips)"
spread_to r3 || fail "traffic after --resize-dataplane"
echo "PASS: $NV x $NR applied and balanced; pinned sizes kept, refused, resized"
