#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops report: the summary from fixture logs, bad logs and their line
# numbers, and the chart: well-formed SVG, six panels, shading where the data
# puts it, no scripts or links, bounded size however long the log is.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
L="$FIX/logs"
MK="$L/mklogs.py"
export TZ=UTC

# xp FILE XPATH : the string value (SVG elements matched by local-name)
xp() {
	xmllint --xpath "$2" "$1" 2>/dev/null
}
G="//*[local-name()='g']"
R="//*[local-name()='rect']"

# --- the summary ---------------------------------------------------------------
run $S report "$L/short.csv"
expect_rc 0 "report a short run"
expect_out '^summary:' "prints the summary"
expect_out 'duration +10m01s, 21 samples, 2 events' "duration and counts"
expect_out 'ended +by exit \(exit code 0\)' "how the job ended"
run $S report --json "$L/short.csv"
expect_rc 0 "report --json"
expect_jq '.samples == 21 and .exit_code == 0 and .ended_by == "exit"' "json: samples and exit"
expect_jq '.last_row_incomplete == false and .rows_skipped == 0' "json: a whole log"
expect_jq '.rows == 23 and .log != null and .chart.svg == null' "json: report keys"
run $S report "$L/thermal-guard.csv" --json
expect_jq '.ended_by == "guard" and .signal == 15' "guard stop in the summary"
expect_jq '.episodes | length == 1 and .[0].cause == "thermal"' "the thermal episode"
expect_jq '[.throttle_intervals[] | select(.reason == "sw_thermal_slowdown")] | length == 1' "one thermal throttle interval"
expect_jq '.guard_actions | length == 2' "two guard actions"
# clock times are the log's own (+01:00), whatever zone reads it
run env TZ=America/New_York $S report "$L/thermal-guard.csv"
expect_out 'slowdown +09:45:00-10:15:00 thermal' "the summary's times are the log's wall-clock"
run sh -c "cat '$L/short.csv' | $S report -"
expect_rc 0 "reads stdin"
expect_out '21 samples' "stdin gives the same rows"

# --- a log cut off mid-line -----------------------------------------------------------
run $S report "$L/truncated.csv" --json
expect_rc 0 "a cut-off log is reported"
expect_jq '.last_row_incomplete == true and .samples == 13' "says the last row was incomplete"
expect_err 'last row was cut off' "warns about the cut-off row"
run $S report "$L/truncated.csv"
expect_out 'the last row was incomplete' "the human summary says so too"

