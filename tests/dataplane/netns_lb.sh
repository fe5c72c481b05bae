#!/bin/bash
# netns_lb.sh TESTCTL BALANCER_OBJ DECAP_OBJ [CONNS] [ENCAP] [HEALTHCHECK_OBJ]
#
# A client, a router ("sw"), the balancer host and three reals, each in its
# own network namespace, joined by veths to the router:
#
#   client c0 ---- sw ---- l0 LB (balancer, native XDP, XDP_TX back to sw)
#                   |----- r1/r2/r3 reals (decap, native XDP; VIP on lo; nginx)
#
# The client's route to the VIP leads to the LB; the LB encapsulates toward
# a real (outer dst MAC = the router); the real decapsulates and nginx
# answers from the VIP straight to the client through the router.  The LB
# has forwarding off, so replies cannot pass through it.  CONNS client
# connections (default 1000, fixed source ports 20000..) must all succeed,
# each must meet the real spread_model.py predicts, and they must spread
# within +-15% of even.  With HEALTHCHECK_OBJ, marked probes from the LB
# host must reach the real of their mark.  DECAP_HOOK=tc runs the reals'
# decap as the tc ingress variant instead of XDP.  Everything is removed on
# exit.
set -u
testctl=$1 lb_obj=$2 decap_obj=$3 conns=${4:-1000} encap=${5:-ip} hc_obj=${6:-}
decap_hook=${DECAP_HOOK:-xdp}
T=xlbt-d6-$$
PY=/usr/bin/python3
VIP=10.200.0.1

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root"
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || skip "nginx missing"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
ip netns add $T-probe 2>/dev/null || skip "cannot create network namespaces"
ip netns del $T-probe

