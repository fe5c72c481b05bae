#!/bin/bash
# xlbd's settings (issue 13, defect 9): numbers are parsed strictly with
# range errors, the command line overrides the config file (-i replaces its
# interfaces), a metrics bind failure is fatal unless metrics-optional, and
# IPv6 binds work.  One namespace with two veth pairs.
# Usage: it_settings.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 LB_OBJ=$4
T=xlbt-c7-set-$$
source "$(dirname "$0")/it_lib.sh"
topo_check
TOPO_TMP=$(mktemp -d /tmp/$T.XXXXXX)
cleanup() { [ -n "${hog:-}" ] && kill $hog 2>/dev/null; xlbd_teardown; ip netns del $T-lb 2>/dev/null; rm -rf "$TOPO_TMP"; }
trap cleanup EXIT

ip netns add $T-lb || fail netns
ip -n $T-lb link set lo up
for p in 0 2; do
	ip -n $T-lb link add l$p type veth peer name l$((p + 1)) || fail veth
	ip -n $T-lb link set l$p up && ip -n $T-lb link set l$((p + 1)) up
done
GW_MAC=02:00:00:00:00:01
xlbd_prepare || fail bpffs

# Strict numbers: refused before anything starts, with the range.
for bad in "-m 70000" "-m abc" "-m -1" "--metrics-port=9x" "--lru-size 0" "--gue-port 65536" "--src4 10.0.0.0/33"; do
	out=$(ip netns exec $T-lb "$XLBD" -i l0 -s "$TOPO_TMP/x.sock" -d "$TOPO_TMP/state" \
		--pin-root "$XLBD_PINS" $bad 2>&1); rc=$?
	[ $rc = 2 ] || fail "'$bad' exited $rc"
	echo "$bad -> $out"
done
out=$(ip netns exec $T-lb "$XLBD" -i l0 -m 70000 2>&1)
[[ "$out" == *"0..65535"* ]] || fail "range not named: $out"
[ ! -e "$TOPO_TMP/state/xlb.db" ] || fail "a refused start created a store"

# The command line overrides the config file; -i replaces its interfaces.
cat > "$TOPO_TMP/xlbd.yaml" <<YAML
interfaces: [l2]
lru_size: 1000
metrics_port: 1
YAML
port=$((20000 + RANDOM % 20000))
xlbd_start "$XLBD" "$LB_OBJ" -c "$TOPO_TMP/xlbd.yaml" -m $port --metrics-address ::1 ||
	fail "xlbd start"
lbctl -j status | python3 -c '
import json, sys
s = json.load(sys.stdin)
names = [i["name"] for i in s["dataplane"]["interfaces"]]
assert names == ["l0"], names
assert s["settings"]["lru_size"] == 1000, s["settings"]' || fail "config/command line precedence"
# IPv6 metrics bind.
ip netns exec $T-lb curl -s -g "http://[::1]:$port/metrics" | grep -q "^xlb_changes_total" ||
	fail "metrics on [::1]"
# SIGHUP re-reads the live settings; the others wait for a restart; a broken
# file changes nothing.  (The command line's -g and --src4 still win over the file.)
lbctl vip add 10.200.0.1:80 || fail "vip add"
lbctl real add 10.200.0.1:80 10.10.11.2 weight 2 || fail "real add"
cat > "$TOPO_TMP/xlbd.yaml" <<YAML
interfaces: [l2]
lru_size: 2000
metrics_port: 1
src4: 10.254.0.0/16
max_new_flows_per_sec: 777
api_idle_timeout: 4000
YAML
kill -HUP $XLBD_PID
for _ in $(seq 50); do grep -q "reloaded:" "$TOPO_TMP/xlbd.log" && break; sleep 0.1; done
grep -q "reload: lru-size changed; it takes effect at the next start" "$TOPO_TMP/xlbd.log" ||
	fail "non-live setting not reported"
grep -q "reloaded: 2 setting(s) changed" "$TOPO_TMP/xlbd.log" || fail "live settings not counted"
lbctl -j status | python3 -c '
import json, sys
s = json.load(sys.stdin)["settings"]
assert s["lru_size"] == 1000, s' || fail "a non-live setting changed at reload"
[ "$(lbctl -j vip list | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["vips"]))')" = 1 ] ||
	fail "reload touched the state"
echo "vips: [" > "$TOPO_TMP/xlbd.yaml"
kill -HUP $XLBD_PID
for _ in $(seq 50); do grep -q "did not load; keeping" "$TOPO_TMP/xlbd.log" && break; sleep 0.1; done
grep -q "did not load; keeping the running ones" "$TOPO_TMP/xlbd.log" || fail "broken config at reload"
lbctl status > /dev/null || fail "xlbd died on a broken reload"
xlbd_stop

# A metrics port in use is fatal, unless metrics-optional.
ip netns exec $T-lb python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(60)' $port &
hog=$!
for _ in $(seq 50); do ip netns exec $T-lb ss -Htln "sport = :$port" | grep -q . && break; sleep 0.1; done
timeout 20 ip netns exec $T-lb "$XLBD" -i l0 -g $GW_MAC --src4 $SRC4 -s "$XLBD_SOCK" -d "$TOPO_TMP/state" \
	--pin-root "$XLBD_PINS" -o "$LB_OBJ" -m $port > "$TOPO_TMP/busy.log" 2>&1 </dev/null
rc=$?
cat "$TOPO_TMP/busy.log"
[ $rc = 1 ] || fail "metrics bind failure exited $rc"
grep -q "metrics server on 127.0.0.1 port $port did not start" "$TOPO_TMP/busy.log" || fail "bind message"
[ ! -e "$XLBD_SOCK" ] || fail "a failed start left its socket"
xlbd_start "$XLBD" "$LB_OBJ" -m $port --metrics-optional || fail "metrics-optional start"
grep -q "metrics-optional: going on without" "$TOPO_TMP/xlbd.log" || fail "optional message"
lbctl -j status | python3 -c 'import json,sys; assert json.load(sys.stdin)["settings"]["metrics"] == "off"' ||
	fail "status shows metrics"
xlbd_stop
echo PASS