# --- bad logs ------------------------------------------------------------------------------
B="$TMP/bad.csv"
printf 'a,b,c\n1,2,3\n' >"$B"
run $S report "$B"
expect_rc 2 "not a sparkops log"
expect_err "'.*bad.csv': line 1: not a sparkops log" "says which file and line 1"
: >"$B"
run $S report "$B"
expect_rc 2 "an empty file"
head -5 "$L/short.csv" >"$B"; echo '2026-11-29T09:03:00.000+01:00,1795939380.000,sample' >>"$B"
run $S report "$B"
expect_rc 2 "wrong column count"
expect_err 'line 6: expected 31 fields, got 3 \(a row cut short' "column count with its line number"
# a row cut short in the middle (the writer's disk filled, then it went on)
head -5 "$L/short.csv" >"$B"; sed -n 6p "$L/short.csv" | cut -c1-120 >>"$B"; sed -n '7,$p' "$L/short.csv" >>"$B"
run $S report "$B"
expect_rc 2 "a row cut short mid-log is a bad row"
expect_err 'line 6: expected 31 fields, got [0-9]+ \(a row cut short, as a failed write leaves it\)' "and says what it probably is"
run $S report "$B" --lenient --json
expect_jq '.rows_skipped == 1 and .samples == 20 and .last_row_incomplete == false' "--lenient reads past it"
head -5 "$L/short.csv" >"$B"; sed -n 6p "$L/short.csv" | sed 's/,sample,,,\([0-9]*\),/,sample,,,many,/' >>"$B"
run $S report "$B"
expect_rc 2 "non-numeric field"
expect_err "line 6: field 'mem_total_bytes': 'many' is not a number" "names the field and the line"
head -8 "$L/short.csv" >"$B"; sed -n 3p "$L/short.csv" >>"$B"; sed -n '9,$p' "$L/short.csv" >>"$B"
run $S report "$B"
expect_rc 2 "out-of-order rows"
expect_err 'line 9: time .* is earlier than the row before' "out of order, with the line"
expect_err 'lenient' "points at --lenient"
run $S report "$B" --lenient --json
expect_rc 0 "--lenient goes on"
expect_jq '.rows_skipped == 1 and .first_bad_line == 9 and .samples == 21' "--lenient counts the skipped row"
expect_err '1 bad rows skipped \(the first at line 9\)' "--lenient warns with the first line"
run $S report "$TMP/nonexistent.csv"
expect_rc 2 "a missing log"
expect_err "nonexistent.csv': No such file" "names the missing file"
run $S report
expect_rc 2 "no log given"
run $S report "$L/short.csv" --width 5
expect_rc 2 "a bad --width"
run $S report "$L/short.csv" --from tomorrow
expect_rc 2 "a bad --from"
expect_err "--from: 'tomorrow' is not a time" "a bad --from is explained"
run $S report "$L/short.csv" --from 10:00 --to 09:00
expect_rc 2 "--to before --from"
run $S report "$L/short.csv" --training-regex '(x)'
expect_rc 2 "--training-regex alone"
run $S report "$L/short.csv" --svg "$TMP/no/such/dir/x.svg"
expect_rc 5 "an unwritable --svg"
expect_err "no/such/dir/x.svg': No such file or directory" "names the file it could not write"
run $S report "$FIX"
expect_rc 2 "a directory is not a log"

# --- the chart ------------------------------------------------------------------------------
svg_checks() { # FILE what
	xmllint --noout "$1" 2>"$TMP/xmlerr"
	_report $? "$2: well-formed SVG"
	# every log checked here has readings for all of them: six panels, none folded
	[ "$(xp "$1" "count($G[@class='panel'])")" = 6 ]
	_report $? "$2: six panels"
	for p in pool pressure temp power clock throughput; do
		[ "$(xp "$1" "count($G[@id='panel-$p'])")" = 1 ] || { _report 1 "$2: panel $p"; return; }
	done
	! grep -qiE '<script|href|url\(["'"'"']?(http|file|data)|@import|<foreignObject|\son[a-z]+=' "$1"
	_report $? "$2: no scripts, links or external references"
	sz=$(wc -c <"$1")
	[ "$sz" -lt 409600 ]
	_report $? "$2: under 400 KB ($sz bytes)"
}

run $S report "$L/short.csv" --svg "$TMP/short.svg"
expect_rc 0 "--svg writes a chart"
svg_checks "$TMP/short.svg" "short run"
[ "$(xp "$TMP/short.svg" "count($G[@class='mark exit'])")" = 1 ]
_report $? "short run: the exit is marked"

