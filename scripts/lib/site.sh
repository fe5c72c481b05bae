#!/bin/bash
# site.sh - a whole xlb site in network namespaces, beside topology.sh
# (one LB): several LB hosts behind one router that spreads flows over them
# by ECMP, one replicated desired state in a three-member etcd cluster.
# Sourced by tests/fleet/it_*.sh.
#
#   client cl (c0 10.30.1.2) --- router rt: BIRD, a BGP session with BFD
#                                 per LB, ECMP (merge paths, L4 hash)
#      rt --- lbN (l0 10.31.N.2): BIRD (announces what xlbd writes),
#             xlbd --store etcd, the XDP balancer        N = 1..SITE_LBS
#      rt --- rN (r0 10.32.N.2): decap XDP, VIP on lo, nginx "rN"
#   management bridge (namespace mg, 10.33.0.0/24): etcd member eN on
#   10.33.0.1N, each LB's m0 on 10.33.0.2N
#
# Every LB encapsulates toward the reals with the router's MAC as outer
# destination and XDP_TX; the reals answer the client directly (DSR).  The
# LBs' Maglev rings are identical, so a flow the router moves from one LB
# to another keeps its real.
#
# Set T (a unique prefix, e.g. xlbt-fl-site-$$) and TOPO_TMP (scratch dir)
# first; site_down removes everything (call it from a trap).  Timers:
# BFD SITE_BFD_MS x SITE_BFD_MULT on both ends (below); BGP keepalive 1 s,
# hold 3 s (BFD is faster), connect retry
# 1 s, error wait 1..5 s (a session that flapped comes back in seconds, not
# BIRD's default minutes); no graceful restart (a dead LB's routes must go,
# not linger as stale).

source "$(dirname "${BASH_SOURCE[0]}")/topology.sh"

SITE_LBS=${SITE_LBS:-3}
SITE_REALS=${SITE_REALS:-3}
SITE_VIP=${SITE_VIP:-10.200.0.1}
SITE_ETCD_PORT=2379
# BFD between the router and each LB: a dead LB is withdrawn about
# interval x multiplier after its last BFD packet.  100 ms x 5 here: on this
# shared 2-core machine (load 12-16) 50 ms x 3 flapped 3 times in 120 s of
# traffic (the veths' softirq work waits behind everything else), 100 x 5
# not once; a dedicated LB host runs 50 x 3 (README, "Scaling out").
SITE_BFD_MS=${SITE_BFD_MS:-100}
SITE_BFD_MULT=${SITE_BFD_MULT:-5}
site_real_addr() { echo "10.32.$1.2"; }
site_lb_addr() { echo "10.31.$1.2"; }
site_etcd_addr() { echo "10.33.0.1$1"; }

site_check() {
	topo_check
	local b
	for b in bird birdc etcd etcdctl; do
		command -v $b >/dev/null || topo_skip "$b missing (bird2, etcd-server, etcd-client)"
	done
}

site_namespaces() {
	local n
	echo cl rt mg
	for n in $(seq "$SITE_LBS"); do echo lb$n; done
	for n in $(seq "$SITE_REALS"); do echo r$n; done
	for n in 1 2 3; do echo e$n; done
}

# site_link NS DEV ADDR/LEN PEER_NS PEER_DEV [PEER_ADDR/LEN]
site_link() {
	ip link add "$2" netns "$T-$1" type veth peer name "$5" netns "$T-$4" || return 1
	ip -n "$T-$1" addr add "$3" dev "$2"
	[ -n "${6:-}" ] && ip -n "$T-$4" addr add "$6" dev "$5"
	ip -n "$T-$1" link set "$2" up
	ip -n "$T-$4" link set "$5" up
}

