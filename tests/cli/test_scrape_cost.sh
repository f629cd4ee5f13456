#!/bin/sh
# SPDX-License-Identifier: MIT
# What a fresh scrape (serve --cache 0) makes the kernel do, traced with
# strace -f over 10 scrapes: never /proc/pagetypeinfo; /proc/buddyinfo (its
# print takes each zone's lock, irqs off) once, not per scrape; the platform
# fingerprint's files (/etc/os-release, /proc/version) once, not per scrape.
# strace -ff: one file a thread, so no call is split across lines.
# docs/ARCHITECTURE.md, "Kernel-side cost of what we read".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

if [ -n "$SPARKOPS_UNDER_QEMU" ] || ! strace -qq -o /dev/null true 2>/dev/null; then
	skip_case "fresh scrapes under strace" "strace cannot trace here"
	done_testing
	exit $?
fi
real=$SPARKOPS
# LeakSanitizer cannot stop a traced process at exit: leaks are checked elsewhere
SPARKOPS="env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -ff -qq -y -e trace=open,openat,read,pread64 -o $TMP/scrape.trace $real"
# gb10-fragmented has a buddyinfo (a later --procfs is the one that counts)
start_serve --listen 127.0.0.1:0 --cache 0 $(sysroot gb10-fragmented)
_report $? "serve --cache 0 starts under strace"
"$HTTPC" getk "$HOST" "$PORT" /metrics 10 >"$OUT"
grep -q '^ok=10 fail=0' "$OUT"
_report $? "10 fresh scrapes answered"
child=$(pgrep -P $SPID | head -1)
kill -TERM "${child:-$SPID}" 2>/dev/null
wait $SPID
SPARKOPS=$real
cat "$TMP"/scrape.trace.* >"$TMP/scrape.trace" 2>/dev/null

grep -q 'meminfo>' "$TMP/scrape.trace" && ! grep -q pagetypeinfo "$TMP/scrape.trace"
_report $? "the scrapes read meminfo and never open pagetypeinfo"
b=$(grep -Ec '(pread64\([0-9]+<[^>]*/buddyinfo>.*, 0\)|read\([0-9]+<[^>]*/buddyinfo>, "[^"])' "$TMP/scrape.trace")
[ "$b" = 1 ]
_report $? "buddyinfo read once in 10 fresh scrapes (read $b times)"
m=$(grep -Ec '(pread64\([0-9]+<[^>]*/meminfo>.*, 0\)|read\([0-9]+<[^>]*/meminfo>, "[^"])' "$TMP/scrape.trace")
[ "$m" -ge 10 ]
_report $? "while meminfo is fresh at every scrape (read $m times)"
o=$(grep -Ec 'open(at)?\(.*os-release"' "$TMP/scrape.trace")
v=$(grep -Ec 'open(at)?\(.*/proc/version"' "$TMP/scrape.trace")
[ "$o" -le 1 ] && [ "$v" -le 1 ]
_report $? "the platform fingerprint's files opened once in 10 scrapes (os-release $o, version $v)"

done_testing
