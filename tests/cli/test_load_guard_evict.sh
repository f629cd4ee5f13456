#!/bin/sh
# SPDX-License-Identifier: MIT
# run --guard-load without root: what it says matches what it did. Before
# the job opens its files nothing is evicted, the action is evict_none and
# the note says "now" (not that the job has nothing to evict); once the job
# holds its cached file open it is evicted, and the receipt's residency is
# the file's real cached bytes (never 0 for a cached file, never a number
# where the kernel tells none). The pool is the gb10-loaded fixture (MemFree
# 6.2 GiB under the 8 GiB floor); the job and its file are real, as nobody.
# No step waits on wall time: the job opens its file once the guard's first
# action is on record (a file this script creates), and ends once an
# eviction is; this script reads the file into the page cache right before
# the job opens it and keeps it there until the guard evicts it. Others drop
# the machine's page cache (another suite's drop_caches, about once a minute
# on a shared machine; memory pressure): when the first eviction found less
# than the file cached and the cache was dropped meanwhile (/proc/vmstat's
# drop_pagecache moved, or a sentinel read with the file left the cache),
# the run is made again, at most 3 times. Only a run with no drop judges the
# figure; a skip says so when every run had one.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
if [ -n "$SPARKOPS_UNDER_QEMU" ]; then
	skip_case "the load guard's eviction" "'run' starts threads (qemu-user)"
	done_testing
	exit $?
fi
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then
	skip_case "the load guard's eviction as nobody" "needs root to become nobody (setpriv)"
	done_testing
	exit $?
fi
chmod 777 "$TMP"
NB="setpriv --reuid=65534 --regid=65534 --clear-groups"
BIG="$TMP/big"
SENT="$TMP/sentinel" # root's, never the job's to evict: it leaves the cache only when the machine drops it
$NB sh -c "dd if=/dev/urandom of='$BIG' bs=1M count=64 status=none"
dd if=/dev/zero of="$SENT" bs=1M count=16 status=none
F="$FIX/gb10-loaded"
R="$TMP/x.csv.receipts.jsonl"
cd "$TMP" || exit 2

res() { # resident bytes of $1 (fincore), "" without fincore
	command -v fincore >/dev/null && fincore -b -n -o RES "$1" 2>/dev/null | awk '{ print $1 }'
}
drops() { awk '$1 == "drop_pagecache" { print $2 }' /proc/vmstat 2>/dev/null; }
# acted [ACTION]: the receipts so far hold an action (of that kind); a line
# still being written is passed over
acted() {
	jq -e -R -s --arg a "${1:-}" \
		'[split("\n")[] | fromjson? | select(.event == "action" and ($a == "" or .action == $a))] | length > 0' \
		"$R" >/dev/null 2>&1
}
sentinel_kept() {
	s=$(res "$SENT")
	[ -z "$s" ] || [ "$s" -ge $((16 * 1048576 * 9 / 10)) ] || dropped="the sentinel was down to $s bytes"
}
# the job, as nobody: opens its file when $TMP/open appears, ends when
# $TMP/end does (each wait bounded: 30 s; `[` is the shell's, opening nothing)
JOB="i=0; while [ ! -f '$TMP/open' ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done
exec 3<'$BIG'
i=0; while [ ! -f '$TMP/end' ] && [ \$i -lt 600 ]; do sleep 0.05; i=\$((i + 1)); done"
attempt() {
	rm -f "$TMP/open" "$TMP/end" "$R" "$TMP/x.csv"
	dropped=""
	d0=$(drops)
	$NB env SPARKOPS_NVML_LIB=/nonexistent $S run --procfs "$F/proc" --sysfs "$F/sys" --interval 0.5 \
		--log "$TMP/x.csv" --guard-load -- sh -c "$JOB" >"$OUT" 2>"$ERR" &
	sp=$!
	# the guard's first action, while the job holds none of its own files (30 s at most)
	i=0
	while ! acted && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	# resident now, whatever the machine's page cache went through, and kept
	# so until the guard's first eviction (30 s at most)
	cat "$BIG" "$SENT" >/dev/null
	: >"$TMP/open"
	i=0
	while ! acted evict && [ $i -lt 300 ]; do
		sentinel_kept
		cat "$BIG" "$SENT" >/dev/null
		sleep 0.1
		i=$((i + 1))
	done
	sentinel_kept
	: >"$TMP/end"
	wait $sp
	# shellcheck disable=SC2034 # lib.sh's expect_rc reads it
	RC=$?
	d1=$(drops)
	[ "$d0" = "$d1" ] || dropped="drop_caches written $((d1 - d0)) time(s): /proc/vmstat drop_pagecache"
}
first_evict_full() {
	jq -e -s '[.[] | select(.event == "action" and .action == "evict")][0] |
		.files == 1 and .resident_before_bytes >= 60000000 and .residency_unknown_files == 0' "$R" >/dev/null 2>&1
}
tries=0
while :; do
	tries=$((tries + 1))
	attempt
	first_evict_full && break
	if [ -z "$dropped" ] || [ $tries -ge 3 ]; then break; fi
	echo "# the machine's page cache was dropped during the run ($dropped): again"
done

expect_rc 0 "the job ran under the load guard, as nobody"
jq -e -s '[.[] | select(.event == "action")][0] | .action == "evict_none" and .files == 0 and .resident_before_bytes == null' "$R" >/dev/null
_report $? "before the job opens its file: evict_none, no residency figure"
expect_err "none of the files the job has open or mapped now is its user's to evict \(the next action looks again\)" \
	"the note speaks of now, not of the job's files for ever"
[ "$(grep -c 'evict_none in' "$ERR")" = 0 ]
_report $? "nothing evicted is not repeated on the terminal each second"
if first_evict_full; then
	_report 0 "the first eviction's receipt holds the file's cached 64 MiB, not 0"
elif [ -n "$dropped" ]; then
	skip_case "the first eviction's receipt holds the file's cached 64 MiB" \
		"the machine's page cache was dropped during each of $tries runs ($dropped)"
else
	jq -c -s '[.[] | select(.event == "action")]' "$R" 2>/dev/null | sed 's/^/# actions: /'
	_report 1 "the first eviction's receipt holds the file's cached 64 MiB, not 0"
fi
expect_err 'load guard: evict in [0-9]+ ms' "the eviction itself is said"
done_testing
