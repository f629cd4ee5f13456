#!/bin/sh
# SPDX-License-Identifier: MIT
# What serve keeps resident: without TLS, the libraries libmicrohttpd brought
# in (GnuTLS and its chain: Debian's libmicrohttpd links them) keep none of
# their read-only pages once the server runs (out/serve_http.c), and the
# scrapes still answer; with TLS they stay, and TLS still works
# (test_serve_secure.sh has the rest). Resident kB per library from
# /proc/PID/smaps, after scrapes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

# ro_rss PID LIB : resident kB of LIB's code (its r-xp mappings) in PID,
# empty when LIB is not mapped
ro_rss() {
	awk -v lib="$2" '
		/^[0-9a-f]+-[0-9a-f]+ / { name = $6; perm = $2; next }
		/^Rss:/ { if (index(name, lib) && perm == "r-xp") { s += $2; seen = 1 } }
		END { if (seen) print s + 0 }' "/proc/$1/smaps"
}

start_serve --listen 127.0.0.1:0 --cache 0
_report $? "serve without TLS starts"
"$HTTPC" getk "$HOST" "$PORT" /metrics 20 >"$OUT"
grep -q '^ok=20 fail=0' "$OUT"
_report $? "20 scrapes answered after the release"
g=$(ro_rss $SPID libgnutls)
if [ -z "$g" ]; then
	skip_case "GnuTLS's code released" "this libmicrohttpd brings no libgnutls"
else
	[ "$g" -le 16 ]
	_report $? "GnuTLS's code released (${g} kB resident; it was ~560)"
fi
m=$(ro_rss $SPID libmicrohttpd)
[ -n "$m" ] && [ "$m" -gt 16 ]
_report $? "libmicrohttpd's own code stays (${m:-?} kB resident)"
curl -s -o "$OUT" "http://$ADDR/metrics"
expect_out '^sparkops_pool_total_bytes 128526896128$' "the exposition is whole after the release"
stop_serve
expect_rc 0 "serve exits 0 after SIGTERM (libmicrohttpd's exit runs GnuTLS's deinit: its pages fault back)"

# with TLS the chain stays: a TLS handshake needs it
if ! command -v openssl >/dev/null 2>&1; then
	skip_case "TLS serve keeps GnuTLS" "openssl missing"
else
	mkdir -p "$TMP/web"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=127.0.0.1 \
		-keyout "$TMP/web/key.pem" -out "$TMP/web/cert.pem" >/dev/null 2>&1
	printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n' >"$TMP/web/tls.yml"
	start_serve --listen 127.0.0.1:0 --web-config "$TMP/web/tls.yml"
	_report $? "serve with TLS starts"
	curl -sk -o "$OUT" "https://$ADDR/metrics"
	expect_out '^sparkops_pool_total_bytes ' "a scrape over TLS"
	g=$(ro_rss $SPID libgnutls)
	[ -n "$g" ] && [ "$g" -gt 64 ]
	_report $? "with TLS, GnuTLS's pages stay (${g:-?} kB resident)"
	stop_serve
fi

done_testing