T="$TMP/tg.svg"
run $S report "$L/thermal-guard.csv" --svg "$T"
svg_checks "$T" "thermal+guard"
t0=$(xp "$T" "string($G[@id='plot']/@data-t0)")
t1=$(xp "$T" "string($G[@id='plot']/@data-t1)")
x0=$(xp "$T" "string($G[@id='plot']/@data-x0)")
x1=$(xp "$T" "string($G[@id='plot']/@data-x1)")
# px T : where time T lands on the axis
px() { awk -v t="$1" -v t0="$t0" -v t1="$t1" -v x0="$x0" -v x1="$x1" 'BEGIN{printf "%.1f", x0 + (t - t0) / (t1 - t0) * (x1 - x0)}'; }
near() { awk -v a="$1" -v b="$2" 'BEGIN{d = a - b; exit !(d < 1.01 && d > -1.01)}'; }
START=1795939200
[ "$(xp "$T" "count($R[@class='shade episode'])")" = 1 ]
_report $? "thermal+guard: one shaded episode"
es=$(xp "$T" "string($R[@class='shade episode']/@data-start)")
ee=$(xp "$T" "string($R[@class='shade episode']/@data-end)")
ex=$(xp "$T" "string($R[@class='shade episode']/@x)")
ew=$(xp "$T" "string($R[@class='shade episode']/@width)")
near "$es" $((START + 45 * 60)) && near "$ee" $((START + 75 * 60))
_report $? "episode shading spans 45-75 min as logged ($es-$ee)"
near "$ex" "$(px $((START + 45 * 60)))"
_report $? "episode shading starts at the right x ($ex)"
near "$(awk -v a="$ex" -v w="$ew" 'BEGIN{print a + w}')" "$(px $((START + 75 * 60)))"
_report $? "episode shading ends at the right x"
[ "$(xp "$T" "string($R[@class='shade episode']/@data-cause)")" = thermal ]
_report $? "episode labelled with its cause"
grep -q '>slowdown: thermal -24%<' "$T"
_report $? "episode label drawn"
tx=$(xp "$T" "string($R[@data-reason='sw_thermal_slowdown']/@x)")
near "$tx" "$(px $((START + 40 * 60)))"
_report $? "thermal throttle shading starts at 40 min ($tx)"
[ "$(xp "$T" "count($G[@class='mark guard'])")" = 2 ] && [ "$(xp "$T" "count($G[@class='mark exit'])")" = 1 ]
_report $? "guard actions and the exit are marked"
gx=$(xp "$T" "string(($G[@class='mark guard'])[1]/*[local-name()='line']/@x1)")
near "$gx" "$(px $((START + 100 * 60)))"
_report $? "guard warn line at 100 min"
# GPU readings missing for 5 minutes: the line breaks (two subpaths), no zeros
d=$(xp "$T" "string($G[@id='panel-temp']/*[local-name()='path'][@data-series='GPU']/@d)")
[ "$(printf '%s' "$d" | grep -o M | wc -l)" = 2 ]
_report $? "missing readings are a gap in the line"
grep -q '>09:40<' "$T" && grep -q 'local time (UTC+01:00)' "$T"
_report $? "wall-clock ticks in the log's own offset"

head -1 "$L/short.csv" >"$TMP/empty.csv"
run $S report "$TMP/empty.csv" --svg "$TMP/empty.svg" --json
expect_rc 0 "a log with a header and no rows"
expect_jq '.samples == 0 and .rows == 0' "no rows is no rows"
xmllint --noout "$TMP/empty.svg" 2>/dev/null && grep -q 'no rows in the log' "$TMP/empty.svg" && ! grep -q 1970 "$TMP/empty.svg"
_report $? "an empty log draws empty panels, says so, and invents no dates"

# --- HTML ----------------------------------------------------------------------------------------
run $S report "$L/thermal-guard.csv" --html "$TMP/tg.html"
expect_rc 0 "--html writes a page"
grep -q '<table class="summary">' "$TMP/tg.html" && grep -q '<svg ' "$TMP/tg.html" && grep -q '<th>guard</th>' "$TMP/tg.html"
_report $? "the page holds the summary table and the chart"
grep -q '<tr><th>peak pool use</th><td>69.0 GiB of 119.7 GiB at 10:49:30 (page cache apart, at most 45.0 GiB)</td></tr>' "$TMP/tg.html" &&
	grep -q '<tr><th>under sw_thermal_slowdown</th><td>30m00s</td></tr>' "$TMP/tg.html"
_report $? "the summary's lines become key/value rows"
! grep -qi '<script' "$TMP/tg.html"
_report $? "the page needs no scripts"
sed -n '/<svg /,/<\/svg>/p' "$TMP/tg.html" | xmllint --noout - 2>/dev/null
_report $? "the SVG inside the page is well-formed"

