#!/bin/sh
# golden.sh PYTHON GEN.py GOLDEN_RUN ENGINE OBJ PROG REASON_MAP NAME
# Generate the table with scapy, then run it in a fresh network namespace
# holding two veths (ifindex 2 and 3, the redirect rows' interfaces).
set -u
py=$1 gen=$2 run=$3 engine=$4 obj=$5 prog=$6 rmap=$7 name=$8
"$py" -c 'import scapy' 2>/dev/null || { echo "SKIP: python3-scapy missing"; exit 77; }
tmp=$(mktemp -d /tmp/xlbt-d6-golden.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
PYTHONPATH=$(dirname "$gen") "$py" "$gen" "$tmp/$name.tab" "$prog" >/dev/null || exit 1
case $engine in kernel|diff-*) kernel=1 ;; *) kernel=0 ;; esac
if [ $kernel = 1 ]; then
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for BPF_PROG_TEST_RUN"; exit 77; }
	# Not exec: the EXIT trap must still remove the table.
	unshare -n sh -c 'ip link set lo up && ip link add xlbt-d6-a type veth peer name xlbt-d6-b &&
		ip link set xlbt-d6-a up && ip link set xlbt-d6-b up && exec "$@"' sh \
		"$run" "$engine" "$obj" "$prog" "$tmp/$name.tab" "$rmap"
	exit $?
fi
"$run" "$engine" "$obj" "$prog" "$tmp/$name.tab" "$rmap"
