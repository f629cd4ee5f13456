#!/bin/sh
# SPDX-License-Identifier: MIT
# make deb's packager (scripts/mkdeb.sh): the .deb holds the binary, the man
# page, the systemd unit (pointed at /usr/bin) and the Prometheus/Grafana
# files, and its control file names the dependencies.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v dpkg-deb >/dev/null 2>&1; then
	echo "# skipped: dpkg-deb not found"
	done_testing
	exit 0
fi
: "${BUILD_DIR:?run through scripts/run-tests.sh}"
V=$(sed -n 's/^VERSION *:= *//p' "$top/Makefile")
A=$(dpkg --print-architecture)
B="$TMP/build"
mkdir -p "$B"
cp "$BUILD_DIR/sparkops" "$BUILD_DIR/sparkops.1" "$B/"
run "$top/scripts/mkdeb.sh" "$B" "$A" "$V"
expect_rc 0 "mkdeb.sh builds a package"
D="$B/sparkops_${V}_${A}.deb"
[ -f "$D" ]
_report $? "named sparkops_${V}_${A}.deb"
run dpkg-deb -c "$D"
expect_rc 0 "dpkg-deb -c reads it"
expect_out '^-rwxr-xr-x root/root .* \./usr/bin/sparkops$' "/usr/bin/sparkops, 0755, root-owned"
expect_out ' \./usr/share/man/man1/sparkops\.1\.gz$' "the man page"
expect_out ' \./lib/systemd/system/sparkops\.service$' "the systemd unit"
expect_out ' \./usr/share/sparkops/prometheus/prometheus\.yml$' "the Prometheus scrape config"
expect_out ' \./usr/share/sparkops/prometheus/alerts\.yml$' "the alert rules"
expect_out ' \./usr/share/sparkops/grafana/sparkops\.json$' "the Grafana dashboard"
expect_no_out 'deb-root|DEBIAN' "no staging paths"
run dpkg-deb -I "$D"
expect_out "^ Package: sparkops$" "control: Package"
expect_out "^ Version: $V$" "control: Version $V"
expect_out "^ Architecture: $A$" "control: Architecture $A"
expect_out '^ Depends: .*libjansson4' "control: Depends on libjansson4"
expect_out '^ Recommends: libmicrohttpd12' "control: Recommends libmicrohttpd12"
run dpkg-deb --fsys-tarfile "$D"
tar -xOf "$OUT" ./lib/systemd/system/sparkops.service >"$TMP/unit" 2>/dev/null
grep -q '^ExecStart=/usr/bin/sparkops serve' "$TMP/unit"
_report $? "the packaged unit starts /usr/bin/sparkops"
tar -xOf "$OUT" ./usr/bin/sparkops >"$TMP/bin" 2>/dev/null
cmp -s "$TMP/bin" "$BUILD_DIR/sparkops"
_report $? "the packaged binary is the one built"
run "$top/scripts/mkdeb.sh" "$TMP/nothing" "$A" "$V"
expect_rc 1 "a build folder without a binary is refused"
expect_err 'sparkops missing' "and says what is missing"
done_testing
