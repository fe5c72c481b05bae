#!/bin/bash
# deploy/xlb-dpdk.service and /etc/xlb/xlb-dpdk.conf:
#  - systemd-analyze verify (ExecStart pointed at the built binaries), and
#    the properties the dataplane relies on (Type=notify, a run directory
#    kept across restarts, ordered before xlbd);
#  - the unit's command line with the shipped conf: no port, exit 78 (the
#    unit does not restart in a loop);
#  - with a port: READY=1 on $NOTIFY_SOCKET once it runs, WATCHDOG=1 while
#    it runs, STOPPING=1 on SIGTERM, exit 0; its maps stay, the EAL's
#    runtime files go.
# Usage: unit_dpdk.sh UNIT CONF XLB_DPDK BALANCER_OBJ
set -u
unit=$1 conf=$2 dpdk=$3 obj=$4
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze missing"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: DPDK's EAL needs root here"; exit 77; }
tmp=$(mktemp -d /tmp/xlbt-dp-unit.XXXXXX)
prefix=xlbtunit$$
trap 'kill $listener 2>/dev/null; rm -rf "$tmp" /var/run/dpdk/$prefix' EXIT
fail() { echo "FAIL: $*"; exit 1; }

sed "s|^ExecStart=[^ ]*|ExecStart=$(realpath "$dpdk")|" "$unit" > "$tmp/xlb-dpdk.service"
for want in '^Type=notify' '^RuntimeDirectory=xlb-dpdk' '^RuntimeDirectoryPreserve=yes' \
	'^Before=xlbd.service' '^WatchdogSec=' '^RestartPreventExitStatus=78'; do
	grep -q "$want" "$tmp/xlb-dpdk.service" || fail "unit lacks $want"
done
out=$(systemd-analyze verify --man=no "$tmp/xlb-dpdk.service" 2>&1)
status=$?
echo "$out"
if [ $status -ne 0 ] || echo "$out" | grep -q "xlb-dpdk.service"; then
	fail "systemd-analyze verify"
fi

# The command line as systemd builds it: $VAR splits at whitespace.
cmdline() { # EAL OPTS
	sed -n 's/^ExecStart=//p' "$unit" | sed "s|^[^ ]*|$dpdk|; s|--obj [^ ]*|--obj $obj|; s|--run-dir [^ ]*|--run-dir $tmp/run|" |
		sed "s|\$XLB_DPDK_EAL|$1 --file-prefix=$prefix --no-telemetry|; s|\$XLB_DPDK_OPTS|$2|"
}
source "$conf"
cmd=$(cmdline "$XLB_DPDK_EAL" "$XLB_DPDK_OPTS")
echo "shipped: $cmd"
timeout 60 $cmd > "$tmp/log" 2>&1
rc=$?
tail -2 "$tmp/log"
[ $rc -eq 78 ] || fail "the shipped conf (no port) exits $rc, not 78"
grep -q "no ports" "$tmp/log" || fail "no message about the missing port"

# A port (net_ring), under a notify socket with the watchdog on.
python3 - "$tmp/notify.sock" > "$tmp/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(60)
while True:
    msg = s.recv(4096).decode()
    print(msg.replace('\n', ' | '), flush=True)
    if 'STOPPING=1' in msg:
        break
PY
listener=$!
for _ in $(seq 50); do [ -S "$tmp/notify.sock" ] && break; sleep 0.1; done
cpus=$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0)))))')
cmd=$(cmdline "--no-huge -m 128 --no-pci --lcores=0@($cpus) --vdev=net_ring0" "--mbufs 1023 --idle-us 1000")
echo "with a port: $cmd"
NOTIFY_SOCKET=$tmp/notify.sock WATCHDOG_USEC=2000000 WATCHDOG_PID=self \
	timeout 60 bash -c 'export WATCHDOG_PID=$$; exec "$@"' - $cmd > "$tmp/log2" 2>&1 &
pid=$!
for _ in $(seq 150); do grep -q "READY=1" "$tmp/notify.log" && break; sleep 0.1; done
grep -q "READY=1 | STATUS=1 ports, 1 worker lcore(s), jit" "$tmp/notify.log" ||
	{ cat "$tmp/log2" "$tmp/notify.log"; fail "no READY=1 with its status"; }
sleep 1
[ "$(grep -c WATCHDOG=1 "$tmp/notify.log")" -ge 3 ] || { cat "$tmp/notify.log"; fail "the watchdog is not fed"; }
kill -TERM $pid
wait $pid
rc=$?
wait $listener
cat "$tmp/notify.log" | sort | uniq -c
[ $rc -eq 0 ] || fail "SIGTERM: exit $rc"
grep -q "STOPPING=1" "$tmp/notify.log" || fail "no STOPPING=1"
[ -e "$tmp/run/maps/xlb_conns" ] || fail "the maps did not outlive xlb-dpdk"
[ -e /var/run/dpdk/$prefix ] && fail "EAL runtime files left"
echo PASS
