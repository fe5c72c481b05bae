#!/usr/bin/env bash
# Quick start command (2): install what is missing, build, run every test
# suite natively, then the runtime suites for arm64 under qemu-aarch64.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh

status=0
meson test -C build --print-errorlogs --num-processes 2 "$@" || status=1

# arm64: cross-build the runtime (isa, core, verifier, interpreter, JIT) and
# run its kernel-free suites under qemu-aarch64 through the cross file's
# exe_wrapper.  Emulation is ~5-20x slower than native, hence the longer
# per-test timeouts; the whole stage stays well under 10 minutes.
if [ -z "${XLB_SKIP_ARM64:-}" ]; then
	if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
		echo "arm64 stage: aarch64-linux-gnu-gcc or qemu-aarch64 missing" >&2
		status=1
	else
		if [ ! -f build-arm64/build.ninja ]; then
			meson setup build-arm64 --cross-file meson/cross/aarch64-linux-gnu.ini >/dev/null
		fi
		ninja -C build-arm64 -j2
		meson test -C build-arm64 --print-errorlogs --num-processes 2 --timeout-multiplier 4 \
			--suite unit --suite runtime --suite verifier --suite jit || status=1
		# The JIT again on a plain ARMv8.0 core (qemu's default CPU has every
		# extension): no LSE atomics or later instructions may slip in.  Own
		# log name, so testlog.json (the summary's input) keeps the full run.
		QEMU_CPU=cortex-a57 meson test -C build-arm64 --print-errorlogs --num-processes 2 \
			--timeout-multiplier 4 --suite jit --no-rebuild --logbase testlog-armv8.0 || status=1
	fi
fi

# Fuzzers: a short bounded run of every libFuzzer target (the long run is
# `scripts/fuzz.sh SECONDS`).
if [ -z "${XLB_SKIP_FUZZ:-}" ]; then
	scripts/fuzz.sh "${XLB_FUZZ_SECONDS:-15}" || status=1
fi

scripts/test-summary.py build build-arm64
exit $status
