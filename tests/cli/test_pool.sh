#!/bin/sh
# SPDX-License-Identifier: MIT
# Contiguous free memory and the watermarks: status (human and JSON) and the
# metrics on a fragmented GB10-like pool and a healthy one; null + reason
# (never 0) where buddyinfo is missing or malformed.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
NOGPU="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"

run $NOGPU $S status $(sysroot gb10-fragmented)
expect_out 'in 2MiB\+ +48\.0 MiB +free in blocks of 2 MiB or more \(largest 4\.0 MiB\)' "fragmented: 48 MiB in 2 MiB blocks beside free/available"
expect_out 'warning: little contiguous memory' "fragmented: a plain warning"
expect_out 'vm\.min_free_kbytes 4194304, watermark_boost_factor 15000, watermark_scale_factor 10' "the watermark sysctls"
expect_out 'reserved +6\.5 GiB +kept out of MemAvailable' "what the watermarks take out of MemAvailable"
expect_out 'warning: vm\.min_free_kbytes is far above the kernel.s default' "raised min_free_kbytes warned"
expect_out 'default +44757 +kB.*\(45056 kB with transparent huge pages\)' "the kernel's own default and khugepaged's"

run $NOGPU $S status $(sysroot gb10-healthy)
expect_no_out 'warning: little contiguous' "healthy: no contiguous warning"
expect_no_out 'far above the kernel' "healthy: min_free_kbytes at khugepaged's value is not raised"
expect_out 'in 2MiB\+ +9[0-9]\.[0-9] GiB' "healthy: most free memory in 2 MiB blocks"

run $NOGPU $S status --json $(sysroot gb10-fragmented)
expect_rc 0 "fragmented: status --json"
printf '%s' "$(cat "$OUT")" | python3 -c '
import json, sys
d = json.load(sys.stdin)
p, w = d["pool"], d["watermarks"]
assert p["free_2mib_bytes"] == 48 << 20, p
assert p["largest_free_block_bytes"] == 4 << 20, p
assert p["contiguous_status"] == "ok"
assert w["min_free_kbytes"] == 4194304 and w["min_free_kbytes_raised"] is True, w
assert w["kernel_default_min_free_kbytes"] == 44757 and w["thp_min_free_kbytes"] == 45056, w
assert w["reserved_from_available_bytes"] == 1691221 * 4096, w
'
_report $? "fragmented: pool.free_2mib_bytes, largest_free_block_bytes and the watermarks in JSON"

run $NOGPU $S status --json $(sysroot gb10-idle)
printf '%s' "$(cat "$OUT")" | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["pool"]
assert p["free_2mib_bytes"] is None and p["largest_free_block_bytes"] is None, p
assert p["contiguous_status"] == "missing", p
'
_report $? "no buddyinfo: null with the reason, never 0"

T=$(mktemp -d)
cp -r "$FIX/gb10-healthy/." "$T/"
printf 'Node 0, zone   Normal   12 x 3\n' >"$T/proc/buddyinfo"
run $NOGPU $S status --json --procfs "$T/proc" --sysfs "$T/sys"
printf '%s' "$(cat "$OUT")" | python3 -c '
import json, sys
p = json.load(sys.stdin)["pool"]
assert p["free_2mib_bytes"] is None and p["contiguous_status"] == "malformed", p
'
_report $? "malformed buddyinfo: null with the reason"
run $NOGPU $S status --procfs "$T/proc" --sysfs "$T/sys"
expect_out 'in 2MiB\+ +unknown +/proc/buddyinfo could not be parsed' "malformed buddyinfo said in words"
rm -rf "$T"

run $NOGPU $S metrics $(sysroot gb10-fragmented)
expect_out '^sparkops_pool_free_contiguous_bytes\{min_block="2MiB"\} 50331648$' "metrics: contiguous bytes"
expect_out '^sparkops_pool_largest_free_block_bytes 4194304$' "metrics: largest block"
expect_out '^sparkops_source_ok\{source="buddyinfo",status="ok"\} 1$' "metrics: buddyinfo source ok"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$OUT" >"$ERR" 2>&1
	_report $? "promtool check metrics: the fragmented pool"
fi
run $NOGPU $S metrics $(sysroot gb10-idle)
expect_no_out '^sparkops_pool_free_contiguous_bytes' "metrics: no buddyinfo, no series (not 0)"
expect_out '^sparkops_source_ok\{source="buddyinfo",status="missing"\} 0$' "metrics: buddyinfo missing said"
done_testing
