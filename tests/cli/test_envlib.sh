#!/bin/sh
# SPDX-License-Identifier: MIT
# As root, a library named by the environment (SPARKOPS_NVML_LIB,
# SPARKOPS_MHD_LIB) is loaded only when root owns the file and its folder and
# neither is writable by group or others; otherwise one warning line and the
# default library. Not root: loaded as named.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
SC="$(cd "$(dirname "$0")/../fake-nvml/scenarios" && pwd)"
NOGPU="--procfs $FIX/no-gpu/proc --sysfs $FIX/no-gpu/sys"
if [ "$(id -u)" != 0 ]; then
	skip_case "env-named libraries as root" "needs root"
	done_testing
	exit $?
fi
chmod 755 "$TMP"
mkdir "$TMP/ok" "$TMP/nobody" "$TMP/ww" "$TMP/gw"
cp "$FAKE_NVML" "$TMP/ok/libnv.so"
cp "$FAKE_NVML" "$TMP/nobody/libnv.so"
chown -R nobody "$TMP/nobody"
cp "$FAKE_NVML" "$TMP/ww/libnv.so"
chmod 777 "$TMP/ww"
cp "$FAKE_NVML" "$TMP/gw/libnv.so"
chmod 664 "$TMP/gw/libnv.so"
ln -s "$TMP/nobody/libnv.so" "$TMP/ok/link.so"

G="env FAKE_NVML_SCENARIO=$SC/gb10.scn"
run $G SPARKOPS_NVML_LIB="$TMP/ok/libnv.so" $S status $NOGPU --json
expect_jq '.gpu_status == "ok"' "root-owned library in a root-owned folder: loaded"
[ ! -s "$ERR" ]
_report $? "... without a warning"
for c in "nobody/libnv.so:owned by uid" "ww/libnv.so:writable by group or others" \
	"gw/libnv.so:writable by group or others" "ok/link.so:owned by uid"; do
	f=${c%%:*}
	why=${c#*:}
	run $G SPARKOPS_NVML_LIB="$TMP/$f" $S status $NOGPU --json
	expect_rc 0 "SPARKOPS_NVML_LIB=$f as root: status still answers"
	expect_jq '.gpu_status != "ok"' "SPARKOPS_NVML_LIB=$f as root: the fake library is not loaded"
	expect_err "^sparkops: .*SPARKOPS_NVML_LIB: not loaded as root \(.*$why.*\): the default library is used" \
		"SPARKOPS_NVML_LIB=$f: one warning says why ($why)"
	[ "$(wc -l <"$ERR")" = 1 ]
	_report $? "SPARKOPS_NVML_LIB=$f: one line"
done
# not root: the same library in the same folder is loaded (the user's own choice)
if command -v setpriv >/dev/null 2>&1; then
	run setpriv --reuid=nobody --regid=nogroup --clear-groups env $G SPARKOPS_NVML_LIB="$TMP/nobody/libnv.so" \
		$S status $NOGPU --json
	expect_jq '.gpu_status == "ok"' "as nobody, nobody's own library is loaded"
fi

# libmicrohttpd: a library in a folder nobody owns is not loaded; serve uses the system's
JAN=$(ldconfig -p | awk '/libjansson\.so\.4 / {print $NF; exit}')
if [ -n "$JAN" ]; then
	cp "$JAN" "$TMP/nobody/libmhd.so"
	chown nobody "$TMP/nobody/libmhd.so"
	run env SPARKOPS_MHD_LIB="$TMP/nobody/libmhd.so" timeout 2 $S serve --listen 127.0.0.1:0 $NOGPU
	expect_err "SPARKOPS_MHD_LIB: not loaded as root \(.*owned by uid" "SPARKOPS_MHD_LIB in a folder nobody owns: a warning"
	expect_no_out "too old" "... and the library is not loaded (no 'too old')"
	! grep -q "too old" "$ERR"
	_report $? "... serve does not report the planted library's symbols missing"
else
	skip_case "SPARKOPS_MHD_LIB as root" "libjansson.so.4 not found by ldconfig"
fi
done_testing
