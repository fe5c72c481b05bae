#!/bin/bash
# Junk, malformed, hostile and oversized messages on the API socket get
# structured errors (or a close for oversize), change nothing, and xlbd
# keeps serving other clients.
# Usage: it_junk.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5
T=xlbt-c7-jnk-$$
source "$(dirname "$0")/it_lib.sh"
it_begin

it_up
lbctl vip add $VIP:80/tcp || fail "vip add"
for r in "${REALS[@]}"; do
	lbctl real add $VIP:80 "$r" || fail "real add $r"
done
lbctl -j export > "$TOPO_TMP/before.json"

python3 - "$XLBD_SOCK" <<'PY' || fail "socket abuse"
import json, os, socket, sys
path = sys.argv[1]

def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    return s

def ask(s, raw):
    s.sendall(raw)
    buf = b''
    while not buf.endswith(b'\n'):
        c = s.recv(65536)
        if not c:
            break
        buf += c
    return buf

cases = [
    b'\x00\x01\x02garbage\xff\xfe\n',
    b'not json at all\n',
    b'[1,2,3]\n',
    b'{"v":2,"op":"vip.list"}\n',
    b'{"v":1}\n',
    b'{"v":1,"op":"vip.add","args":{"address":"10.200.0.1","port":80}}\n',  # exists
    b'{"v":1,"op":"vip.add","args":{"address":"10.200.0.9","port":99999}}\n',
    b'{"v":1,"op":"vip.del","args":{"address":"1.2.3.4","port":1}}\n',
    b'{"v":1,"op":"real.add","args":{"vip":{"address":"10.200.0.1","port":80},"address":"10.9.9.9","weight":-5}}\n',
    b'{"v":1,"op":"real.add","args":{"vip":{"address":"10.200.0.1","port":80},"address":"10.9.9.9","evil":1}}\n',
    b'{"v":1,"op":"apply","args":{"config":{"vips":[{"address":"10.1.1.1","port":1,"reals":[{"address":"x"}]}]}}}\n',
    b'{"v":1,"op":"shutdown"}\n',
    b'{"v":1,"op":"vip.list","args":' + b'[' * 5000 + b']' * 5000 + b'}\n',
    b'{"v":1,"v":1,"op":"vip.list"}\n',
]
s = conn()
for raw in cases:
    r = json.loads(ask(s, raw))
    assert r.get('ok') is False and r['error']['code'] and r['error']['message'], (raw[:60], r)
    print('%-60r -> %s %s' % (raw[:60], r['error']['code'], r['error']['message'][:70]))
# The same connection still works after all that.
r = json.loads(ask(s, b'{"v":1,"op":"ping","id":42}\n'))
assert r['ok'] is True and r['id'] == 42, r
# Oversized: 300 KiB without a newline -> E2BIG and the connection closes.
s2 = conn()
try:
    s2.sendall(b'{"v":1,"op":"vip.list","args":{"pad":"' + b'A' * (300 * 1024))
except OSError:
    pass
buf = b''
try:
    while True:
        c = s2.recv(65536)
        if not c:
            break
        buf += c
except OSError:
    pass
r = json.loads(buf.split(b'\n')[0])
assert r['ok'] is False and r['error']['code'] == 'E2BIG', r
print('oversized ->', r['error']['code'])
# A client that connects and says nothing, and one that vanishes mid-line.
idle = conn()
s3 = conn(); s3.sendall(b'{"v":1,"op":"vip.li'); s3.close()
# Others are served meanwhile.
r = json.loads(ask(conn(), b'{"v":1,"op":"vip.list"}\n'))
assert r['ok'] is True and len(r['result']['vips']) == 1, r
idle.close()
PY
# Access is by socket permissions: 0660, so an unprivileged user is refused.
[ "$(stat -c %a "$XLBD_SOCK")" = 660 ] || fail "socket mode $(stat -c %a "$XLBD_SOCK"), want 660"
chmod 755 "$TOPO_TMP"
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$LBCTL" -s "$XLBD_SOCK" vip list 2>&1
	[ $? = 3 ] || fail "an unprivileged user reached the socket"
fi
lbctl -j export > "$TOPO_TMP/after.json"
cmp -s "$TOPO_TMP/before.json" "$TOPO_TMP/after.json" || fail "state changed by bad requests"
kill -0 $XLBD_PID || fail "xlbd died"
out=$(client spread $VIP 30)
echo "$out" | grep -q '"fails": 0' || fail "traffic broke: $out"
echo PASS
