#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops ladder --apply 1 for real, on this machine: fill the page cache
# with a file of a few hundred MiB on disk, flush, and check that freed_bytes
# is real (the page cache in /proc/meminfo fell by most of the file), and that
# the live reading shown is the one read after the flush. The same
# call as a non-root user fails with exit 4 and flushes nothing. Needs root;
# otherwise it says "skip" and passes.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
MIB=256
SIZE=$((MIB * 1048576))
export XDG_STATE_HOME="$TMP/state"

if [ "$(id -u)" != 0 ]; then
	echo "# skip: the real page-cache flush needs root (running as uid $(id -u))"
	done_testing
	exit 0
fi
# the file must live on a disk, not tmpfs (shmem is not dropped)
DIR="$BUILD_DIR"
if [ "$(stat -f -c %T "$DIR")" = tmpfs ]; then
	echo "# skip: $DIR is tmpfs; the flush test needs a disk-backed folder"
	done_testing
	exit 0
fi
F="$DIR/ladder-flush-test.$$"
trap 'rm -f "$F"; rm -rf "$TMP"' EXIT

cached() { # Buffers + Cached in bytes, from /proc/meminfo (or the file $1)
	# printf, not print: mawk prints a number past 2^31 as 2.75558e+09
	awk '/^(Buffers|Cached):/ { s += $2 } END { printf "%.0f\n", s * 1024 }' "${1:-/proc/meminfo}"
}
# a box with more than 2 GiB of page cache (the fixture has 47 GiB): a
# whole number the shell can compare
c=$(cached "$FIX/gb10-fragmented/proc/meminfo")
case $c in '' | *[!0-9]*) false ;; *) [ "$c" -gt $((2 << 30)) ] ;; esac
_report $? "the page cache counted as a whole number past 2 GiB ($c)"
resident() { # bytes of the file in the page cache (fincore), or "" when fincore is missing
	command -v fincore >/dev/null && fincore -b -n -o RES "$F" 2>/dev/null | awk '{ print $1 }'
}

dd if=/dev/zero of="$F" bs=1M count=$MIB conv=fsync status=none
read_in "$F"
res0=$(resident)
[ -z "$res0" ] || [ "$res0" -ge $((SIZE * 9 / 10)) ]
_report $? "the test file is in the page cache (${res0:-?} bytes resident)"

# as nobody: exit 4, one line, nothing flushed
c0=$(cached)
run setpriv --reuid=65534 --regid=65534 --clear-groups $S ladder --apply 1 --json --job flush
expect_rc 4 "non-root --apply 1: exit 4"
expect_err "needs root" "non-root: names what is needed"
[ "$(wc -l <"$ERR")" = 1 ] && [ ! -s "$OUT" ]
_report $? "non-root: exactly one line, no output"
res1=$(resident)
[ -z "$res1" ] || [ "$res1" -ge $((SIZE * 9 / 10)) ]
_report $? "non-root: nothing flushed (file still resident: ${res1:-?} bytes)"
# the machine-wide page cache is only a stand-in when fincore is missing:
# under prove -j other tests delete files (their page cache goes with them)
# at any moment, so with fincore the file's own residency above is the check
if [ -z "$res1" ]; then
	c1=$(cached)
	[ $((c0 - c1)) -lt $((SIZE / 2)) ]
	_report $? "non-root: the page cache did not fall ($c0 -> $c1)"
fi

# as root: the real flush
read_in "$F"
c0=$(cached)
# flush ARGS...: --apply 1, again with --force when another session's
# 'sparkops run/watch' is watching a job on this machine (its refusal is the
# rule working; the flush itself is what this test is about)
flush() {
	run $S ladder --apply 1 "$@"
	if [ "$RC" = 1 ] && grep -q "is watching a job" "$ERR"; then
		echo "# note: $(cat "$ERR")"
		echo "# note: a watched job is running on this machine; flushing with --force"
		run $S ladder --apply 1 --force "$@"
	fi
}
flush --json --job flush
c1=$(cached)
expect_rc 0 "root --apply 1"
expect_jq ".freed_bytes >= $((SIZE * 7 / 10))" "freed_bytes covers most of the $MIB MiB file"
expect_jq '.page_cache_before_bytes - .page_cache_after_bytes == .freed_bytes' "freed_bytes = page cache before - after"
expect_jq '.rungs_tried == [1] and .next_rung == 2' "rung 1 marked tried"
# the live reading shown is the one after the flush, not the sample before it
expect_jq "(.live_before_flush | type) == \"object\" and .live.budget_now_bytes - .live_before_flush.budget_now_bytes >= $((SIZE / 2))" \
	"live.budget_now_bytes is read after the flush: it grew by at least half the file"
[ $((c0 - c1)) -ge $((SIZE / 2)) ]
_report $? "/proc/meminfo page cache fell by at least half the file ($(( (c0 - c1) / 1048576 )) MiB)"
res2=$(resident)
[ -z "$res2" ] || [ "$res2" -le $((SIZE / 10)) ]
_report $? "the file left the page cache (${res2:-?} bytes resident)"
flush --job flush2
expect_rc 0 "human output of a flush"
expect_out '^FLUSHED' "human: FLUSHED"
expect_out 'freed [0-9.]+ (GiB|MiB|KiB|B)\b' "human: what it freed, in the unit that shows it"
expect_out '^  live +[0-9.]+ GiB for a new job now \(read after the flush; before it: [0-9.]+ GiB\)$' \
	"human: the now line is the reading after the flush"
done_testing
