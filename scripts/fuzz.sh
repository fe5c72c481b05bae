#!/usr/bin/env bash
# Run every libFuzzer target for SECONDS each (default 20); non-zero on a crash.
#
# usage: scripts/fuzz.sh [SECONDS]
#
# Convention (add a target by following it, nothing to change here):
# - a fuzz target is a meson executable named fuzz_<name>, declared only
#   `if get_option('fuzz')`, compiling the code under test together with
#   LLVMFuzzerTestOneInput and using c_args/link_args: xbpf_fuzz_args
#   (core/meson.build: -fsanitize=fuzzer,address);
# - its seed corpus lives in tests/<area>/corpus/fuzz_<name>/ (small files,
#   committed), where <area> is the name of the folder the executable is
#   built in (tests/core -> core, verifier -> verifier);
# - new interesting inputs go to a scratch corpus in build-fuzz/, not into
#   the committed one; a crashing input is written to
#   tests/<area>/corpus/regress/ so that the area's normal test suite keeps
#   replaying it (commit it with the fix).
#
# build-fuzz is configured with CC=clang -Dfuzz=true; only fuzz_* targets
# are built, so the rest of the tree does not need to build with clang.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
build=build-fuzz

if [ ! -f $build/build.ninja ]; then
	CC=clang meson setup $build -Dfuzz=true >/dev/null || exit 1
fi
targets=$(meson introspect $build --targets |
	python3 -c 'import json,sys
for t in json.load(sys.stdin):
    if t["type"] == "executable" and t["name"].startswith("fuzz_"):
        print(t["filename"][0])')
if [ -z "$targets" ]; then
	echo "fuzz.sh: no fuzz_* targets" >&2
	exit 1
fi
# ninja wants paths relative to the build dir
rel=()
for t in $targets; do
	rel+=("$(realpath --relative-to=$build "$t")")
done
ninja -C $build -j2 "${rel[@]}" >/dev/null || exit 1

status=0
for t in $targets; do
	name=$(basename "$t")
	area=$(basename "$(dirname "$t")")
	seeds=tests/$area/corpus/$name
	regress=tests/$area/corpus/regress
	scratch=$build/corpus/$name
	mkdir -p "$seeds" "$regress" "$scratch"
	echo "fuzz.sh: $name for ${seconds}s (seeds $seeds)"
	# huge (hostile) map sizes must fail with ENOMEM, not abort in the allocator
	if ! ASAN_OPTIONS=allocator_may_return_null=1 "$t" -max_total_time="$seconds" -timeout=10 \
		-rss_limit_mb=2048 \
		-artifact_prefix="$regress/$name-" -print_final_stats=1 \
		"$scratch" "$seeds" >"$build/$name.log" 2>&1; then
		echo "fuzz.sh: $name FAILED; crash input in $regress/, log $build/$name.log" >&2
		tail -30 "$build/$name.log" >&2
		status=1
	else
		grep -E "stat::number_of_executed_units|stat::new_units_added" "$build/$name.log" |
			sed "s/^/fuzz.sh: $name: /"
	fi
done
exit $status
