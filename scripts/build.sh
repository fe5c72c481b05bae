#!/usr/bin/env bash
# Configure (once) and build xlb in ./build; pass extra meson options as args.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
	meson setup build "$@" >/dev/null
fi
ninja -C build