# site_up DECAP_TOOL DECAP_OBJ: namespaces, links, routes, reals with nginx.
site_up() {
	local decap=$1 obj=$2 n ns
	mkdir -p "$TOPO_TMP"
	for ns in $(site_namespaces); do
		ip netns add "$T-$ns" || return 1
		ip -n "$T-$ns" link set lo up
	done
	ip netns exec "$T-rt" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.default.rp_filter=0 net.ipv4.fib_multipath_hash_policy=1
	site_link cl c0 10.30.1.2/24 rt rc 10.30.1.1/24 || return 1
	ip -n "$T-cl" route add default via 10.30.1.1
	ip -n "$T-mg" link add br0 type bridge
	ip -n "$T-mg" link set br0 up
	for n in $(seq "$SITE_LBS"); do
		site_link lb$n l0 "$(site_lb_addr $n)/24" rt rl$n 10.31.$n.1/24 || return 1
		ip -n "$T-lb$n" route add default via 10.31.$n.1
		site_link lb$n m0 10.33.0.2$n/24 mg ml$n || return 1
		ip -n "$T-mg" link set ml$n master br0
		ip netns exec "$T-lb$n" ethtool -K l0 tx off >/dev/null || return 1
	done
	for n in 1 2 3; do
		site_link e$n e0 "$(site_etcd_addr $n)/24" mg me$n || return 1
		ip -n "$T-mg" link set me$n master br0
	done
	for n in $(seq "$SITE_REALS"); do
		site_link r$n r0 "$(site_real_addr $n)/24" rt rr$n 10.32.$n.1/24 || return 1
		ip -n "$T-r$n" route add default via 10.32.$n.1
		ip -n "$T-r$n" addr add "$SITE_VIP/32" dev lo
		ip netns exec "$T-r$n" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
			net.ipv4.conf.default.rp_filter=0 net.ipv4.conf.r0.rp_filter=0
	done
	# The client computes its own checksums: frames rebuilt in XDP lose the
	# veth's "checksum later" note.  Veth peers that get XDP frames need an
	# XDP program: the decap program in pass-through mode.
	ip netns exec "$T-cl" ethtool -K c0 tx off >/dev/null || return 1
	for d in rc $(for n in $(seq "$SITE_LBS"); do echo rl$n; done) \
		$(for n in $(seq "$SITE_REALS"); do echo rr$n; done); do
		ip netns exec "$T-rt" "$decap" attach $d --object "$obj" || return 1
	done
	ip netns exec "$T-cl" "$decap" attach c0 --object "$obj" || return 1
	for n in $(seq "$SITE_REALS"); do
		ip netns exec "$T-r$n" "$decap" attach r0 "$(site_real_addr $n)" --object "$obj" || return 1
		nginx_start $n || return 1  # topology.sh: namespace $T-rN, dir TOPO_TMP/rN
	done
}

# ---- etcd ------------------------------------------------------------------
site_etcd_cluster() {
	local n c=""
	for n in 1 2 3; do c="$c${c:+,}e$n=http://$(site_etcd_addr $n):2380"; done
	echo "$c"
}

site_etcd_endpoints() { # FIRST: the member listed first (each LB starts on its own)
	local first=$1 n out="" k
	for k in 0 1 2; do
		n=$(( (first - 1 + k) % 3 + 1 ))
		out="$out${out:+,}http://$(site_etcd_addr $n):$SITE_ETCD_PORT"
	done
	echo "$out"
}

site_etcd_start() { # N [existing]
	local n=$1 state=${2:-new} a
	a=$(site_etcd_addr "$n")
	mkdir -p "$TOPO_TMP/e$n"
	ip netns exec "$T-e$n" etcd --name e$n --data-dir "$TOPO_TMP/e$n/data" \
		--listen-client-urls "http://$a:$SITE_ETCD_PORT,http://127.0.0.1:$SITE_ETCD_PORT" \
		--advertise-client-urls "http://$a:$SITE_ETCD_PORT" \
		--listen-peer-urls "http://$a:2380" --initial-advertise-peer-urls "http://$a:2380" \
		--initial-cluster "$(site_etcd_cluster)" --initial-cluster-state "$state" \
		--initial-cluster-token "$T" </dev/null >>"$TOPO_TMP/e$n/etcd.log" 2>&1 &
	echo $! > "$TOPO_TMP/e$n/pid"
}

site_etcdctl() { # N ARGS...: etcdctl on member N's namespace
	local n=$1
	shift
	ip netns exec "$T-e$n" etcdctl --endpoints "http://127.0.0.1:$SITE_ETCD_PORT" \
		--dial-timeout 2s --command-timeout 3s "$@"
}

