#!/bin/sh
# SPDX-License-Identifier: MIT
# report --from/--to: the summary covers the window the chart shows, not the
# whole log; and each power figure is one sensor (the system's power never
# fills a GPU sample the driver did not answer).
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
L="$FIX/logs/thermal-guard.csv"
START=1795939200 # the log's first row, 09:00 +01:00

run $S report "$L" --json
expect_rc 0 "the whole log"
expect_jq '.samples == 220 and .duration_seconds == 6612' "the whole log: 220 samples over 1h50m12s"
whole_peak=$(jq '.peak_pool_used_bytes' "$OUT")

run $S report "$L" --from 09:30 --to 10:00 --json
expect_rc 0 "a window"
expect_jq ".start_unix >= $((START + 30 * 60)) and .end_unix <= $((START + 60 * 60))" \
	"the summary starts and ends inside --from/--to"
expect_jq '.samples == 61' "only the window's samples are summarised"
expect_jq ".peak_pool_used_bytes < $whole_peak" "a peak after --to is not the window's peak"
expect_jq '.ended_by == null' "the job's end after --to is not in the window's summary"
expect_jq '[.episodes[] | select(.start >= '"$((START + 30 * 60))"')] | length >= 1' \
	"the slowdown episode under way in the window is kept"

run $S report "$L" --from 09:50 --to 10:05 --json
expect_jq "(.episodes | length) == 1 and .episodes[0].start == $((START + 50 * 60))" \
	"an episode already under way at --from counts from --from"

run $S report "$L" --from 09:30 --to 10:00
expect_no_out 'ended +by guard' "human text: the end after the window is not claimed"
expect_out 'duration +30m00s' "human text: the window's duration"

# one sensor per series
run $S report "$L" --json
expect_jq '.peak_power_w == 99' "GPU power peak is the GPU's own (the system's 182 W never fills a gap)"
expect_jq '.peak_sys_power_w > 180' "system power is its own series"
expect_jq '.power_samples < .samples' "how many samples had a GPU power reading"
run $S report "$L"
expect_out 'GPU power +mean 99.0 W, peak 99.0 W \(read in [0-9]+ of 220 samples\)' "human text labels the GPU's power"
expect_out 'system power +mean [0-9.]+ W, peak 18[0-9.]+ W' "human text labels the system's power apart"
done_testing
