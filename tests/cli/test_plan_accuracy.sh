#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops plan against published, measured peak-memory figures
# (tests/fixtures/accuracy/cases.tsv, tabulated in docs/plan-accuracy.md):
# median |error| <= 6%, no case over by more than 25%, none under by more
# than 15% (an under-estimate is an OOM), and the doc's table is current.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
cases="$top/tests/fixtures/accuracy/cases.tsv"
doc="$top/docs/plan-accuracy.md"
errs="$TMP/errs"
: >"$errs"
tab=$(printf '\t')
cd "$top" || exit 2
grep -v '^#' "$cases" >"$TMP/cases"
while IFS="$tab" read -r id src model meth b s fw meas pub acc args; do
	# shellcheck disable=SC2086
	run env SPARKOPS_NVML_LIB=/nonexistent $SPARKOPS --procfs "$FIX/no-gpu/proc" plan $args --uma no --budget 1TiB --json
	[ "$RC" = 0 ] || [ "$RC" = 1 ]
	_report $? "$id $model ($fw, batch $b, seq $s) is planned"
	est=$(jq .peak_bytes "$OUT")
	err=$(awk -v e="$est" -v m="$meas" 'BEGIN { printf "%.1f", 100 * (e - m) / m }')
	echo "$id $err" >>"$errs"
	# the doc shows the same estimate (GB, two decimals) and error
	gb=$(awk -v e="$est" 'BEGIN { printf "%.2f", e / 1e9 }')
	grep -q "^| $id .*| $gb GB | $err% |" "$doc"
	_report $? "$id: docs/plan-accuracy.md shows $gb GB ($err%)"
done <"$TMP/cases"
n=$(wc -l <"$errs")
[ "$n" -ge 12 ]
_report $? "at least 12 measured figures ($n)"
nsrc=$(grep -v '^#' "$cases" | cut -f2 | sort -u | wc -l)
[ "$nsrc" -ge 4 ]
_report $? "from at least 4 independent sources ($nsrc)"
med=$(awk '{ e = $2 < 0 ? -$2 : $2; print e }' "$errs" | sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
max=$(awk '{ e = $2 < 0 ? -$2 : $2; if (e > m) m = e } END { print m + 0 }' "$errs")
echo "# median |error| $med%, max $max%"
awk -v m="$med" 'BEGIN { exit !(m <= 6) }'
_report $? "median |error| $med% <= 6%"
over=$(awk '{ if ($2 > m) m = $2 } END { print m + 0 }' "$errs")
awk -v m="$over" 'BEGIN { exit !(m <= 25) }'
_report $? "no case over by more than 25% (worst $over%)"
under=$(awk '{ if ($2 < m) m = $2 } END { print m + 0 }' "$errs")
awk -v m="$under" 'BEGIN { exit !(m >= -15) }'
_report $? "no case under by more than 15% (worst $under%)"
grep -q "median |error| \*\*$med%\*\*" "$doc"
_report $? "the doc states the median ($med%)"
done_testing
