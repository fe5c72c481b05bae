#!/bin/bash
# Redirect mode and too big.  The LB receives on l0 and sends the
# encapsulated packets out of a second interface, l1 (--egress l0=l1,
# XDP_REDIRECT through the devmap, outer MACs of l1 and its next hop).  The
# path to the reals carries 1420-byte packets (their links' MTU, told to
# xlbd with --mtu l1=1420); the client's MTU is 1500.  A large upload
# through the VIP must succeed: the first full-size segments are answered
# with ICMP "fragmentation needed" (next-hop MTU 1400 = 1420 - 20 for
# IPIP), the client lowers its path MTU and resends.  Without that ICMP
# the segments vanish beyond the router and the upload stalls.
# Then (with ALT_OBJ) a hitless upgrade in redirect mode: xlbd restarted
# with another build of the balancer while connections are held; the new
# program's devmap gets the running one's ports before the switch, so the
# held connections see no error and new ones are redirected.
# Usage: it_egress.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ [ALT_OBJ]
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5 ALT_OBJ=${6:-}
T=xlbt-d6-egr-$$
source "$(dirname "$0")/it_lib.sh"
it_begin

topo_up "$DECAP" "$DECAP_OBJ" || fail "topology"
# The egress: l1 (LB) <-> s-lb2 (router); frames redirected into l1 reach
# s-lb2, which (veth) needs an XDP program: the decap pass program.
ip link add l1 netns "$T-lb" type veth peer name s-lb2 netns "$T-sw" || fail "egress link"
ip -n "$T-lb" addr add 10.10.2.2/24 dev l1
ip -n "$T-sw" addr add 10.10.2.1/24 dev s-lb2
ip -n "$T-lb" link set l1 up
ip -n "$T-sw" link set s-lb2 up
ip netns exec "$T-sw" "$DECAP" attach s-lb2 --object "$DECAP_OBJ" || fail "pass program on s-lb2"
gw2=$(ip -n "$T-sw" -br link show s-lb2 | awk '{print $3}')
# Links toward the reals carry 1420-byte packets.
for i in 1 2 3; do
	ip -n "$T-sw" link set s-r$i mtu 1420
	ip -n "$T-r$i" link set r$i mtu 1420
done
xlbd_prepare || fail "bpffs"
xlbd_start "$XLBD" "$LB_OBJ" --egress l0=l1 --egress-gateway-mac l1=$gw2 --mtu l1=1420 ||
	fail "xlbd start"
lbctl status
lbctl vip add $VIP:80/tcp || fail "vip add"
for r in "${REALS[@]}"; do
	lbctl real add $VIP:80 "$r" || fail "real add $r"
done

out=$(client spread $VIP 30)
echo "redirect mode: $out"
echo "$out" | grep -q '"fails": 0' || fail "connections failed in redirect mode"
# POST 400 kB then a GET on the same connection: nginx answers the GET only
# after it has read (and discarded) the whole body, so its answer proves
# that every segment crossed the path.
ip netns exec "$T-cl" python3 - $VIP <<'PY' || fail "large upload through the VIP"
import socket, sys, time
body = b'u' * 400000
s = socket.create_connection((sys.argv[1], 80), timeout=15)
t0 = time.time()
s.sendall(b'POST / HTTP/1.1\r\nHost: vip\r\nContent-Length: %d\r\n\r\n' % len(body) + body +
          b'GET / HTTP/1.1\r\nHost: vip\r\n\r\n')
data = b''
while data.count(b'HTTP/1.1 200') < 2:
    c = s.recv(4096)
    if not c:
        break
    data += c
print('upload of %d bytes, then a GET, answered in %.2f s' % (len(body), time.time() - t0))
assert data.count(b'HTTP/1.1 200') == 2, data
PY
lbctl -j stats > "$TOPO_TMP/stats.json"
python3 - "$TOPO_TMP/stats.json" <<'PY' || fail "counters"
import json, sys
st = json.load(open(sys.argv[1]))
red, tx = st['events'].get('xdp_redirect', 0), st['events'].get('xdp_tx', 0)
icmp = st['reasons'].get('tx_icmp_frag_needed', 0)
print('xdp_redirect', red, 'xdp_tx', tx, 'tx_icmp_frag_needed', icmp)
assert red > 0, 'nothing was redirected'
assert tx == 0, 'balanced packets left by XDP_TX in redirect mode'
assert icmp > 0, 'no frag-needed was sent: the test did not exercise too-big'
PY
[ -n "$ALT_OBJ" ] || { echo PASS; exit 0; }

client hold $VIP 16 5 "$TOPO_TMP/ready" > "$TOPO_TMP/hold.json" &
holder=$!
for _ in $(seq 300); do [ -e "$TOPO_TMP/ready" ] && break; sleep 0.1; done
[ -e "$TOPO_TMP/ready" ] || fail "connections not established"
red0=$(lbctl -j stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"].get("xdp_redirect", 0))')
xlbd_stop
xlbd_start "$XLBD" "$ALT_OBJ" --egress l0=l1 --egress-gateway-mac l1=$gw2 --mtu l1=1420 ||
	fail "xlbd with the other build"
grep -q "l0: program .* replaced by" "$TOPO_TMP/xlbd.log" || fail "l0 not upgraded"
grep -q "l1: program .* replaced by" "$TOPO_TMP/xlbd.log" || fail "l1 not upgraded"
grep -q "redirect port(s) carried to the new program" "$TOPO_TMP/xlbd.log" || fail "devmap not carried"
kill -0 $holder 2>/dev/null || fail "the held connections ended before the upgrade was done"
wait $holder
hold_check "$TOPO_TMP/hold.json" "an upgrade in redirect mode" || fail "upgrade broke connections"
out=$(client spread $VIP 20)
echo "$out" | grep -q '"fails": 0' || fail "connections failed after the upgrade: $out"
read -r red1 noport <<< "$(lbctl -j stats | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["events"].get("xdp_redirect", 0), s["reasons"].get("drop_redirect", 0))')"
echo "xdp_redirect $red0 -> $red1, drop_redirect $noport"
[ "$red1" -gt "$red0" ] || fail "nothing redirected after the upgrade"
[ "$noport" = 0 ] || fail "$noport packets met an empty devmap slot"
echo PASS
