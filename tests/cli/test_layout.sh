#!/bin/sh
# SPDX-License-Identifier: MIT
# docs/ARCHITECTURE.md's layout table names every source file in its
# folder's row: a file added without a word on what it does fails here.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
DOC="$top/docs/ARCHITECTURE.md"
# every file as "folder name", then one awk against the folders' rows
for f in "$top"/src/*/*.c "$top"/src/*/*.S; do
	[ -f "$f" ] || continue
	rel=${f#"$top"/src/}
	echo "${rel%%/*} ${rel#*/}"
done >"$TMP/files"
n=$(wc -l <"$TMP/files")
missing=$(awk -v doc="$DOC" 'BEGIN { while ((getline l < doc) > 0) rows[++nr] = l }
	{
		d = $1; b = $2; row = ""
		for (i = 1; i <= nr; i++)
			if (index(rows[i], "| `src/" d "/` |")) row = row rows[i] "\n"
		re = b; gsub(/\./, "\\.", re)
		re = "(^|[ `(+,])" re "([ `),:;]|$)"
		ok = 0; k = split(row, r, "\n")
		for (i = 1; i <= k; i++) if (r[i] != "" && r[i] ~ re) ok = 1
		if (!ok) printf " src/%s/%s", d, b
	}' "$TMP/files")
[ -z "$missing" ] && [ "$n" -gt 50 ]
_report $? "ARCHITECTURE's layout table names all $n source files${missing:+ (missing:$missing)}"
grep -qF '| `src/main.c` |' "$DOC"
_report $? "and src/main.c"
done_testing