site_etcd_up() {
	local n
	for n in 1 2 3; do site_etcd_start $n; done
	for _ in $(seq 100); do
		site_etcdctl 1 --endpoints "$(site_etcd_endpoints 1)" endpoint health >/dev/null 2>&1 &&
			return 0
		sleep 0.2
	done
	echo "etcd cluster did not become healthy" >&2
	tail -5 "$TOPO_TMP"/e*/etcd.log >&2
	return 1
}

site_etcd_kill() { # N
	local f="$TOPO_TMP/e$1/pid"
	[ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
	wait "$(cat "$f")" 2>/dev/null
	return 0
}

# ---- BIRD ------------------------------------------------------------------
# BIRD runs SCHED_FIFO, as a BFD speaker should: with 50 ms x 3 a BFD
# session dies when its speaker misses 150 ms, which a loaded machine
# (this 2-core CI box, a busy LB) does to an ordinary process.
SITE_BIRD_PRIO=${SITE_BIRD_PRIO:-chrt -f 20}

site_bird() { # NS DIR: start BIRD with DIR/bird.conf, control socket DIR/bird.ctl
	ip netns exec "$T-$1" $SITE_BIRD_PRIO bird -c "$2/bird.conf" -s "$2/bird.ctl" \
		-P "$2/bird.pid" >>"$2/bird.out" 2>&1 || return 1
	for _ in $(seq 50); do
		[ -S "$2/bird.ctl" ] && return 0
		sleep 0.1
	done
	return 1
}

site_birdc() { # NS ARGS...
	local ns=$1
	shift
	birdc -s "$TOPO_TMP/$ns/bird.ctl" "$@"
}

site_router_up() {
	local d="$TOPO_TMP/rt" n
	mkdir -p "$d"
	{
		echo "log \"$d/bird.log\" all;"
		echo "router id 10.30.1.1;"
		echo "protocol device { scan time 1; }"
		echo "protocol kernel { ipv4 { export all; }; merge paths yes; }"
		echo "protocol bfd { interface \"rl*\" { interval $SITE_BFD_MS ms; multiplier $SITE_BFD_MULT; }; }"
		for n in $(seq "$SITE_LBS"); do
			cat <<BGP
protocol bgp lb$n {
	local 10.31.$n.1 as 65000;
	neighbor $(site_lb_addr $n) as 65001;
	ipv4 { import all; export none; };
	bfd on;
	graceful restart off;
	hold time 3; keepalive time 1; connect retry time 1; error wait time 1, 5;
	debug { states };
}
BGP
		done
	} > "$d/bird.conf"
	site_bird rt "$d"
}

site_lb_bird_up() { # N
	local n=$1 d="$TOPO_TMP/lb$1"
	mkdir -p "$d"
	# xlbd rewrites this file; BIRD needs it to exist at its first start.
	[ -f "$d/bird-vips.conf" ] || printf 'protocol static xlb_vips4 { ipv4; }\nprotocol static xlb_vips6 { ipv6; }\n' > "$d/bird-vips.conf"
	cat > "$d/bird.conf" <<CONF
log "$d/bird.log" all;
router id $(site_lb_addr $n);
protocol device { scan time 1; }
protocol bfd { interface "l0" { interval $SITE_BFD_MS ms; multiplier $SITE_BFD_MULT; }; }
include "$d/bird-vips.conf";
protocol bgp rtr {
	local $(site_lb_addr $n) as 65001;
	neighbor 10.31.$n.1 as 65000;
	ipv4 { import none; export where proto = "xlb_vips4"; };
	bfd on;
	graceful restart off;
	hold time 3; keepalive time 1; connect retry time 1; error wait time 1, 5;
	debug { states };
}
CONF
	site_bird lb$n "$d"
}

# The router's next hops for the VIP, one per line.
site_route_nexthops() {
	ip -n "$T-rt" route show "$SITE_VIP" | grep -oE 'via [0-9.]+' | awk '{print $2}' | sort
}

# site_wait_nexthops COUNT [TIMEOUT_S]: until the router has COUNT next hops.
site_wait_nexthops() {
	local want=$1 t=${2:-20} i
	for i in $(seq $((t * 20))); do
		[ "$(site_route_nexthops | grep -c .)" = "$want" ] && return 0
		sleep 0.05
	done
	return 1
}

# ---- xlbd on the LBs ----------------------------------------------------------
site_bpffs() {
	mkdir -p "$TOPO_TMP/bpf"
	mountpoint -q "$TOPO_TMP/bpf" || mount -t bpf bpf "$TOPO_TMP/bpf"
}

# site_xlbd_start N XLBD OBJ [extra args]: xlbd on LB N in fleet mode; waits for it.
site_xlbd_start() {
	local n=$1 xlbd=$2 obj=$3 d="$TOPO_TMP/lb$1" gw
	shift 3
	mkdir -p "$d/state"
	gw=$(ip -n "$T-rt" -br link show rl$n | awk '{print $3}')
	ip netns exec "$T-lb$n" "$xlbd" -i l0 -g "$gw" --src4 10.255.$n.0/24 -s "$d/xlbd.sock" \
		-d "$d/state" --pin-root "$TOPO_TMP/bpf/lb$n" -o "$obj" -m 0 \
		--store etcd --etcd-endpoints "$(site_etcd_endpoints $n)" --etcd-prefix "/xlb/$T/" \
		--host-name lb$n --bird-socket "$d/bird.ctl" --bird-include "$d/bird-vips.conf" \
		"$@" </dev/null >>"$d/xlbd.log" 2>&1 &
	echo $! > "$d/xlbd.pid"
	for _ in $(seq 100); do
		[ -S "$d/xlbd.sock" ] && site_lbctl $n status >/dev/null 2>&1 && return 0
		kill -0 "$(cat "$d/xlbd.pid")" 2>/dev/null || break
		sleep 0.1
	done
	echo "xlbd on lb$n did not come up; log:" >&2
	tail -20 "$d/xlbd.log" >&2
	return 1
}

# site_xlbd_stop N: SIGTERM xlbd on LB N (routes withdrawn, dataplane kept) and wait for it.
site_xlbd_stop() {
	local pid
	pid=$(cat "$TOPO_TMP/lb$1/xlbd.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "xlbd on lb$1 did not stop" >&2
	return 1
}

site_lbctl() { # N ARGS...
	local n=$1
	shift
	"$LBCTL" -s "$TOPO_TMP/lb$n/xlbd.sock" "$@"
}

# The state revision LB N runs (empty if xlbd does not answer).
site_revision() {
	site_lbctl "$1" -j host status 2>/dev/null | grep -oE '[{,]"revision":[0-9]+' | head -1 |
		grep -oE '[0-9]+$'
}

# site_wait_revision REV TIMEOUT_S LB...: until every LB runs revision >= REV.
site_wait_revision() {
	local rev=$1 t=$2 n r ok
	shift 2
	for _ in $(seq $((t * 100))); do
		ok=1
		for n in "$@"; do
			r=$(site_revision $n)
			[ -n "$r" ] && [ "$r" -ge "$rev" ] || { ok=0; break; }
		done
		[ $ok = 1 ] && return 0
		sleep 0.01
	done
	return 1
}

# A dead link between the router and LB N: every frame dropped both ways
# (tc, OBJ = blackhole.bpf.o), the carrier up, as for a frozen host.
site_blackhole() { # N OBJ
	ip netns exec "$T-rt" tc qdisc add dev rl$1 clsact &&
		ip netns exec "$T-rt" tc filter add dev rl$1 ingress bpf da obj "$2" sec tc &&
		ip netns exec "$T-rt" tc filter add dev rl$1 egress bpf da obj "$2" sec tc
}

# Kill every process of namespace NS (ours by construction), SIGTERM then SIGKILL.
site_ns_kill() { # NS [SIGNAL]
	local pids
	pids=$(ip netns pids "$T-$1" 2>/dev/null)
	[ -n "$pids" ] && kill -"${2:-TERM}" $pids 2>/dev/null
	return 0
}

site_down() {
	local ns
	for ns in $(site_namespaces); do site_ns_kill $ns TERM; done
	sleep 0.3
	for ns in $(site_namespaces); do site_ns_kill $ns KILL; done
	for ns in $(site_namespaces); do ip netns del "$T-$ns" 2>/dev/null; done
	mountpoint -q "$TOPO_TMP/bpf" 2>/dev/null && umount "$TOPO_TMP/bpf"
	return 0
}
