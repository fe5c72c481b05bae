#!/bin/bash
# Declarative config through lbctl: apply -f FILE (YAML and JSON) with
# --dry-run, idempotence, a diff that removes/re-weights, export round trip,
# a broken file refused with nothing changed; exit codes; the Prometheus
# endpoint serves per-VIP/real counters (packets, new flows) and reasons by
# name; lbctl stats shows new flows.
# Usage: it_apply.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 DECAP=$3 LB_OBJ=$4 DECAP_OBJ=$5
T=xlbt-c7-apl-$$
source "$(dirname "$0")/it_lib.sh"
it_begin

topo_up "$DECAP" "$DECAP_OBJ" || fail "topology"
xlbd_prepare || fail "bpffs"
port=$((20000 + RANDOM % 20000))
xlbd_start "$XLBD" "$LB_OBJ" -m $port || fail "xlbd start"

cat > "$TOPO_TMP/lb.yaml" <<YAML
vips:
  - address: $VIP
    port: 80
    healthcheck: {type: tcp, interval_ms: 300, timeout_ms: 200}
    reals:
      - {address: ${REALS[0]}, weight: 10}
      - {address: ${REALS[1]}, weight: 10}
      - {address: ${REALS[2]}, weight: 10}
  - address: 10.200.0.2
    port: 53
    proto: udp
    flags: [no-sport]
    encap: gue
    reals:
      - {address: ${REALS[0]}}
YAML
lbctl apply -f "$TOPO_TMP/lb.yaml" --dry-run | tee "$TOPO_TMP/dry"
grep -q "not applied" "$TOPO_TMP/dry" && grep -q "+ vip 10.200.0.2:53/udp" "$TOPO_TMP/dry" || fail "dry run output"
[ "$(lbctl -j vip list | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["vips"]))')" = 0 ] ||
	fail "dry run changed the state"
lbctl apply -f "$TOPO_TMP/lb.yaml" | tee "$TOPO_TMP/applied"
grep -q "6 change(s) applied" "$TOPO_TMP/applied" || fail "apply"
lbctl vip list
out=$(client spread $VIP 60)
echo "$out" | grep -q '"fails": 0' || fail "traffic after apply: $out"

# Idempotent, and export is apply's format.
lbctl apply -f "$TOPO_TMP/lb.yaml" | grep -q "0 change(s)" || fail "second apply not a no-op"
lbctl export > "$TOPO_TMP/export.json"
lbctl apply -f "$TOPO_TMP/export.json" | grep -q "0 change(s)" || fail "export does not round-trip"

# A diff: r3 leaves, r2 re-weighted, the UDP VIP goes.
python3 - "$TOPO_TMP/export.json" > "$TOPO_TMP/next.json" <<PY
import json, sys
c = json.load(open(sys.argv[1]))
c['vips'] = [v for v in c['vips'] if v['port'] == 80]
v = c['vips'][0]
v['reals'] = [r for r in v['reals'] if r['address'] != '${REALS[2]}']
for r in v['reals']:
    if r['address'] == '${REALS[1]}':
        r['weight'] = 30
print(json.dumps(c))
PY
lbctl apply -f "$TOPO_TMP/next.json" | tee "$TOPO_TMP/diff"
grep -q "^- real .*${REALS[2]}" "$TOPO_TMP/diff" && grep -q "^~ real .*${REALS[1]} weight 10->30" "$TOPO_TMP/diff" &&
	grep -q "^- vip 10.200.0.2:53/udp" "$TOPO_TMP/diff" || fail "diff lines"
out=$(client spread $VIP 80)
echo "$out"
echo "$out" | grep -q '"r3"' && fail "removed real still gets traffic"
echo "$out" | grep -q '"fails": 0' || fail "traffic after diff: $out"

# Broken files: usage exit code 2, nothing changes.
lbctl -j export > "$TOPO_TMP/before.json"
printf 'vips:\n  - address: 10.0.0.1\n    port: 80\n    colour: red\n' > "$TOPO_TMP/bad.yaml"
lbctl apply -f "$TOPO_TMP/bad.yaml"; [ $? = 2 ] || fail "bad file exit code"
printf 'vips: [\n' > "$TOPO_TMP/bad2.yaml"
lbctl apply -f "$TOPO_TMP/bad2.yaml"; [ $? = 2 ] || fail "syntax error exit code"
lbctl real del $VIP:80 10.9.9.9; [ $? = 1 ] || fail "refused request exit code"
lbctl vip frobnicate; [ $? = 2 ] || fail "unknown verb exit code"
"$LBCTL" -s "$TOPO_TMP/nope.sock" status; [ $? = 3 ] || fail "unreachable exit code"
# Issue 13 defect 3: a file that says nothing is refused, never "delete everything".
for f in "" "   \n\n" "# nothing here\n" "{}" "vips:\n" "vips: []\n"; do
	printf "$f" > "$TOPO_TMP/empty.yaml"
	lbctl apply -f "$TOPO_TMP/empty.yaml"; rc=$?
	[ $rc = 2 ] || fail "apply of '$f' exited $rc"
