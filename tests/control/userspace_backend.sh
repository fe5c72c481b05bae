#!/bin/bash
# The userspace (DPDK) backend is defined but not available yet: xlbd must
# say so clearly and exit non-zero without leaving a socket behind.  An
# unknown backend name is refused too.
# Usage: userspace_backend.sh XLBD
set -u
xlbd=$1
tmp=$(mktemp -d /tmp/xlbt-c7-us.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$xlbd" --backend userspace -i lo -s "$tmp/s.sock" -d "$tmp/state" -m 0 > "$tmp/log" 2>&1
rc=$?
cat "$tmp/log"
[ $rc -ne 0 ] || { echo "FAIL: xlbd ran with the userspace backend"; exit 1; }
grep -q "userspace (DPDK) backend is not available" "$tmp/log" || { echo "FAIL: no clear message"; exit 1; }
[ -e "$tmp/s.sock" ] && { echo "FAIL: socket left behind"; exit 1; }
"$xlbd" --backend frobnicator -i lo -s "$tmp/s.sock" -d "$tmp/state" -m 0 > "$tmp/log2" 2>&1 &&
	{ echo "FAIL: unknown backend accepted"; exit 1; }
grep -q 'unknown or unavailable backend "frobnicator"' "$tmp/log2" || { echo "FAIL: unknown backend message"; exit 1; }
echo PASS
