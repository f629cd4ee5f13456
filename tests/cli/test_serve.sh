#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops serve: the endpoint's answers, the cache, clean exits, the errors
# of --listen, and a real Prometheus server scraping it end to end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"
S=$SPARKOPS

# --- usage -------------------------------------------------------------------------------
for bad in "127.0.0.1" "127.0.0.1:" "127.0.0.1:99999" "::1:9851" "example.com:80" "1.2.3.4:80x" "[::1]9851"; do
	run $S serve --listen "$bad"
	expect_rc 2 "--listen '$bad' is refused"
done
expect_err "--listen: '\[::1\]9851' is not ADDR:PORT" "the bad address is named"
run $S serve --cache forever
expect_rc 2 "bad --cache"
run $S serve --max-connections 0
expect_rc 2 "--max-connections 0"
run $S serve --timeout 0
expect_rc 2 "--timeout 0"
run $S serve extra
expect_rc 2 "unexpected argument"
run $S serve --lisen 127.0.0.1:0
expect_rc 2 "a typo in an option"
expect_err "^sparkops: unknown option '--lisen'$" "the typo is named"
[ "$(grep -c . "$ERR")" = 2 ]
_report $? "one error line and one hint"
run sh -c 'ulimit -n 4; exec "$1" serve --listen 127.0.0.1:0' sh $S
expect_rc 1 "no file descriptor for the socket is trouble, not a usage error"
expect_err "cannot listen: Too many open files" "and it is said"
run $S serve --listen
expect_rc 2 "--listen without its value"
expect_err "^sparkops: option '--listen' needs a value$" "the option missing its value is named"
run $S serve --min-rss big
expect_rc 2 "bad --min-rss"
expect_err "--min-rss: 'big' is not a size" "bad --min-rss is named"

# libmicrohttpd is loaded at run time: missing, or not libmicrohttpd at all
run env SPARKOPS_MHD_LIB=/nonexistent/libmicrohttpd.so.12 $S serve --listen 127.0.0.1:0
expect_rc 1 "no libmicrohttpd: trouble, not a crash"
expect_err "^sparkops: cannot serve: libmicrohttpd.so.12 cannot be loaded \(install the package libmicrohttpd12\)$" "no libmicrohttpd: said in one line"
run env SPARKOPS_MHD_LIB=libjansson.so.4 $S serve --listen 127.0.0.1:0
expect_rc 1 "a library without the MHD symbols"
expect_err "libmicrohttpd is too old" "a wrong library: said"
run env SPARKOPS_MHD_LIB=/nonexistent $S metrics $(sysroot no-gpu)
expect_rc 0 "metrics never needs libmicrohttpd"

# --- the answers ---------------------------------------------------------------------------
start_serve --listen 127.0.0.1:0
_report $? "serve starts on a free loopback port"
expect_out_file() { grep -Eq -- "$1" "$2"; _report $? "$3"; }
case "$HOST" in 127.0.0.1) true ;; *) false ;; esac
_report $? "it says where it listens"

curl -s -D "$TMP/h" -o "$OUT" "http://$ADDR/metrics"
expect_out_file '^HTTP/1\.[01] 200' "$TMP/h" "GET /metrics is 200"
expect_out_file '^Content-Type: text/plain; version=0\.0\.4; charset=utf-8' "$TMP/h" "the exposition's content type"
promtool check metrics <"$OUT" >"$ERR" 2>&1
_report $? "promtool check metrics on what serve answers"
expect_out '^sparkops_pool_total_bytes 128526896128$' "the fixture's pool over HTTP"
expect_out 'reason="sw_thermal_slowdown"\} 1$' "the fake GPU's event reasons over HTTP"

curl -s -I -o "$TMP/h" "http://$ADDR/metrics"
expect_out_file '^HTTP/1\.[01] 200' "$TMP/h" "HEAD /metrics is 200"
printf 'HEAD /metrics HTTP/1.0\r\nHost: x\r\n\r\n' | "$HTTPC" raw $HOST $PORT >"$OUT"
expect_out '^HTTP/1\.[01] 200' "raw HEAD is 200"
# nothing after the blank line that ends the headers
[ "$(tr -d '\r' <"$OUT" | sed '1,/^$/d' | wc -c)" = 0 ]
_report $? "HEAD has no body"

curl -s -D "$TMP/h" -o "$OUT" "http://$ADDR/"
expect_out_file '^HTTP/1\.[01] 200' "$TMP/h" "GET / is 200"
expect_out_file '^Content-Type: text/html' "$TMP/h" "/ is HTML"
expect_out 'href="/metrics"' "/ links to /metrics"
for p in /nope /metrics/ /metricsx "/../etc/passwd" /index.html; do
	code=$(curl -s --path-as-is -o /dev/null -w '%{http_code}' "http://$ADDR$p")
	[ "$code" = 404 ]
	_report $? "GET $p is 404 ($code)"
done
code=$(curl -s -o /dev/null -w '%{http_code}' "http://$ADDR/metrics?name[]=x&debug=1")
[ "$code" = 200 ]
_report $? "a query string is ignored"
for m in POST PUT DELETE PATCH OPTIONS TRACE; do
	code=$(curl -s -o /dev/null -D "$TMP/h" -w '%{http_code}' -X $m --data-binary 'x' "http://$ADDR/metrics")
	[ "$code" = 405 ] && grep -qi '^Allow: GET, HEAD' "$TMP/h"
	_report $? "$m is 405 with Allow ($code)"
done
code=$(curl -s -o /dev/null -w '%{http_code}' -X FROB "http://$ADDR/metrics")
[ "$code" = 405 ] || [ "$code" = 501 ] || [ "$code" = 400 ]
_report $? "an unknown method is refused ($code)"

