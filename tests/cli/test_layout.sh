#!/bin/sh
# SPDX-License-Identifier: MIT
# docs/ARCHITECTURE.md's layout table names every source file in its
# folder's row: a file added without a word on what it does fails here.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
DOC="$top/docs/ARCHITECTURE.md"
missing=""
n=0
for f in "$top"/src/*/*.c "$top"/src/*/*.S; do
	[ -f "$f" ] || continue
	d=$(basename "$(dirname "$f")")
	b=$(basename "$f")
	n=$((n + 1))
	row=$(grep -F "| \`src/$d/\` |" "$DOC")
	printf '%s\n' "$row" | grep -qE "(^|[ \`(+,])$(printf '%s' "$b" | sed 's/\./\\./g')([ \`),:;]|$)" ||
		missing="$missing src/$d/$b"
done
[ -z "$missing" ] && [ "$n" -gt 50 ]
_report $? "ARCHITECTURE's layout table names all $n source files${missing:+ (missing:$missing)}"
grep -qF '| `src/main.c` |' "$DOC"
_report $? "and src/main.c"
done_testing
