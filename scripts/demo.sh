#!/usr/bin/env bash
# Quick start command (1): install what is missing, build, and run xlb end to
# end in network namespaces (client, LB running xlbd, three reals with nginx):
# HTTP traffic through the VIP, then `lbctl stats` and `lbctl status`, then
# teardown.  `--keep` leaves the demo running and prints how to explore it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec scripts/demo-lb.sh "$@"
