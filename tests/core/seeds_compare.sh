#!/bin/sh
# Our loader against libbpf on the seeds' L4 LB objects, built at test time
# by testbed/build-seed-progs.py.  usage: seeds_compare.sh COMPARE SCRIPT SEEDS_DIR
set -u
compare=$1 script=$2 seeds=$3
out=$(mktemp -d /tmp/xlbt-c2-seeds.XXXXXX) || exit 1
trap 'rm -rf "$out"' EXIT
python3 "$script" "$seeds" "$out" >/dev/null
rc=$?
[ $rc -eq 0 ] || exit $rc
"$compare" "$out"/*.o
