#!/bin/bash
# The userspace backend without xlb-dpdk: xlbd waits --dpdk-wait seconds
# for xlb-dpdk's maps, then says what is missing and exits non-zero without
# leaving a socket behind; a relative run directory and an unknown backend
# name are refused.  (tests/dpdk drives it against a running xlb-dpdk.)
# Usage: userspace_backend.sh XLBD
set -u
xlbd=$1
tmp=$(mktemp -d /tmp/xlbt-c7-us.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

start=$(date +%s%N)
"$xlbd" --backend userspace --dpdk-run-dir "$tmp/dpdk" --dpdk-wait 1 -s "$tmp/s.sock" \
	-d "$tmp/state" -m 0 > "$tmp/log" 2>&1
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
cat "$tmp/log"
[ $rc -ne 0 ] || fail "xlbd ran without xlb-dpdk's maps"
grep -q "no xlb-dpdk maps in $tmp/dpdk/maps (waited 1s): start xlb-dpdk" "$tmp/log" ||
	fail "no clear message"
grep -q "waiting up to 1s for xlb-dpdk's maps" "$tmp/log" || fail "did not say it waits"
[ $ms -ge 900 ] || fail "did not wait (${ms} ms)"
[ -e "$tmp/s.sock" ] && fail "socket left behind"

"$xlbd" --backend userspace --dpdk-run-dir relative/dir -s "$tmp/s.sock" -d "$tmp/state" \
	-m 0 > "$tmp/log1" 2>&1 && fail "relative run directory accepted"
grep -q "must be an absolute path" "$tmp/log1" || fail "relative run directory message"

"$xlbd" --backend frobnicator -i lo -s "$tmp/s.sock" -d "$tmp/state" -m 0 > "$tmp/log2" 2>&1 &&
	fail "unknown backend accepted"
grep -q 'frobnicator' "$tmp/log2" || fail "unknown backend message"
echo PASS
