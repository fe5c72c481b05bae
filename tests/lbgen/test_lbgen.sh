#!/bin/bash
# test_lbgen.sh - lbgen's frames are what it was asked for: through the
# live-frames transport (captured on a veth peer running a pass program)
# and the DPDK transport (net_pcap), every frame's checksums recomputed by
# scapy, its destination, size and flow checked (check_pcap.py); bad
# options are refused with a message and no traffic.
#   test_lbgen.sh LBGEN XLB_TESTCTL DECAP_OBJ
set -u
LBGEN=$1 TESTCTL=$2 DECAP_OBJ=$3
here=$(dirname "$0")
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v tcpdump >/dev/null || { echo "SKIP: tcpdump missing"; exit 77; }
ns=lbgtest$$ a=lbgtA$$ b=lbgtB$$ tmp=$(mktemp -d /tmp/lbgtest.XXXXXX)
cleanup() { ip netns del $ns 2>/dev/null; ip link del $a 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# bad input: a clear error, exit 2
for args in "-s 20" "--flows 0" "--flows 10000001" "-p 80-90" "--proto sctp" "-d ::1" "--syn-ratio 2"; do
	out=$("$LBGEN" -i lo $args 2>&1) && fail "lbgen $args accepted"
	[ -n "$out" ] || fail "lbgen $args: no message"
done

ip netns add $ns
ip link add $a type veth peer name $b netns $ns
ip link set $a up
ip -n $ns link set $b up
ip netns exec $ns "$TESTCTL" decap "$DECAP_OBJ" $b >/dev/null || fail "pass program on $b"

live() { # NAME COUNT DST lbgen-args...: capture COUNT frames to DST on the peer
	local name=$1 count=$2 dst=$3
	shift 3
	# only lbgen's frames: the kernel's own (IPv6 neighbour discovery...) cross the veth too
	ip netns exec $ns tcpdump -i $b -U -c "$count" -w "$tmp/$name.pcap" dst host "$dst" >/dev/null 2>&1 &
	local dump=$!
	sleep 1
	"$LBGEN" -i $a -q -n "$count" -d "$dst" "$@" >"$tmp/$name.out" 2>&1 || fail "$name: lbgen: $(tail -3 "$tmp/$name.out")"
	for _ in $(seq 50); do kill -0 $dump 2>/dev/null || break; sleep 0.1; done
	kill $dump 2>/dev/null
	wait $dump 2>/dev/null
	grep -q "^Result: OK" "$tmp/$name.out" || fail "$name: no pktgen result line"
}
live v4-tcp 300 198.18.0.42 --flows 200 -s 80 -w 1000000
/usr/bin/python3 "$here/check_pcap.py" "$tmp/v4-tcp.pcap" 4 tcp 200 80 198.18.0.42 80 0 || fail "v4-tcp frames"
# each frame is a SYN with probability 0.5: 2000 of them put the +-0.1 the
# check allows at ~9 standard deviations (200 frames left it at 2.8: a run
# in 400 or so failed)
live v4-syn 2000 198.18.0.42 --flows 5000 --flow-order random --syn-ratio 0.5 -w 200000
/usr/bin/python3 "$here/check_pcap.py" "$tmp/v4-syn.pcap" 4 tcp 5000 64 198.18.0.42 80 0.5 || fail "v4-syn frames"
live v6-udp 150 fd00::42 -6 --proto udp --flows 70000 -s 96 -w 1000000
/usr/bin/python3 "$here/check_pcap.py" "$tmp/v6-udp.pcap" 6 udp 70000 96 fd00::42 80 || fail "v6-udp frames"

# --rate holds its pace, and unpaced live frames keep the sending CPU busy
# (lbgen sizes its BPF_PROG_RUN calls by time: each call waits for RCU
# grace periods, lbgen/live.c)
"$LBGEN" -i $a -q --rate 200000 --duration 2 -d 198.18.0.42 >"$tmp/rate.out" 2>&1 || fail "rate: lbgen"
pps=$(sed -n 's/^Total: .*: \([0-9]*\)pps.*/\1/p' "$tmp/rate.out")
[ -n "$pps" ] && [ "$pps" -gt 170000 ] && [ "$pps" -lt 230000 ] || fail "--rate 200000 sent ${pps:-?} pps"
"$LBGEN" -i $a -q --duration 3 -d 198.18.0.42 --json "$tmp/fast.json" >"$tmp/fast.out" 2>&1 || fail "unpaced: lbgen"
/usr/bin/python3 - "$tmp/fast.json" <<'PY' || fail "unpaced live frames: $(grep idle "$tmp/fast.out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert not d["paced"] and d["sender_cpu_idle"] < 0.10, d["sender_cpu_idle"]
PY

# DPDK TX into net_pcap: the userspace builder, QUIC long and short headers
if "$LBGEN" -i dpdk --transport dpdk -n 120 -q --proto quic --quic-long-ratio 0.5 --flows 100 -s 100 \
	--dpdk "--no-huge -m 256 --no-pci --file-prefix=lbgtest$$ -l 0 --log-level=3 --vdev=net_pcap0,tx_pcap=$tmp/dpdk.pcap" \
	>"$tmp/dpdk.out" 2>&1; then
	/usr/bin/python3 "$here/check_pcap.py" "$tmp/dpdk.pcap" 4 udp 100 100 198.18.0.42 443 || fail "dpdk frames"
	/usr/bin/python3 - "$tmp/dpdk.pcap" <<'PY' || fail "QUIC headers"
import sys
from scapy.all import UDP, Ether, rdpcap
kinds = {bytes(Ether(bytes(f))[UDP].payload)[0] & 0xc0 for f in rdpcap(sys.argv[1])}
assert kinds == {0xc0, 0x40}, kinds  # long (form bit) and short headers both present
PY
elif grep -q "built without DPDK" "$tmp/dpdk.out"; then
	echo "(DPDK transport not built: skipped that part)"
else
	fail "dpdk: $(tail -3 "$tmp/dpdk.out")"
fi
echo "lbgen: frames checked"
