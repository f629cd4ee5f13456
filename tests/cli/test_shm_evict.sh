#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops evict --shm NAME...: as root, an orphaned /dev/shm file (no process
# maps it or holds it open) removed, with what it held; a held file, a
# symlink, a name with '/', a missing name refused; not root: exit 4. Always
# on a copy of the containers tree (its dev/shm beside its proc), never the
# machine's /dev/shm. And the ladder's line on the pool's unexplained part.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
GIB=1073741824
W="$TMP/w"
mkdir -p "$W"
cp -a "$FIX/containers" "$W/"
SHM="$W/containers/dev/shm"
R="--procfs $W/containers/proc --sysfs $W/containers/sys"
ln -s nccl-abc123 "$SHM/link-to-orphan"

if [ "$(id -u)" = 0 ]; then
	# an orphan removed: gone from the copy, its size said
	run $S evict --shm $R torch_4711_2204_0
	expect_rc 0 "an orphaned /dev/shm file: removed"
	[ ! -e "$SHM/torch_4711_2204_0" ] && [ -e "$FIX/containers/dev/shm/torch_4711_2204_0" ]
	_report $? "gone from the copy's dev/shm (the fixture itself untouched)"
	expect_out '^removed /dev/shm/torch_4711_2204_0: 32\.0 KiB, 32\.0 KiB resident$' "says its size and what it held"

	# a file a process maps (pid 5101's maps): refused, kept
	run $S evict --shm $R psm_mapped
	expect_rc 1 "a held file: refused"
	expect_err "not removed: 'psm_mapped': a process maps it or holds it open \(pid 5101\)" "the holder named"
	[ -f "$SHM/psm_mapped" ]
	_report $? "the held file is still there"

	# a file a process holds open (an fd link, no mapping): refused too
	printf 'q' >"$SHM/held_open"
	mkdir -p "$W/containers/proc/5201/fd"
	ln -s /dev/shm/held_open "$W/containers/proc/5201/fd/9"
	run $S evict --shm $R held_open
	expect_rc 1 "a file held open: refused"
	expect_err "held_open': a process maps it or holds it open \(pid 5201\)" "the fd's process named"
	[ -f "$SHM/held_open" ]
	_report $? "the file held open is still there"

	# a symlink: refused, neither it nor its target removed
	run $S evict --shm $R link-to-orphan
	expect_rc 1 "a symlink: refused"
	expect_err "link-to-orphan': a symlink" "says it is a symlink"
	[ -L "$SHM/link-to-orphan" ] && [ -f "$SHM/nccl-abc123" ]
	_report $? "the symlink and its target are both still there"

	# a name with '/': refused, even one that would reach a real file
	printf 'k' >"$W/containers/dev/keep"
	run $S evict --shm $R ../keep
	expect_rc 1 "a name with '/': refused"
	expect_err "'../keep': not a plain file name" "says it is not a plain name"
	[ -f "$W/containers/dev/keep" ]
	_report $? "the file outside dev/shm is untouched"
	run $S evict --shm $R ..
	expect_rc 1 "'..': refused"

	# a missing name
	run $S evict --shm $R no-such-file
	expect_rc 1 "a missing name: refused"
	expect_err "'no-such-file': no such file in /dev/shm" "says it is missing"

	# several: the orphan removed, the others refused, exit 1; --json
	run $S evict --shm --json $R nccl-abc123 psm_mapped
	expect_rc 1 "one removed, one refused: exit 1"
	expect_jq '.mode == "shm" and (.removed | length) == 1 and .removed[0].name == "nccl-abc123" and .removed[0].size_bytes == 65536 and .removed_resident_bytes == .removed[0].resident_bytes' \
		"json: the removed file with its size and resident bytes"
	expect_jq '.refused == [{"name": "psm_mapped", "reason": "held", "reason_text": "a process maps it or holds it open (pid 5101)", "holder_pid": 5101}]' \
		"json: the refused file with its reason and holder"
	[ ! -e "$SHM/nccl-abc123" ] && [ -f "$SHM/psm_mapped" ]
	_report $? "only the orphan is gone"
	# a process whose maps cannot be read (root without the capabilities
	# that read any file): no file is called an orphan, nothing removed
	if command -v setpriv >/dev/null; then
		printf 'o' >"$SHM/orphan2"
		printf '' >"$W/containers/proc/5201/maps"
		chown 65534 "$W/containers/proc/5201/maps"
		chmod 000 "$W/containers/proc/5201/maps"
		run setpriv --inh-caps=-all --bounding-set=-dac_override,-dac_read_search $S evict --shm $R orphan2
		expect_rc 1 "a process's maps unreadable: refused"
		expect_err "'orphan2': cannot tell who holds it" "says it cannot tell who holds it"
		[ -f "$SHM/orphan2" ]
		_report $? "cannot tell: the file is still there"
		rm -f "$W/containers/proc/5201/maps"
	else
		skip_case "evict --shm, maps unreadable" "needs setpriv"
	fi
