#!/bin/sh
# SPDX-License-Identifier: MIT
# evict as a user who does not own the file (`nobody`, a 50 MiB file of
# root's, readable, not writable): mincore on such a file is no residency
# measure (the kernel reports every page resident), so evict says "unknown"
# instead of a figure; fincore, as root, is the referee. Needs root to become
# nobody; otherwise it says "skip" and passes.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1 ||
	! command -v fincore >/dev/null 2>&1; then
	echo "# skip: needs root, setpriv, fincore and a 'nobody' user (uid $(id -u))"
	done_testing
	exit 0
fi
DIR="$BUILD_DIR/evict-owner.$$"
mkdir -p "$DIR" && chmod 755 "$DIR"
if [ "$(stat -f -c %T "$DIR")" = tmpfs ]; then
	echo "# skip: $DIR is tmpfs (shmem is not evicted)"
	rm -rf "$DIR"
	done_testing
	exit 0
fi
trap 'rm -rf "$DIR" "$TMP"' EXIT
grp=$(id -gn nobody)
AS_NOBODY="setpriv --reuid=nobody --regid=$grp --clear-groups"
F="$DIR/f.bin"
res() { fincore -b -n -o RES "$1" | awk '{ print $1 }'; }
dd if=/dev/zero of="$F" bs=1M count=50 conv=fsync status=none
chmod 644 "$F"

# 1. not cached at all (fincore 0 B): evict must not claim "50.0 MiB cached"
$S evict "$F" >/dev/null # root: the owner's view, drops it
[ "$(res "$F")" -lt 1048576 ]
_report $? "set-up: fincore says the file is not cached"
run $AS_NOBODY $S evict "$F"
expect_rc 4 "nobody, someone else's file: refused (exit 4)"
expect_out 'skipped 1 file of other users \(residency unknown' "the skip says residency unknown"
expect_no_out '50\.0 MiB cached' "no made-up '50.0 MiB cached' (fincore says 0 B)"
run $AS_NOBODY $S evict --json "$F"
expect_jq '.not_owned_resident_bytes == null and .not_owned_residency_unknown == 1' "JSON: null, not a figure"

# 2. --any-owner on a cached file: evicted, and no "50.0 MiB before, 50.0 MiB after"
read_in "$F"
r0=$(res "$F")
run $AS_NOBODY $S evict --any-owner "$F"
expect_rc 0 "--any-owner: nobody evicts a readable file of root's"
r1=$(res "$F")
[ "$r0" -ge $((45 * 1048576)) ] && [ "$r1" -le $((r0 / 10)) ]
_report $? "fincore: the pages were evicted ($r0 -> $r1 bytes)"
expect_out 'evicted 1 file \(50\.0 MiB\): residency unknown' "the text says residency unknown"
expect_no_out 'resident before' "no before/after figures mincore cannot give"
read_in "$F"
run $AS_NOBODY $S evict --any-owner --json "$F"
expect_jq '.files == 1 and .resident_before_bytes == null and .resident_after_bytes == null and .evicted_bytes == null' \
	"JSON: before, after and evicted are null"
expect_jq '.residency_unknown_files == 1 and .residency_unknown_bytes == 52428800' "JSON: the file of unknown residency counted"

# 3. the owner still gets figures (the same file, now nobody's)
chown nobody:"$grp" "$F"
read_in "$F"
run $AS_NOBODY $S evict --json "$F"
expect_jq '.resident_before_bytes >= 47185920 and .resident_after_bytes <= 5242880 and .residency_unknown_files == 0' \
	"the owner: measured before and after"
done_testing