# keep-alive: Prometheus reuses its connection between scrapes
curl -sv -o /dev/null -o /dev/null "http://$ADDR/metrics" "http://$ADDR/metrics" 2>"$ERR"
grep -q 'Re-using existing connection' "$ERR"
_report $? "the connection is kept alive between scrapes"
for h in "Content-Length: 2" "Transfer-Encoding: chunked"; do
	code=$(curl -s -o /dev/null -w '%{http_code}' -X GET -H "$h" --data-binary 'xx' "http://$ADDR/metrics")
	[ "$code" = 400 ]
	_report $? "a GET with a body ($h) is 400 ($code)"
done

# the cache: within --cache the same reading, every scrape sees fresh values after it
ts() { curl -s "http://$ADDR/metrics" | sed -n 's/^sparkops_sample_timestamp_seconds //p'; }
# two back-to-back scrapes can straddle the 1 s window on a loaded box: up to
# three pairs; a server that never caches differs in every pair
same=1
for _ in 1 2 3; do
	a=$(ts)
	b=$(ts)
	if [ -n "$a" ] && [ "$a" = "$b" ]; then same=0; break; fi
done
[ $same = 0 ]
_report $? "two scrapes within --cache share one reading"
kill -0 $SPID
_report $? "serve is still up"
stop_serve
expect_rc 0 "SIGTERM: clean exit"

start_serve --listen 127.0.0.1:0 --cache 0
a=$(ts)
b=$(ts)
[ -n "$a" ] && [ "$a" != "$b" ]
_report $? "--cache 0 reads on every scrape"
# a port in use: one clear error, exit 2
run $S serve --listen "$ADDR"
expect_rc 2 "a port in use"
expect_err "^sparkops: '$ADDR': cannot listen: Address already in use$" "a port in use is one clear line"
[ "$(wc -l <"$ERR")" = 1 ]
_report $? "... and only one"
kill -INT $SPID
wait $SPID
RC=$?
expect_rc 0 "SIGINT: clean exit"

# IPv6 loopback, where the machine has it
if start_serve --listen "[::1]:0"; then
	case "$ADDR" in "[::1]:"*) true ;; *) false ;; esac
	_report $? "IPv6: listens on [::1]"
	code=$(curl -s -g -o /dev/null -w '%{http_code}' "http://$ADDR/metrics")
	[ "$code" = 200 ]
	_report $? "IPv6: GET /metrics is 200"
	stop_serve
	expect_rc 0 "IPv6: clean exit"
else
	grep -q "cannot listen" "$SLOG"
	_report $? "no IPv6 loopback here: a clear error # skip"
fi

# --- end to end: a real Prometheus scrapes sparkops serve -----------------------------------
if command -v prometheus >/dev/null 2>&1; then
	start_serve --listen 127.0.0.1:0
	cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: sparkops
    static_configs:
      - targets: ['$ADDR']
EOF
	promtool check config "$TMP/prometheus.yml" >/dev/null 2>&1
	_report $? "promtool check config on the test's scrape config"
	# a free port for Prometheus: try a few, the log says when one is taken
	PP=""
	for try in 1 2 3 4 5; do
		port=$((20000 + ($$ * 7 + try * 7919 + $(date +%N | sed 's/^0*//;s/^$/0/')) % 40000))
		mkdir -p "$TMP/tsdb$try"
		prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb$try" \
			--web.listen-address="127.0.0.1:$port" --log.level=warn >"$TMP/prom.log" 2>&1 &
		PPID_=$!
		i=0
		while [ $i -lt 100 ] && kill -0 $PPID_ 2>/dev/null; do
			curl -s -o /dev/null "http://127.0.0.1:$port/-/ready" && { PP=$port; break; }
			sleep 0.1
			i=$((i + 1))
		done
		[ -n "$PP" ] && break
		kill $PPID_ 2>/dev/null
		wait $PPID_ 2>/dev/null
	done
	[ -n "$PP" ]
	_report $? "Prometheus starts on loopback"
	val=""
	i=0
	while [ -n "$PP" ] && [ -z "$val" ] && [ $i -lt 60 ]; do
		curl -s "http://127.0.0.1:$PP/api/v1/query?query=sparkops_pool_total_bytes" >"$OUT"
		val=$(jq -r '.data.result[0].value[1] // empty' "$OUT" 2>/dev/null)
		[ -n "$val" ] || sleep 0.25
		i=$((i + 1))
	done
	[ "$val" = 128526896128 ]
	_report $? "Prometheus scraped sparkops_pool_total_bytes = $val"
	curl -s "http://127.0.0.1:$PP/api/v1/query?query=sparkops_gpu_clocks_event_reason_active%7Breason%3D%22sw_thermal_slowdown%22%7D" >"$OUT"
	expect_jq '.data.result[0].value[1] == "1" and .data.result[0].metric.name == "NVIDIA GB10"' "Prometheus has the event reason with its labels"
	curl -s "http://127.0.0.1:$PP/api/v1/query?query=up%7Bjob%3D%22sparkops%22%7D" >"$OUT"
	expect_jq '.data.result[0].value[1] == "1"' "Prometheus sees the target up"
	curl -s "http://127.0.0.1:$PP/api/v1/targets" >"$OUT"
	expect_jq '.data.activeTargets[0].health == "up" and .data.activeTargets[0].lastError == ""' "the scrape had no error"
	kill $PPID_ 2>/dev/null
	wait $PPID_ 2>/dev/null
	stop_serve
	expect_rc 0 "serve exits cleanly after being scraped"
else
	false
	_report $? "prometheus is installed (Debian package prometheus)"
fi
done_testing
