#!/usr/bin/env bash
# Quick start command (2): install what is missing, build, run every test
# suite natively, then the runtime suites for arm64 under qemu-aarch64.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh

status=0
meson test -C build --print-errorlogs --num-processes 2 "$@" || status=1

# arm64: cross-build the runtime (core, verifier, interpreter, JIT) and run
# its suites under qemu-aarch64 through the cross file's exe_wrapper.
if [ -z "${XLB_SKIP_ARM64:-}" ]; then
	if [ ! -f build-arm64/build.ninja ]; then
		meson setup build-arm64 --cross-file meson/cross/aarch64-linux-gnu.ini >/dev/null
	fi
	ninja -C build-arm64
	meson test -C build-arm64 --print-errorlogs --num-processes 2 --suite runtime --suite jit || status=1
fi

scripts/test-summary.py build build-arm64
exit $status
