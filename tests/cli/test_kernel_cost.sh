#!/bin/sh
# SPDX-License-Identifier: MIT
# What the kernel pays for our reads: no `status` and no `watch` sample ever
# opens /proc/pagetypeinfo (generating it walks every zone's free lists under
# zone->lock with interrupts off: docs/ARCHITECTURE.md "Kernel-side cost"),
# on the live machine and on a fixture that has one. Traced with strace -f,
# so the threads' opens count too; the page block is derived instead, and
# khugepaged's min_free_kbytes is still computed from it.
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

done_testing
