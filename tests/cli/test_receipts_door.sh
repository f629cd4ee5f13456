#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 24, critical: `run --guard-load --log X` as root writes its receipts
# to X.receipts.jsonl through the one door (util/fileio.h): a symbolic link
# another user planted there (or at the default log's receipts names) is not
# followed, and a block device is never written. The devices live in a
# private mount namespace (unshare -m) on a tmpfs; the fixture tree is a
# copy, so nothing the guard might touch is the machine's or the repo's.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS

if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
	skip_case "receipts through the door" "needs root and unshare -m"
	done_testing
	exit 0
fi
cp -a "$FIX/gb10-idle" "$TMP/fx"
R="--procfs $TMP/fx/proc --sysfs $TMP/fx/sys"
W="$TMP/pub"
mkdir -m 1777 "$W"

# 1. a link owned by nobody at LOG.receipts.jsonl, aimed at a root-owned file
echo precious >"$TMP/victim"
ln -s "$TMP/victim" "$W/job.csv.receipts.jsonl"
chown -h nobody "$W/job.csv.receipts.jsonl"
run $S run $R --interval 0.1 --log "$W/job.csv" --guard-load -- sleep 0.3
expect_rc 0 "the job runs"
[ "$(cat "$TMP/victim")" = precious ]
_report $? "the root-owned file behind another user's link is untouched"
expect_err "receipts.jsonl' is a symbolic link owned by nobody" "the refusal names the link's owner"
[ -L "$W/job.csv.receipts.jsonl" ]
_report $? "the link itself is left as it was"

# 2. the default log's names: links planted for the next seconds' receipts
mkdir -m 1777 "$TMP/cwd"
now=$(date +%s)
for i in 0 1 2 3 4 5; do
	n=$(date -d "@$((now + i))" +sparkops-%Y%m%d-%H%M%S)
	ln -s "$TMP/victim" "$TMP/cwd/$n.csv.receipts.jsonl"
	chown -h nobody "$TMP/cwd/$n.csv.receipts.jsonl"
done
run sh -c "cd '$TMP/cwd' && $S run $R --interval 0.1 --guard-load -- sleep 0.3"
expect_rc 0 "the job runs with the default log name"
[ "$(cat "$TMP/victim")" = precious ]
_report $? "default log names: the planted receipts links are not followed"

# 3. the caller's own receipts: written as before
run $S run $R --interval 0.1 --log "$TMP/mine.csv" --guard-load -- sleep 0.3
grep -q '"event":"end"' "$TMP/mine.csv.receipts.jsonl"
_report $? "an ordinary receipts file is still written"

# 4. a block device: never written (a loop device over a file when the
#    kernel lends one, else a node of a device that is not there)
run unshare -m sh -c "
	mount -t tmpfs none '$W' || exit 9
	img='$TMP/disk.img'
	head -c 65536 /dev/zero >\"\$img\"
	lo=\$(losetup -f --show \"\$img\" 2>/dev/null)
	if [ -n \"\$lo\" ] && [ -b \"\$lo\" ]; then
		mknod '$W/job.csv.receipts.jsonl' b \$(printf '%d %d' \$(stat -c '0x%t 0x%T' \"\$lo\"))
		echo real-loop
	else
		mknod '$W/job.csv.receipts.jsonl' b 7 250
	fi
	$S run $R --interval 0.1 --log '$W/job.csv' --guard-load -- sleep 0.3; echo rc=\$?
	test -b '$W/job.csv.receipts.jsonl' && echo still-a-device
	[ -n \"\$lo\" ] && { sync; cmp -s -n 65536 \"\$img\" /dev/zero && echo disk-untouched; losetup -d \"\$lo\"; }
	true"
expect_out 'rc=0' "block node as the receipts: the job runs"
expect_out still-a-device "the node stays a node"
expect_err "receipts.jsonl' is a block device: refusing" "the block device is refused with a clear message"
if grep -q real-loop "$OUT"; then
	expect_out disk-untouched "the loop device's first bytes are untouched"
else
	skip_case "the disk's first bytes" "no loop device lent by this kernel"
fi
done_testing