tmp=$(mktemp -d /tmp/$T-netns.XXXXXX)
cleanup() {
	for p in "$tmp"/*.pid; do
		[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	for n in cl sw lb r1 r2 r3; do
		ip netns del $T-$n 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

for n in cl sw lb r1 r2 r3; do
	ip netns add $T-$n || exit 1
	ip -n $T-$n link set lo up
done
ip netns exec $T-sw sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
	net.ipv4.conf.default.rp_filter=0
ip netns exec $T-lb sysctl -qw net.ipv4.ip_forward=0

# link NS DEV ADDR SW_DEV SW_ADDR
link() {
	ip link add "$2" netns $T-$1 type veth peer name "$4" netns $T-sw || exit 1
	ip -n $T-$1 addr add "$3/24" dev "$2"
	ip -n $T-sw addr add "$5/24" dev "$4"
	ip -n $T-$1 link set "$2" up
	ip -n $T-sw link set "$4" up
	ip -n $T-$1 route add default via "$5"
}
link cl c0 10.10.1.2 s-cl 10.10.1.1
link lb l0 10.10.0.2 s-lb 10.10.0.1
for i in 1 2 3; do
	link r$i r$i 10.10.1$i.2 s-r$i 10.10.1$i.1
	ip -n $T-r$i addr add $VIP/32 dev lo
	ip netns exec $T-r$i sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
		net.ipv4.conf.r$i.rp_filter=0
done
ip -n $T-sw route add $VIP/32 via 10.10.0.2
# veth leaves TCP checksums to "hardware" (CHECKSUM_PARTIAL); a frame the
# balancer rebuilds in XDP carries no such note, so the client computes them.
ip netns exec $T-cl ethtool -K c0 tx off >/dev/null || skip "ethtool cannot turn off tx checksum offload"

gw_mac=$(ip -n $T-sw -br link show s-lb | awk '{print $3}')
# XDP_TX from l0 and XDP frames into the routers' veths need a program on
# the receiving peers: the decap program (no host addresses: passes all).
ip netns exec $T-lb "$testctl" balancer "$lb_obj" l0 "$gw_mac" 10.255.0.0/16 $VIP 80 "$encap" \
	10.10.11.2 10.10.12.2 10.10.13.2 || { echo "FAIL: balancer setup"; exit 1; }
for d in s-lb s-cl s-r1 s-r2 s-r3; do
	ip netns exec $T-sw "$testctl" decap "$decap_obj" $d || { echo "FAIL: pass program on $d"; exit 1; }
done
ip netns exec $T-cl "$testctl" decap "$decap_obj" c0 || exit 1
for i in 1 2 3; do
	if [ "$decap_hook" = tc ]; then
		ip netns exec $T-r$i "$testctl" decap-tc "$decap_obj" r$i 10.10.1$i.2 ||
			{ echo "FAIL: tc decap on r$i"; exit 1; }
	else
		ip netns exec $T-r$i "$testctl" decap "$decap_obj" r$i 10.10.1$i.2 ||
			{ echo "FAIL: decap on r$i"; exit 1; }
	fi
	mkdir -p "$tmp/r$i"
	cat > "$tmp/r$i/nginx.conf" <<NGX
worker_processes 1;
pid $tmp/r$i/nginx.pid;
error_log $tmp/r$i/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $tmp/r$i;
	proxy_temp_path $tmp/r$i;
	fastcgi_temp_path $tmp/r$i;
	uwsgi_temp_path $tmp/r$i;
	scgi_temp_path $tmp/r$i;
	server {
		listen $VIP:80;
		location / { return 200 "r$i\n"; }
	}
}
NGX
	ip netns exec $T-r$i "$NGINX" -c "$tmp/r$i/nginx.conf" -g 'daemon off;' &
	echo $! > "$tmp/nginx-r$i.pid"
done
for i in 1 2 3; do
	for _ in $(seq 50); do
		ip netns exec $T-r$i ss -Htln "sport = :80" | grep -q . && break
		sleep 0.1
	done
done

[ -n "${XLB_DEBUG_HOLD:-}" ] && sleep "$XLB_DEBUG_HOLD"
# One probe first: a broken path fails in seconds, not after CONNS timeouts.
if ! ip netns exec $T-cl $PY -c "import socket; socket.create_connection(('$VIP', 80), timeout=3).close()"; then
	echo "FAIL: first connection to the VIP failed"
	ip netns exec $T-lb "$testctl" stats l0
	exit 1
fi
ip netns exec $T-cl timeout 50 $PY - "$VIP" "$conns" > "$tmp/client.out" <<'PYEOF'
import socket, sys
vip, n = sys.argv[1], int(sys.argv[2])
counts, fails = {}, 0
for i in range(n):
    try:
        # Fixed source ports make the flow set, and so the spread, the
        # same on every run: no statistical flakes in CI.
        s = socket.create_connection((vip, 80), timeout=2,
                                     source_address=('0.0.0.0', 20000 + i))
        s.sendall(b'GET / HTTP/1.0\r\nHost: vip\r\n\r\n')
        data = b''
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        s.close()
        name = data.split(b'\r\n\r\n', 1)[1].strip().decode()
        counts[name] = counts.get(name, 0) + 1
    except Exception as e:
        fails += 1
        if fails < 5:
            print('error', repr(e), file=sys.stderr)
for k in sorted(counts):
    print(k, counts[k])
print('fail', fails)
PYEOF
cat "$tmp/client.out"
ip netns exec $T-lb "$testctl" stats l0 | grep -E '^(real|event xdp_tx|event new_flow|event lru)'
fails=$(awk '$1 == "fail" {print $2}' "$tmp/client.out")
ok=1
[ "${fails:-x}" = 0 ] || { echo "FAIL: $fails of $conns connections failed"; ok=0; }
lo=$(( conns * 85 / 300 )) hi=$(( conns * 115 / 300 ))
for i in 1 2 3; do
	c=$(awk -v r=r$i '$1 == r {print $2}' "$tmp/client.out")
	c=${c:-0}
	if [ "$c" -lt $lo ] || [ "$c" -gt $hi ]; then
		echo "FAIL: r$i answered $c connections, want $lo..$hi"
		ok=0
	fi
done
[ $ok = 1 ] && echo "PASS: $conns connections, spread within 15% of even"
# Each connection must have met the real the specification predicts.
PYTHONPATH=$(dirname "$0") $PY "$(dirname "$0")/spread_model.py" 10.10.1.2 $VIP 80 20000 "$conns" \
	10.10.11.2 10.10.12.2 10.10.13.2 > "$tmp/model.out"
if grep '^r' "$tmp/client.out" | diff -u "$tmp/model.out" - ; then
	echo "PASS: per-real counts equal the model's prediction ($(tr '\n' ' ' < "$tmp/model.out"))"
else
	echo "FAIL: per-real counts differ from the model (hash.h + Maglev)"
	ok=0
fi

# Health-check probes from the LB host: the tc egress program encapsulates
# marked packets toward the real of their mark, like production traffic;
# each real answers with its own name, so the answer proves the path.
if [ -n "$hc_obj" ]; then
	ip -n $T-lb route add $VIP/32 via 10.10.0.1
	ip netns exec $T-lb ethtool -K l0 tx off >/dev/null
	ip netns exec $T-lb "$testctl" hc "$hc_obj" l0 10.10.0.2 101=10.10.11.2 102=10.10.12.2/$encap \
		103=10.10.13.2 || { echo "FAIL: healthcheck setup"; exit 1; }
	for m in 101 102 103; do
		want=r$((m - 100))
		got=$(ip netns exec $T-lb timeout 10 $PY - "$VIP" $m <<'PYEOF'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, int(sys.argv[2]))
s.settimeout(3)
try:
    s.connect((sys.argv[1], 80))
    s.sendall(b'GET / HTTP/1.0\r\n\r\n')
    data = b''
    while True:
        c = s.recv(4096)
        if not c:
            break
        data += c
    print(data.split(b'\r\n\r\n', 1)[1].strip().decode())
except Exception as e:
    print('error', e)
PYEOF
)
		if [ "$got" = "$want" ]; then
			echo "PASS: probe with mark $m answered by $got"
		else
			echo "FAIL: probe with mark $m: got '$got', want $want"
			ok=0
		fi
	done
fi
[ $ok = 1 ]
