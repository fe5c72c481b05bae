#!/bin/bash
# Control-plane latency and throughput, end to end in the netns topology:
#  1. time from `lbctl real add` to the first connection answered by the new
#     real (a client opens a new connection every ~2 ms meanwhile), next to
#     the round trip of a read-only `lbctl status` measured the same way;
#  2. API updates per second over one persistent socket: changes that
#     rebuild and republish one VIP's ring, the same spread over 8 VIPs
#     (the per-VIP grace period between flips no longer serialises them),
#     and changes that leave the ring unchanged (store + API only).
# Usage: bench_api.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5
T=xlbt-c7-bch-$$
source "$(dirname "$0")/../../scripts/lib/topology.sh"
topo_check
[ -f "$LB_OBJ" ] || topo_skip "dataplane objects not built"
TOPO_TMP=$(mktemp -d /tmp/$T.XXXXXX)
trap 'xlbd_teardown; topo_down; rm -rf "$TOPO_TMP"' EXIT
fail() { echo "FAIL: $*"; tail -20 "$TOPO_TMP/xlbd.log"; exit 1; }

topo_up "$DECAP" "$DECAP_OBJ" || fail topology
xlbd_prepare || fail bpffs
xlbd_start "$XLBD" "$LB_OBJ" || fail xlbd
lbctl vip add $VIP:80/tcp >/dev/null || fail vip
lbctl real add $VIP:80 ${REALS[0]} >/dev/null || fail real

# 1. real add -> first packet steered to it.
ip netns exec $T-cl python3 - $VIP r2 > "$TOPO_TMP/first.txt" <<'PY' &
import socket, sys, time
vip, want = sys.argv[1], sys.argv[2]
end = time.monotonic() + 20
while time.monotonic() < end:
    try:
        s = socket.create_connection((vip, 80), timeout=1)
        s.sendall(b'GET / HTTP/1.0\r\n\r\n')
        data = s.recv(4096)
        s.close()
        if data.split(b'\r\n\r\n', 1)[-1].strip().decode() == want:
            print('%.6f' % time.monotonic())
            break
    except OSError:
        pass
    time.sleep(0.002)
PY
poller=$!
sleep 1
t_add=$(python3 -c 'import time; print("%.6f" % time.monotonic())')
lbctl real add $VIP:80 ${REALS[1]} >/dev/null || fail "real add"
wait $poller
t_first=$(cat "$TOPO_TMP/first.txt")
[ -n "$t_first" ] || fail "the new real never answered"
ref=$(python3 - "$LBCTL" "$XLBD_SOCK" <<'PY'
import subprocess, sys, time
best = 1e9
for _ in range(10):
    t0 = time.monotonic()
    subprocess.run([sys.argv[1], '-s', sys.argv[2], 'status'], stdout=subprocess.DEVNULL, check=True)
    best = min(best, time.monotonic() - t0)
print('%.6f' % best)
PY
)
python3 - "$t_add" "$t_first" "$ref" <<'PY'
import sys
add, first, ref = map(float, sys.argv[1:])
print('real add -> first connection answered by the new real: %.1f ms' % ((first - add) * 1e3))
print('reference, lbctl status round trip (best of 10):        %.1f ms  (ratio %.1f)' % (ref * 1e3, (first - add) / ref))
PY
grep "real add .*${REALS[1]}" "$TOPO_TMP/xlbd.log" | sed -n 's/.*(\([0-9.]*\) ms)$/  of which xlbd applying the change (store + Maglev + ring push): \1 ms/p'

# 2. updates per second over one persistent connection.
for i in $(seq 2 8); do lbctl vip add 10.200.0.$i:80/tcp >/dev/null && lbctl real add 10.200.0.$i:80 ${REALS[0]} >/dev/null; done
lbctl real add $VIP:80 10.10.14.2 state down >/dev/null
python3 - "$XLBD_SOCK" "$VIP" "${REALS[0]}" <<'PY'
import json, socket, sys, time
path, vip, real = sys.argv[1:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
f = s.makefile('rwb')
def call(op, args):
    f.write(json.dumps({'v': 1, 'op': op, 'args': args}).encode() + b'\n')
    f.flush()
    r = json.loads(f.readline())
    assert r['ok'], r
def rate(label, n, args_of, ref=None):
    t0 = time.monotonic()
    for i in range(n):
        call('real.set', args_of(i))
    dt = time.monotonic() - t0
    print('%-58s %7.0f updates/s' % (label, n / dt) + ('' if ref is None else '  (%.2f x the no-ring rate)' % ((n / dt) / ref)))
    return n / dt
key = lambda a: {'address': a, 'port': 80, 'proto': 'tcp'}
noring = rate('weight of a down real (store + API, ring unchanged)', 300,
              lambda i: {'vip': key(vip), 'address': '10.10.14.2', 'weight': 1 + i % 50})
rate('weight of an active real, one VIP (ring rebuilt + pushed)', 100,
     lambda i: {'vip': key(vip), 'address': real, 'weight': 1 + i % 2}, noring)
vips = [vip] + ['10.200.0.%d' % i for i in range(2, 9)]
rate('weight of an active real, 8 VIPs round robin', 200,
     lambda i: {'vip': key(vips[i % 8]), 'address': real, 'weight': 1 + (i // 8) % 2}, noring)
PY
