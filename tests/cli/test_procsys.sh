#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes under /proc/sys (drop_caches, compact_memory) go only to the real
# /proc: a --procfs tree is refused with a clear message (exit 2) and
# receives nothing; under the test switch SPARKOPS_TEST_PROCFS_WRITES=1 a
# tree of the caller's own is written, but never through a symbolic link (the
# file or a folder on the way) and never a file another user owns.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
cd "$TMP" || exit 2
unset SPARKOPS_TEST_PROCFS_WRITES
if [ "$(id -u)" != 0 ]; then
	skip_case "writes under /proc/sys" "needs root (--apply 1 refuses a non-root caller first)"
	done_testing
	exit $?
fi
chmod 755 "$TMP"
tree() { # NAME: a fixture copy with a drop_caches of its own
	rm -rf "$TMP/$1"
	cp -r "$FIX/gb10-idle" "$TMP/$1"
	mkdir -p "$TMP/$1/proc/sys/vm"
	: >"$TMP/$1/proc/sys/vm/drop_caches"
}
L() { echo "$S ladder --procfs $TMP/$1/proc --sysfs $TMP/$1/sys --job j$1 --apply 1 --force"; }
export XDG_STATE_HOME="$TMP/state"

# a --procfs tree: refused, nothing written
tree a
run $(L a)
expect_rc 2 "ladder --apply 1 into a --procfs tree is refused"
expect_err "drop_caches': writes under /proc/sys go only to the real /proc, never into a --procfs tree: nothing flushed" \
	"the refusal says why"
[ ! -s "$TMP/a/proc/sys/vm/drop_caches" ]
_report $? "the tree's drop_caches is untouched"
run env SPARKOPS_PROCFS="$TMP/a/proc" SPARKOPS_SYSFS="$TMP/a/sys" $S ladder --job ja2 --apply 1 --force
expect_rc 2 "the same through SPARKOPS_PROCFS"

# the test switch: the caller's own tree is written (what the other tests rely on)
run env SPARKOPS_TEST_PROCFS_WRITES=1 $(L a)
expect_rc 0 "SPARKOPS_TEST_PROCFS_WRITES=1: the caller's own tree is written"
[ "$(cat "$TMP/a/proc/sys/vm/drop_caches")" = 3 ]
_report $? "... 3 in its drop_caches"

# a symlinked drop_caches (the attack: another user's tree pointing at root's file)
tree b
echo keep >"$TMP/victim"
rm "$TMP/b/proc/sys/vm/drop_caches"
ln -s "$TMP/victim" "$TMP/b/proc/sys/vm/drop_caches"
run env SPARKOPS_TEST_PROCFS_WRITES=1 $(L b)
expect_rc 1 "a symlinked drop_caches is refused"
expect_err "a symbolic link: never followed for a write under /proc/sys" "... said as a symbolic link"
[ "$(cat "$TMP/victim")" = keep ]
_report $? "the link's target is untouched"
run $(L b)
[ "$RC" = 2 ] && [ "$(cat "$TMP/victim")" = keep ]
_report $? "without the switch: refused as a --procfs tree, the target untouched"

# a symlinked folder on the way
tree c
mkdir -p "$TMP/elsewhere/vm"
: >"$TMP/elsewhere/vm/drop_caches"
rm -rf "$TMP/c/proc/sys"
ln -s "$TMP/elsewhere" "$TMP/c/proc/sys"
run env SPARKOPS_TEST_PROCFS_WRITES=1 $(L c)
expect_rc 1 "a symlinked folder (sys -> elsewhere) is refused"
expect_err "symbolic link" "... said as a symbolic link"
[ ! -s "$TMP/elsewhere/vm/drop_caches" ]
_report $? "nothing written through the linked folder"

# a file another user owns in the tree
tree d
chown nobody "$TMP/d/proc/sys/vm/drop_caches"
run env SPARKOPS_TEST_PROCFS_WRITES=1 $(L d)
expect_rc 2 "another user's drop_caches in a tree is refused even under the switch"
[ ! -s "$TMP/d/proc/sys/vm/drop_caches" ]
_report $? "... nothing written"

# a FIFO as drop_caches: refused at once, no hang
tree e
rm "$TMP/e/proc/sys/vm/drop_caches"
mkfifo "$TMP/e/proc/sys/vm/drop_caches"
run env SPARKOPS_TEST_PROCFS_WRITES=1 timeout 10 $(L e)
[ "$RC" = 1 ]
_report $? "a FIFO as drop_caches: refused, no hang (exit $RC)"

# evict as root with no PATH (the whole page cache): the same door
tree f
run $S evict --procfs "$TMP/f/proc" --sysfs "$TMP/f/sys"
expect_rc 2 "evict's whole-cache flush into a --procfs tree is refused"
expect_err "never into a --procfs tree" "... said why"
[ ! -s "$TMP/f/proc/sys/vm/drop_caches" ]
_report $? "... nothing written"
done_testing
