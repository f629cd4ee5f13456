#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops serve and the network: a non-loopback address needs --allow-remote;
# TLS and basic authentication (--web-config); a 32-scrape burst from one
# address is served and the excess is answered 503 with Retry-After; serve is
# locked in memory. The slowloris cases: test_serve_slowloris.sh.
# Loopback only (127.0.0.0/8; 0.0.0.0 only inside a network namespace of its
# own); every loop and flood is bounded in count and time.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
S=$SPARKOPS

# start_secure ARGS... : like start_serve, for an http:// or https:// address
start_secure() {
	start_serve --listen 127.0.0.1:0 "$@"
}

# --- exposure: loopback unless --allow-remote ---------------------------------------------------
for a in 0.0.0.0:9851 "[::]:9851" 192.0.2.1:9851 "[2001:db8::1]:9851"; do
	run $S serve --listen "$a"
	expect_rc 2 "--listen $a without --allow-remote is a usage error"
done
expect_err "^sparkops: --listen '\[2001:db8::1\]:9851' is reachable from other machines: give --allow-remote" "the error names --allow-remote"
for a in 127.0.0.2:0 "[::1]:0" localhost:0; do
	start_secure --listen "$a"
	_report $? "--listen $a (loopback) needs nothing more"
	! grep -q warning "$SLOG"
	_report $? "  and warns of nothing"
	stop_serve
done
# 0.0.0.0 only in a network namespace of our own: nothing outside can reach it
if unshare -n true 2>/dev/null; then
	unshare -n sh -c 'ip link set lo up 2>/dev/null; timeout 1 "$@"' sh \
		$S serve --listen 0.0.0.0:0 --allow-remote --procfs "$FIX/gb10-loaded/proc" --sysfs "$FIX/gb10-loaded/sys" \
		>"$OUT" 2>"$ERR"
	RC=$?
	expect_rc 124 "--allow-remote: 0.0.0.0 is served (in a private network namespace)"
	expect_err "^sparkops: warning: '0\.0\.0\.0:[0-9]+' is open to other machines without TLS or authentication" "  with one warning line"
	[ "$(grep -c warning "$ERR")" = 1 ]
	_report $? "  just one"
else
	echo "# skipped: no network namespace for the 0.0.0.0 warning"
fi

# --- TLS and basic authentication -----------------------------------------------------------------
BCRYPT="$TMP/bcrypt"
${CC:-cc} -O2 -o "$BCRYPT" "$TOOLS/bcrypt.c" -lcrypt 2>"$TMP/bcrypt.err"
_report $? "the bcrypt helper builds"
mkdir -p "$TMP/web"
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
	-days 1 -keyout "$TMP/web/key.pem" -out "$TMP/web/cert.pem" >/dev/null 2>&1
_report $? "a throwaway certificate"
H=$("$BCRYPT" pw)
case "$H" in '$2b$'*) true ;; *) false ;; esac
_report $? "a bcrypt hash"
# relative paths are the config file's folder's
printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\nbasic_auth_users:\n  user: %s\n' "$H" >"$TMP/web/web.yml"

start_secure --web-config "$TMP/web/web.yml"
_report $? "serve starts with TLS and a user"
grep -q "serving https://127\.0\.0\.1:" "$SLOG"
_report $? "it says https://"
C="curl -s --max-time 5 --cacert $TMP/web/cert.pem"
code=$($C -o "$OUT" -w '%{http_code}' -u user:pw "https://$ADDR/metrics")
[ "$code" = 200 ]
_report $? "https with the right password: 200 ($code)"
expect_out '^sparkops_pool_total_bytes 128526896128$' "  and the exposition"
code=$($C -o /dev/null -w '%{http_code}' -u user:wrong "https://$ADDR/metrics")
[ "$code" = 401 ]
_report $? "a wrong password: 401 ($code)"
code=$($C -o /dev/null -w '%{http_code}' -u nobody:pw "https://$ADDR/metrics")
[ "$code" = 401 ]
_report $? "an unknown user: 401 ($code)"
$C -D "$TMP/h" -o /dev/null "https://$ADDR/metrics"
grep -q '^HTTP/1\.[01] 401' "$TMP/h" && grep -q '^WWW-Authenticate: Basic realm="sparkops"' "$TMP/h"
_report $? "no credentials: 401 with WWW-Authenticate: Basic realm=\"sparkops\""
for hv in "Basic" "Basic !!!!" "Basic dXNlcg==" "Bearer abc" "Basic $(printf 'user:pw' | base64)x"; do
	code=$($C -o /dev/null -w '%{http_code}' -H "Authorization: $hv" "https://$ADDR/metrics")
	[ "$code" = 401 ]
	_report $? "Authorization '$hv': 401 ($code)"
done
code=$($C -o /dev/null -w '%{http_code}' -u user:pw "https://$ADDR/")
[ "$code" = 200 ]
_report $? "the index page with the password: 200"
code=$($C -o /dev/null -w '%{http_code}' "https://$ADDR/nope")
[ "$code" = 401 ]
_report $? "even a 404 needs the password first ($code)"
curl -s --max-time 5 -o /dev/null "http://$ADDR/metrics"
[ $? -ne 0 ]
_report $? "plain http to the TLS port fails"
curl -s --max-time 5 -o /dev/null -u user:pw "https://$ADDR/metrics"
[ $? -ne 0 ]
_report $? "a certificate the client does not trust fails"
code=$($C -o /dev/null -w '%{http_code}' -u user:pw "https://$ADDR/metrics")
[ "$code" = 200 ]
_report $? "still served after all that ($code)"
stop_serve
expect_rc 0 "clean exit"

