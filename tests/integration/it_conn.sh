#!/bin/bash
# The connection table and the per-VIP features through lbctl: conn list /
# lookup / flush, active flows per real, session affinity, source
# allow-lists, QUIC server ids; all kept across a restart.
# Usage: it_conn.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5
T=xlbt-d6-con-$$
CLIENT=10.10.1.2
source "$(dirname "$0")/it_lib.sh"
it_begin

it_up
lbctl vip add $VIP:80/tcp || fail "vip add"
for r in "${REALS[@]}"; do
	lbctl real add $VIP:80 "$r" || fail "real add $r"
done

# Held connections: in the table, established, counted as active.
client hold $VIP 12 3 "$TOPO_TMP/ready" > "$TOPO_TMP/hold.json" &
holder=$!
for _ in $(seq 300); do [ -e "$TOPO_TMP/ready" ] && break; sleep 0.1; done
[ -e "$TOPO_TMP/ready" ] || fail "connections not established"
sleep 0.5
lbctl conn list $VIP:80 | tee "$TOPO_TMP/conns"
lbctl -j conn list $VIP:80 > "$TOPO_TMP/conns.json"
lbctl -j stats > "$TOPO_TMP/stats.json"
python3 - "$TOPO_TMP/conns.json" "$TOPO_TMP/stats.json" <<'PY' || fail "conn list / active flows"
import json, sys
conns = json.load(open(sys.argv[1]))['conns']
est = [c for c in conns if c['state'] == 'established']
assert len(est) >= 12, ('held connections not listed as established', conns)
st = json.load(open(sys.argv[2]))
active = sum(r['active_flows'] for v in st['vips'] for r in v['reals'])
assert active >= 12, ('active flows', active)
print(len(est), 'established entries,', active, 'active flows')
PY
# lookup of a listed flow names its real (the table)...
read -r cport creal <<< "$(python3 -c 'import json,sys; c=[c for c in json.load(open(sys.argv[1]))["conns"] if c["state"]=="established"][0]; print(c["port"], c["real"])' "$TOPO_TMP/conns.json")"
out=$(lbctl -j conn lookup $VIP:80 $CLIENT:$cport)
echo "lookup $cport: $out"
echo "$out" | grep -q '"from": *"table"' && echo "$out" | grep -q "\"real\": *\"$creal\"" || fail "lookup of a table flow"
wait $holder
# ...and of a new flow, the ring: connecting from that port meets that real.
out=$(lbctl -j conn lookup $VIP:80 $CLIENT:33333)
echo "lookup 33333: $out"
echo "$out" | grep -q '"from": *"ring"' || fail "lookup of an unseen flow is not the ring's"
want=$(echo "$out" | python3 -c 'import json,sys; r=json.load(sys.stdin)["real"]; print("r%d" % (int(r.split(".")[2]) - 10))')
got=$(ip netns exec "$T-cl" python3 -c "
import socket
s = socket.create_connection(('$VIP', 80), timeout=3, source_address=('$CLIENT', 33333))
s.sendall(b'GET / HTTP/1.0\r\n\r\n'); d = b''
while True:
    c = s.recv(4096)
    if not c: break
    d += c
print(d.split(b'\r\n\r\n', 1)[1].strip().decode())")
[ "$got" = "$want" ] || fail "lookup predicted $want, the connection met $got"
# flush one real's entries
lbctl conn flush $VIP:80 on ${REALS[0]} || fail "flush"
left=$(lbctl -j conn list $VIP:80 on ${REALS[0]} | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])')
[ "$left" = 0 ] || fail "$left entries of r1 left after the flush"

# Session affinity: every connection of the client to one real.
lbctl vip set $VIP:80 affinity 60 || fail "affinity"
out=$(client spread $VIP 30)
echo "affinity 60: $out"
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["fails"] == 0 and len(d["counts"]) == 1, d' ||
	fail "affinity did not keep the client on one real"
lbctl vip set $VIP:80 affinity 0 || fail "affinity off"
out=$(client spread $VIP 30)
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["counts"]) > 1, d' ||
	fail "affinity off: still one real"

# Allow-lists: the client's /24 not listed -> dropped and counted.
lbctl vip set $VIP:80 allow 10.10.9.0/24,192.0.2.0/24 || fail "allow"
before=$(lbctl -j stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["reasons"].get("drop_not_allowed", 0))')
out=$(client spread $VIP 3)
echo "not allowed: $out"
echo "$out" | grep -q '"fails": 3' || fail "a source off the allow-list got through"
after=$(lbctl -j stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["reasons"].get("drop_not_allowed", 0))')
[ "$after" -gt "$before" ] || fail "drop_not_allowed not counted"
lbctl vip set $VIP:80 allow 10.10.1.0/24 || fail "allow client"
out=$(client spread $VIP 10)
echo "$out" | grep -q '"fails": 0' || fail "listed source dropped: $out"
lbctl vip set $VIP:80 allow 10.10.1.1/16 >/dev/null 2>&1 && fail "prefix with host bits accepted"

# QUIC server ids: in the dataplane's map, 24 bits (CID version 2).
lbctl real set-server-id $VIP:80 ${REALS[1]} 1193046 || fail "server id"
lbctl real add $VIP:80 ${REALS[2]} server-id 7 >/dev/null 2>&1 && fail "duplicate real accepted"
lbctl real set-server-id $VIP:80 ${REALS[2]} 1193046 >/dev/null 2>&1 && fail "a server id given to two reals"
rid=$(lbctl -j real list $VIP:80 | python3 -c "import json,sys; print([r['id'] for r in json.load(sys.stdin)['reals'] if r['address'] == '${REALS[1]}'][0])")
val=$(bpftool -j map lookup pinned "$XLBD_PINS/maps/xlb_server_ids" key 0x56 0x34 0x12 0x00 | python3 -c 'import json,sys; v=json.load(sys.stdin)["value"]; print(int(v[0], 16) | int(v[1], 16) << 8)')
[ "$val" = "$rid" ] || fail "xlb_server_ids[0x123456] = $val, want real id $rid"

# All of it is desired state: kept across a restart.
lbctl vip set $VIP:80 affinity 30 || fail "affinity 30"
lbctl -j export > "$TOPO_TMP/before.json"
grep -q '"server_id": *1193046' "$TOPO_TMP/before.json" && grep -q '"affinity": *30' "$TOPO_TMP/before.json" &&
	grep -q '10.10.1.0/24' "$TOPO_TMP/before.json" || fail "export lacks the settings: $(cat "$TOPO_TMP/before.json")"
xlbd_stop
xlbd_start "$XLBD" "$LB_OBJ" || fail "restart"
lbctl -j export > "$TOPO_TMP/after.json"
cmp -s "$TOPO_TMP/before.json" "$TOPO_TMP/after.json" || fail "export differs after restart"
echo PASS
