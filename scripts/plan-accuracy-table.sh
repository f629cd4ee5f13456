#!/bin/sh
# SPDX-License-Identifier: MIT
# Prints the rows of the table in docs/plan-accuracy.md from
# tests/fixtures/accuracy/cases.tsv and the built binary (default
# build/sparkops), plus the summary lines. Each case is planned with
# --measure set to the counter its source reports ('unstated': process),
# and with --uma yes when it was measured on a unified-memory machine
# (the optional last column, 'uma'), --uma no otherwise.
# Paste the output into the doc; tests/cli/test_plan_accuracy.sh checks
# that the doc is current.
top=$(cd "$(dirname "$0")/.." && pwd)
S=${1:-$top/build/sparkops}
cd "$top" || exit 2
tab=$(printf '\t')
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
grep -v '^#' tests/fixtures/accuracy/cases.tsv | while IFS="$tab" read -r id src model meth b s fw meas pub acc counter half args machine; do
	m=$counter
	[ "$m" = unstated ] && m=process
	uma=no
	[ "$machine" = uma ] && uma=yes
	# shellcheck disable=SC2086
	out=$(SPARKOPS_NVML_LIB=/nonexistent "$S" --procfs tests/fixtures/no-gpu/proc plan $args --measure "$m" --uma "$uma" --budget 1TiB --json)
	est=$(printf '%s' "$out" | jq .measure_bytes)
	p=$(printf '%s' "$out" | jq .params)
	awk -v id="$id" -v src="$src" -v model="$model" -v meth="$meth" -v b="$b" -v s="$s" -v fw="$fw" -v half="$half" \
	    -v counter="$counter" -v meas="$meas" -v pub="$pub" -v acc="$acc" -v est="$est" -v p="$p" -v args="$args" 'BEGIN {
		err = 100 * (est - meas) / meas
		ac = 4 * p * acc
		aerr = 100 * (ac - meas) / meas
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.2f GB (%s) | `%s` | %.2f GB | %.1f%% | %.2f GB | %+.0f%% |\n",
		       id, half, model, meth, b, s, fw, src, counter, meas / 1e9, pub, args, est / 1e9, err, ac / 1e9, aerr
	}'
	awk -v est="$est" -v meas="$meas" -v p="$p" -v acc="$acc" -v half="$half" 'BEGIN {
		e = 100 * (est - meas) / meas
		a = 100 * (4 * p * acc - meas) / meas; if (a < 0) a = -a
		printf "%s %.1f %.1f\n", half, e, a }' >>"$tmp"
done
med() { awk '{ print ($1 < 0 ? -$1 : $1) }' | sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
lo() { sort -n | head -1; }
hi() { sort -n | tail -1; }
echo
n=$(wc -l <"$tmp")
echo "sparkops, all $n cases: median |error| **$(cut -d' ' -f2 "$tmp" | med)%**, worst under $(cut -d' ' -f2 "$tmp" | lo)%, worst over +$(cut -d' ' -f2 "$tmp" | hi)%;" \
     "accelerate's rule: median |error| $(cut -d' ' -f3 "$tmp" | med)%, max $(cut -d' ' -f3 "$tmp" | sort -n | tail -1)%."
# the held-out goals judge the newest half: the latest letter past A (a
# half is held out until a model change is made from it; docs/plan-accuracy.md
# keeps each half's figures as they were scored held out)
ho=$(cut -d' ' -f1 "$tmp" | grep -x '[B-Z]' | sort -u | tail -1)
awk -v h="$ho" '$1 == h' "$tmp" >"$tmp.b"
echo
echo "sparkops, the newest half (half $ho, $(wc -l <"$tmp.b") cases; the held-out goals judge it): median |error| **$(cut -d' ' -f2 "$tmp.b" | med)%**, worst under $(cut -d' ' -f2 "$tmp.b" | lo)%, worst over +$(cut -d' ' -f2 "$tmp.b" | hi)%."
for h in old $(cut -d' ' -f1 "$tmp" | grep -vx old | sort -u); do
	[ "$h" = "$ho" ] && continue
	awk -v h="$h" '$1 == h' "$tmp" >"$tmp.b"
	grep -q . "$tmp.b" || continue
	echo
	echo "sparkops, half $h ($(wc -l <"$tmp.b") cases): median |error| $(cut -d' ' -f2 "$tmp.b" | med)%, worst under $(cut -d' ' -f2 "$tmp.b" | lo)%, worst over +$(cut -d' ' -f2 "$tmp.b" | hi)%."
done
rm -f "$tmp.b"
