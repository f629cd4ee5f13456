#!/bin/sh
# SPDX-License-Identifier: MIT
# The process view opens /proc/PID/stat relative to the /proc folder
# (sp_read_at): a FIFO planted there under --procfs is refused like every
# other read of the roots, never waited on.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
root="$TMP/root"
cp -r "$FIX/gb10-loaded" "$root"
mkdir -p "$root/proc/4646"
echo planted >"$root/proc/4646/comm"
echo "786432 786432 0 0 0 0 0" >"$root/proc/4646/statm"
mkfifo "$root/proc/4646/stat"
run timeout -s KILL 20 env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1 $S status --json \
	--procfs "$root/proc" --sysfs "$root/sys"
expect_rc 0 "a FIFO as /proc/PID/stat: status answers, no hang"
expect_jq '[.processes[] | select(.pid == 4000)] | length == 1' "the other processes are still listed"
done_testing
