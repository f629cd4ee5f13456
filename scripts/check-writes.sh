#!/bin/sh
# SPDX-License-Identifier: MIT
# One door for every file sparkops creates, writes or truncates (issue 24),
# checked (make layers, part of make check):
#
#   Outside src/util/fileio.c (the door: sp_out_open, sp_out_replace,
#   sp_write_output), a call of open, openat, openat2, creat, fopen, freopen,
#   fdopen or sp_open_proc that opens for writing is a finding: flags with
#   O_WRONLY, O_RDWR, O_CREAT, O_TRUNC or O_APPEND (the call's statement,
#   up to its ';', may span lines), any creat(), an fopen/freopen/fdopen
#   whose mode holds w, a or + (or is not a string literal). Comments and
#   prose in strings are not findings.
#
#   Allowed (the list below, one "FILE FUNCTION" a line, each with why):
#   the kernel-file writers in src/probe/, which write fixed files under the
#   procfs root (never a path a user names as an output).
#
# Usage: scripts/check-writes.sh [TOP]   (TOP: the tree holding src/; default: this repository)
# Prints FILE:LINE: what, for every finding, and exits 1 when there is any.
here=$(cd "$(dirname "$0")" && pwd)
top=${1:-$(cd "$here/.." && pwd)}
# strip(): a C line without its comments (shared with the other checker)
strip_awk=$(cat "$here/strip-c.awk") || exit 2
cd "$top" || exit 2
[ -d src ] || { echo "check-writes: no src/ under $top" >&2; exit 2; }

# FILE FUNCTION   why the write is not a user's output
ALLOW='
src/probe/sysctl.c sp_procsys_open_write  the one opener of <procfs>/sys/vm/*: drop_caches, compact_memory, a vm sysctl restored
src/probe/psi.c sp_psi_trigger_open        a PSI trigger: <procfs>/pressure/memory opened O_RDWR to arm it
src/probe/harden.c lower_own_oom_score     writes our own /proc/self/oom_score_adj
'

files=$(find src -name '*.[ch]' -type f ! -path src/util/fileio.c | LC_ALL=C sort)
[ -n "$files" ] || { echo "check-writes: no sources under $top/src" >&2; exit 2; }

# shellcheck disable=SC2086
printf '%s\n' "$ALLOW" | awk "$strip_awk"'
# a finding unless FILE FUNCTION is allowed
function finding(file, ln, what) {
	if ((file " " fn) in allow) { used[file " " fn] = 1; return }
	printf "%s:%d: %s outside src/util/fileio.c (the one door: sp_out_open, sp_write_output)\n", file, ln, what
	bad++
}
function judge(stmt, file, ln,    call, mode, s2) {
	s2 = stmt
	gsub(/"([^"\\]|\\.)*"/, "\"\"", s2) # flags are never in strings
	if (match(s2, /(^|[^A-Za-z0-9_])creat[ \t]*\(/)) { finding(file, ln, "creat()"); return }
	if (match(s2, /(^|[^A-Za-z0-9_])(open|openat|openat2|sp_open_proc)[ \t]*\(/)) {
		call = substr(s2, RSTART, RLENGTH); sub(/^[^A-Za-z_]/, "", call); sub(/[ \t]*\($/, "", call)
		if (s2 ~ /O_(WRONLY|RDWR|CREAT|TRUNC|APPEND)/)
			finding(file, ln, call "() for writing")
		return
	}
	if (match(s2, /(^|[^A-Za-z0-9_])(fopen|freopen|fdopen)[ \t]*\(/)) {
		call = substr(s2, RSTART, RLENGTH); sub(/^[^A-Za-z_]/, "", call); sub(/[ \t]*\($/, "", call)
		# the mode: the string literal after the first comma of the call
		mode = substr(stmt, index(stmt, call "("))
		if (match(mode, /,[ \t]*"[^"]*"/)) {
			mode = substr(mode, RSTART, RLENGTH); sub(/^,[ \t]*"/, "", mode); sub(/"$/, "", mode)
			if (mode ~ /[wa+]/)
				finding(file, ln, call "(\"" mode "\")")
		} else {
			finding(file, ln, call "() with a mode that is not a literal")
		}
	}
}
NR == FNR {
	if (NF >= 2) { allow[$1 " " $2] = 1; allowed_n++ }
	next
}
FNR == 1 { inblk = 0; fn = ""; pend = ""; pend_ln = 0 }
{
	raw = $0
	line = strip(raw)
	# the function a line is in: a definition starts at column 0
	if (raw ~ /^[A-Za-z_][A-Za-z0-9_ \t\*]*[ \t\*]([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(/ && raw !~ /;[ \t]*$/) {
		h = raw; sub(/[ \t]*\(.*/, "", h); sub(/.*[ \t\*]/, "", h); fn = h
	}
	if (pend != "") {
		pend = pend " " line
		if (index(line, ";") || ++pend_n > 6) { judge(pend, FILENAME, pend_ln); pend = "" }
		next
	}
	if (line ~ /(^|[^A-Za-z0-9_])(open|openat|openat2|sp_open_proc|creat|fopen|freopen|fdopen)[ \t]*\(/) {
		if (index(line, ";") || line ~ /\)[ \t]*(\{|<|>|=|\)|&&|\|\|)/) judge(line, FILENAME, FNR)
		else { pend = line; pend_ln = FNR; pend_n = 0 }
	} else {
		# write flags kept in a variable for a later open: the same finding
		s3 = line
		gsub(/"([^"\\]|\\.)*"/, "\"\"", s3)
		if (s3 ~ /(^|[^A-Za-z0-9_])O_(WRONLY|RDWR|CREAT|TRUNC)([^A-Za-z0-9_]|$)/ && s3 !~ /O_ACCMODE/)
			finding(FILENAME, FNR, "open flags for writing kept for a later open")
	}
}
END {
	for (k in allow) if (!(k in used)) {
		printf "check-writes: allow-list entry \"%s\" matches no write: remove it\n", k; bad++
	}
	if (bad) { printf "check-writes: %d finding%s\n", bad, bad == 1 ? "" : "s"; exit 1 }
}
' - $files
