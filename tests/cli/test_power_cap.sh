#!/bin/sh
# SPDX-License-Identifier: MIT
# A PL1 cap far below GB10's 140 W is the supply's USB-PD safety mode (or a
# stuck low-power state), whatever value it sits at: 20 W and 30 W are both
# seen in the field. The fixture's cap is rewritten in a copy of the tree.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
cp -R "$FIX/gb10-usbpd" "$TMP/box"
CAP="$TMP/box/sys/class/hwmon/hwmon1/power11_cap"
AVG="$TMP/box/sys/class/hwmon/hwmon1/power11_average"
ROOTS="--procfs $TMP/box/proc --sysfs $TMP/box/sys"

for w in 20 30 45; do
	echo "${w}000000" >"$CAP"
	echo "$((w - 1))000000" >"$AVG"
	run $NODRV $S status $ROOTS
	expect_rc 1 "a $w W cap is trouble"
	expect_out "^verdict:.*PL1 capped at $w W, far below the platform's 140 W" "the verdict names the $w W cap"
	expect_out "PL1 CAP IS $w W: USB-PD safety mode" "the sensors section names the $w W cap"
	run $NODRV $S status --json $ROOTS
	expect_jq ".spark.usb_pd_safety_mode == true and .spark.pl1_cap_w == $w" "--json: safety mode at $w W"
	run $NODRV $S metrics $ROOTS
	expect_out '^sparkops_spark_usb_pd_safety_mode 1$' "the exposition: safety mode at $w W"
done

for w in 140 100; do
	echo "${w}000000" >"$CAP"
	echo "60000000" >"$AVG"
	run $NODRV $S status --json $ROOTS
	expect_jq ".spark.usb_pd_safety_mode == false and .spark.pl1_cap_w == $w" "a $w W cap is not the safety mode"
	run $NODRV $S status $ROOTS
	expect_no_out "USB-PD" "a $w W cap is not called USB-PD"
done
done_testing
