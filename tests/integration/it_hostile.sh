#!/bin/bash
# The API cannot be stalled (issue 13, defect 5).  16 users (uids 61000..)
# open 64 connections each, 1,024 in all, and misbehave: idle connections,
# byte-a-second slowloris lines, pipelined requests never read, a 200 KiB
# line that never ends.  While xlbd holds them all, root's lbctl keeps
# answering within its timeout and the systemd watchdog keeps being fed
# (NOTIFY_SOCKET/WATCHDOG_USEC as systemd sets them); a 65th connection of
# one user is refused with EMFILE; afterwards the idle and write timeouts
# close what is left.
# Usage: it_hostile.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 LB_OBJ=$4
T=xlbt-c7-hst-$$
source "$(dirname "$0")/it_lib.sh"
topo_check
command -v setpriv >/dev/null || topo_skip "setpriv missing"
getent group nogroup >/dev/null || topo_skip "no nogroup group"
TOPO_TMP=$(mktemp -d /tmp/$T.XXXXXX)
cleanup() {
	for p in ${lst:-} ${hostile:-}; do kill $p 2>/dev/null; done
	xlbd_teardown; ip netns del $T-lb 2>/dev/null; rm -rf "$TOPO_TMP"
}
trap cleanup EXIT
chmod 755 "$TOPO_TMP"

ip netns add $T-lb || fail netns
ip -n $T-lb link add l0 type veth peer name l1 && ip -n $T-lb link set l0 up && ip -n $T-lb link set l1 up || fail veth
GW_MAC=02:00:00:00:00:01
xlbd_prepare || fail bpffs

# The watchdog listener: every datagram with its arrival time.
python3 - "$TOPO_TMP/notify.sock" > "$TOPO_TMP/notify.txt" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(90)
try:
    while True:
        msg = s.recv(4096).decode()
        print('%.3f %s' % (time.monotonic(), msg.replace('\n', ' ')), flush=True)
        if 'STOPPING=1' in msg:
            break
except socket.timeout:
    pass
PY
lst=$!
for _ in $(seq 50); do [ -S "$TOPO_TMP/notify.sock" ] && break; sleep 0.1; done
export NOTIFY_SOCKET=$TOPO_TMP/notify.sock WATCHDOG_USEC=1000000
xlbd_start "$XLBD" "$LB_OBJ" --socket-group nogroup --api-max-clients 2000 \
	--api-max-clients-per-uid 64 --api-idle-timeout 60000 --api-write-timeout 60000 || fail "xlbd start"
unset NOTIFY_SOCKET WATCHDOG_USEC
lbctl vip add 10.200.0.1:80 || fail "vip add"
for i in $(seq 2 40); do lbctl real add 10.200.0.1:80 10.10.$((i / 200)).$((i % 200 + 1)) >/dev/null || fail "real add"; done

# The hostile users: one process each, holding 64 connections until told to stop.
cat > "$TOPO_TMP/hostile.py" <<'PY'
import os, socket, sys, time
path, uid, gid, stop = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
os.setgroups([gid]); os.setgid(gid); os.setuid(uid)
conns = []
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.setblocking(False)
    return s
for i in range(64):
    s = conn()
    kind = i % 4
    try:
        if kind == 2:   # pipelined requests, never read
            s.send(b'{"v":1,"op":"vip.list"}\n' * 50)
        elif kind == 3: # a line that never ends
            s.send(b'{"v":1,"op":"vip.list","args":{"x":"' + b'A' * (200 * 1024))
    except BlockingIOError:
        pass
    conns.append((kind, s))
# The 65th connection of this user is refused with EMFILE.
extra = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
extra.settimeout(5)
extra.connect(path)
line = extra.makefile().readline()
assert '"EMFILE"' in line, line
open(stop + '.ready.%d' % uid, 'w').close()
while not os.path.exists(stop):
    for kind, s in conns:
        if kind == 1:  # slowloris: one byte a second
            try:
                s.send(b'{')
            except OSError:
                pass
    time.sleep(1)
PY
hostile=""
gid=$(getent group nogroup | cut -d: -f3)
mkdir -m 1777 "$TOPO_TMP/flags"
for u in $(seq 61000 61015); do
	python3 "$TOPO_TMP/hostile.py" "$XLBD_SOCK" $u $gid "$TOPO_TMP/flags/stop" &
	hostile="$hostile $!"
