#!/bin/sh
# SPDX-License-Identifier: MIT
# status names what is wrong: the quantity that is low (the budget, with
# MemFree and the reserve), one diagnosis on the USB-PD fixture.
# A server's cap is a fraction of the GPU's memory on a discrete GPU, of the pool on UMA.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS

# --- status names the quantity that is low -----------------------------------------
run $NODRV $S status --reserve 8GiB $(sysroot gb10-loaded)
expect_rc 1 "a budget under 1 GiB is trouble"
expect_out 'TROUBLE: the budget \(MemFree 6\.2 GiB - reserve 8\.0 GiB\) is 0\.0 GiB, under 1 GiB' "it is the budget that is low, said with MemFree and the reserve"
expect_no_out 'under 1 GiB free' "not 'under 1 GiB free' while MemFree is 6.2 GiB"

# --- one diagnosis on the USB-PD fixture ----------------------------------------------
run $NODRV $S status $(sysroot gb10-usbpd)
expect_rc 1 "USB-PD safety mode is trouble"
expect_out '^verdict:.*USB-PD safety mode' "the verdict names USB-PD safety mode"
expect_no_out '^verdict:.*PL1 at its cap \(the platform' "and not also the platform's sustained limit"
expect_no_out 'sustained limit|half speed' "no sustained-limit or half-speed claim anywhere"
expect_out '20 W of its 140 W rating' "the cap is put against the rating"

# --- a server's cap is a fraction of the GPU's memory on a discrete GPU ------------
# the discrete fixture: 503.5 GiB of host RAM, an 80 GB card (85520809984 bytes),
# SGLang --mem-fraction-static 0.80: 0.80 x 79.6 GiB = 63.7 GiB, not 402.8 GiB
run $DISC $S status $(sysroot discrete)
expect_out 'sglang .*0\.80 = 63\.7 GiB of the GPU memory \(--mem-fraction-static\)' "status: the cap in GiB of the card"
expect_no_out '402\.8 GiB' "not 0.80 of the host RAM"
run $DISC $S status $(sysroot discrete) --json
expect_jq '[.processes[] | select(.name=="sglang")][0] | .cap_bytes == 68416647987 and .cap_of == "gpu"' "status --json: cap_bytes of the GPU's memory"
run $NODRV $S status $(sysroot gb10-loaded) --json
expect_jq '[.processes[] | select(.cap_fraction != null)] | all(.cap_of == "pool")' "on UMA (no GPU reading) the cap stays a share of the pool"

done_testing
