#!/bin/sh
# SPDX-License-Identifier: MIT
# Text from the machine never drives the terminal: a process that names
# itself with escape sequences, a hostile hwmon label, a GGUF whose name
# holds escapes are printed without a control byte.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
ESC=$(printf '\033')
BEL=$(printf '\007')

# a copy of the loaded fixture with a 3 GiB process named "\e]0;PWNED\a\e[2J"
root="$TMP/root"
cp -r "$FIX/gb10-loaded" "$root"
mkdir -p "$root/proc/4242"
printf '\033]0;PWNED\007\033[2J\n' >"$root/proc/4242/comm"
printf 'evil\0' >"$root/proc/4242/cmdline"
echo "786432 786432 0 0 0 0 0" >"$root/proc/4242/statm"
hw=$(ls -d "$root"/sys/class/hwmon/hwmon* 2>/dev/null | head -1)
[ -n "$hw" ] && printf 'x\033[31mRED\n' >"$hw/name"

run $S status --min-rss 1GiB --procfs "$root/proc" --sysfs "$root/sys"
[ "$RC" -le 1 ]
_report $? "status on a tree with a hostile process name answers"
grep -q 'PWNED' "$OUT"
_report $? "the process is listed"
! grep -q "$ESC" "$OUT" && ! grep -q "$BEL" "$OUT" && ! grep -q "$ESC" "$ERR"
_report $? "no escape or bell byte reaches the terminal"
grep -q '?]0;PWNED??\[2J' "$OUT"
_report $? "the control bytes are shown as '?'"

run $S status --json --min-rss 1GiB --procfs "$root/proc" --sysfs "$root/sys"
! grep -q "$ESC" "$OUT"
_report $? "JSON carries no raw escape either"

# a message quoting a hostile string (a missing model named with escapes)
run $S plan "$(printf 'no\033[2Jmodel')" --budget 100GiB
expect_rc 2 "an unknown model with escapes in its name is a usage error"
! grep -q "$ESC" "$ERR"
_report $? "the error names it without the escape"
done_testing