# --- zoom --------------------------------------------------------------------------------------------
Z="$TMP/zoom.svg"
run $S report "$L/thermal-guard.csv" --from 09:30 --to 2026-11-29T10:30:00+01:00 --svg "$Z" --json
expect_rc 0 "--from/--to"
expect_jq ".window.from == $((START + 30 * 60)) and .window.to == $((START + 90 * 60))" "HH:MM on the log's day and ISO with an offset"
[ "$(xp "$Z" "string($G[@id='plot']/@data-t0)")" = "$((START + 30 * 60)).000" ]
_report $? "the chart starts at --from"
zx=$(xp "$Z" "string($R[@class='shade episode']/@x)")
t0=$(xp "$Z" "string($G[@id='plot']/@data-t0)"); t1=$(xp "$Z" "string($G[@id='plot']/@data-t1)")
near "$zx" "$(px $((START + 45 * 60)))"
_report $? "zoomed: the episode moves with the axis"
[ "$(xp "$Z" "count($G[@class='mark guard'])")" = 0 ]
_report $? "zoomed: marks outside the window are left out"
run $S report "$L/thermal-guard.csv" --from $((START + 30 * 60)) --json
expect_jq ".window.from == $((START + 30 * 60))" "--from in Unix seconds"

# --- training log overlay --------------------------------------------------------------------------
TL="$TMP/train.log"
cat >"$TL" <<'EOT'
2026-11-29 09:10:00,123 - INFO - step 100 loss 1.31
some line without a time
2026-11-29 09:50:00,000 - INFO - Saving model checkpoint to out/<checkpoint-500> & "more"
[INFO|trainer.py:2134] 2026-11-29 10:20:00,000 >> ***** Running Evaluation *****
EOT
printf '2026-11-29 10:25:00,000 - WARN - bad bytes \377\376 here\n' >>"$TL"
run $S report "$L/thermal-guard.csv" --training-log "$TL" --svg "$TMP/tl.svg" --json
expect_rc 0 "--training-log"
expect_jq '.chart.training_marks == 4' "four timestamped lines marked"
xmllint --noout "$TMP/tl.svg" 2>/dev/null
_report $? "labels from the training log keep the SVG well-formed"
grep -q 'out/&lt;checkpoint-500&gt; &amp; &quot;more&quot;' "$TMP/tl.svg"
_report $? "training-log text is escaped"
tlx=$(xp "$TMP/tl.svg" "string(($G[@class='mark train'])[1]/@data-t)")
near "$tlx" $((START + 10 * 60))
_report $? "a training line lands at its own time (in the log's offset)"
run $S report "$L/thermal-guard.csv" --training-log "$TL" --training-regex '^([0-9-]+ [0-9:]+),[0-9]+ - INFO - Saving' --json
expect_jq '.chart.training_marks == 1' "--training-regex picks lines"
run $S report "$L/thermal-guard.csv" --training-log "$TL" --training-regex 'no group'
expect_rc 2 "a regex without a group"
run sh -c '"$1" report "$2" --training-log - --json <"$3"' sh $S "$L/thermal-guard.csv" "$TL"
expect_rc 0 "--training-log - reads stdin"
expect_jq '.chart.training_marks == 4' "the same four marks from stdin"
cp "$L/thermal-guard.csv" "$TMP/keep.csv"
run $S report "$TMP/keep.csv" --svg "$TMP/keep.csv"
expect_rc 2 "--svg naming the log itself is refused"
expect_err "is the log itself" "and said"
cmp -s "$L/thermal-guard.csv" "$TMP/keep.csv"
_report $? "the log is left as it was"
ln -s keep.csv "$TMP/link.csv"
run $S report "$TMP/keep.csv" --html "$TMP/link.csv"
expect_rc 2 "--html through a link to the log is refused too"
odd="$TMP/$(printf 'log\377')"
cp "$L/thermal-guard.csv" "$odd.csv"
run $S report "$odd.csv" --svg "$odd.svg" --json
expect_rc 0 "a log path that is not UTF-8"
expect_jq '(.log | test("log[?][.]csv$")) and (.chart.svg | test("log[?][.]svg$"))' "its path stays in the JSON, the odd byte as '?'"
run sh -c '"$1" report - --training-log - <"$2"' sh $S "$L/thermal-guard.csv"
expect_rc 2 "stdin cannot be both the log and the training log"
expect_err "both" "the message says stdin is asked for twice"

