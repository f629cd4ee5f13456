#!/bin/sh
# SPDX-License-Identifier: MIT
# The layers of src/, checked (make layers, part of make check):
#
#  (a) #include edges go one way, down. Each folder has a rank:
#
#        util    0   roots, units, bounded file I/O, messages, jansson helpers, clocks
#        probe   1   everything that reads (or writes) /proc, /sys, /dev/kmsg, NVML
#        model   1   model file readers (headers only)
#        watch   2   the run/watch pieces (attribution, guard, CSV log, summary)
#        ladder  2   the OOM ladder
#        account 2   the plan's arithmetic
#        out     3   output shared by commands: JSON pieces, Prometheus, the report's chart/SVG
#                    (above the engines: it renders their types, a log row, a summary, a cause)
#        engine  4   the run/watch engine: the loop, the relay, the guard thread, the
#                    metrics endpoint; it composes watch/ pieces and out/ renderers
#        cmd     5   one file per command
#        main.c  6   the dispatcher
#
#      A file may include headers of its own folder, or of a folder with a
#      strictly lower rank; anything else (up, or sideways between two folders
#      of one rank) is a finding. A folder missing from the table is one too.
#
#      A folder's private header (NAME_int.h, NAME_internal.h: the insides
#      its files share, engine/engine_int.h) is included by that folder's
#      files only; from any other folder it is a finding.
#
#  (b) Only src/probe/ names machine paths. Anywhere else these are findings:
#      a string literal that is a path under /proc, /sys or /dev/kmsg (it
#      starts with "/proc", "/sys/" or "/dev/kmsg", or holds "%s/proc",
#      "%s/sys/" or "%s/dev/kmsg": a root printed in front of one), and a call
#      of the root helpers sp_proc_path() / sp_sys_path(). Prose that mentions
#      a path to people ("sync; echo 3 > /proc/sys/vm/drop_caches" in advice or
#      --help) and comments are fine. Allowed: src/util/paths.c, which holds
#      the default roots ("/proc", "/sys") that --procfs/--sysfs replace, and
#      src/util/paths.h, which declares the helpers, and a line marked with
#      the comment "layers: a user's path" (the output path code recognising
#      /proc/self/fd/N or a /proc magic link that a user named: no read of the
#      machine).
#
# Usage: scripts/check-layers.sh [TOP]   (TOP: the tree holding src/; default: this repository)
# Prints FILE:LINE: what, for every finding, and exits 1 when there is any.
here=$(cd "$(dirname "$0")" && pwd)
top=${1:-$(cd "$here/.." && pwd)}
# strip(): a C line without its comments (shared with the other checker)
strip_awk=$(cat "$here/strip-c.awk") || exit 2
cd "$top" || exit 2
[ -d src ] || { echo "check-layers: no src/ under $top" >&2; exit 2; }

files=$(find src -name '*.[ch]' -type f | LC_ALL=C sort)
[ -n "$files" ] || { echo "check-layers: no sources under $top/src" >&2; exit 2; }

# shellcheck disable=SC2086
awk "$strip_awk"'
function rank(f) {
	if (f == "util") return 0
	if (f == "probe" || f == "model") return 1
	if (f == "watch" || f == "ladder" || f == "account") return 2
	if (f == "out") return 3
	if (f == "engine") return 4
	if (f == "cmd") return 5
	if (f == "main.c") return 6
	return -1
}
FNR == 1 {
	inblk = 0
	n = split(FILENAME, p, "/")
	from = (n == 2) ? p[2] : p[2]          # src/main.c -> main.c; src/cmd/x.c -> cmd
	fr = rank(from)
	if (fr < 0) { printf "%s:1: folder %s has no rank in scripts/check-layers.sh\n", FILENAME, from; bad++ }
	inprobe = (from == "probe")
	allowed = (FILENAME == "src/util/paths.c" || FILENAME == "src/util/paths.h")
}
{
	line = strip($0)
	if (match(line, /^[ \t]*#[ \t]*include[ \t]*"[^"]*"/)) {
		inc = substr(line, RSTART, RLENGTH); sub(/^[^"]*"/, "", inc); sub(/"$/, "", inc)
		if (index(inc, "/") > 0) {
			to = substr(inc, 1, index(inc, "/") - 1)
			tr = rank(to)
			if (to != from) {
				if (inc ~ /_int(ernal)?\.h$/) {
					printf "%s:%d: include \"%s\": the private header of %s/, from %s\n", FILENAME, FNR, inc,
						to, from; bad++
				} else if (tr < 0) {
					printf "%s:%d: include \"%s\": folder %s has no rank\n", FILENAME, FNR, inc, to; bad++
				} else if (fr >= 0 && fr <= tr) {
					printf "%s:%d: include \"%s\": %s (rank %d) -> %s (rank %d) goes %s\n", FILENAME, FNR, inc,
						from, fr, to, tr, fr == tr ? "sideways" : "up"; bad++
				}
			}
		}
		next
	}
	if (inprobe || allowed) next
	if ($0 ~ /layers: a user.s path/) next
	rest = line
	while (match(rest, /"([^"\\]|\\.)*"/)) {
		lit = substr(rest, RSTART, RLENGTH); rest = substr(rest, RSTART + RLENGTH)
		if (lit ~ /^"\/(proc|sys\/|dev\/kmsg)/ || lit ~ /%s\/(proc|sys\/|dev\/kmsg)/) {
			printf "%s:%d: machine path %s outside src/probe/\n", FILENAME, FNR, lit; bad++
		}
	}
	gsub(/"([^"\\]|\\.)*"/, "\"\"", line)
	if (match(line, /(^|[^A-Za-z0-9_])sp_(proc|sys)_path[ \t]*\(/)) {
		printf "%s:%d: sp_proc_path/sp_sys_path outside src/probe/\n", FILENAME, FNR; bad++
	}
}
END {
	if (bad) { printf "check-layers: %d finding%s\n", bad, bad == 1 ? "" : "s"; exit 1 }
}
' $files