done
for _ in $(seq 300); do
	[ "$(ls "$TOPO_TMP"/flags/stop.ready.* 2>/dev/null | wc -l)" = 16 ] && break
	sleep 0.1
done
[ "$(ls "$TOPO_TMP"/flags/stop.ready.* 2>/dev/null | wc -l)" = 16 ] || fail "hostile users did not connect"
held=$(ls /proc/$XLBD_PID/fd | wc -l)
echo "xlbd holds $held descriptors"
[ "$held" -ge 1024 ] || fail "xlbd does not hold the 1024 hostile connections ($held fds)"

# Root's lbctl keeps answering, each within its 2 s timeout.
: > "$TOPO_TMP/lat"
t_end=$(( $(date +%s) + 8 ))
while [ "$(date +%s)" -lt $t_end ]; do
	t0=$(date +%s%N)
	lbctl --timeout 2 status > /dev/null || fail "lbctl status failed under the hostile load"
	lbctl --timeout 2 real set-weight 10.200.0.1:80 10.10.0.3 $((RANDOM % 100 + 1)) > /dev/null ||
		fail "lbctl change failed under the hostile load"
	echo $(( ($(date +%s%N) - t0) / 1000000 )) >> "$TOPO_TMP/lat"
done
held2=$(ls /proc/$XLBD_PID/fd | wc -l)
[ "$held2" -ge 1024 ] || fail "hostile connections dropped early ($held2 fds)"
sort -n "$TOPO_TMP/lat" | awk '{a[NR]=$1} END {printf "lbctl status+change under 1024 hostile clients: %d rounds, median %d ms, max %d ms\n", NR, a[int((NR+1)/2)], a[NR]}'
touch "$TOPO_TMP/flags/stop"
wait $hostile 2>/dev/null
hostile=""

# The watchdog was fed all along: pings every 250 ms, no gap reaching WatchdogSec=1s
# (past it, systemd would kill the daemon).
python3 - "$TOPO_TMP/notify.txt" <<'PY' || fail "watchdog starved"
import sys
t = [float(l.split()[0]) for l in open(sys.argv[1]) if 'WATCHDOG=1' in l]
gaps = [b - a for a, b in zip(t, t[1:])]
print('watchdog: %d pings, largest gap %.0f ms' % (len(t), 1000 * max(gaps)))
assert len(t) >= 20 and max(gaps) < 1.0, gaps
PY
xlbd_stop

# The timeouts close what misbehaves: an idle connection, one that sends no
# newline, one that does not read its answers.
xlbd_start "$XLBD" "$LB_OBJ" --api-idle-timeout 1000 --api-write-timeout 1000 || fail "restart"
python3 - "$XLBD_SOCK" <<'PY' || fail "timeouts"
import socket, sys, time
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(sys.argv[1]); return s
idle, partial = conn(), conn()
partial.send(b'{"v":1,"op":"vip.li')
t0 = time.monotonic()
for s in (idle, partial):
    s.settimeout(5)
    assert s.recv(100) == b'', 'not closed'
dt = time.monotonic() - t0
assert 0.8 < dt < 2.5, dt
print('idle and partial connections closed after %.2f s (api-idle-timeout 1 s)' % dt)
# A reader that stops reading: its requests stop being served, then it is closed.
reader = conn()
reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
reader.setblocking(False)
sent = 0
try:
    while sent < 4 << 20:
        sent += reader.send(b'{"v":1,"op":"status"}\n' * 64)
except BlockingIOError:
    pass
except (ConnectionResetError, BrokenPipeError):
    pass  # closed while still sending: on a loaded host the write timeout can come first
time.sleep(2.5)
reader.setblocking(True); reader.settimeout(5)
got = b''
while True:
    try:
        c = reader.recv(1 << 20)
    except ConnectionResetError:
        break  # closed with requests unread: what remains unanswered
    if not c:
        break
    got += c
assert got.count(b'\n') < sent // len(b'{"v":1,"op":"status"}\n'), 'all answered'
print('a client that did not read was closed after %d answers' % got.count(b'\n'))
PY
lbctl status > /dev/null || fail "xlbd stopped answering"
echo PASS
