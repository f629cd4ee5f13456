#!/bin/sh
# SPDX-License-Identifier: MIT
# The ladder on the field's own logs: every log in tests/fixtures/oomlogs/field
# was copied verbatim from a public issue thread or forum post (cases.tsv names
# each one's URL). Each is read by `sparkops ladder --log FILE --json` on a
# fixed machine (gb10-idle) and its kind, phase, engine and first action are
# compared with the TSV. Misses are listed (# miss: ...); the hit rate is
# printed by engine and by split; the file fails under 95% overall (a case is
# a hit when all four agree). docs/ladder.md "The field corpus" says what each
# column means and how the held-out split scored.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
DIR=$FIX/oomlogs/field
TSV=$DIR/cases.tsv
export XDG_STATE_HOME="$TMP/state"
ROOTS=$(sysroot gb10-idle)
: >"$OUT"
: >"$ERR"

# the first action, from the JSON: none (not a memory failure: exit 3, or no
# memory failure named), flush / flush_compact (rung 1, compact_memory in
# its change), weights (rungs 1 and 2 skipped: the weights alone are larger
# than the pool), knob (rung 1 skipped and a killer's own knob named before
# the next rung), else rungN
ACT='def act: if .failure == "unknown" or .log.not_memory == true then "none"
	elif .next_rung == 1 then (if (.change | test("compact_memory")) then "flush_compact" else "flush" end)
	elif ([.skipped[] | select(.reason | test("weights alone|weights .*more than the whole pool"))] | length) > 0 then "weights"
	elif .log.killer_threshold == true and ([.skipped[].rung] | index(1)) != null and .before_next_rung != null then "knob"
	else "rung\(.next_rung)" end;
	[.failure, .phase, (.log.engine // "unknown"), act] | @tsv'

n=0; hit=0; bad_rows=0
: >"$TMP/tally"
: >"$TMP/misses"
# shellcheck disable=SC2034 # platform is read to keep the columns in place
while IFS='	' read -r file url split kind phase engine action platform; do
	case "$file" in '' | '#'*) continue ;; esac
	if [ ! -f "$DIR/$file" ] || [ -z "$url" ] || { [ "$split" != A ] && [ "$split" != B ]; }; then
		bad_rows=$((bad_rows + 1))
		echo "# bad row: $file ($url, split '$split')"
		continue
	fi
	"$S" ladder $ROOTS --job "field-$n" --reset --json --log "$DIR/$file" >"$TMP/j" 2>"$TMP/e"
	rc=$?
	got=$(jq -r "$ACT" "$TMP/j" 2>/dev/null)
	[ "$rc" = 3 ] && got=$(printf '%s\t%s\t%s\tnone' "$(jq -r .failure "$TMP/j" 2>/dev/null || echo unknown)" \
		"$(jq -r .phase "$TMP/j" 2>/dev/null || echo unknown)" "$(jq -r '.log.engine // "unknown"' "$TMP/j" 2>/dev/null || echo unknown)")
	want=$(printf '%s\t%s\t%s\t%s' "$kind" "$phase" "$engine" "$action")
	n=$((n + 1))
	ok=0
	if [ "$got" = "$want" ]; then
		ok=1
		hit=$((hit + 1))
	else
		echo "$file: want $want, got $got (exit $rc)" | tr '\t' '/' >>"$TMP/misses"
	fi
	printf '%s %s %s\n' "$engine" "$split" "$ok" >>"$TMP/tally"
done <"$TSV"

sed 's/^/# miss: /' "$TMP/misses"
echo "# field corpus: $hit of $n logs right (kind, phase, engine and first action)"
awk '{ e[$1]++; h[$1] += $3; s[$2]++; hs[$2] += $3 }
	END { for (k in e) printf "# engine %-9s %3d of %3d\n", k, h[k], e[k]
	      for (k in s) printf "# split %s %3d of %3d\n", k, hs[k], s[k] }' "$TMP/tally" | sort

# the corpus itself: its size and its spread (the issue's floor)
[ "$bad_rows" = 0 ]
_report $? "every row names an existing log, a source URL and a split"
[ "$n" -ge 60 ]
_report $? "at least 60 field logs ($n)"
unified=$(awk -F'\t' '$8 ~ /gb10|jetson|grace/' "$TSV" | wc -l)
[ "$unified" -ge 10 ]
_report $? "at least 10 from unified-memory machines (DGX Spark / GB10 / Grace / Jetson: $unified)"
notmem=$(awk -F'\t' '$7 == "none"' "$TSV" | wc -l)
[ "$notmem" -ge 8 ]
_report $? "at least 8 that are not memory failures ($notmem)"
for e in vllm sglang llamacpp ollama unknown; do
	c=$(awk -F'\t' -v e="$e" '$6 == e' "$TSV" | wc -l)
	[ "$c" -ge 3 ]
	_report $? "engine $e has logs of its own ($c)"
done
# the score: 95% of the corpus, all four right
[ "$n" -gt 0 ] && [ $((hit * 100)) -ge $((n * 95)) ]
_report $? "at least 95% right ($hit of $n)"
done_testing
