#!/bin/sh
# SPDX-License-Identifier: MIT
# Impossible readings are rejected with the reason, never used: a pool with
# more free memory than it holds, a process whose resident count would be
# 2^64 bytes, a 1e308 degree GPU in a CSV log.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS

root="$TMP/root"
cp -r "$FIX/gb10-loaded" "$root"
sed -i 's/^MemFree:.*/MemFree:        999999999999 kB/' "$root/proc/meminfo"
run $S status --json --procfs "$root/proc" --sysfs "$root/sys"
expect_rc 2 "MemFree above MemTotal: the pool is not read"
expect_jq '.pool.why == "implausible" or .pool.total_bytes == null' "the pool is null with the reason"
expect_err "meminfo' .*implausible" "and the message says why"

root2="$TMP/root2"
cp -r "$FIX/gb10-loaded" "$root2"
mkdir -p "$root2/proc/4343"
echo forged >"$root2/proc/4343/comm"
printf 'forged\0' >"$root2/proc/4343/cmdline"
echo "18446744073709551615 18446744073709551615 0 0 0 0 0" >"$root2/proc/4343/statm"
run $S status --json --min-rss 1B --procfs "$root2/proc" --sysfs "$root2/sys"
expect_rc 0 "a forged statm does not stop status"
expect_jq '[.processes[] | select(.pid == 4343)] | length == 0' "the 2^64-byte process is left out, not listed with a wrapped size"
expect_jq '[.processes[] | .rss_bytes] | all(. < 1e15)' "no listed process is impossibly large"

log="$TMP/hot.csv"
head -3 "$FIX/logs/short.csv" >"$log"
tail -n +4 "$FIX/logs/short.csv" | head -3 | awk -F, 'BEGIN{OFS=","} NR==2{$18="1e308"} {print}' >>"$log"
run $S report "$log"
expect_rc 2 "strict report refuses a 1e308-degree GPU"
expect_err "line 5: field 'gpu_temp_c': '1e308' is implausible" "the line and the field are named"
run $S report --lenient "$log"
expect_rc 0 "--lenient skips the row"
expect_err "1 bad rows skipped \(the first at line 5\)" "and counts it"
done_testing
