#!/bin/bash
# it_lib.sh - the frame of every it_*.sh, sourced by them: the shared netns
# topology (scripts/lib/topology.sh, which the demo uses too), the client,
# skip checks, scratch dir and cleanup.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/topology.sh"

client() { ip netns exec "$T-cl" python3 "$(dirname "${BASH_SOURCE[0]}")/client.py" "$@"; }

# The start of every it_*.sh: skip checks, scratch dir, cleanup on any exit.
it_begin() {
	topo_check
	TOPO_TMP=$(mktemp -d /tmp/$T.XXXXXX)
	trap 'xlbd_teardown; topo_down; rm -rf "$TOPO_TMP"' EXIT
}

fail() { echo "FAIL: $*"; [ -f "$TOPO_TMP/xlbd.log" ] && tail -20 "$TOPO_TMP/xlbd.log"; exit 1; }

# hold_check FILE WHAT: every connection of `client hold`'s FILE had no
# error (no reset, no timeout) and talked to one real only.
hold_check() {
	python3 - "$1" "$2" <<'PY'
import json, sys
hold = json.load(open(sys.argv[1]))
bad = [c for c in hold if c['errors'] or len(c['reals']) != 1]
assert hold and not bad, (sys.argv[2], len(bad), bad[:3])
print(len(hold), 'connections kept their real across', sys.argv[2])
PY
}

# it_up [extra xlbd args...]: the topology, then xlbd on $LB_OBJ (the test's
# XLBD, DECAP, LB_OBJ and DECAP_OBJ).
it_up() {
	topo_up "$DECAP" "$DECAP_OBJ" || fail "topology"
	xlbd_prepare || fail "bpffs"
	xlbd_start "$XLBD" "$LB_OBJ" "$@" || fail "xlbd start"
}
