#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops evict for real, without root: a 256 MiB file read into the page
# cache, evicted as `nobody` when nobody owns it (resident pages fall by 90% or
# more, measured here with mincore through `evict --json`, and by fincore when
# it is installed); refused with exit 4 when root owns it, and nothing evicted.
# Needs root to become nobody; otherwise it says "skip" and passes.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
MIB=256
SIZE=$((MIB * 1048576))

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1; then
	echo "# skip: becoming 'nobody' needs root and setpriv (uid $(id -u))"
	done_testing
	exit 0
fi
DIR="$BUILD_DIR/evict-test.$$"
mkdir -p "$DIR" && chmod 755 "$DIR"
if [ "$(stat -f -c %T "$DIR")" = tmpfs ]; then
	echo "# skip: $DIR is tmpfs (shmem is not evicted)"
	rm -rf "$DIR"
	done_testing
	exit 0
fi
trap 'rm -rf "$DIR" "$SENT" "$TMP"' EXIT
grp=$(id -gn nobody)
AS_NOBODY="setpriv --reuid=nobody --regid=$grp --clear-groups"
F="$DIR/weights.safetensors"
res() { # resident bytes of $1, by fincore (util-linux), or "" when it is missing
	command -v fincore >/dev/null && fincore -b -n -o RES "$1" 2>/dev/null | awk '{ print $1 }'
}
jget() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))$2)" "$OUT"; }
# A sentinel read with the file and never named to evict: when it too left
# the page cache during a case, the machine's cache was dropped meanwhile
# (another suite's flush, memory pressure), which says nothing of evict: the
# case is run again (at most 5 times). Without fincore it cannot tell.
SENT="$BUILD_DIR/evict-sentinel.$$" # beside $DIR: the folder walked below
dd if=/dev/zero of="$SENT" bs=1M count=32 conv=fsync status=none
kept_sentinel() {
	k=$(res "$SENT")
	[ -z "$k" ] || [ "$k" -ge $((32 * 1048576 * 9 / 10)) ] && return 0
	tries=$((tries + 1))
	[ $tries -lt 5 ] || return 0
	echo "# the machine's page cache was dropped during the case (the sentinel: $k bytes): again"
	return 1
}

# --- nobody's own file: evicted --------------------------------------------------
dd if=/dev/zero of="$F" bs=1M count=$MIB conv=fsync status=none
chown nobody:"$grp" "$F"
tries=0
while :; do
	read_in "$F" "$SENT"
	r0=$(res "$F")
	run $AS_NOBODY $S evict --json "$DIR"
	kept_sentinel && break
done
expect_rc 0 "nobody evicts its own file (a folder walked)"
before=$(jget "$OUT" '["resident_before_bytes"]')
after=$(jget "$OUT" '["resident_after_bytes"]')
[ "$before" -ge $((SIZE * 9 / 10)) ]
_report $? "mincore saw the file in the page cache before ($before bytes)"
[ "$after" -le $((before / 10)) ]
_report $? "resident pages fell by 90% or more ($before -> $after bytes)"
r1=$(res "$F")
if [ -n "$r0" ]; then
	[ "$r1" -le $((r0 / 10)) ]
	_report $? "fincore agrees ($r0 -> $r1 bytes)"
fi

# --- a file nobody does not own: refused, nothing evicted -------------------------
chown root:root "$F"
chmod 644 "$F"
read_in "$F"
run $AS_NOBODY $S evict "$F"
expect_rc 4 "someone else's file: refused with exit 4"
expect_err 'nothing evictable' "says nothing was evictable"
expect_out 'skipped 1 file of other users' "counts the skipped file"
run $AS_NOBODY $S evict --json "$F"
[ "$(jget "$OUT" '["files"]')" = 0 ] && [ "$(jget "$OUT" '["skipped"]["not_owned"]')" = 1 ]
_report $? "JSON: 0 files evicted, 1 not owned"
# mincore cannot measure a file nobody may not write (the kernel says "all
# resident"): the figure is unknown (null), and fincore, as root, says the pages stay
[ "$(jget "$OUT" '["not_owned_resident_bytes"]')" = None ] && [ "$(jget "$OUT" '["not_owned_residency_unknown"]')" = 1 ]
_report $? "the other user's file: residency unknown, not a figure"
tries=0
while :; do
	read_in "$F" "$SENT"
	run $AS_NOBODY $S evict --json "$F"
	kept=$(res "$F")
	kept_sentinel && break
done
[ -z "$kept" ] || [ "$kept" -ge $((SIZE * 9 / 10)) ]
_report $? "the other user's pages are still resident (fincore: ${kept:-?} bytes)"

# --- what is skipped: a FIFO, a symlink out of the tree ------------------------------
mkfifo "$DIR/fifo"
ln -s /etc/passwd "$DIR/link"
chown -h nobody "$DIR/fifo" "$DIR/link"
run $AS_NOBODY timeout 10 $S evict --json "$DIR"
[ "$(jget "$OUT" '["skipped"]["not_regular"]')" = 1 ] && [ "$(jget "$OUT" '["skipped"]["symlinks"]')" = 1 ]
_report $? "a FIFO and a symlink skipped and counted (never opened, never followed)"

# --- ladder --apply 1 without root: eviction instead of failing --------------------
chown nobody:"$grp" "$F"
read_in "$F"
export XDG_STATE_HOME="$DIR/state"
unset SPARKOPS_RUN_DIR # the XDG/HOME state folder itself is tested here (in $TMP: still sealed)
run $AS_NOBODY env XDG_STATE_HOME="$DIR/state" $S ladder --apply 1 --evict "$DIR" --job ev --json
expect_rc 0 "ladder --apply 1 --evict as nobody: rung 1 done by eviction"
expect_err 'rung 1 without root: evicted the page cache of 1 file' "says what it evicted"
r2=$(res "$F")
[ -z "$r2" ] || [ "$r2" -le $((SIZE / 10)) ]
_report $? "the file's pages are gone (${r2:-?} bytes resident)"

run $AS_NOBODY $S evict
expect_rc 4 "no path without root: exit 4"
run $AS_NOBODY $S evict /nonexistent/x
expect_rc 2 "a path that is not there: exit 2"
done_testing
