#!/bin/sh
# SPDX-License-Identifier: MIT
# Soak: does sparkops stay flat over a long run? A benchmark, not a test.
#  0. the sampling loop itself (bench/soak_sampler.c: hardened, one sample a
#     second, as watch will run it), with a sane driver and with a driver
#     that hangs forever, for SOAK_MINUTES each
#  1. `sparkops watch --interval 1` for SOAK_MINUTES
#  2. `sparkops serve` scraped SOAK_RATE times a second for SOAK_MINUTES
# For each: resident memory (VmRSS), open file descriptors and CPU time per
# sample (watch) or per scrape (serve), at the start (after a warm-up of a
# quarter of the run, at most one minute) and at the end, and the ratio.
# Runs what exists and says what it skipped.
#
#   SOAK_MINUTES  minutes per part (default 1; 30 for the real run)
#   SOAK_RATE     scrapes per second for serve (default 50)
#   SOAK_PORT     serve's port (default 19455)
#   SOAK_LIVE=1   read this machine's /proc and /sys (default: the gb10-loaded
#                 fixture, so runs compare across machines)
# Without a real NVIDIA driver the fake NVML plays a GB10 (gb10.scn).
BUILD=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
S="$top/$BUILD/sparkops"
export SOAK_MINUTES="${SOAK_MINUTES:-1}"
export SOAK_RATE="${SOAK_RATE:-50}"
export SOAK_PORT="${SOAK_PORT:-19455}"
if [ "${SOAK_LIVE:-0}" = 1 ]; then
	ROOTS=""
else
	ROOTS="--procfs $top/tests/fixtures/gb10-loaded/proc --sysfs $top/tests/fixtures/gb10-loaded/sys"
fi
if [ -z "$SPARKOPS_NVML_LIB" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1'; then
	export SPARKOPS_NVML_LIB="$top/$BUILD/libfake-nvml.so"
	export FAKE_NVML_SCENARIO="$top/tests/fake-nvml/scenarios/gb10.scn"
fi
[ -x "$S" ] || { echo "soak: $S not built (make first)"; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "soak: skipped entirely (needs python3)"; exit 0; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the option serve listens with, whatever the serve helper named it
serve_args() {
	h=$("$S" serve --help 2>/dev/null)
	if echo "$h" | grep -q -- '--listen'; then echo "--listen 127.0.0.1:$SOAK_PORT"
	elif echo "$h" | grep -q -- '--port'; then echo "--port $SOAK_PORT"
	elif echo "$h" | grep -q -- '--bind'; then echo "--bind 127.0.0.1:$SOAK_PORT"
	else echo "--listen 127.0.0.1:$SOAK_PORT"; fi
}

ran=0
SAMPLER="$top/$BUILD/bench/soak_sampler"
if make -s -C "$top" BUILD="$BUILD" "$BUILD/bench/soak_sampler" >/dev/null 2>&1; then
	secs=$(python3 -c "print(int(float('$SOAK_MINUTES') * 60))")
	roots_env=""
	[ "${SOAK_LIVE:-0}" = 1 ] || roots_env="SPARKOPS_PROCFS=$top/tests/fixtures/gb10-loaded/proc SPARKOPS_SYSFS=$top/tests/fixtures/gb10-loaded/sys"
	echo "soak sampler: sane driver (${FAKE_NVML_SCENARIO:+fake }NVML), ${secs} s"
	# shellcheck disable=SC2086
	env $roots_env "$SAMPLER" "$secs" 1000 500
	if [ -f "$top/$BUILD/libfake-nvml.so" ]; then
		echo "soak sampler: a driver that never answers (hang.scn), ${secs} s"
		# shellcheck disable=SC2086
		env $roots_env SPARKOPS_NVML_LIB="$top/$BUILD/libfake-nvml.so" \
			FAKE_NVML_SCENARIO="$top/tests/fake-nvml/scenarios/hang.scn" "$SAMPLER" "$secs" 1000 500
	fi
else
	echo "soak: skipped the sampler loop (could not build $SAMPLER)"
fi
if "$S" watch --help >/dev/null 2>&1; then
	ran=1
	# shellcheck disable=SC2086
	python3 "$top/bench/soak.py" watch "$work" "$S" watch --interval 1 $ROOTS
else
	echo "soak: skipped 'watch --interval 1' (sparkops watch does not exist yet)"
fi
if "$S" serve --help >/dev/null 2>&1; then
	ran=1
	# shellcheck disable=SC2086
	python3 "$top/bench/soak.py" serve "$work" "$S" serve $(serve_args) $ROOTS
else
	echo "soak: skipped 'serve' under $SOAK_RATE scrapes/s (sparkops serve does not exist yet)"
fi
[ $ran = 1 ] || echo "soak: nothing to soak yet"
exit 0
