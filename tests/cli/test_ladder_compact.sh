#!/bin/sh
# SPDX-License-Identifier: MIT
# Rung 1 compacts as well as flushes when memory is fragmented: the log shows
# a contiguous allocation failing (CMA, a physically contiguous DMA buffer),
# or the machine has under 1 GiB free in blocks of 2 MiB (what `status` warns
# about). `--apply 1` then writes 1 to <procfs>/sys/vm/compact_memory after
# the flush and reports the contiguous memory before and after.
. "$(dirname "$0")/lib.sh"
# the fixture trees here are the test's own copies: let the flush and the
# compaction write them (never through a link; see src/probe/sysctl.c)
export SPARKOPS_TEST_PROCFS_WRITES=1
S=$SPARKOPS
export XDG_STATE_HOME="$TMP/state"
FIELD=$FIX/oomlogs/field
NVRM=$FIELD/006-nvrm-dmesg-gb10-burst.log
CMA=$FIELD/030-jetson-cma-nvgpu-dma.log

# the advice, without applying anything
run $S ladder $(sysroot gb10-idle) --job c1 --reset --json --log "$NVRM"
expect_jq '.next_rung == 1 and (.change | test("compact_memory") | not)' \
	"a driver failure on a machine with contiguous memory: a flush alone"
run $S ladder $(sysroot gb10-fragmented) --job c2 --reset --json --log "$NVRM"
expect_jq '.next_rung == 1 and (.change | test("drop_caches; echo 1 \\| sudo tee /proc/sys/vm/compact_memory"))' \
	"the same failure on a machine with little free in 2 MiB blocks: flush and compact"
expect_jq '.change | test("free in blocks of 2 MiB or more")' "... saying how much is free in 2 MiB blocks"
run $S ladder $(sysroot gb10-idle) --job c3 --reset --json --log "$CMA"
expect_jq '.next_rung == 1 and (.change | test("compact_memory")) and (.log.fragmented | test("CMA|contiguous"))' \
	"a CMA allocation failing in the log: flush and compact"
run $S ladder $(sysroot gb10-idle) --job c4 --reset --log "$CMA"
expect_out "^  change: .*compact_memory" "the human advice says so too"

# --apply 1 against fixture trees (root: the writes go to the copies)
mk() { # name fixture
	cp -r "$FIX/$2" "$TMP/$1"
	mkdir -p "$TMP/$1/proc/sys/vm"
	: >"$TMP/$1/proc/sys/vm/drop_caches"
	: >"$TMP/$1/proc/sys/vm/compact_memory"
}
if [ "$(id -u)" = 0 ]; then
	mk frag gb10-fragmented
	run $S ladder --procfs "$TMP/frag/proc" --sysfs "$TMP/frag/sys" --job a1 --reset --apply 1 --json --log "$NVRM"
	expect_rc 0 "--apply 1 on a fragmented machine"
	[ "$(cat "$TMP/frag/proc/sys/vm/compact_memory")" = 1 ]
	_report $? "--apply 1 writes 1 to <procfs>/sys/vm/compact_memory after the flush"
	[ "$(cat "$TMP/frag/proc/sys/vm/drop_caches")" = 3 ]
	_report $? "... and 3 to drop_caches"
	expect_jq '.compacted == true and (.contiguous_before_bytes | type) == "number" and (.contiguous_after_bytes | type) == "number"' \
		"the result holds the contiguous memory before and after"
	mk frag2 gb10-fragmented
	run $S ladder --procfs "$TMP/frag2/proc" --sysfs "$TMP/frag2/sys" --job a2 --reset --apply 1 --log "$NVRM"
	expect_out "^COMPACTED echo 1 > compact_memory: free in blocks of 2 MiB or more .* before the flush, .* after" \
		"the human result says what compaction left"
	mk idle gb10-idle
	run $S ladder --procfs "$TMP/idle/proc" --sysfs "$TMP/idle/sys" --job a3 --reset --apply 1 --json --log "$NVRM"
	expect_rc 0 "--apply 1 on a machine with contiguous memory"
	[ ! -s "$TMP/idle/proc/sys/vm/compact_memory" ]
	_report $? "... flushes without compacting"
	expect_jq 'has("compacted") | not' "... and says nothing of compaction"
	mk idle2 gb10-idle
	run $S ladder --procfs "$TMP/idle2/proc" --sysfs "$TMP/idle2/sys" --job a4 --reset --apply 1 --json --log "$CMA"
	[ "$(cat "$TMP/idle2/proc/sys/vm/compact_memory")" = 1 ]
	_report $? "a fragmented log compacts on any machine"
	mk nocompact gb10-fragmented
	rm "$TMP/nocompact/proc/sys/vm/compact_memory"
	run $S ladder --procfs "$TMP/nocompact/proc" --sysfs "$TMP/nocompact/sys" --job a5 --reset --apply 1 --json --log "$NVRM"
	expect_rc 0 "a kernel without compaction: the flush still counts"
	expect_jq '.compacted == false and .freed_bytes != null' "... and the result says compaction failed"
else
	skip_case "--apply 1 compaction" "needs root"
fi
done_testing
