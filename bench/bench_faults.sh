#!/bin/sh
# SPDX-License-Identifier: MIT
# Time to answer under each fake-NVML fault scenario (docs/RELIABILITY.md):
# `sparkops status --json` against the gb10-idle fixture, median of RUNS
# runs, with what it marked missing. A benchmark, not a test: the tests
# (tests/cli/test_faults.sh) check the behaviour, this measures it.
BUILD=${1:-build}
RUNS=${RUNS:-5}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
S="$top/$BUILD/sparkops"
SC="$top/tests/fake-nvml/scenarios"
ROOTS="--procfs $top/tests/fixtures/gb10-idle/proc --sysfs $top/tests/fixtures/gb10-idle/sys"
command -v jq >/dev/null 2>&1 || { echo "bench_faults: needs jq"; exit 0; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT

now_ms() { date +%s%3N; }

printf '%-20s %-20s %9s %5s  %-12s %s\n' scenario options "median ms" exit gpu_status "GPU readings"
for line in "gb10|" "slow|" "slow|--gpu-timeout 100ms" "hang|" "hang|--gpu-timeout 500ms" \
	"hang-init|" "gb10||FAKE_NVML_HANG_IN_DLOPEN=1" "lost|" "lost-midrun|" "lost-midrun||FAKE_NVML_TIME_SCALE=1000000" "garbage|" \
	"noperm|" "nodriver|"; do
	scn=${line%%|*}
	rest=${line#*|}
	opts=${rest%%|*}
	extra=${rest#*|}
	[ "$extra" = "$rest" ] && extra=""
	times=""
	for i in $(seq "$RUNS"); do
		t0=$(now_ms)
		# shellcheck disable=SC2086
		timeout 20 env $extra SPARKOPS_NVML_LIB="$top/$BUILD/libfake-nvml.so" FAKE_NVML_SCENARIO="$SC/$scn.scn" \
			"$S" status $ROOTS --json $opts >"$out" 2>/dev/null
		rc=$?
		t1=$(now_ms)
		times="$times $((t1 - t0))"
	done
	med=$(echo "$times" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	st=$(jq -r .gpu_status "$out")
	what=$(jq -r '[.gpus[] | "GPU \(.index): " + ([.unavailable | to_entries[] | select(.value != "not_supported") | .value] | group_by(.) | map("\(length) \(.[0])") | if length == 0 then "all read" else join(", ") end)] | if length == 0 then "no GPU listed" else join("; ") end' "$out")
	[ -n "$what" ] || what="all read"
	case "$extra" in
	*TIME_SCALE*) scn="$scn (later)" ;;
	*HANG_IN_DLOPEN*) scn="dlopen hangs" ;;
	esac
	printf '%-20s %-20s %9s %5s  %-12s %s\n' "$scn" "${opts:-default (2s)}" "$med" "$rc" "$st" "$what"
done
