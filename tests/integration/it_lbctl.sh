#!/bin/bash
# lbctl behaves the same for every verb (issue 13, defect 10): a successful
# change prints exactly one line; a refusal by xlbd exits 1, a usage error 2,
# an unreachable daemon 3; with -j every error is a JSON object on stdout
# with the code; `lbctl -j help` works; --timeout bounds a daemon that never
# answers; `lbctl stats` shows each real's health.
# Usage: it_lbctl.sh XLBD LBCTL XLB_DECAP BALANCER_OBJ DECAP_OBJ
set -u
XLBD=$1 LBCTL=$2 LB_OBJ=$4
T=xlbt-c7-cli-$$
source "$(dirname "$0")/it_lib.sh"
topo_check
TOPO_TMP=$(mktemp -d /tmp/$T.XXXXXX)
cleanup() { [ -n "${mute:-}" ] && kill $mute 2>/dev/null; xlbd_teardown; ip netns del $T-lb 2>/dev/null; rm -rf "$TOPO_TMP"; }
trap cleanup EXIT

ip netns add $T-lb || fail netns
ip -n $T-lb link add l0 type veth peer name l1 && ip -n $T-lb link set l0 up && ip -n $T-lb link set l1 up || fail veth
GW_MAC=02:00:00:00:00:01
xlbd_prepare || fail bpffs
xlbd_start "$XLBD" "$LB_OBJ" || fail "xlbd start"
V=10.200.0.1:80