done
# The daemon refuses them too, whatever the client (rc 1: a refusal).
python3 - "$XLBD_SOCK" <<'PY' || fail "API accepted an empty config"
import json, socket, sys
for cfg in ({}, {"vips": None}, {"vips": []}):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
    s.sendall((json.dumps({"v": 1, "op": "apply", "args": {"config": cfg}}) + "\n").encode())
    r = json.loads(s.makefile().readline())
    assert not r["ok"] and r["error"]["code"] == "EINVAL", (cfg, r)
PY
# Issue 13 defect 4: impossible addresses are refused with a reason (rc 1).
for v in 0.0.0.0:80 255.255.255.255:80 224.0.0.1:80 127.0.0.1:80 "[::]:80" "[ff02::1]:80"; do
	out=$(lbctl vip add $v 2>&1); rc=$?
	[ $rc = 1 ] && [[ "$out" == *"no packet can be balanced"* ]] || fail "VIP $v: rc $rc $out"
done
for r in 0.0.0.0 255.255.255.255 224.0.0.5 127.0.0.1 169.254.0.1 $VIP; do
	out=$(lbctl real add $VIP:80 $r 2>&1); rc=$?
	[ $rc = 1 ] || fail "real $r: rc $rc $out"
done
lbctl -j export > "$TOPO_TMP/after.json"
cmp -s "$TOPO_TMP/before.json" "$TOPO_TMP/after.json" || fail "a refused file changed the state"

# Metrics.
ip netns exec $T-lb curl -s "http://127.0.0.1:$port/metrics" > "$TOPO_TMP/metrics" || fail "metrics endpoint"
grep -E "^xlb_real_packets_total\{.*real=\"${REALS[1]}\"" "$TOPO_TMP/metrics" | awk '{exit !($2 > 0)}' ||
	fail "no real packet counter"
# Every client connection is a new flow for the VIP and one of its reals.
grep -E "^xlb_real_new_flows_total\{.*real=\"${REALS[1]}\"" "$TOPO_TMP/metrics" | awk '{exit !($2 > 0)}' ||
	fail "no real new-flow counter"
vp=$(grep -E "^xlb_vip_packets_total\{vip=\"$VIP\",port=\"80\",proto=\"tcp\"\}" "$TOPO_TMP/metrics" | awk '{print $2}')
vn=$(grep -E "^xlb_vip_new_flows_total\{vip=\"$VIP\",port=\"80\",proto=\"tcp\"\}" "$TOPO_TMP/metrics" | awk '{print $2}')
[ -n "$vn" ] && [ -n "$vp" ] && [ "$vn" -gt 0 ] && [ "$vn" -lt "$vp" ] ||
	fail "vip new flows $vn vs packets $vp"
lbctl stats | grep -q "NEW FLOWS" || fail "lbctl stats: no NEW FLOWS column"
lbctl -j stats | python3 -c '
import json, sys
v = json.load(sys.stdin)["vips"][0]
n = v["counters"]["new_flows"]
r = sum(x["counters"]["new_flows"] for x in v["reals"])
sys.exit(not (0 < r <= n))' || fail "lbctl -j stats new_flows"
grep -q '^xlb_reason_packets_total{reason="pass_not_vip"}' "$TOPO_TMP/metrics" || fail "reasons by name"
grep -q '^xlb_real_up{' "$TOPO_TMP/metrics" && grep -q '^xlb_lru_hit_ratio ' "$TOPO_TMP/metrics" || fail "health/LRU metrics"
[ "$(ip netns exec $T-lb curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/nope")" = 404 ] || fail "404"
grep -q "^xlb_real_ring_slots{" "$TOPO_TMP/metrics" || fail "no ring slot metric"

# Removing every VIP takes "vips: []" and --allow-empty; --dry-run counts it first.
printf 'vips: []\n' > "$TOPO_TMP/none.yaml"
lbctl apply -f "$TOPO_TMP/none.yaml" --dry-run --allow-empty | tee "$TOPO_TMP/dry-none"
grep -q "not applied: 0 VIP(s) and 0 real(s) added, 1 VIP(s) and 2 real(s) removed" "$TOPO_TMP/dry-none" ||
	fail "dry-run counts"
[ "$(lbctl -j vip list | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["vips"]))')" = 1 ] ||
	fail "dry run removed VIPs"
lbctl apply -f "$TOPO_TMP/none.yaml" --allow-empty | grep -q "1 VIP(s) and 2 real(s) removed" || fail "allow-empty apply"
[ "$(lbctl -j vip list | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["vips"]))')" = 0 ] ||
	fail "vips: [] --allow-empty kept VIPs"
echo PASS
