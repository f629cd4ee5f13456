#!/bin/sh
# SPDX-License-Identifier: MIT
# The job never inherits our file descriptors: a child started by
# `sparkops run` sees 0, 1 and 2 and nothing else. Skips (and says so) while
# `run` is not a command yet; becomes a real test the day it lands.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
SC="$(dirname "$0")/../fake-nvml/scenarios"

if ! $S run --help >/dev/null 2>&1; then
	T_N=$((T_N + 1))
	echo "ok $T_N - # SKIP 'sparkops run' does not exist yet"
	done_testing
	exit 0
fi

# the child lists its own open fds (the shell's, not ls's). What the test's
# own environment passed down (a CI runner's or a terminal's extra fds) is the
# user's to pass on: the baseline is the same command started without sparkops.
base=$(sh -c 'for f in /proc/$$/fd/*; do echo "fd ${f##*/}"; done' | sed 's/^fd //' | sort -n | tr '\n' ' ')
run timeout 20 env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/gb10.scn \
	$S run $(sysroot gb10-idle) --log "$TMP/fds.csv" -- sh -c 'for f in /proc/$$/fd/*; do echo "fd ${f##*/}"; done'
expect_rc 0 "run: the child ran"
fds=$(grep -E '^fd [0-9]+$' "$OUT" | sed 's/^fd //' | sort -n | tr '\n' ' ')
[ "$fds" = "$base" ]
_report $? "run: the child inherits none of sparkops's fds (got: $fds, without sparkops: $base)"
done_testing
