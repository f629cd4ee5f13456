#!/bin/sh
# SPDX-License-Identifier: MIT
# Resident memory from /proc/PID/statm is pages x the page size, and the page
# size is the machine's (4 KiB on the DGX Spark's stock kernel, 64 KiB on
# some Arm kernels). SPARKOPS_PAGE_SIZE stands in for it on fixtures only.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
# tests/fixtures/gb10-loaded/proc/4000/statm: 2411724 resident pages
for ps in 4096 65536; do
	run $NODRV SPARKOPS_PAGE_SIZE=$ps $S $(sysroot gb10-loaded) status --json
	expect_rc 0 "status on gb10-loaded, $ps-byte pages"
	expect_jq "(.processes[] | select(.pid == 4000) | .rss_bytes) == 2411724 * $ps" "statm RSS = 2411724 pages x $ps"
	expect_jq "(.processes[] | select(.pid == 3300) | .rss_bytes) == 157286 * $ps" "a second process, $ps-byte pages"
done
# not honoured on the live machine: there the system's page size counts
run env SPARKOPS_PAGE_SIZE=65536 SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1 $S status --json
expect_rc 0 "status on this machine"
pg=$(getconf PAGESIZE)
self=$(jq "[.processes[]? | .rss_bytes % $pg] | all(. == 0)" "$OUT")
[ "$self" = true ]
_report $? "live RSS values are multiples of this machine's page size ($pg)"
# garbage is ignored, not trusted
run $NODRV SPARKOPS_PAGE_SIZE=3000 $S $(sysroot gb10-loaded) status --json
expect_jq "(.processes[] | select(.pid == 4000) | .rss_bytes) == 2411724 * $pg" "SPARKOPS_PAGE_SIZE=3000 (not a power of two) is ignored"
done_testing
