#!/bin/bash
# topology.sh - the netns topology of xlb's integration tests and demo,
# sourced by them.  A router namespace joins a client, the LB and three
# reals by veths:
#
#   client (c0 10.10.1.2) --- sw --- LB (l0 10.10.0.2, xlbd, native XDP)
#                              |---- r1/r2/r3 (10.10.1{1,2,3}.2, decap XDP,
#                                    VIP on lo, nginx answering "rN")
#
# The router sends the VIP to the LB; the LB encapsulates toward a real with
# the router's MAC as outer destination and XDP_TX; the real decapsulates and
# nginx answers from the VIP straight to the client (direct server return).
# Veth peers that receive XDP frames run the decap program in pass-through
# mode (no host address), which native XDP on veth needs.
#
# On veths, packets are processed on the CPU of whoever sent them, so a
# client that moves between CPUs shows the balancer each flow on several
# CPUs; its connection table is shared by all CPUs, so no test pins
# anything, and topo_shuffle moves a client between CPUs on purpose.
#
# The router is the kernel's forwarding path; with TOPO_ROUTER_OBJ (the
# benchmarks' bench/http/router.bpf.o) its ports forward in XDP instead, as
# a switch would, and send the stack only what they cannot forward.
#
# Set T (namespace prefix, e.g. xlbt-c7-spread) and TOPO_TMP (scratch dir)
# before calling topo_up; topo_down removes everything (call it from a trap).

VIP=${VIP:-10.200.0.1}
REALS=(10.10.11.2 10.10.12.2 10.10.13.2)
LB_ADDR=10.10.0.2
SRC4=10.255.0.0/16

topo_skip() { echo "SKIP: $*"; exit 77; }

topo_check() {
	[ "$(id -u)" = 0 ] || topo_skip "needs root"
	NGINX=$(command -v nginx || echo /usr/sbin/nginx)
	[ -x "$NGINX" ] || topo_skip "nginx missing"
	command -v python3 >/dev/null || topo_skip "python3 missing"
	ip netns add "$T-probe" 2>/dev/null || topo_skip "cannot create network namespaces"
	ip netns del "$T-probe"
}

topo_link() { # NS DEV ADDR SW_DEV SW_ADDR
	ip link add "$2" netns "$T-$1" type veth peer name "$4" netns "$T-sw" || return 1
	ip -n "$T-$1" addr add "$3/24" dev "$2"
	ip -n "$T-sw" addr add "$5/24" dev "$4"
	ip -n "$T-$1" link set "$2" up
	ip -n "$T-sw" link set "$4" up
	ip -n "$T-$1" route add default via "$5"
}

nginx_start() { # I
	local i=$1 d="$TOPO_TMP/r$1"
	mkdir -p "$d"
	cat > "$d/nginx.conf" <<NGX
worker_processes 1;
pid $d/nginx.pid;
error_log $d/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	keepalive_timeout 120s;
	keepalive_requests 100000;
	client_body_temp_path $d;
	proxy_temp_path $d;
	fastcgi_temp_path $d;
	uwsgi_temp_path $d;
	scgi_temp_path $d;
	server {
		listen 80;
		listen [::]:80;
		location / { return 200 "r$i\n"; }
	}
}
NGX
	# its own log, not our stdout: a demo left running must not hold a caller's pipe open
	ip netns exec "$T-r$i" "$NGINX" -c "$d/nginx.conf" -g 'daemon off;' \
		</dev/null >>"$d/nginx.out" 2>&1 &
	echo $! > "$d/nginx.pidof"
	for _ in $(seq 50); do
		ip netns exec "$T-r$i" ss -Htln "sport = :80" | grep -q . && return 0
		sleep 0.1
	done
	echo "nginx on r$i did not start" >&2
	return 1
}

