#!/bin/sh
# SPDX-License-Identifier: MIT
# status says one thing about vLLM's start-up check: which free figure it
# reads depends on the version (cudaMemGetInfo's MemFree up to 0.24,
# MemAvailable on an integrated GPU after), never two contradicting claims.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
run env SPARKOPS_NVML_LIB="$FAKE_NVML" FAKE_NVML_SCENARIO="$FIX/../fake-nvml/scenarios/gb10.scn" \
	$S status $(sysroot gb10-loaded)
expect_out 'cudaMemGetInfo free +~[0-9.]+ GiB \(excludes page cache; vLLM 0\.24 and older check it at start-up, newer vLLM reads MemAvailable on an integrated GPU\)' \
	"the cudaMemGetInfo line says which vLLM versions check it"
expect_no_out "vLLM's start-up check uses it" "no unqualified claim that the check uses cudaMemGetInfo"
expect_no_out "MemAvailable, which vLLM's start-up check reads;" "no unqualified claim that the check reads MemAvailable"
done_testing
