#!/bin/bash
# The established-flow fast path as xlbd programs it (dataplane/xlb_shared.h,
# "Established-flow fast path"), read back from the pinned maps with
# bpftool: a plain VIP gets an epoch in its meta and the same epoch and its
# encapsulation in xlb_vip_fast on every CPU, and its address a fast bit in
# the VIP filter; held keep-alive connections are then forwarded from their
# table entries (lru_hit_fast grows with them, lru_hit_fast == lru_hit's
# growth).  A ring change keeps the epoch; an allow-list (no fast path)
# clears it and applies to the held connections at once; dropping the list
# gives a new epoch, never one handed out before, also after a restart,
# which keeps the epochs it finds, finishes a put cut short and gives one
# to a meta carried over without it; a deleted VIP leaves epoch 0.
# Usage: it_fastpath.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5
T=xlbt-d6-fst-$$
source "$(dirname "$0")/it_lib.sh"
it_begin

# fast_state: {"epoch": E (the meta's), "fast": [(epoch, encap) per CPU], "bit": fast bit}
# of the VIP $VIP:80/tcp, from the pinned maps.
fast_state() {
	local pins="$XLBD_PINS/maps"
	bpftool -j map dump pinned "$pins/xlb_vips" > "$TOPO_TMP/vips.json" &&
	bpftool -j map dump pinned "$pins/xlb_vip_fast" > "$TOPO_TMP/fast.json" &&
	bpftool -j map dump pinned "$pins/xlb_vip_filter" > "$TOPO_TMP/filter.json" &&
	python3 - "$TOPO_TMP" "$VIP" <<'PY'
import json, struct, sys
d, vip = sys.argv[1], [int(x) for x in sys.argv[2].split('.')]
raw = lambda hx: bytes(int(b, 16) for b in hx)
vips = json.load(open(d + '/vips.json'))
meta = [raw(e['value']) for e in vips
        if list(raw(e['key'])[:4]) == vip and struct.unpack('!H', raw(e['key'])[16:18])[0] == 80]
out = {'epoch': None, 'fast': [], 'bit': None}
if meta:
    num, flags, half, encap, aff, epoch = struct.unpack('<IIBBHI', meta[0])
    out['epoch'] = epoch
    for e in json.load(open(d + '/fast.json')):
        if struct.unpack('<I', raw(e['key']))[0] == num:
            out['fast'] = [list(struct.unpack('<IB3x', raw(c['value']))) for c in e['values']]
# the filter's fast bit for the VIP address (xlb_vip_filter_bit(), tests/dataplane/xlbtab.py)
x = struct.unpack('<I', bytes(vip))[0]
bit = ((x * 0x9e3779b1) & 0xffffffff) >> 20
f = raw(json.load(open(d + '/filter.json'))[0]['value'])
fast_bits = struct.unpack('<64Q', f[8 + 512:8 + 1024])
out['bit'] = (fast_bits[bit >> 6] >> (bit & 63)) & 1
print(json.dumps(out))
PY
}
# expect_fast WHAT EPOCH|nonzero ENCAP BIT: every CPU's xlb_vip_fast entry holds EPOCH (the meta's)
expect_fast() {
	local what=$1 want=$2 encap=$3 bit=$4 s
	s=$(fast_state) || fail "$what: cannot read the maps"
	echo "$what: $s"
	python3 - "$s" "$want" "$encap" "$bit" <<'PY' || fail "$what"
import json, sys
s, want, encap, bit = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
e = s['epoch']
assert e is not None, 'no meta'
assert (e != 0) if want == 'nonzero' else (e == int(want)), ('meta epoch', e, want)
assert s['fast'] and all(c == [e, encap if e else 0] for c in s['fast']), ('xlb_vip_fast', s['fast'])
assert s['bit'] == bit, ('fast bit', s['bit'])
PY
}
epoch_now() { fast_state | python3 -c 'import json,sys; print(json.load(sys.stdin)["epoch"])'; }
events() { lbctl -j stats | python3 -c 'import json,sys; e=json.load(sys.stdin)["events"]; print(e.get("lru_hit", 0), e.get("lru_hit_fast", 0))'; }

it_up
lbctl vip add $VIP:80/tcp || fail "vip add"
for r in "${REALS[@]}"; do
	lbctl real add $VIP:80 "$r" || fail "real add $r"
done
expect_fast "a plain vip" nonzero 0 1
e1=$(epoch_now)

# Held connections: their packets after the handshake meet the fast path.
read -r hit0 fast0 <<< "$(events)"
client hold $VIP 8 3 "$TOPO_TMP/ready" > "$TOPO_TMP/hold1.json" &
holder=$!
for _ in $(seq 300); do [ -e "$TOPO_TMP/ready" ] && break; sleep 0.1; done
[ -e "$TOPO_TMP/ready" ] || fail "connections not established"
# a ring change under them keeps the epoch (and their reals)
lbctl real set-weight $VIP:80 "${REALS[0]}" 5 || fail "set-weight"
expect_fast "after a ring change" "$e1" 0 1
wait $holder
hold_check "$TOPO_TMP/hold1.json" "a ring change on the fast path" || fail "held connections"
read -r hit1 fast1 <<< "$(events)"
echo "lru_hit +$((hit1 - hit0)), lru_hit_fast +$((fast1 - fast0))"
[ $((fast1 - fast0)) -ge 100 ] || fail "held connections did not take the fast path"
[ $((fast1 - fast0)) -eq $((hit1 - hit0)) ] || fail "table hits that took the vip lookup on a plain vip"