nginx_stop() { # I
	local f="$TOPO_TMP/r$1/nginx.pidof"
	[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	for _ in $(seq 50); do
		ip netns exec "$T-r$1" ss -Htln "sport = :80" | grep -q . || return 0
		sleep 0.1
	done
}

# topo_up DECAP_TOOL DECAP_OBJ
topo_up() {
	local decap=$1 obj=$2 i
	mkdir -p "$TOPO_TMP"
	for n in cl sw lb r1 r2 r3; do
		ip netns add "$T-$n" || return 1
		ip -n "$T-$n" link set lo up
	done
	ip netns exec "$T-sw" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.default.rp_filter=0
	ip netns exec "$T-lb" sysctl -qw net.ipv4.ip_forward=0
	topo_link cl c0 10.10.1.2 s-cl 10.10.1.1 || return 1
	topo_link lb l0 $LB_ADDR s-lb 10.10.0.1 || return 1
	for i in 1 2 3; do
		topo_link r$i r$i "${REALS[i-1]}" s-r$i 10.10.1$i.1 || return 1
		ip -n "$T-r$i" addr add "$VIP/32" dev lo
		# an XDP router forwards the reals' answers as frames: no checksum offload
		[ -z "${TOPO_ROUTER_OBJ:-}" ] || ip netns exec "$T-r$i" ethtool -K r$i tx off >/dev/null
		ip netns exec "$T-r$i" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
			net.ipv4.conf.default.rp_filter=0 net.ipv4.conf.r$i.rp_filter=0
	done
	ip -n "$T-sw" route add "$VIP/32" via $LB_ADDR
	# veth leaves TCP checksums to the "hardware"; frames the balancer
	# rebuilds in XDP lose that note, so the client computes them itself.
	ip netns exec "$T-cl" ethtool -K c0 tx off >/dev/null || return 1
	# The same for health probes the LB host sends through the tc encap.
	ip netns exec "$T-lb" ethtool -K l0 tx off >/dev/null || return 1
	for d in s-lb s-cl s-r1 s-r2 s-r3; do
		if [ -n "${TOPO_ROUTER_OBJ:-}" ]; then
			ip -n "$T-sw" link set dev $d xdpdrv obj "$TOPO_ROUTER_OBJ" sec xdp || return 1
		else
			ip netns exec "$T-sw" "$decap" attach $d --object "$obj" || return 1
		fi
	done
	ip netns exec "$T-cl" "$decap" attach c0 --object "$obj" || return 1
	for i in 1 2 3; do
		ip netns exec "$T-r$i" "$decap" attach r$i "${REALS[i-1]}" --object "$obj" || return 1
		nginx_start $i || return 1
	done
	GW_MAC=$(ip -n "$T-sw" -br link show s-lb | awk '{print $3}')
}

topo_down() {
	local n
	for f in "$TOPO_TMP"/r*/nginx.pidof; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	for n in cl sw lb r1 r2 r3; do
		ip netns del "$T-$n" 2>/dev/null
	done
	return 0
}

# ---- xlbd in the LB namespace --------------------------------------------
# The pin root lives on a bpffs mounted in the host's mount namespace, so it
# outlives `ip netns exec` (which gives each command a private /sys).

xlbd_prepare() { # -> XLBD_SOCK, XLBD_PINS
	XLBD_SOCK="$TOPO_TMP/xlbd.sock"
	mkdir -p "$TOPO_TMP/bpf" "$TOPO_TMP/state"
	if ! mountpoint -q "$TOPO_TMP/bpf"; then
		mount -t bpf bpf "$TOPO_TMP/bpf" || return 1
	fi
	XLBD_PINS="$TOPO_TMP/bpf/xlb"
}

# xlbd_start XLBD OBJ [extra xlbd args...]; waits until it answers (at most
# XLBD_WAIT tenths of a second, default 100).  xlbd
# enforces xlb's verifier verdict as in production (XLBD_VERIFY=warn|off to
# change that); it_verify.sh tests both policies.
xlbd_start() {
	local xlbd=$1 obj=$2
	shift 2
	ip netns exec "$T-lb" "$xlbd" -i l0 -g "$GW_MAC" --src4 $SRC4 -s "$XLBD_SOCK" \
		-d "$TOPO_TMP/state" --pin-root "$XLBD_PINS" -o "$obj" -m 0 \
		--verify "${XLBD_VERIFY:-enforce}" "$@" \
		</dev/null >> "$TOPO_TMP/xlbd.log" 2>&1 &
	XLBD_PID=$!
	for _ in $(seq "${XLBD_WAIT:-100}"); do
		[ -S "$XLBD_SOCK" ] && "$LBCTL" -s "$XLBD_SOCK" status >/dev/null 2>&1 && return 0
		kill -0 $XLBD_PID 2>/dev/null || break
		sleep 0.1
	done
	echo "xlbd did not come up; log:" >&2
	cat "$TOPO_TMP/xlbd.log" >&2
	return 1
}

xlbd_stop() {
	[ -n "${XLBD_PID:-}" ] && kill "$XLBD_PID" 2>/dev/null && wait "$XLBD_PID" 2>/dev/null
	XLBD_PID=
}

xlbd_teardown() {
	xlbd_stop
	if [ -n "${XLBD_PINS:-}" ] && mountpoint -q "$TOPO_TMP/bpf"; then
		umount "$TOPO_TMP/bpf"
	fi
}

lbctl() { "$LBCTL" -s "$XLBD_SOCK" "$@"; }

# topo_shuffle NS PID [GATE]: while PID runs, move every process of
# namespace NS (e.g. cl: the clients) to another CPU every 100 ms, so each
# of their flows meets every CPU of the balancer.  With GATE, they are kept
# together on CPU 0 while the file GATE exists, then moved: a test removes
# GATE after a ring change so that every flow then shows up on a CPU it
# never met before the change (one CPU: nothing to do).
topo_shuffle() {
	local ns=$1 pid=$2 gate=${3:-} n cpu=0 p
	n=$(nproc)
	[ "$n" -ge 2 ] || return 0
	while kill -0 "$pid" 2>/dev/null; do
		if [ -n "$gate" ] && [ -e "$gate" ]; then
			cpu=0
		else
			cpu=$(( (cpu + 1) % n ))
		fi
		# not a pin: the point is to move the clients' flows across CPUs
		for p in $(ip netns pids "$T-$ns" 2>/dev/null); do
			taskset -a -p -c $cpu "$p" >/dev/null 2>&1
		done
		sleep 0.1
	done
}
