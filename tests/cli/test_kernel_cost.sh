#!/bin/sh
# SPDX-License-Identifier: MIT
# What the kernel pays for our reads: no `status` and no `watch` sample ever
# opens /proc/pagetypeinfo (generating it walks every zone's free lists under
# zone->lock with interrupts off: docs/ARCHITECTURE.md "Kernel-side cost"),
# on the live machine and on a fixture that has one. Traced with strace -f,
# so the threads' opens count too; the page block is derived instead, and
# khugepaged's min_free_kbytes is still computed from it.
# /proc/buddyinfo takes zone->lock per zone while it prints: a watch reads
# it at its first sample and then at most every 10 s, not at every sample.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
NOGPU="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"

# traced NAME CMD... : runs CMD under strace, the opens in $TMP/NAME.trace
traced() {
	name=$1
	shift
	# LeakSanitizer stops the world with ptrace at exit, which a traced
	# process cannot: leaks are checked by every other test, not under strace
	run env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -e trace=open,openat,openat2 -o "$TMP/$name.trace" "$@"
}
# no_pagetypeinfo NAME what : the trace saw the command's opens (zoneinfo or
# meminfo: strace worked) and none of pagetypeinfo
no_pagetypeinfo() {
	grep -Eq '(zoneinfo|meminfo)"' "$TMP/$1.trace" && ! grep -q 'pagetypeinfo' "$TMP/$1.trace"
	_report $? "$2"
}

if [ -n "$SPARKOPS_UNDER_QEMU" ] || ! strace -qq -o /dev/null true 2>/dev/null; then
	for c in "live status" "live status --json" "fixture status" "live watch samples" "fixture watch samples"; do
		skip_case "$c never opens pagetypeinfo" "strace cannot trace here"
	done
	skip_case "buddyinfo once in 2 s of samples" "strace cannot trace here"
	done_testing
	exit $?
fi

traced live $NOGPU $S status
expect_rc 0 "live status runs under strace"
no_pagetypeinfo live "live status never opens pagetypeinfo"

traced livejson $NOGPU $S status --json
no_pagetypeinfo livejson "live status --json never opens pagetypeinfo"

traced fix $NOGPU $S status --json $(sysroot gb10-fragmented)
no_pagetypeinfo fix "fixture status never opens pagetypeinfo"
# the fixture has the file, so a reader of it would be caught above; the
# figure it was read for is still there, derived (2 MiB PMD / 4 KiB pages)
expect_jq '.watermarks.thp_min_free_kbytes == 45056' "khugepaged's min_free_kbytes still computed (from the derived page block)"

traced livewatch $NOGPU $S watch --count 3 --interval 0.2 --quiet --log "$TMP/live.csv"
expect_rc 0 "live watch of 3 samples runs under strace"
no_pagetypeinfo livewatch "live watch samples never open pagetypeinfo"

traced fixwatch $NOGPU $S watch --count 3 --interval 0.2 --quiet --log "$TMP/fix.csv" $(sysroot gb10-fragmented)
no_pagetypeinfo fixwatch "fixture watch samples never open pagetypeinfo"

# buddyinfo_reads NAME: how many reads of /proc/buddyinfo the trace saw
# (strace -y names each descriptor's file; a reading starts at offset 0: the
# kept descriptor's pread from 0, or the first read after an open)
buddyinfo_reads() {
	grep -Ec '^([0-9]+ +)?(pread64\([0-9]+<[^>]*/buddyinfo>.*, 0\)|read\([0-9]+<[^>]*/buddyinfo>, "[^"])' "$TMP/$1.trace"
}
run env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -y \
	-e trace=read,pread64 -o "$TMP/buddy.trace" $NOGPU $S watch --count 10 --interval 0.2 --quiet \
	--log "$TMP/buddy.csv" $(sysroot gb10-fragmented)
n=$(buddyinfo_reads buddy)
rows=$(grep -c ',sample,' "$TMP/buddy.csv" 2>/dev/null)
[ "$RC" = 0 ] && [ "$n" = 1 ] && [ "${rows:-0}" -ge 10 ]
_report $? "10 watch samples in 2 s read buddyinfo once (read $n times, $rows rows)"
# every row still has the contiguous figure of that one reading
[ "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "free_2mib_bytes") c = i; next }
	c && $3 == "sample" { v[$c]++; n++ } END { print (n >= 10 && length(v) == 1 && !("" in v)) }' "$TMP/buddy.csv")" = 1 ]
_report $? "every sample shows that reading's contiguous free memory"

done_testing
