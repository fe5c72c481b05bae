#!/bin/bash
# dpdk.sh - the LB of scripts/lib/topology.sh run by xlb-dpdk instead of the
# kernel's XDP, sourced after topology.sh (tests/dpdk's end-to-end tests).
#
#   client --- sw --- l0 (LB: xlb-dpdk on net_af_packet or net_af_xdp over l0)
#                      |  XDP_TX back out of l0 (encapsulated to the reals)
#                      |  XDP_PASS -> net_tap "xt<pid>": the LB's host stack
#                      |  (10.10.0.2, fd10::2, l0's MAC), whose traffic
#                      |  xlb-dpdk sends back out of l0
#
# l0 keeps no address of its own: the host stack of the LB lives on the
# exception port, so ARP, ND and xlbd's health probes go through xlb-dpdk
# like they would on a NIC without XDP.  dpdk_v6_up adds IPv6 to the whole
# topology (v6 VIP on the reals, v6 reals, nginx listens on both).
#
# Set DPDK_BIN, LB_OBJ, TOPO_TMP and T; call dpdk_down from the trap.

VIP6=${VIP6:-fd20::1}
REALS6=(fd10:11::2 fd10:12::2 fd10:13::2)
LB_ADDR6=fd10::2
SRC6=fd10:ff::/112

# dpdk_v6_up DECAP_TOOL DECAP_OBJ: IPv6 on every link of the topology.
dpdk_v6_up() {
	local decap=$1 obj=$2 i
	ip netns exec "$T-sw" sysctl -qw net.ipv6.conf.all.forwarding=1
	ip -n "$T-cl" addr add fd10:1::2/64 dev c0 nodad
	ip -n "$T-sw" addr add fd10:1::1/64 dev s-cl nodad
	ip -n "$T-cl" -6 route add default via fd10:1::1
	ip -n "$T-sw" addr add fd10::1/64 dev s-lb nodad
	for i in 1 2 3; do
		ip -n "$T-r$i" addr add "${REALS6[i-1]}/64" dev r$i nodad
		ip -n "$T-sw" addr add "fd10:1$i::1/64" dev s-r$i nodad
		ip -n "$T-r$i" -6 route add default via "fd10:1$i::1"
		ip -n "$T-r$i" addr add "$VIP6/128" dev lo nodad
		# the decap program strips what is addressed to either of the real's addresses
		ip netns exec "$T-r$i" "$decap" attach r$i "${REALS[i-1]}" "${REALS6[i-1]}" \
			--object "$obj" || return 1
	done
	ip -n "$T-sw" -6 route add "$VIP6/128" via $LB_ADDR6
}

# The CPUs this shell may run on, "0,1": an lcore mapped onto all of them floats.
dpdk_cpus() { python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0)))))'; }

