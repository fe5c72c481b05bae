#!/bin/bash
# systemd-analyze verify on xlbd.service (ExecStart pointed at the built
# xlbd, since the installed path does not exist in a build tree).
# Usage: unit_verify.sh UNIT XLBD
set -u
unit=$1 xlbd=$2
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze missing"; exit 77; }
tmp=$(mktemp -d /tmp/xlbt-c7-unit.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
sed "s|^ExecStart=[^ ]*|ExecStart=$(realpath "$xlbd")|" "$unit" > "$tmp/xlbd.service"
grep -q "^Type=notify" "$tmp/xlbd.service" || { echo "FAIL: not Type=notify"; exit 1; }
out=$(systemd-analyze verify --man=no "$tmp/xlbd.service" 2>&1)
status=$?
echo "$out"
# Complaints about other units of this host are not ours.
if [ $status -ne 0 ] || echo "$out" | grep -q "xlbd.service"; then
	echo "FAIL: systemd-analyze verify"
	exit 1
fi
# A broken unit must be caught: the check can fail.
sed 's/^Type=notify/Type=notifyy/' "$tmp/xlbd.service" > "$tmp/broken.service"
if systemd-analyze verify --man=no "$tmp/broken.service" 2>&1 | grep -q "broken.service"; then
	echo "PASS"
else
	echo "FAIL: systemd-analyze did not flag a broken unit"
	exit 1
fi
