#!/bin/sh
# SPDX-License-Identifier: MIT
# Docs stay true to the code: every command is in the man page, every long
# option a command's --help lists is documented there, the page renders
# without warnings, and make install puts binary and page in place.
. "$(dirname "$0")/lib.sh"
MAN="$BUILD_DIR/sparkops.1"
top=$(cd "$(dirname "$0")/../.." && pwd)

run groff -man -ww -z "$MAN"
[ "$RC" = 0 ] && [ ! -s "$ERR" ]
_report $? "man page renders without warnings"

cmds=$($SPARKOPS --help | awk '/^commands:/{on=1;next} on && /^   [a-z]/{print $1}')
[ -n "$cmds" ]
_report $? "--help lists commands"
for c in $cmds; do
	grep -q "^\.SS \"sparkops $c" "$MAN"
	_report $? "man page has a section for '$c'"
	run $SPARKOPS $c --help
	expect_rc 0 "$c --help exits 0"
	for o in $(grep -oE -- '--[a-z][a-z0-9-]+' "$OUT" | sort -u); do
		case "$o" in --help|--procfs|--sysfs) continue ;; esac
		# roff escapes dashes: --reserve is written \-\-reserve
		esc=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
		grep -q -- "$esc" "$MAN" || grep -q -- "$o" "$MAN"
		_report $? "man page documents '$c $o'"
	done
done

# the option table is the truth: every option a command's table declares
# (--sparkops-options lists them) is in its --help and in the man page, and
# the top level's --procfs/--sysfs go through the same table
for c in $cmds; do
	run $SPARKOPS $c --sparkops-options
	expect_rc 0 "$c --sparkops-options exits 0"
	cp "$OUT" "$TMP/opts"
	[ -s "$TMP/opts" ]
	_report $? "$c: its option table is not empty"
	$SPARKOPS $c --help >"$TMP/help" 2>&1
	while read -r o _; do
		case "$o" in --help|--procfs|--sysfs) continue ;; esac
		grep -q -- "$o" "$TMP/help"
		_report $? "$c --help lists '$o' from its table"
		esc=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
		grep -q -- "$esc" "$MAN" || grep -q -- "$o" "$MAN"
		_report $? "man page documents '$c $o' (from the table)"
	done <"$TMP/opts"
done
run $SPARKOPS --procfsXYZ /x status
expect_rc 2 "the top level refuses --procfsXYZ (not taken for --procfs)"

dest="$TMP/dest"
make -s -C "$top" BUILD="${BUILD_DIR#$top/}" DESTDIR="$dest" PREFIX=/usr install >/dev/null 2>&1
[ -x "$dest/usr/bin/sparkops" ] && [ -f "$dest/usr/share/man/man1/sparkops.1" ]
_report $? "make install honours DESTDIR and PREFIX"

grep -q 'make run' "$top/README.md" && grep -q 'make check' "$top/README.md"
_report $? "README shows the two commands"
done_testing