# dpdk_lb_start PMD [xlb-dpdk options...]: xlb-dpdk on l0 (PMD af_packet or
# af_xdp) with the exception port, in the LB namespace; waits until it runs
# and configures the host side of the exception port.
dpdk_lb_start() {
	local pmd=$1 vdev i
	shift
	DPDK_PREFIX=${DPDK_PREFIX:-xlbt$$}
	DPDK_TAP=${DPDK_TAP:-xt$$}
	DPDK_RUN=$TOPO_TMP/dpdk
	case $pmd in
	af_packet) vdev="net_af_packet0,iface=l0" ;;
	af_xdp) vdev="net_af_xdp0,iface=l0,start_queue=0,queue_count=1" ;;
	*) echo "dpdk_lb_start: unknown PMD $pmd" >&2; return 1 ;;
	esac
	# Veth leaves TCP/UDP checksums partial ("hardware" fills them); a
	# packet socket or AF_XDP hands xlb-dpdk the bytes as they are, and the
	# host stack behind the tap drops what arrives half-summed.  On a wire
	# checksums are whole: make the veths that send to the LB (the router's
	# side, the reals answering health probes) compute theirs.
	ip netns exec "$T-sw" ethtool -K s-lb tx off >/dev/null || return 1
	for i in 1 2 3; do
		ip netns exec "$T-r$i" ethtool -K r$i tx off >/dev/null || return 1
	done
	# l0 belongs to xlb-dpdk now: no address, no IPv6 of the kernel's own
	ip -n "$T-lb" addr flush dev l0
	ip netns exec "$T-lb" sysctl -qw net.ipv6.conf.l0.disable_ipv6=1
	: > "$TOPO_TMP/dpdk.log.new"
	# one lcore, free to run on any CPU we may use (the EAL would pin -l 0 to CPU 0)
	ip netns exec "$T-lb" "$DPDK_BIN" --no-huge -m 512 --no-pci --file-prefix="$DPDK_PREFIX" \
		--lcores="0@($(dpdk_cpus))" --vdev="$vdev" --vdev="net_tap0,iface=$DPDK_TAP" -- \
		--obj "$LB_OBJ" --run-dir "$DPDK_RUN" --exception-port 1 --mbufs 4095 \
		--idle-us 100 "$@" </dev/null >> "$TOPO_TMP/dpdk.log.new" 2>&1 &
	DPDK_PID=$!
	for _ in $(seq 100); do
		grep -q "xlb-dpdk: running" "$TOPO_TMP/dpdk.log.new" && break
		kill -0 $DPDK_PID 2>/dev/null || break
		sleep 0.1
	done
	cat "$TOPO_TMP/dpdk.log.new" >> "$TOPO_TMP/dpdk.log"
	if ! grep -q "xlb-dpdk: running" "$TOPO_TMP/dpdk.log.new"; then
		echo "xlb-dpdk did not start:" >&2
		cat "$TOPO_TMP/dpdk.log.new" >&2
		return 1
	fi
	# the host stack of the LB on the exception port (xlb-dpdk gave it l0's MAC)
	ip -n "$T-lb" addr add $LB_ADDR/24 dev "$DPDK_TAP"
	ip -n "$T-lb" addr add $LB_ADDR6/64 dev "$DPDK_TAP" nodad
	ip -n "$T-lb" link set "$DPDK_TAP" up
	ip -n "$T-lb" route replace default via 10.10.0.1
	ip -n "$T-lb" -6 route replace default via fd10::1 2>/dev/null
	dpdk_lb_reachable || { echo "the LB's host stack is not reachable through xlb-dpdk" >&2; return 1; }
}

# The LB's host stack answers through xlb-dpdk (ARP, then a TCP RST from the
# tap's stack to a closed port): the exception port works both ways.
dpdk_lb_reachable() {
	ip netns exec "$T-sw" python3 - $LB_ADDR <<'PY'
import socket, sys, time
end = time.time() + 10
while time.time() < end:
    try:
        socket.create_connection((sys.argv[1], 9), timeout=0.3).close()
    except ConnectionRefusedError:
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit(1)
PY
}

# Stop xlb-dpdk: SIGTERM (or the signal given), wait, remove its EAL runtime files.
dpdk_lb_stop() { # [SIGNAL]
	[ -n "${DPDK_PID:-}" ] || return 0
	kill -"${1:-TERM}" "$DPDK_PID" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$DPDK_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$DPDK_PID" 2>/dev/null
	wait "$DPDK_PID" 2>/dev/null
	DPDK_PID=
	rm -rf "/var/run/dpdk/${DPDK_PREFIX:-none}"
}

dpdk_down() {
	dpdk_lb_stop
	[ -n "${DPDK_PREFIX:-}" ] && rm -rf "/var/run/dpdk/$DPDK_PREFIX"
	return 0
}

# xlbd with the userspace backend over xlb-dpdk's maps (topology.sh's xlbd_start).
xlbd_start_userspace() { # XLBD [extra xlbd args...]
	local xlbd=$1
	shift
	xlbd_start "$xlbd" "$LB_OBJ" --backend userspace --dpdk-run-dir "$DPDK_RUN" \
		--src6 $SRC6 "$@"
}