else
	skip_case "evict --shm removal cases" "need root (running as uid $(id -u))"
fi

# usage
run $S evict --shm $R
expect_rc 2 "--shm without a name: usage"
run $S evict --shm --any-owner $R x
expect_rc 2 "--shm with --any-owner: usage"

# not root: exit 4, nothing removed
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod -R a+rX "$W"
	run setpriv --reuid=65534 --regid=65534 --clear-groups $S evict --shm $R psm_mapped link-to-orphan
	expect_rc 4 "--shm as nobody: exit 4"
	expect_err "needs root" "says root is needed"
	[ -f "$SHM/psm_mapped" ] && [ -L "$SHM/link-to-orphan" ]
	_report $? "as nobody: nothing removed"
else
	skip_case "evict --shm as nobody" "needs root and setpriv"
fi

# --- the ladder names the memory nobody holds ----------------------------------------
LOG="$FIX/oomlogs/torch_step_trainer.log"
run $S ladder --log "$LOG" $(sysroot containers)
expect_rc 0 "ladder on the containers tree"
expect_out '^  nobody +50\.5 GiB of the pool is held by no process: check shmem and /dev/shm files no process maps \(the biggest: nccl-abc123, 64\.0 KiB: sparkops evict --shm nccl-abc123\), mlocked or hugetlb pages, driver-held memory after a failed job$' \
	"the line: the unexplained part, the causes, the biggest orphan named"
grep -n . "$OUT" | awk -F: '/ nobody /{n=$1} /^[0-9]+:LADDER/{l=$1} END{exit !(n && l && n < l)}'
_report $? "the line comes before the rungs"
orphans=$(( $(stat -c '%b*%B' "$FIX/containers/dev/shm/nccl-abc123") + $(stat -c '%b*%B' "$FIX/containers/dev/shm/torch_4711_2204_0") ))
run $S ladder --json --log "$LOG" $(sysroot containers)
expect_jq '.unexplained_bytes == 54223962112 + '$orphans' and .unexplained_threshold_bytes == 4*'$GIB' and (.unexplained_note | startswith("50.5 GiB of the pool is held by no process"))' \
	"json: unexplained_bytes as status computes it, the note"
run $S status --json $(sysroot containers)
want=$(jq .pool.unexplained_bytes "$OUT")
run $S ladder --json --log "$LOG" $(sysroot containers)
expect_jq '.unexplained_bytes == '"$want" "json: the same figure status gives"
# under the threshold: no line, the figure still given
run $S ladder --log "$LOG" $(sysroot gb10-loaded)
expect_no_out 'held by no process' "under 4 GiB: no line"
run $S ladder --json --log "$LOG" $(sysroot gb10-loaded)
expect_jq '(.unexplained_bytes | type) == "number" and .unexplained_bytes < 4*'$GIB' and .unexplained_note == null' \
	"json under the threshold: the figure, note null"
# unknown: null
mkdir -p "$W/nomem/proc" "$W/nomem/sys"
run $S ladder --json --log "$LOG" --procfs "$W/nomem/proc" --sysfs "$W/nomem/sys"
expect_jq '.unexplained_bytes == null and .unexplained_note == null' "no meminfo: unexplained_bytes null"

# status names the command for the orphans it lists
run $S status --procfs "$FIX/containers/proc" --sysfs "$FIX/containers/sys"
expect_out 'once their job is gone: sudo sparkops evict --shm NAME' "status points at evict --shm for the orphans"
done_testing
