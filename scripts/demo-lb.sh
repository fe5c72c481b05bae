#!/usr/bin/env bash
# demo-lb.sh: xlb end to end on this machine, in network namespaces.
#
# Builds if needed, creates a client, a router, the LB and three reals
# (decap XDP + nginx with the VIP on loopback), starts xlbd on the LB's veth
# with an embedded config (one VIP, three reals, HTTP health checks), drives
# HTTP traffic at the VIP with curl and wrk, prints `lbctl stats` and
# `lbctl status`, and removes everything again.
#
#   scripts/demo-lb.sh          run and tear down
#   scripts/demo-lb.sh --keep   leave it running and print how to explore it
#   scripts/demo-lb.sh --down   remove a demo left by --keep
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${XLB_BUILD_DIR:-$ROOT/build}
T=xlb-demo
TOPO_TMP=/run/xlb-demo
keep=0

case "${1:-}" in
--keep) keep=1 ;;
--down) ;;
"") ;;
*) echo "usage: $0 [--keep|--down]" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "demo-lb: run as root (netns, XDP)" >&2; exit 1; }

set +u
source "$ROOT/scripts/lib/topology.sh"
set -u
LBCTL=$BUILD/control/lbctl
XLBD=$BUILD/control/xlbd
DECAP=$BUILD/control/xlb-decap

down() {
	if [ -f "$TOPO_TMP/xlbd.pid" ]; then
		kill "$(cat "$TOPO_TMP/xlbd.pid")" 2>/dev/null || true
		sleep 0.3
	fi
	if ip netns list 2>/dev/null | grep -q "^$T-lb"; then
		ip netns exec $T-lb "$XLBD" --cleanup -i l0 -s "$TOPO_TMP/xlbd.sock" -d "$TOPO_TMP/state" \
			--pin-root "$TOPO_TMP/bpf/xlb" -m 0 >/dev/null 2>&1 || true
	fi
	topo_down
	mountpoint -q "$TOPO_TMP/bpf" 2>/dev/null && umount "$TOPO_TMP/bpf"
	rm -rf "$TOPO_TMP"
}

if [ "${1:-}" = --down ]; then
	down
	echo "demo-lb: removed"
	exit 0
fi
if ip netns list 2>/dev/null | grep -q "^$T-"; then
	echo "demo-lb: a demo is already running; remove it with: $0 --down" >&2
	exit 1
fi
if [ ! -x "$XLBD" ] || [ ! -x "$LBCTL" ] || [ ! -f "$BUILD/dataplane/balancer.bpf.o" ]; then
	ninja -C "$BUILD" >/dev/null
fi
LB_OBJ=$BUILD/dataplane/balancer.bpf.o
DECAP_OBJ=$BUILD/dataplane/decap.bpf.o
topo_check
[ $keep = 1 ] || trap 'down' EXIT
mkdir -p "$TOPO_TMP"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "topology: client, router, LB, three reals (decap XDP + nginx, VIP $VIP on lo)"
topo_up "$DECAP" "$DECAP_OBJ"
xlbd_prepare

# The embedded default config: one VIP, three reals, HTTP health checks.
cat > "$TOPO_TMP/xlbd.yaml" <<CFG
interfaces: [l0]
gateway_mac: "$GW_MAC"
src4: $SRC4
socket: $XLBD_SOCK
state_dir: $TOPO_TMP/state
pin_root: $XLBD_PINS
object: $LB_OBJ
metrics_address: 127.0.0.1
metrics_port: 9100
# xlb's verifier verdict is shown by 'lbctl status'; the demo attaches even
# if the verifier (still young) rejects the object.  Production: enforce.
verify: warn
vips:
  - address: $VIP
    port: 80
    proto: tcp
    healthcheck: {type: http, path: /, interval_ms: 500, timeout_ms: 300, rise: 2, fall: 2}
    reals:
      - {address: ${REALS[0]}, weight: 100}
      - {address: ${REALS[1]}, weight: 100}
      - {address: ${REALS[2]}, weight: 100}
CFG

step "xlbd on the LB's l0 (config $TOPO_TMP/xlbd.yaml)"
ip netns exec $T-lb "$XLBD" --config "$TOPO_TMP/xlbd.yaml" </dev/null >> "$TOPO_TMP/xlbd.log" 2>&1 &
echo $! > "$TOPO_TMP/xlbd.pid"
XLBD_PID=$(cat "$TOPO_TMP/xlbd.pid")
for _ in $(seq 100); do
	"$LBCTL" -s "$XLBD_SOCK" status >/dev/null 2>&1 && break
	sleep 0.1
done
"$LBCTL" -s "$XLBD_SOCK" vip list || { cat "$TOPO_TMP/xlbd.log"; exit 1; }

step "curl from the client: answers come straight from the reals"
for i in 1 2 3 4 5 6; do
	printf 'curl http://%s/ (source port varies) -> ' "$VIP"
	ip netns exec $T-cl curl -s --max-time 2 "http://$VIP/" || echo "(failed)"
done

step "wrk: 4 s, 2 threads, 40 keep-alive connections"
if command -v wrk >/dev/null; then
	ip netns exec $T-cl wrk -t2 -c40 -d4s "http://$VIP/" | sed -n '1,8p'
else
	echo "wrk not installed; 200 curl requests instead"
	for i in $(seq 200); do ip netns exec $T-cl curl -s --max-time 2 -o /dev/null "http://$VIP/"; done
fi

step "lbctl stats"
ip netns exec $T-lb "$LBCTL" -s "$XLBD_SOCK" stats
step "lbctl status"
ip netns exec $T-lb "$LBCTL" -s "$XLBD_SOCK" status
step "lbctl health"
ip netns exec $T-lb "$LBCTL" -s "$XLBD_SOCK" health
step "Prometheus metrics (excerpt)"
ip netns exec $T-lb curl -s http://127.0.0.1:9100/metrics | grep -E '^xlb_(vip|real)_packets|^xlb_lru_hit_ratio' || true

if [ $keep = 1 ]; then
	step "left running; explore with"
	cat <<TXT
  ip netns exec $T-lb $LBCTL -s $XLBD_SOCK status
  ip netns exec $T-lb $LBCTL -s $XLBD_SOCK stats --watch
  ip netns exec $T-lb $LBCTL -s $XLBD_SOCK real drain $VIP:80 ${REALS[0]}
  ip netns exec $T-cl curl http://$VIP/
  ip netns exec $T-lb curl -s http://127.0.0.1:9100/metrics
  tail -f $TOPO_TMP/xlbd.log
remove it all with:
  $ROOT/scripts/demo-lb.sh --down
TXT
else
	step "tearing down"
fi
