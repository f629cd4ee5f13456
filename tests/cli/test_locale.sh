#!/bin/sh
# SPDX-License-Identifier: MIT
# Numbers are read in the C locale whatever the user's locale says: top under
# a decimal-comma locale (de_DE.UTF-8, generated here with localedef into a
# private LOCPATH) still reads PSI "avg10=4.20" and shows the running figures.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
LOADED="--procfs $FIX/gb10-loaded/proc --sysfs $FIX/gb10-loaded/sys"
cd "$TMP" || exit 2

mkdir -p "$TMP/loc"
if ! command -v tmux >/dev/null 2>&1 || ! command -v localedef >/dev/null 2>&1 ||
	! localedef -i de_DE -f UTF-8 "$TMP/loc/de_DE.UTF-8" >/dev/null 2>&1; then
	skip_case "top under de_DE.UTF-8" "tmux or the locales package (localedef, de_DE) is missing"
	done_testing
	exit $?
fi
# the generated locale really has a decimal comma (else the case proves nothing)
[ "$(LOCPATH=$TMP/loc LC_ALL=de_DE.UTF-8 locale decimal_point 2>/dev/null)" = "," ]
_report $? "the generated de_DE.UTF-8 locale has a decimal comma"

SOCK="$TMP/tmux.sock"
tm() { tmux -S "$SOCK" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
mkdir -p "$TMP/rt"
tm new-session -d -s de -x 100 -y 30 \
	"env -u NO_COLOR -u LANG LOCPATH=$TMP/loc LC_ALL=de_DE.UTF-8 TERM=screen-256color XDG_RUNTIME_DIR=$TMP/rt \
SPARKOPS_NVML_LIB=$FAKE_NVML $S top --interval 0.2 $LOADED; sleep 600"
i=0
while [ $i -lt 100 ]; do
	tm capture-pane -p -t de >"$OUT"
	grep -q 'PROCESSES' "$OUT" && break
	sleep 0.1
	i=$((i + 1))
done
sleep 0.5
tm capture-pane -p -t de >"$OUT"
expect_out "PSI  memory 4\.2/1\.1%" "top under de_DE.UTF-8 reads PSI's decimal points (not malformed)"
expect_no_out "malformed" "no reading is called malformed under a comma locale"
tm kill-server 2>/dev/null
done_testing