# one_line RC ARGS...: lbctl exits RC; on 0, exactly one line on stdout and nothing on stderr.
one_line() {
	local want=$1 out err rc
	shift
	out=$(lbctl "$@" 2>"$TOPO_TMP/err"); rc=$?
	err=$(cat "$TOPO_TMP/err")
	[ $rc = "$want" ] || fail "lbctl $* exited $rc, not $want ($out $err)"
	if [ "$want" = 0 ]; then
		[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && [ -n "$out" ] && [ -z "$err" ] ||
			fail "lbctl $*: not one line: '$out' '$err'"
		echo "ok: lbctl $* -> $out"
	fi
}
one_line 0 vip add $V hc tcp hc-interval 100 hc-timeout 50
one_line 0 vip set $V --flags=no-sport
one_line 0 real add $V 10.10.11.2 --weight=5
one_line 0 real add $V 10.10.12.2 weight 7 state draining
one_line 0 real set-weight $V 10.10.11.2 9
one_line 0 real drain $V 10.10.11.2
one_line 0 real undrain $V 10.10.11.2
one_line 0 real undrain $V 10.10.12.2
one_line 0 real down $V 10.10.12.2
one_line 0 real del $V 10.10.12.2
one_line 0 vip add 10.200.0.2:0/udp
one_line 0 vip del 10.200.0.2:0/udp

# The audit log says who changed what, old -> new.
grep -qE "uid 0 pid [0-9]+: vip set 10\.200\.0\.1:80/tcp: encap ipip flags - check tcp .* -> encap ipip flags no-sport check tcp" "$TOPO_TMP/xlbd.log" ||
	fail "vip set not audited old -> new"
grep -qE "uid 0 pid [0-9]+: real set 10\.200\.0\.1:80/tcp 10\.10\.11\.2: weight 5 -> 9, state active -> active" "$TOPO_TMP/xlbd.log" ||
	fail "real set not audited old -> new"

# Refusals (the daemon says no): 1, for every verb.
for args in "vip add $V" "vip del 10.200.0.9:80" "vip set 10.200.0.9:80 encap gue" "vip show 10.200.0.9:80" \
	"real add $V 10.10.11.2" "real add 10.200.0.9:80 10.10.11.2" "real del $V 10.10.19.2" \
	"real set-weight $V 10.10.19.2 3" "real drain $V 10.10.19.2" "real undrain $V 10.10.19.2" \
	"real down $V 10.10.19.2" "real list 10.200.0.9:80" "vip add 0.0.0.0:80" "real add $V 224.0.0.1"; do
	one_line 1 $args
	lbctl -j $args >> "$TOPO_TMP/refused.json"; rc=$?
	[ $rc = 1 ] || fail "-j $args: $rc"
done
# Usage errors: 2, for every verb, JSON with -j.
for args in "vip add" "vip add $V encap bogus" "vip add $V weight 3" "vip del $V extra" "vip list extra" \
	"vip show nope" "vip set $V" "real add $V" "real add $V not-an-ip" "real add $V 10.10.11.2 weight x" \
	"real del $V" "real set-weight $V 10.10.11.2 -1" "real drain $V" "real list" "stats extra" \
	"stats --interval=0" "status extra" "health extra" "apply" "export extra" "verify" "frob" "vip frob"; do
	one_line 2 $args
	lbctl -j $args >> "$TOPO_TMP/usage.json"; rc=$?
	[ $rc = 2 ] || fail "-j $args: $rc"
done
# Unreachable: 3, for every verb that talks to xlbd.
for args in "vip add $V" "vip del $V" "vip list" "vip show $V" "vip set $V encap gue" "real add $V 10.10.11.3" \
	"real del $V 10.10.11.2" "real set-weight $V 10.10.11.2 1" "real drain $V 10.10.11.2" "real list $V" \
	"stats" "status" "health" "export"; do
	"$LBCTL" -s "$TOPO_TMP/nope.sock" $args >/dev/null 2>&1; rc=$?
	[ $rc = 3 ] || fail "unreachable $args: $rc"
	"$LBCTL" -j -s "$TOPO_TMP/nope.sock" $args >> "$TOPO_TMP/unreachable.json"; rc=$?
	[ $rc = 3 ] || fail "-j unreachable $args: $rc"
done
# Every -j error above is one JSON object on its own line, with the exit code.
python3 - "$TOPO_TMP" <<'PY' || fail "-j errors"
import json, sys
for name, code, n in (("refused", 1, 14), ("usage", 2, 23), ("unreachable", 3, 14)):
    lines = open("%s/%s.json" % (sys.argv[1], name)).read().splitlines()
    assert len(lines) == n, (name, len(lines))
    for l in lines:
        e = json.loads(l)
        assert e["ok"] is False and e["exit"] == code and e["error"]["code"].startswith("E"), (name, e)
print("-j errors: all JSON with their exit codes")
PY
lbctl -j help | python3 -c '
import json, sys
h = json.load(sys.stdin)
names = [c["name"] for c in h["commands"]]
assert "vip add" in names and "real set-weight" in names and h["exit_codes"]["unreachable"] == 3, names' ||
	fail "help -j"
lbctl -j vip help | python3 -c 'import json,sys; assert all(c["name"].startswith("vip ") for c in json.load(sys.stdin)["commands"])' ||
	fail "vip help -j"

# --timeout: a socket that accepts and never answers.
python3 - "$TOPO_TMP/mute.sock" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(100)
held = []
while True:
    c, _ = s.accept(); held.append(c)
PY
mute=$!
for _ in $(seq 50); do [ -S "$TOPO_TMP/mute.sock" ] && break; sleep 0.1; done
t0=$(date +%s%N)
"$LBCTL" -s "$TOPO_TMP/mute.sock" --timeout 0.5 status 2>"$TOPO_TMP/err"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
cat "$TOPO_TMP/err"
[ $rc = 3 ] && grep -q "within 0.5 s" "$TOPO_TMP/err" || fail "timeout: rc $rc"
[ $ms -ge 450 ] && [ $ms -lt 3000 ] || fail "timeout took $ms ms"
echo "timeout 0.5 s -> gave up after $ms ms"

# stats shows the health state next to each real.
sleep 0.5
lbctl stats | tee "$TOPO_TMP/stats"
grep -qE "10\.10\.11\.2 \(active, (up|down|unknown)\)" "$TOPO_TMP/stats" || fail "no health in stats"
lbctl -j stats | python3 -c '
import json, sys
r = json.load(sys.stdin)["vips"][0]["reals"][0]
assert r["health"] in ("up", "down", "unknown") and "slots" in r, r' || fail "no health in stats -j"
echo PASS
