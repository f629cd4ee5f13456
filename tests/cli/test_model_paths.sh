#!/bin/sh
# SPDX-License-Identifier: MIT
# A model folder cannot make root read outside it: a weight map that reaches
# a file through a symbolic link to another folder (s -> /etc) is refused
# before a byte of the target is read.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS

m="$TMP/model"
mkdir -p "$m" "$TMP/elsewhere"
cp "$FIX/models/bad-index-escape/config.json" "$m/"
printf 'SECRET-NOT-A-HEADER' >"$TMP/elsewhere/shadow.safetensors"
ln -s "$TMP/elsewhere" "$m/s"
cat >"$m/model.safetensors.index.json" <<'JSON'
{"weight_map": {"model.embed_tokens.weight": "s/shadow.safetensors"}}
JSON
run $S plan "$m" --budget 100GiB
expect_rc 2 "a weight map through a symlinked subfolder is refused"
expect_err "shadow.safetensors': resolves outside the model folder" "the shard and the reason are named"
! grep -q SECRET "$ERR" "$OUT"
_report $? "no byte of the target is shown"

# a symlink inside the folder that stays inside is fine
m2="$TMP/model2"
cp -r "$FIX/models/gemma-3-4b" "$m2" 2>/dev/null || cp -r "$(ls -d "$FIX"/models/*/ | head -1)" "$m2"
mkdir -p "$m2/sub"
for f in "$m2"/*.safetensors; do
	[ -f "$f" ] || continue
	b=$(basename "$f"); mv "$f" "$m2/sub/$b"; ln -s "sub/$b" "$m2/$b"
done
run $S plan "$m2" --budget 100GiB
[ "$RC" -le 1 ]
_report $? "links that stay inside the folder are followed"
done_testing
