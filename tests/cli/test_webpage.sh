#!/bin/sh
# SPDX-License-Identifier: MIT
# serve's live page in a real browser (Debian's chromium, headless): the
# same figures as status --json, a poll that updates, the stale banner when
# the server stops answering, a hostile process name shown as text, and the
# page's strict Content-Security-Policy. Skipped, with the reason, only where
# Chromium cannot start.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
SC="$(cd "$(dirname "$0")/../fake-nvml/scenarios" && pwd)"
PY=/usr/bin/python3
cd "$TMP" || exit 2
if [ -n "$SPARKOPS_UNDER_QEMU" ]; then
	skip_case "the live page" "'serve' starts threads (qemu-user)"
	done_testing
	exit $?
fi
CHROME=$(command -v chromium || command -v chromium-browser || true)
chrome() { # URL [extra flags]: the DOM after the page's script ran
	u=$1
	shift
	timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$TMP/chrome.$$" "$@" --dump-dom "$u" 2>>"$TMP/chrome.err"
}
text_of() { # ID: the text of the element with that id in dom.html
	sed -n "s/.*id=\"$1\"[^>]*>\([^<]*\)<.*/\1/p" dom.html | head -1
}

# a fixture tree with a hostile process name (markup and a script in comm and cmdline)
cp -R "$FIX/gb10-loaded" box
printf '<img src=x onerror=alert(1)>\n' >box/proc/4000/comm
printf '<script>document.title="pwned"</script>\0serve\0' >box/proc/4000/cmdline
ROOTS="--procfs $TMP/box/proc --sysfs $TMP/box/sys"
env SPARKOPS_NVML_LIB="$FAKE_NVML" FAKE_NVML_SCENARIO="$SC/gb10.scn" $S serve --listen 127.0.0.1:0 $ROOTS \
	>serve.out 2>&1 &
SPID=$!
trap 'kill $SPID 2>/dev/null; kill $PYPID 2>/dev/null; rm -rf "$TMP"' EXIT
i=0
while [ $i -lt 50 ] && ! grep -q 'serving http' serve.out; do sleep 0.1; i=$((i + 1)); done
ADDR=$(sed -n 's|.*serving http://\([0-9.:]*\)/metrics$|\1|p' serve.out)
[ -n "$ADDR" ]
_report $? "serve started on a loopback port ($ADDR)"
grep -q "the live page: http://$ADDR/\$" serve.out
_report $? "serve says where the live page is"

# the page and its headers, without a browser
run curl -s -D headers.txt -o page.html "http://$ADDR/"
expect_rc 0 "GET / answers"
grep -qi '^Content-Security-Policy: default-src .none.; script-src .nonce-[A-Za-z0-9_-]*.; style-src .nonce-' headers.txt
_report $? "a strict Content-Security-Policy with a nonce"
nonce=$(sed -n "s/.*script-src 'nonce-\([A-Za-z0-9_-]*\)'.*/\1/p" headers.txt | tr -d '\r')
grep -q "<script nonce=\"$nonce\">" page.html
_report $? "the page's one script carries the response's nonce"
! grep -Eq '(src|href)="(https?:)?//' page.html
_report $? "nothing external: no script, font or CDN from elsewhere"
curl -s -D h2.txt -o page2.html "http://$ADDR/"
n2=$(sed -n "s/.*script-src 'nonce-\([A-Za-z0-9_-]*\)'.*/\1/p" h2.txt | tr -d '\r')
[ -n "$n2" ] && [ "$n2" != "$nonce" ]
_report $? "a fresh nonce each response"

# /api/status is status --json's document
run curl -s "http://$ADDR/api/status"
cp "$OUT" api.json
env SPARKOPS_NVML_LIB="$FAKE_NVML" FAKE_NVML_SCENARIO="$SC/gb10.scn" $S status --json $ROOTS >status.json
[ "$(jq -S 'keys' api.json)" = "$(jq -S 'keys' status.json)" ] &&
	[ "$(jq -S '{pool, budget, gpus, processes, verdict}' api.json)" = "$(jq -S '{pool, budget, gpus, processes, verdict}' status.json)" ]
