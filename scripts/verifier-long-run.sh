#!/usr/bin/env bash
# The long differential run of the verifier (issue 10): N verifier-tricky
# random programs (default 1,000,000), half XDP and half tc, through xlb's
# verifier and this machine's kernel.  Prints progress, every disagreement
# (a FALSE ACCEPT is xlb accepting what the kernel rejects), and one summary
# line per program type; exits 1 on a false accept or under 99.9% agreement.  Needs root (BPF_PROG_LOAD) and a built tree.
#   scripts/verifier-long-run.sh [N] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
seed=${2:-$(date +%s)}
runner=build/tests/verifier/run_cases_kernel
[ -x "$runner" ] || scripts/build.sh
status=0
for t in xdp sched_cls; do
	python3 tests/verifier/tricky_programs.py --runner "$runner" --type "$t" \
		--seed "$seed" --count $((n / 2)) --batch 5000 || status=1
done
exit $status
