# SPDX-License-Identifier: MIT
# strip(s): the C source line s with its comments removed; string and
# character literals are kept whole (a "/*" inside one is not a comment).
# Block comments may span lines: the state is the global inblk, which the
# caller resets at each file's first line (FNR == 1 { inblk = 0 }).
# Shared by scripts/check-layers.sh and scripts/check-writes.sh, which put
# it in front of their own awk program.
function strip(s,    out, i, c, n, q) {
	out = ""; n = length(s); i = 1
	while (i <= n) {
		c = substr(s, i, 1)
		if (inblk) {
			if (substr(s, i, 2) == "*/") { inblk = 0; i += 2 } else i++
			continue
		}
		if (substr(s, i, 2) == "/*") { inblk = 1; i += 2; continue }
		if (substr(s, i, 2) == "//") break
		if (c == "\"" || c == "\047") {
			q = c; out = out c; i++
			while (i <= n) {
				c = substr(s, i, 1); out = out c; i++
				if (c == "\\") { out = out substr(s, i, 1); i++; continue }
				if (c == q) break
			}
			continue
		}
		out = out c; i++
	}
	return out
}
