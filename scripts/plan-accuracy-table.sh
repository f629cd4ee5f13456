#!/bin/sh
# SPDX-License-Identifier: MIT
# Prints the rows of the table in docs/plan-accuracy.md from
# tests/fixtures/accuracy/cases.tsv and the built binary (default
# build/sparkops), plus the summary line. Paste the output into the doc;
# tests/cli/test_plan_accuracy.sh checks that the doc is current.
top=$(cd "$(dirname "$0")/.." && pwd)
S=${1:-$top/build/sparkops}
cd "$top" || exit 2
tab=$(printf '\t')
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
grep -v '^#' tests/fixtures/accuracy/cases.tsv | while IFS="$tab" read -r id src model meth b s fw meas pub acc args; do
	# shellcheck disable=SC2086
	out=$(SPARKOPS_NVML_LIB=/nonexistent "$S" --procfs tests/fixtures/no-gpu/proc plan $args --uma no --budget 1TiB --json)
	est=$(printf '%s' "$out" | jq .peak_bytes)
	p=$(printf '%s' "$out" | jq .params)
	awk -v id="$id" -v src="$src" -v model="$model" -v meth="$meth" -v b="$b" -v s="$s" -v fw="$fw" \
	    -v meas="$meas" -v pub="$pub" -v acc="$acc" -v est="$est" -v p="$p" -v args="$args" 'BEGIN {
		err = 100 * (est - meas) / meas
		ac = 4 * p * acc
		aerr = 100 * (ac - meas) / meas
		printf "| %s | %s | %s | %s | %s | %s | %s | %.2f GB (%s) | `%s` | %.2f GB | %.1f%% | %.2f GB | %+.0f%% |\n",
		       id, model, meth, b, s, fw, src, meas / 1e9, pub, args, est / 1e9, err, ac / 1e9, aerr
	}'
	awk -v est="$est" -v meas="$meas" -v p="$p" -v acc="$acc" 'BEGIN {
		e = 100 * (est - meas) / meas; if (e < 0) e = -e
		a = 100 * (4 * p * acc - meas) / meas; if (a < 0) a = -a
		printf "%.1f %.1f\n", e, a }' >>"$tmp"
done
med() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo
echo "sparkops: median |error| **$(cut -d' ' -f1 "$tmp" | med)%**, max $(cut -d' ' -f1 "$tmp" | sort -n | tail -1)%;" \
     "accelerate's rule: median |error| $(cut -d' ' -f2 "$tmp" | med)%, max $(cut -d' ' -f2 "$tmp" | sort -n | tail -1)%."
