#!/bin/bash
# Identical tables everywhere: three LB hosts, each with its own xlbd and
# SQLite store (no shared state, so their real ids differ), build the same
# desired state in different orders - VIPs and reals added in other
# sequences, reals added and removed on the way, weights reached through
# other values, one host by `lbctl apply` of a shuffled file.  Each VIP's
# live ring, read from the pinned maps with the bpf() syscall (rings.py),
# must map every slot to the same real address on the three hosts.  One
# weight changed on one host must change its ring (the comparison can fail).
# Usage: it_rings.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ [...]
set -u
XLBD=$1 LBCTL=$2 LB_OBJ=$4
T=xlbt-fl-rng-$$
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../scripts/lib/topology.sh"
topo_check
TOPO_TMP=$(mktemp -d /tmp/$T.XXXXXX)
HOSTS="1 2 3"
cleanup() {
	local n
	for n in $HOSTS; do
		[ -f "$TOPO_TMP/h$n/pid" ] && kill "$(cat "$TOPO_TMP/h$n/pid")" 2>/dev/null
	done
	sleep 0.2
	for n in $HOSTS; do ip netns del "$T-h$n" 2>/dev/null; done
	mountpoint -q "$TOPO_TMP/bpf" && umount "$TOPO_TMP/bpf"
	rm -rf "$TOPO_TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for n in $HOSTS; do tail -5 "$TOPO_TMP/h$n/xlbd.log" 2>/dev/null; done; exit 1; }
l() { local n=$1; shift; "$LBCTL" -s "$TOPO_TMP/h$n/xlbd.sock" "$@" >/dev/null || fail "h$n: lbctl $*"; }

mkdir -p "$TOPO_TMP/bpf"
mount -t bpf bpf "$TOPO_TMP/bpf" || fail "bpffs"
for n in $HOSTS; do
	d="$TOPO_TMP/h$n"
	mkdir -p "$d/state"
	ip netns add "$T-h$n" || fail "netns"
	ip -n "$T-h$n" link add l0 type veth peer name l1
	ip -n "$T-h$n" link set l0 up
	ip -n "$T-h$n" link set l1 up
	ip netns exec "$T-h$n" "$XLBD" -i l0 -g 02:00:00:00:00:01 --src4 10.255.0.0/16 \
		-s "$d/xlbd.sock" -d "$d/state" --pin-root "$TOPO_TMP/bpf/h$n" -o "$LB_OBJ" -m 0 \
		</dev/null >>"$d/xlbd.log" 2>&1 &
	echo $! > "$d/pid"
done
for n in $HOSTS; do
	for _ in $(seq 100); do
		"$LBCTL" -s "$TOPO_TMP/h$n/xlbd.sock" status >/dev/null 2>&1 && break
		sleep 0.1
	done
	"$LBCTL" -s "$TOPO_TMP/h$n/xlbd.sock" status >/dev/null 2>&1 || fail "xlbd h$n did not start"
done

V4=10.200.0.1:80 V6=[2001:db8::1]:443
R4="10.1.0.5:100 10.1.0.1:100 10.1.0.9:50 10.1.0.3:200 10.1.0.7:100 10.1.0.2:1"
R6="2001:db8:1::2:10 2001:db8:1::1:30 2001:db8:1::3:20"
rev() { for x in "$@"; do echo "$x"; done | tac; }

# h1: v4 VIP first, reals in the listed order.
l 1 vip add $V4/tcp
for rw in $R4; do l 1 real add $V4 "${rw%:*}" weight "${rw##*:}"; done
l 1 vip add $V6/udp
for rw in $R6; do l 1 real add $V6/udp "${rw%:*}" weight "${rw##*:}"; done

# h2: v6 VIP first, reals reversed, a real added and removed in between
# (its ids shift), weights reached through other values.
l 2 vip add $V6/udp
for rw in $(rev $R6); do l 2 real add $V6/udp "${rw%:*}" weight 7; done
l 2 vip add $V4/tcp
l 2 real add $V4 10.1.0.200 weight 100
for rw in $(rev $R4); do l 2 real add $V4 "${rw%:*}" weight 1; done
l 2 real del $V4 10.1.0.200
for rw in $R4; do l 2 real set-weight $V4 "${rw%:*}" "${rw##*:}"; done
for rw in $R6; do l 2 real set-weight $V6/udp "${rw%:*}" "${rw##*:}"; done

# h3: the whole state at once, from a file listing things in another order.
python3 - "$R4" "$R6" > "$TOPO_TMP/apply.json" <<'PY'
import json, sys
r4 = [x.rsplit(':', 1) for x in sys.argv[1].split()]
r6 = [x.rsplit(':', 1) for x in sys.argv[2].split()]
reals = lambda rs: [{'address': a, 'weight': int(w)} for a, w in rs]
print(json.dumps({'vips': [
    {'address': '2001:db8::1', 'port': 443, 'proto': 'udp', 'reals': reals(r6[1:] + r6[:1])},
    {'address': '10.200.0.1', 'port': 80, 'proto': 'tcp', 'reals': reals(sorted(r4, key=lambda r: r[1]))},
]}))
PY
l 3 apply -f "$TOPO_TMP/apply.json"

read_rings() {
	for n in $HOSTS; do
		python3 "$HERE/rings.py" "$TOPO_TMP/bpf/h$n" > "$TOPO_TMP/rings.$n" || fail "read rings h$n"
	done
}
read_rings
python3 - "$TOPO_TMP" <<'PY' || fail "the hosts' real ids should differ (the test would be weaker)"
import json, sys
ids = [json.load(open('%s/rings.%d' % (sys.argv[1], n)))['10.200.0.1:80/tcp']['raw'] for n in (1, 2, 3)]
assert len(set(ids)) > 1, 'same ring bytes: ids happen to agree'
print('ring bytes (real ids) differ between hosts, as their ids do')
PY
python3 "$HERE/site.py" rings --by-address "$TOPO_TMP/rings.1" "$TOPO_TMP/rings.2" \
	"$TOPO_TMP/rings.3" || fail "rings differ"

# The check can fail: one weight off on h3 changes h3's ring.
l 3 real set-weight $V4 10.1.0.9 51
read_rings
python3 "$HERE/site.py" rings --by-address "$TOPO_TMP/rings.1" "$TOPO_TMP/rings.3" >/dev/null 2>&1 &&
	fail "a different weight gave the same ring"
l 3 real set-weight $V4 10.1.0.9 50
read_rings
python3 "$HERE/site.py" rings --by-address "$TOPO_TMP/rings.1" "$TOPO_TMP/rings.2" \
	"$TOPO_TMP/rings.3" || fail "rings differ after the weight came back"
echo PASS