# --- the README's example is what the code draws today ----------------------------------------
top=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "$SPARKOPS_UNDER_QEMU" ]; then
	skip_case "docs/img/report-example.svg is up to date" "docs-img.sh runs \$BUILD/sparkops itself, not through qemu"
else
sh "$top/scripts/docs-img.sh" "${BUILD_DIR#$top/}" "$TMP/example.svg" svg
cmp -s "$TMP/example.svg" "$top/docs/img/report-example.svg"
_report $? "docs/img/report-example.svg is up to date (make docs-img)"
svg_checks "$TMP/example.svg" "README example"
fi

# --- end to end: a log written by `run` reads back as the same summary ------------------------------
if [ -n "$SPARKOPS_UNDER_QEMU" ]; then
	skip_case "report reads what run wrote" "'run' starts threads (qemu-user 7.2 hangs in pthread_create)"
elif $S run --help >/dev/null 2>&1; then
	run env SPARKOPS_NVML_LIB="$FAKE_NVML" FAKE_NVML_SCENARIO="$FIX/../fake-nvml/scenarios/gb10.scn" \
		$S run --interval 1 --log "$TMP/e2e.csv" $(sysroot gb10-loaded) -- \
		sh -c 'for i in 1 2 3; do echo " 30%|###   | 30/100 [00:10<00:20,  3.0${i}it/s]"; sleep 1; done'
	sed -n '/^summary:/,$p' "$ERR" >"$TMP/run-summary"
	run $S report "$TMP/e2e.csv" --svg "$TMP/e2e.svg"
	expect_rc 0 "report reads what run wrote"
	cmp -s "$OUT" "$TMP/run-summary"
	_report $? "report prints the summary run printed"
	xmllint --noout "$TMP/e2e.svg" 2>/dev/null && [ "$(xp "$TMP/e2e.svg" "count($R[@data-reason='sw_thermal_slowdown'])")" = 1 ]
	_report $? "run's log charts with its thermal throttle shaded"
fi

# --- long runs: the chart stays small -------------------------------------------------------------------
python3 "$MK" long "$TMP/day.csv" 24 30
run $S report "$TMP/day.csv" --svg "$TMP/day.svg" --json
expect_rc 0 "a 24-hour run at 30 s"
expect_jq '.samples == 2881' "2,880 intervals read"
svg_checks "$TMP/day.svg" "24 h"
[ "$(xp "$TMP/day.svg" "count($R[@data-reason='sw_thermal_slowdown'])")" = 4 ]
_report $? "24 h: the four thermal hours are shaded"
grep -q 'Nov 30' "$TMP/day.svg"
_report $? "24 h: the date shows when the run spans days"
# a week at 1 s (600,000 rows; fewer under the sanitizers, which are slow)
case "$BUILD_DIR" in *asan*) H=28 ;; *) H=168 ;; esac
python3 "$MK" long "$TMP/week.csv" $H 1
run $S report "$TMP/week.csv" --svg "$TMP/week.svg" --json
expect_rc 0 "a ${H}-hour run at 1 s"
expect_jq ".samples == $((H * 3600 + 1))" "every row read"
svg_checks "$TMP/week.svg" "${H} h at 1 s"
# the one-sample spike (95 C) survives the downsampling
[ "$(xp "$TMP/week.svg" "string($G[@id='panel-temp']/@data-y-max)")" = 100 ]
_report $? "a one-second spike still sets the scale"
rm -f "$TMP/week.csv"
# the worst case for the size: every reading jumps, every column is full
python3 "$MK" noisy "$TMP/noisy.csv" 30000
run $S report "$TMP/noisy.csv" --svg "$TMP/noisy.svg"
expect_rc 0 "a log where every reading jumps"
svg_checks "$TMP/noisy.svg" "noisy"
grep -q 'more slowdown episodes not shaded' "$TMP/noisy.svg" && grep -q 'more run events not marked' "$TMP/noisy.svg"
_report $? "noisy: the chart says what it left out"
done_testing