# An allow-list: no fast path, and it applies to held connections at once.
# The holder talks only once the list is in (the go file): on a loaded host
# its talking time must not run out before the list is set.
client hold $VIP 4 4 "$TOPO_TMP/ready2" "$TOPO_TMP/go2" > "$TOPO_TMP/hold2.json" &
holder=$!
for _ in $(seq 300); do [ -e "$TOPO_TMP/ready2" ] && break; sleep 0.1; done
[ -e "$TOPO_TMP/ready2" ] || fail "connections not established"
read -r _ fast2 <<< "$(events)"
lbctl vip set $VIP:80 allow 192.0.2.0/24 || fail "allow"
expect_fast "allow-listed" 0 0 0
touch "$TOPO_TMP/go2"
sleep 1
read -r _ fast3 <<< "$(events)"
sleep 1
read -r _ fast4 <<< "$(events)"
[ "$fast4" = "$fast3" ] || fail "an allow-listed vip's flows still take the fast path"
wait $holder
python3 - "$TOPO_TMP/hold2.json" <<'PY' || fail "held connections from an unlisted source kept talking"
import json, sys
hold = json.load(open(sys.argv[1]))
assert hold and all(c['errors'] for c in hold), hold[:2]
print(len(hold), 'held connections from an unlisted source cut off by the allow-list')
PY
lbctl vip set $VIP:80 allow none || fail "allow none"
expect_fast "list dropped" nonzero 0 1
e2=$(epoch_now)
[ "$e2" -gt "$e1" ] || fail "epoch $e2 after $e1: not a new one"
lbctl vip set $VIP:80 encap gue || fail "encap gue"
expect_fast "encap gue" nonzero 1 1
e3=$(epoch_now)
[ "$e3" -gt "$e2" ] || fail "epoch $e3 after $e2: not a new one"
lbctl vip set $VIP:80 encap ipip || fail "encap ipip"
e4=$(epoch_now)

# A restart keeps the epochs it finds and hands out only new ones; one
# that finds a meta's epoch without its xlb_vip_fast (stopped between the
# two writes) finishes the put.
xlbd_stop
id=$(bpftool -j map dump pinned "$XLBD_PINS/maps/xlb_vips" | python3 -c '
import json, struct, sys
print(struct.unpack("<I", bytes(int(b, 16) for b in json.load(sys.stdin)[0]["value"][:4]))[0])')
bpftool map update pinned "$XLBD_PINS/maps/xlb_vip_fast" key $id 0 0 0 value 0 0 0 0 0 0 0 0 ||
	fail "cannot clear xlb_vip_fast"
xlbd_start "$XLBD" "$LB_OBJ" || fail "restart"
expect_fast "after a restart" "$e4" 0 1
# A meta without an epoch, as a build before the fast path leaves it (the
# value grew, zero-extended, when the map was carried over): the next start
# gives it one, above every epoch handed out, and its address the fast bit.
xlbd_stop
bpftool -j map dump pinned "$XLBD_PINS/maps/xlb_vips" | python3 -c '
import json, sys
e = json.load(sys.stdin)[0]
print("key", " ".join(e["key"]), "value", " ".join(e["value"][:12] + ["0"] * 4))' > "$TOPO_TMP/old_meta"
# shellcheck disable=SC2046
bpftool map update pinned "$XLBD_PINS/maps/xlb_vips" $(cat "$TOPO_TMP/old_meta") ||
	fail "cannot write an old meta"
bpftool map update pinned "$XLBD_PINS/maps/xlb_vip_fast" key $id 0 0 0 value 0 0 0 0 0 0 0 0 ||
	fail "cannot clear xlb_vip_fast"
xlbd_start "$XLBD" "$LB_OBJ" || fail "start over an old meta"
expect_fast "an old meta adopted" nonzero 0 1
e4b=$(epoch_now)
[ "$e4b" -gt "$e4" ] || fail "epoch $e4b for an old meta: not a new one"
e4=$e4b
lbctl vip set $VIP:80 flags no-sport || fail "flags"
e5=$(epoch_now)
[ "$e5" -gt "$e4" ] || fail "epoch $e5 after a restart at $e4: not a new one"
out=$(client spread $VIP 10)
echo "$out" | grep -q '"fails": 0' || fail "traffic after the changes: $out"

# A deleted VIP leaves no fast path behind.
lbctl vip del $VIP:80 || fail "vip del"
bpftool -j map lookup pinned "$XLBD_PINS/maps/xlb_vip_fast" key $id 0 0 0 | python3 -c '
import json, sys
vals = [bytes(int(b, 16) for b in c["value"]) for c in json.load(sys.stdin)["values"]]
assert all(v == bytes(8) for v in vals), vals
print("deleted vip: xlb_vip_fast cleared")' || fail "a deleted vip kept its fast path"
# No VIP left to remember the epochs by: after a restart a new VIP still
# gets one above all (the table's entries may carry them).
xlbd_stop
xlbd_start "$XLBD" "$LB_OBJ" || fail "restart without VIPs"
lbctl vip add $VIP:80/tcp || fail "vip add again"
lbctl real add $VIP:80 "${REALS[0]}" || fail "real add again"
e6=$(epoch_now)
[ "$e6" -gt "$e5" ] || fail "epoch $e6 after a restart without VIPs, $e5 handed out before"
echo PASS
