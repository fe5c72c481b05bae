#!/bin/bash
# systemd integration without systemd: xlbd started with NOTIFY_SOCKET and
# WATCHDOG_USEC (as systemd sets them for Type=notify, WatchdogSec=) sends
# READY=1 once it serves, then WATCHDOG=1 keep-alives at least every
# WatchdogSec/2, STOPPING=1 on SIGTERM; its log lines carry journal levels.
# Usage: it_notify.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 LB_OBJ=$4
T=xlbt-c7-ntf-$$
source "$(dirname "$0")/it_lib.sh"
topo_check
TOPO_TMP=$(mktemp -d /tmp/$T.XXXXXX)
cleanup() { xlbd_teardown; [ -n "${lst:-}" ] && kill $lst 2>/dev/null; ip netns del $T-lb 2>/dev/null; rm -rf "$TOPO_TMP"; }
trap cleanup EXIT

ip netns add $T-lb || fail netns
ip -n $T-lb link add l0 type veth peer name l1 && ip -n $T-lb link set l0 up && ip -n $T-lb link set l1 up || fail veth
GW_MAC=02:00:00:00:00:01
xlbd_prepare || fail bpffs

python3 - "$TOPO_TMP/notify.sock" > "$TOPO_TMP/notify.txt" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(15)
t0 = None
try:
    while True:
        msg = s.recv(4096).decode()
        now = time.monotonic()
        if t0 is None:
            t0 = now
        for line in msg.split('\n'):
            if line:
                print('%.3f %s' % (now - t0, line), flush=True)
        if 'STOPPING=1' in msg:
            break
except socket.timeout:
    pass
PY
lst=$!
for _ in $(seq 50); do [ -S "$TOPO_TMP/notify.sock" ] && break; sleep 0.1; done
export NOTIFY_SOCKET=$TOPO_TMP/notify.sock WATCHDOG_USEC=1000000
xlbd_start "$XLBD" "$LB_OBJ" || fail "xlbd start"
unset NOTIFY_SOCKET WATCHDOG_USEC
sleep 2.2
xlbd_stop
wait $lst
cat "$TOPO_TMP/notify.txt"
grep -q " READY=1" "$TOPO_TMP/notify.txt" || fail "no READY=1"
grep -q " STATUS=serving" "$TOPO_TMP/notify.txt" || fail "no STATUS"
n=$(grep -c " WATCHDOG=1" "$TOPO_TMP/notify.txt")
[ "$n" -ge 4 ] || fail "only $n watchdog pings in ~2 s with WatchdogSec=1s"
grep -q " STOPPING=1" "$TOPO_TMP/notify.txt" || fail "no STOPPING=1"
grep -qE '^<[0-7]>xlbd: ' "$TOPO_TMP/xlbd.log" || fail "log lines lack journal level prefixes"
grep -vqE '^<[0-7]>' "$TOPO_TMP/xlbd.log" && fail "a log line without a level: $(grep -vE '^<[0-7]>' "$TOPO_TMP/xlbd.log" | head -1)"
echo PASS
