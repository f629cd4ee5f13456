#!/bin/sh
# SPDX-License-Identifier: MIT
# report's chart shows what the report blames (memory/cpu/io pressure), leaves out what it has no readings
# for, marks the guard's floor, and keeps close episodes' labels apart.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
L="$FIX/logs"
export TZ=UTC
xp() {
	xmllint --xpath "$2" "$1" 2>/dev/null
}
G="//*[local-name()='g']"
TX="//*[local-name()='text']"

# --- a CPU-contention run on a machine without a GPU ------------------------------
# short.csv with no GPU, SoC or spbm readings, and the cpu stalled 60% of the time
awk -F, 'BEGIN{OFS=","} $3=="sample"{for(i=18;i<=28;i++)$i=""; $15="60.00"} {print}' "$L/short.csv" >"$TMP/cpu.csv"
run $S report "$TMP/cpu.csv" --svg "$TMP/cpu.svg"
expect_rc 0 "report charts a log without GPU readings"
xmllint --noout "$TMP/cpu.svg" 2>/dev/null
_report $? "it is well-formed SVG"
[ "$(xp "$TMP/cpu.svg" "count($G[@id='panel-pressure'])")" = 1 ]
_report $? "the chart has a pressure panel"
for s in memory cpu io; do
	[ "$(xp "$TMP/cpu.svg" "count($G[@id='panel-pressure']/*[local-name()='path'][@data-series='$s'])")" = 1 ] ||
		{ _report 1 "pressure panel: the $s line"; continue; }
	_report 0 "pressure panel: the $s line"
done
ymax=$(xp "$TMP/cpu.svg" "string($G[@id='panel-pressure']/@data-y-max)")
awk -v m="$ymax" 'BEGIN{exit !(m >= 60 && m <= 100)}'
_report $? "the pressure scale holds the 60% cpu stall (y max $ymax)"
for p in temp power clock; do
	[ "$(xp "$TMP/cpu.svg" "count($G[@id='panel-$p'])")" = 0 ] || { _report 1 "no empty $p panel"; continue; }
	_report 0 "no empty $p panel"
done
! grep -q '>no data<' "$TMP/cpu.svg"
_report $? "no panel drawn empty"
grep -q '>no GPU readings in this log: temperature, power, SM clock panels left out<' "$TMP/cpu.svg"
_report $? "one line says which panels are left out and why"
[ "$(xp "$TMP/cpu.svg" "count($G[@class='panel'])")" = 3 ]
_report $? "pool, pressure and throughput panels drawn"
# the panels that remain share the height: the pool panel is taller than with six
$S report "$L/short.csv" --svg "$TMP/short.svg" >/dev/null 2>&1
h6=$(xp "$TMP/short.svg" "string($G[@id='panel-pool']/*[local-name()='rect']/@height)")
h3=$(xp "$TMP/cpu.svg" "string($G[@id='panel-pool']/*[local-name()='rect']/@height)")
awk -v a="$h3" -v b="$h6" 'BEGIN{exit !(a > b && b > 0)}'
_report $? "the panels left use the room ($h3 px high, not $h6)"
run $S report "$TMP/cpu.csv" --html "$TMP/cpu.html"
grep -q 'id="panel-pressure"' "$TMP/cpu.html" && grep -q 'panels left out' "$TMP/cpu.html"
_report $? "the HTML page has the same chart"

# --- the guard's floor on the pool panel ------------------------------------------
# the fixture's guard_warn says floor=2GiB; the engine writes floor_bytes=N
run $S report "$L/thermal-guard.csv" --svg "$TMP/tg.svg"
[ "$(xp "$TMP/tg.svg" "string($G[@id='panel-pool']$G[@class='guard-floor']/@data-floor-bytes)")" = 2147483648 ]
_report $? "the pool panel draws the guard floor (floor=2GiB)"
v=$(xp "$TMP/tg.svg" "string($G[@class='guard-floor']/@data-value)")
awk -v v="$v" 'BEGIN{exit !(v > 117.6 && v < 117.8)}'
_report $? "at total - floor: 119.7 - 2 GiB of use ($v)"
[ "$(xp "$TMP/tg.svg" "string($G[@class='guard-floor']/*[local-name()='line']/@stroke-dasharray)")" != "" ]
_report $? "dashed"
grep -q '>guard floor (2.0 GiB free)<' "$TMP/tg.svg"
_report $? "in the pool panel's legend"
sed 's/,event,guard_warn,free=2.1GiB floor=2GiB,/,event,guard_warn,free_bytes=2254857830 floor_bytes=3221225472,/' \
	"$L/thermal-guard.csv" >"$TMP/fb.csv"
run $S report "$TMP/fb.csv" --svg "$TMP/fb.svg"
[ "$(xp "$TMP/fb.svg" "string($G[@class='guard-floor']/@data-floor-bytes)")" = 3221225472 ]
_report $? "floor_bytes= (what the engine writes) is read too"
[ "$(xp "$TMP/short.svg" "count($G[@class='guard-floor'])")" = 0 ]
_report $? "no floor line without a guard event that says one"

# --- two episodes a minute apart: both labelled, labels apart -------------------------
# the fixture (1 h 50 min): the thermal episode split into 09:45-09:46 and 09:47-10:15
awk -F, 'BEGIN{OFS=","}
	$3=="event" && $4=="episode_start" {print; next}
	NR > 1 && !a && $2 >= 1795941960 {print "2026-11-29T09:46:00.000+01:00,1795941960.000,event,episode_end,cause=thermal,,,,,,,,,,,,,,,,,,,,,,,,,,"; a=1}
	NR > 1 && !b && $2 >= 1795942020 {print "2026-11-29T09:47:00.000+01:00,1795942020.000,event,episode_start,cause=power drop_pct=12.0 baseline=3.10 rate=2.73,,,,,,,,,,,,,,,,,,,,,,,,,,"; b=1}
	{print}' "$L/thermal-guard.csv" >"$TMP/two.csv"
run $S report "$TMP/two.csv" --json --svg "$TMP/two.svg"
expect_jq '(.episodes | length) == 2' "the log has two episodes"
n=$(xp "$TMP/two.svg" "count($G[@id='episodes']/*[local-name()='text'])")
[ "$n" = 2 ]
_report $? "both episodes are labelled ($n labels)"
# every label in the shading rows (episodes and throttle reasons): x, y, text
for i in $(seq 1 "$(xp "$TMP/two.svg" "count($TX[@class='shade-label'])")"); do
	printf '%s %s %s\n' "$(xp "$TMP/two.svg" "string(($TX[@class='shade-label'])[$i]/@x)")" \
		"$(xp "$TMP/two.svg" "string(($TX[@class='shade-label'])[$i]/@y)")" \
		"$(xp "$TMP/two.svg" "string(($TX[@class='shade-label'])[$i])" | wc -c)"
done >"$TMP/labels"
# boxes: 10 px high, 6.2 px a character (bold 10 px); none may cover another
awk '{x[NR]=$1; y[NR]=$2; w[NR]=6.2*($3-1)} END{for(i=1;i<=NR;i++)for(j=i+1;j<=NR;j++){dy=y[i]-y[j]; if(dy<0)dy=-dy;
	if(dy<10 && x[i]<x[j]+w[j] && x[j]<x[i]+w[i]){print "overlap:", i, j; exit 1}} exit !(NR>=2)}' "$TMP/labels"
_report $? "no two labels overlap ($(tr '\n' ';' <"$TMP/labels"))"

done_testing