_report $? "/api/status is the same document as status --json"
run curl -s "http://$ADDR/api/history"
expect_jq '.samples >= 1 and (.free | length) == .samples and (.die | length) == .samples' "/api/history: the ring, a series a sensor"
run curl -s "http://$ADDR/metrics"
expect_out '^sparkops_pool_free_bytes ' "/metrics is unchanged beside the page"

if [ -z "$CHROME" ] || ! timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/probe" \
	--dump-dom 'data:text/html,<p>ok</p>' >/dev/null 2>&1; then
	skip_case "the page in a browser" "Chromium cannot start here (apt-get install chromium)"
	done_testing
	exit $?
fi

# the figures status --json gives, drawn by the page's script
chrome "http://$ADDR/" --virtual-time-budget=4000 >dom.html
gib() { jq -r "$1 / 1073741824 * 10 | round / 10 | tostring" status.json; }
want_free="$(gib .pool.free_bytes) GiB"
[ "$(text_of free)" = "$want_free" ]
_report $? "the page's free memory is status --json's ($(text_of free) = $want_free)"
[ "$(text_of budget-now)" = "$(gib .budget.now_bytes) GiB" ] && [ "$(text_of budget-flush)" = "$(gib .budget.after_flush_bytes) GiB" ]
_report $? "the budget now and after flush are status --json's"
[ "$(text_of gpu-temp)" = "$(jq -r '.gpus[0].temperature_c' status.json) C" ]
_report $? "the GPU's temperature is status --json's"
grep -q '<span class="lit">sw_power_cap</span><span class="lit thermal">sw_thermal_slowdown</span>' dom.html
_report $? "the clock-event reasons are lit by name"
grep -q '<td>train.py</td>' dom.html && grep -q 'data-series="die"' dom.html
_report $? "the processes and the sparklines are drawn"
grep -q '<td>&lt;img src=x onerror=</td>' dom.html && ! grep -q '<img src=x' dom.html &&
	grep -q '&lt;script&gt;document.title' dom.html && ! grep -q '<title>pwned' dom.html
_report $? "a hostile process name is shown as text, never run or parsed as markup"

# a poll that updates, then a server that stops answering: a stub serves the
# same page (and its CSP) and an /api/status that changes, then fails
cat >stub.py <<PYEOF
import http.server, json, sys
page = open("page.html", "rb").read()
csp = [l.split(":", 1)[1].strip() for l in open("headers.txt") if l.lower().startswith("content-security-policy:")][0]
doc = json.load(open("api.json"))
n = [0]
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        if self.path == "/":
            self.send_response(200); self.send_header("Content-Type", "text/html"); self.send_header("Content-Security-Policy", csp)
            self.end_headers(); self.wfile.write(page); return
        if self.path == "/api/status":
            n[0] += 1
            if n[0] > 3:
                self.send_response(503); self.end_headers(); return
            doc["pool"]["free_bytes"] = n[0] * 1073741824
            body = json.dumps(doc).encode()
            self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers(); self.wfile.write(body); return
        self.send_response(404); self.end_headers()
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PYEOF
$PY stub.py >stub.port 2>stub.err &
PYPID=$!
i=0
while [ $i -lt 50 ] && [ ! -s stub.port ]; do sleep 0.1; i=$((i + 1)); done
chrome "http://127.0.0.1:$(cat stub.port)/" --virtual-time-budget=2500 >dom.html
[ "$(text_of free)" = "3.0 GiB" ] || [ "$(text_of free)" = "2.0 GiB" ]
_report $? "the page polls and shows the newest answer (free $(text_of free))"
chrome "http://127.0.0.1:$(cat stub.port)/" --virtual-time-budget=5000 >dom.html
grep -q 'id="banner" role="alert" class="on">no answer from the server' dom.html && grep -q '<body class="stale">' dom.html
_report $? "a server that stops answering: the stale banner, the old figures dimmed, never shown as current"
done_testing