# basic auth without TLS (loopback), TLS without users
printf 'basic_auth_users:\n  "user": %s\n' "$H" >"$TMP/web/auth.yml"
start_secure --web-config "$TMP/web/auth.yml"
code=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' -u user:pw "http://$ADDR/metrics")
c2=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "http://$ADDR/metrics")
[ "$code" = 200 ] && [ "$c2" = 401 ]
_report $? "basic auth alone: 200 with, 401 without ($code, $c2)"
stop_serve
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$TMP/web/cert.pem" "$TMP/web/key.pem" >"$TMP/web/tls.yml"
start_secure --web-config "$TMP/web/tls.yml"
code=$(curl -s --max-time 5 --cacert "$TMP/web/cert.pem" -o /dev/null -w '%{http_code}' "https://$ADDR/metrics")
[ "$code" = 200 ]
_report $? "TLS alone: 200 ($code)"
stop_serve

# bad configurations: one line, exit 2, nothing served
printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n  client_auth_type: RequireAndVerifyClientCert\n' >"$TMP/web/b1.yml"
run $S serve --listen 127.0.0.1:0 --web-config "$TMP/web/b1.yml"
expect_rc 2 "an unsupported key is refused"
expect_err "line 4: 'client_auth_type' is not supported" "  by its line"
printf 'basic_auth_users:\n  user: pw\n' >"$TMP/web/b2.yml"
run $S serve --listen 127.0.0.1:0 --web-config "$TMP/web/b2.yml"
expect_rc 2 "a password that is not a bcrypt hash is refused"
run $S serve --listen 127.0.0.1:0 --web-config "$TMP/web/none.yml"
expect_rc 2 "a missing --web-config"
expect_err "No such file or directory" "  said"
printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: nokey.pem\n' >"$TMP/web/b3.yml"
run $S serve --listen 127.0.0.1:0 --web-config "$TMP/web/b3.yml"
expect_rc 2 "a missing key file"
expect_err "key_file '.*nokey\.pem': No such file or directory" "  named"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out "$TMP/web/other.pem" >/dev/null 2>&1
printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: other.pem\n' >"$TMP/web/b4.yml"
run $S serve --listen 127.0.0.1:0 --web-config "$TMP/web/b4.yml"
expect_rc 2 "a key that does not match the certificate"
expect_err "refused the TLS certificate or key" "  said"

# --- bursts from one address --------------------------------------------------------------------
start_secure --cache 0
"$HTTPC" flood $HOST $PORT 32 full 8000 127.0.0.6 >"$OUT"
expect_out '^connected=32 answered=32 status200=32 closed=0 ' "32 concurrent scrapes from one address: all 200 ($(cat "$OUT"))"
"$HTTPC" flood $HOST $PORT 32 partial 3000 127.0.0.7 >"$TMP/hold" &
hp=$!
sleep 0.7
"$HTTPC" flood $HOST $PORT 8 full 3000 127.0.0.7 >"$OUT"
expect_out '^connected=8 answered=8 status200=0 closed=0 status503=8 retry_after=8$' \
	"past --per-ip (32 held): 503 with Retry-After: 1, not a reset ($(cat "$OUT"))"
"$HTTPC" get $HOST $PORT /metrics 3 127.0.0.8 >"$OUT"
expect_out '^ok=3 fail=0' "  another address is served meanwhile"
wait $hp
printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n' | "$HTTPC" raw $HOST $PORT >"$OUT"
expect_out '^HTTP/1\.1 200' "the held connections gone, served again"
stop_serve

# --- locked in memory ------------------------------------------------------------------------------
start_secure
case "$BUILD_DIR" in *asan*) UNDER_ASAN=1 ;; *) UNDER_ASAN= ;; esac
if [ -n "$UNDER_ASAN" ]; then
	# ASan reserves terabytes of shadow memory: the sanitizer build never
	# locks itself (src/probe/harden.c), so there is nothing to check here
	echo "# skip: memory locking is off in the sanitizer build (ASan's shadow cannot be locked)"
	stop_serve
elif [ "$(id -u)" = 0 ]; then
	lck=$(awk '/^VmLck:/{print $2}' /proc/$SPID/status)
	[ "${lck:-0}" -gt 0 ]
	_report $? "as root serve is locked in memory (VmLck ${lck} kB)"
	stop_serve
	if setpriv --inh-caps=-all --bounding-set=-all true 2>/dev/null; then
		run setpriv --inh-caps=-all --bounding-set=-all sh -c 'ulimit -l 64; exec timeout 1 "$@"' sh \
			$S serve --listen 127.0.0.1:0 --procfs "$FIX/gb10-loaded/proc" --sysfs "$FIX/gb10-loaded/sys"
		expect_rc 124 "without CAP_IPC_LOCK and a 64 KiB RLIMIT_MEMLOCK it still serves"
		expect_err "^sparkops: cannot lock sparkops in memory" "  and says in one line that it is not locked"
	fi
else
	grep -q "cannot lock sparkops in memory" "$SLOG" || [ "$(awk '/^VmLck:/{print $2}' /proc/$SPID/status)" -gt 0 ]
	_report $? "locked in memory, or it says it is not"
	stop_serve
fi
done_testing
