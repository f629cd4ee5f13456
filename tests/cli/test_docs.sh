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

# in_man LIST [HELP]: each option of LIST (one a line) and 1 when the man
# page has it (as written, or as roff escapes dashes: \-\-reserve) and,
# given HELP, 1 when that text has it: one awk for a command's options
in_man() {
	awk -v man="$MAN" -v help="${2:-}" 'BEGIN {
		while ((getline l < man) > 0) m = m "\n" l
		if (help != "") while ((getline l < help) > 0) h = h "\n" l
	}
	{
		o = $1; esc = o; gsub(/-/, "\\-", esc)
		printf "%s %d", o, (index(m, o) || index(m, esc)) ? 1 : 0
		if (help != "") printf " %d", index(h, o) ? 1 : 0
		printf "\n"
	}' "$1"
}

cmds=$($SPARKOPS --help | awk '/^commands:/{on=1;next} on && /^   [a-z]/{print $1}')
[ -n "$cmds" ]
_report $? "--help lists commands"
for c in $cmds; do
	grep -q "^\.SS \"sparkops $c" "$MAN"
	_report $? "man page has a section for '$c'"
	run $SPARKOPS $c --help
	expect_rc 0 "$c --help exits 0"
	grep -oE -- '--[a-z][a-z0-9-]+' "$OUT" | sort -u | grep -vxE -- '--(help|procfs|sysfs)' >"$TMP/listed"
	in_man "$TMP/listed" >"$TMP/found"
	while read -r o ok; do
		[ "$ok" = 1 ]
		_report $? "man page documents '$c $o'"
	done <"$TMP/found"
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
	awk '{ print $1 }' "$TMP/opts" | grep -vxE -- '--(help|procfs|sysfs)' >"$TMP/listed"
	in_man "$TMP/listed" "$TMP/help" >"$TMP/found"
	while read -r o ok inhelp; do
		[ "$inhelp" = 1 ]
		_report $? "$c --help lists '$o' from its table"
		[ "$ok" = 1 ]
		_report $? "man page documents '$c $o' (from the table)"
	done <"$TMP/found"
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
