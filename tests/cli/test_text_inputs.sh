#!/bin/sh
# SPDX-License-Identifier: MIT
# Inputs that are not what they claim, refused at once: a text log whose
# first 64 KiB hold no line end or that is NUL bytes (report, ladder --log,
# --training-log, watch --follow: exit 2, "not text"); an event row with an
# absurd unix_time is malformed (never a duration of millions of hours); a
# 100 GiB sparse GGUF whose header claims a 2^33-entry array is refused at
# the header, not read through.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
NONV="env SPARKOPS_NVML_LIB=/nonexistent/libnvidia-ml.so.1"
R="--procfs $FIX/gb10-idle/proc --sysfs $FIX/gb10-idle/sys"
cd "$TMP" || exit 2
export XDG_STATE_HOME="$TMP/state"

# 64 KiB and more without a line end; a short file of NULs
head -c 70000 /dev/zero | tr '\0' 'x' >long.log
head -c 300 /dev/zero >nul.log
for f in long.log nul.log; do
	run $S report $f
	expect_rc 2 "report $f is refused"
	expect_err "^sparkops: '$f': not text \(no line end in the first 64 KiB, or only NUL bytes\)$" "report $f: said as not text"
	run $S ladder --log $f --job t
	expect_rc 2 "ladder --log $f is refused"
	expect_err "not text" "ladder --log $f: said as not text"
	run $S report "$FIX/logs/short.csv" --training-log $f
	expect_rc 2 "report --training-log $f is refused"
	run $NONV $S watch --follow $f --count 1 --interval 0.1 --log /dev/null $R
	expect_rc 2 "watch --follow $f is refused"
	expect_err "^sparkops: --follow '$f': not text" "watch --follow $f: said as not text"
done
# a line end within the first 64 KiB: text (a long first line is still a log line)
{ head -c 60000 /dev/zero | tr '\0' 'x'; echo; } >longline.log
run $S ladder --log longline.log --job t2
[ "$RC" != 2 ] || ! grep -q "not text" "$ERR"
_report $? "a 60 KB first line with its line end is read as text"

# absurd unix_time in an event row
L="$FIX/logs/short.csv"
sed '2s/^\([^,]*\),[^,]*,/\1,-1000000000000000000,/' "$L" >neg.csv
sed '$s/^\([^,]*\),[^,]*,/\1,1000000000000000000,/' "$L" >pos.csv
for f in neg pos; do
	run $S report $f.csv
	expect_rc 2 "report: an event row with unix_time ${f} 1e18 is malformed"
	expect_err "field 'unix_time': '-?1000000000000000000' is not a time" "  the field is named"
	expect_no_out "[0-9]{8,}h" "  no duration of millions of hours"
	run $S report $f.csv --lenient
	! grep -Eq "[0-9]{8,}h" "$OUT"
	_report $? "report --lenient $f.csv: the row is skipped, no absurd duration"
done

# the sparse GGUF: a header that claims 2^33 strings in 100 GiB of zeros
if command -v python3 >/dev/null 2>&1 && truncate -s 100G sparse-test 2>/dev/null; then
	rm -f sparse-test
	python3 - <<'PY'
import struct
def s(x):
    b = x.encode()
    return struct.pack('<Q', len(b)) + b
h = b'GGUF' + struct.pack('<I', 3) + struct.pack('<QQ', 1, 2)
h += s('general.architecture') + struct.pack('<I', 8) + s('llama')
h += s('tokenizer.ggml.tokens') + struct.pack('<I', 9) + struct.pack('<I', 8) + struct.pack('<Q', 1 << 33)
open('huge.gguf', 'wb').write(h)
PY
	truncate -s 100G huge.gguf
	t0=$(date +%s%N)
	run timeout -s KILL 20 $NONV $S plan huge.gguf $R
	ms=$((($(date +%s%N) - t0) / 1000000))
	expect_rc 2 "plan on a 100 GiB sparse GGUF with a 2^33-entry array: refused"
	expect_err "array of 8589934592 elements: more than a GGUF header holds" "  at the header"
	[ $ms -lt 3000 ]
	_report $? "  at once (${ms} ms), not read through"
	# a numeric array of 2^34 entries: the same bound
	python3 - <<'PY'
import struct
def s(x):
    b = x.encode()
    return struct.pack('<Q', len(b)) + b
h = b'GGUF' + struct.pack('<I', 3) + struct.pack('<QQ', 1, 2)
h += s('general.architecture') + struct.pack('<I', 8) + s('llama')
h += s('tokenizer.ggml.scores') + struct.pack('<I', 9) + struct.pack('<I', 0) + struct.pack('<Q', 1 << 34)
open('huge2.gguf', 'wb').write(h)
PY
	truncate -s 100G huge2.gguf
	run timeout -s KILL 20 $NONV $S plan huge2.gguf $R
	expect_rc 2 "a 2^34-entry byte array in a 100 GiB sparse GGUF: refused"
	expect_err "array of 17179869184 elements: more than a GGUF header holds" "  at the header"
	rm -f huge.gguf huge2.gguf
else
	skip_case "the sparse GGUF" "python3 or a sparse 100 GiB file is not available here"
fi
done_testing
