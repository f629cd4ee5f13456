#!/bin/sh
# SPDX-License-Identifier: MIT
# run --guard-load without root: what it says matches what it did. Before
# the job opens its files nothing is evicted, the action is evict_none and
# the note says "now" (not that the job has nothing to evict); once the job
# holds its cached file open it is evicted, and the receipt's residency is
# the file's real cached bytes (never 0 for a cached file, never a number
# where the kernel tells none). The pool is the gb10-loaded fixture (MemFree
# 6.2 GiB under the 8 GiB floor); the job and its file are real, as nobody.
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
$NB sh -c "dd if=/dev/urandom of='$TMP/big' bs=1M count=64 status=none && cat '$TMP/big' >/dev/null"
F="$FIX/gb10-loaded"
cd "$TMP" || exit 2
run $NB env SPARKOPS_NVML_LIB=/nonexistent $S run --procfs "$F/proc" --sysfs "$F/sys" --interval 0.5 \
	--log "$TMP/x.csv" --guard-load -- sh -c "sleep 1.5; exec 3<'$TMP/big'; sleep 2.5"
expect_rc 0 "the job ran under the load guard, as nobody"
R="$TMP/x.csv.receipts.jsonl"
jq -e -s '[.[] | select(.event == "action")][0] | .action == "evict_none" and .files == 0 and .resident_before_bytes == null' "$R" >/dev/null
_report $? "before the job opens its file: evict_none, no residency figure"
expect_err "none of the files the job has open or mapped now is its user's to evict \(the next action looks again\)" \
	"the note speaks of now, not of the job's files for ever"
[ "$(grep -c 'evict_none in' "$ERR")" = 0 ]
_report $? "nothing evicted is not repeated on the terminal each second"
jq -e -s '[.[] | select(.event == "action" and .action == "evict")][0] | .files == 1 and .resident_before_bytes >= 60000000 and .residency_unknown_files == 0' "$R" >/dev/null
_report $? "the first eviction's receipt holds the file's cached 64 MiB, not 0"
expect_err 'load guard: evict in [0-9]+ ms' "the eviction itself is said"
done_testing
