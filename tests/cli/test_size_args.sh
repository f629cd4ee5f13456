#!/bin/sh
# SPDX-License-Identifier: MIT
# A size without a unit is an error everywhere sizes are taken (plan --budget,
# --cohost NAME:SIZE, status --reserve/--min-rss, run --guard-min-free, watch --reserve).
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS

# --- a size without a unit is an error, everywhere sizes are taken ---------------
run $NODRV $S $(sysroot no-gpu) plan --params 8e9 --method lora --budget 10
expect_rc 2 "plan --budget 10 is refused"
expect_err "'10' is not a size: give a unit \(e.g. 10GiB\)" "and the message asks for a unit"
run $NODRV $S $(sysroot no-gpu) plan --params 8e9 --method lora --budget 10GiB
expect_rc_not2() { [ "$RC" != 2 ]; _report $? "$1"; }
expect_rc_not2 "--budget 10GiB is taken"
for o in "status --reserve 8" "status --min-rss 100" "run --guard-min-free 4 -- true" "watch --reserve 8 --pid 1" "plan --params 8e9 --reserve 4"; do
	run $NODRV $S $(sysroot no-gpu) $o
	expect_rc 2 "$o: a unitless size is refused"
	expect_err "is not a size: give a unit" "$o: says so"
done
run $NODRV $S $(sysroot no-gpu) plan --params 8e9 --method lora --cohost ollama:12
expect_rc 2 "--cohost ollama:12 is refused"
expect_err "'ollama:12' is not a size: give a unit \\(e.g. ollama:12GiB\\)" "and says to give a unit"

done_testing
