#!/usr/bin/env bash
# Quick start command (1): install what is missing, build, run the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec build/tools/xlb-demo "$@"
