#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops_driver_errors_total{kind} in the exposition of metrics and serve:
# the NVIDIA driver's kernel-log lines counted by kind from a kmsg fixture
# (--kmsg FILE, the code path of /dev/kmsg), only what was added since the
# last exposition counted again, promtool-clean; a fixture root never
# reads the machine's /dev/kmsg.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
K=$FIX/kmsg/wedge.kmsg

run "$S" $(sysroot gb10-healthy) metrics --no-processes --kmsg "$K"
expect_rc 0 "metrics --kmsg FILE"
expect_out '^sparkops_driver_errors_total\{kind="nvrm_oom"\} 22$' "nvrm_oom: the out-of-memory records, the failed allocation and the dmesg line"
expect_out '^sparkops_driver_errors_total\{kind="xid"\} 2$' "xid: the record and the dmesg line, not a service quoting one"
expect_out '^sparkops_driver_errors_total\{kind="nvrm_other"\} 2$' "nvrm_other: continuation lines not counted"
expect_out '^# TYPE sparkops_driver_errors_total counter$' "a counter"
if command -v promtool >/dev/null 2>&1; then
	promtool check metrics <"$OUT" >"$ERR" 2>&1
	_report $? "promtool check metrics"
else
	skip_case "promtool check metrics" "promtool is not installed (Debian package prometheus)"
fi
run "$S" $(sysroot gb10-healthy) metrics --no-processes
expect_no_out 'sparkops_driver_errors_total' "fixture roots without --kmsg: the machine's log is not read"
run "$S" $(sysroot gb10-healthy) metrics --kmsg "$TMP/none.kmsg"
expect_rc 2 "--kmsg missing: usage error"
expect_err "--kmsg '.*none.kmsg'" "--kmsg missing: names it"
run "$S" $(sysroot gb10-healthy) metrics --kmsg "$TMP"
expect_rc 2 "--kmsg a folder: usage error"

# the reader keeps its place: appended lines are counted once, at the next write
cp "$K" "$TMP/live.kmsg"
mkdir -p "$TMP/tf"
"$S" $(sysroot gb10-healthy) metrics --no-processes --kmsg "$TMP/live.kmsg" --textfile "$TMP/tf" --interval 0.2 \
	>/dev/null 2>"$TMP/tf.err" &
MP=$!
i=0
while [ $i -lt 100 ] && ! grep -q 'kind="xid"} 2$' "$TMP/tf/sparkops.prom" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
grep -q 'kind="xid"} 2$' "$TMP/tf/sparkops.prom"
_report $? "textfile loop: the first write counts the file"
printf '7,1400,160000000,-;NVRM: Xid (PCI:000f:01:00): 79, pid=2100, name=python3, GPU has fallen off the bus.\n' >>"$TMP/live.kmsg"
printf '[  160.5] NVRM: Xid (PCI:000f:01:00): 31, pid=2100, name=python3, Ch 00000008, intr 10000000.\n' >>"$TMP/live.kmsg"
i=0
while [ $i -lt 100 ] && ! grep -q 'kind="xid"} 4$' "$TMP/tf/sparkops.prom" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
cp "$TMP/tf/sparkops.prom" "$OUT"
expect_out '^sparkops_driver_errors_total\{kind="xid"\} 4$' "textfile loop: two appended Xid lines counted once"
expect_out '^sparkops_driver_errors_total\{kind="nvrm_oom"\} 22$' "textfile loop: the old lines not counted again"
kill -TERM $MP 2>/dev/null
wait $MP

# serve: the same counts over HTTP
. "$(dirname "$0")/serve_lib.sh"
if start_serve --no-processes --kmsg "$K"; then
	printf 'GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n' | "$HTTPC" raw $HOST $PORT >"$OUT"
	expect_out '^sparkops_driver_errors_total\{kind="nvrm_oom"\} 22' "serve --kmsg: the counts in the exposition"
	stop_serve
else
	_report 1 "serve --kmsg starts"
fi
done_testing
