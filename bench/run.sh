#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench: runs every bench/bench_*.sh against one build folder.
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
rc=0
for b in bench/bench_*.sh; do
	[ -f "$b" ] || continue
	echo "== $(basename "$b" .sh)"
	sh "$b" "$BUILD" || rc=1
	echo
done
exit $rc
