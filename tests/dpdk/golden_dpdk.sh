#!/bin/sh
# golden_dpdk.sh PYTHON GEN.py GOLDEN_DPDK XLB_DPDK ENGINE OBJ PROG REASON_MAP NAME
# Generate a dataplane golden table with scapy (tests/dataplane's generator,
# read where it lives), then feed it through xlb-dpdk (golden_dpdk.c).
set -u
py=$1 gen=$2 harness=$3 dpdk=$4 engine=$5 obj=$6 prog=$7 rmap=$8 name=$9
"$py" -c 'import scapy' 2>/dev/null || { echo "SKIP: python3-scapy missing"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: DPDK's EAL needs root here"; exit 77; }
tmp=$(mktemp -d /tmp/xlb-golden-dpdk-tab.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
PYTHONPATH=$(dirname "$gen") "$py" "$gen" "$tmp/$name.tab" "$prog" >/dev/null || exit 1
"$harness" "$dpdk" "$engine" "$obj" "$prog" "$tmp/$name.tab" "$rmap"
