#!/bin/sh
# SPDX-License-Identifier: MIT
# The longest functions and files in src/ (scripts/longest.sh [N], default
# 10): a function's lines run from the line that names it to its closing
# brace (comments and literals are stripped before braces are counted, by
# scripts/strip-c.awk); a file's are all its lines. Exit 1 when a function
# is over 120 lines or a file over 1,000 (issue #25's limits).
cd "$(dirname "$0")/.." || exit 2
N=${1:-10}
strip_awk=$(cat scripts/strip-c.awk) || exit 2
files=$(find src -name '*.c' -o -name '*.h' | sort)
tmp=$(mktemp) || exit 2
trap 'rm -f "$tmp"' EXIT
# shellcheck disable=SC2086 # the file names have no spaces
awk "$strip_awk"'
FNR == 1 { inblk = 0; depth = 0; sig = 0; start = 0 }
{
	s = strip($0)
	gsub(/"([^"\\]|\\.)*"/, "\"\"", s)
	gsub(/\047([^\047\\]|\\.)*\047/, "0", s)
	if (depth == 0 && s ~ /^[A-Za-z_].*\(/ && s !~ /;[ \t]*$/) {
		sig = FNR; name = s; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
	}
	if (depth == 0 && s ~ /^\{/ && sig) { start = sig; fn = name }
	o = gsub(/\{/, "{", s); c = gsub(/\}/, "}", s)
	depth += o - c
	if (start && depth == 0 && c) {
		printf "%d %s:%d %s\n", FNR - start + 1, FILENAME, start, fn
		start = 0; sig = 0
	}
	if (depth == 0 && s ~ /;[ \t]*$/) sig = 0
}' $files | sort -k1,1nr -k2 >"$tmp" || exit 2
echo "== the $N longest functions in src/ (lines, file:line, name) of $(wc -l <"$tmp")"
head -n "$N" "$tmp"
over_f=$(awk '$1 > 120' "$tmp" | wc -l)
echo "== the $N longest files in src/ (lines)"
# shellcheck disable=SC2086
wc -l $files | grep -v ' total$' | sort -k1,1nr -k2 | head -n "$N"
# shellcheck disable=SC2086
over_l=$(wc -l $files | grep -v ' total$' | awk '$1 > 1000' | wc -l)
echo "functions over 120 lines: $over_f; files over 1000 lines: $over_l"
[ "$over_f" = 0 ] && [ "$over_l" = 0 ]
