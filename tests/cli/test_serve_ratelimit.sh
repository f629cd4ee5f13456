#!/bin/sh
# SPDX-License-Identifier: MIT
# serve --web-config basic authentication under a flood of wrong passwords:
# per client address, after a few wrong tries the address is answered 429
# with Retry-After at once (no bcrypt run for it), growing 1, 2, 4 ... s; a
# right password from another address is answered promptly during the
# flood; a right password clears its own address. Loopback only
# (127.0.0.1 floods, 127.0.0.2 is the other client); every loop bounded.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
S=$SPARKOPS
if ! command -v curl >/dev/null 2>&1; then
	skip_case "serve's password rate limit" "curl is not installed"
	done_testing
	exit $?
fi
BCRYPT="$TMP/bcrypt"
${CC:-cc} -O2 -o "$BCRYPT" "$TOOLS/bcrypt.c" -lcrypt 2>"$TMP/bcrypt.err"
_report $? "the bcrypt helper builds"
H=$("$BCRYPT" pw)
mkdir -p "$TMP/web"
printf 'basic_auth_users:\n  user: %s\n' "$H" >"$TMP/web/auth.yml"
start_serve --listen 127.0.0.1:0 --web-config "$TMP/web/auth.yml"
_report $? "serve starts with a user"
U="http://$ADDR/metrics"
C="curl -s --max-time 10 -o /dev/null"

# one address, wrong passwords in a row
: >"$TMP/codes"
i=0
while [ $i -lt 40 ]; do
	$C -w '%{http_code}\n' -u user:wrong$i "$U" >>"$TMP/codes"
	i=$((i + 1))
done
[ "$(head -3 "$TMP/codes" | tr '\n' ' ')" = "401 401 401 " ]
_report $? "the first wrong passwords are answered 401 ($(head -3 "$TMP/codes" | tr '\n' ' '))"
n429=$(grep -c '^429$' "$TMP/codes")
[ "$n429" -ge 30 ]
_report $? "then the address is answered 429 ($n429 of 40)"
i=0
: >"$TMP/h"
while ! grep -q '^HTTP/1\.[01] 429' "$TMP/h" && [ $i -lt 5 ]; do
	curl -s --max-time 5 -D "$TMP/h" -o "$OUT" -u user:wrong "$U"
	i=$((i + 1))
done
grep -q '^HTTP/1\.[01] 429' "$TMP/h" && grep -Eq '^Retry-After: [1-9][0-9]*' "$TMP/h"
_report $? "429 carries Retry-After"
expect_out "too many wrong passwords" "and says why"

# meanwhile another address with the right password: served at once
if curl -s --max-time 2 -o /dev/null --interface 127.0.0.2 "http://$ADDR/" 2>/dev/null ||
	[ $? -ne 45 ]; then
	t0=$(date +%s%N)
	code=$($C -w '%{http_code}' --interface 127.0.0.2 -u user:pw "$U")
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	[ "$code" = 200 ] && [ $ms -lt 1500 ]
	_report $? "a right password from another address during the lockout: 200 in ${ms} ms"
	# a concurrent flood of wrong passwords from 127.0.0.1, and the right one from 127.0.0.2
	j=0
	cpids=""
	while [ $j -lt 60 ]; do
		$C -u user:bad$j "$U" &
		cpids="$cpids $!"
		j=$((j + 1))
	done
	t0=$(date +%s%N)
	code=$($C -w '%{http_code}' --interface 127.0.0.2 -u user:pw "$U")
	t1=$(date +%s%N)
	for p in $cpids; do wait "$p"; done
	ms=$(((t1 - t0) / 1000000))
	[ "$code" = 200 ] && [ $ms -lt 2000 ]
	_report $? "the right password during 60 concurrent wrong ones: 200 in ${ms} ms"
	# wrong ones from the other address are its own count: it is not locked by 127.0.0.1's
	code=$($C -w '%{http_code}' --interface 127.0.0.2 -u user:nope "$U")
	[ "$code" = 401 ]
	_report $? "a wrong password from the other address: 401, not 429 ($code)"
else
	skip_case "another client address" "curl cannot bind 127.0.0.2"
fi
# the flooding address, the lockout over, the right password: served, and the count cleared
sleep "$(sed -n 's/^Retry-After: \([0-9]*\).*/\1/p' "$TMP/h" | tr -d '\r')" 2>/dev/null
i=0
code=429
while [ "$code" = 429 ] && [ $i -lt 70 ]; do
	code=$($C -w '%{http_code}' -u user:pw "$U")
	[ "$code" = 429 ] && sleep 1
	i=$((i + 1))
done
[ "$code" = 200 ]
_report $? "after its wait the flooding address with the right password: 200 ($code)"
code=$($C -w '%{http_code}' -u user:wrong-again "$U")
[ "$code" = 401 ]
_report $? "a right password cleared the address's count: the next wrong one is 401 ($code)"
kill -0 $SPID
_report $? "serve is still running"
stop_serve
expect_rc 0 "clean exit"
done_testing
