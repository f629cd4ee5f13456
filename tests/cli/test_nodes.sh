#!/bin/sh
# SPDX-License-Identifier: MIT
# Several nodes: two `serve`s on loopback ports (the fixtures, the fake NVML)
# stand in for two Sparks. top --node shows both rows and the link of each;
# a node that is stopped is marked down at once (within a deadline, never a
# hang, never its old figures); serve --peer's /api/nodes shows both; a peer
# that accepts and never answers does not block the local view; a peer's
# hostile host name is cleaned (top) and shown as text (the page, in
# headless Chromium); redirects are not followed, a huge answer is refused;
# peer URLs are http://HOST[:PORT] only.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
SC="$(cd "$(dirname "$0")/../fake-nvml/scenarios" && pwd)"
PY=/usr/bin/python3
cd "$TMP" || exit 2
if [ -n "$SPARKOPS_UNDER_QEMU" ]; then
	skip_case "several nodes" "'serve' and the pollers start threads (qemu-user)"
	done_testing
	exit $?
fi
export SPARKOPS_NVML_LIB="$FAKE_NVML" FAKE_NVML_SCENARIO="$SC/gb10.scn"
A_ROOTS=$(sysroot gb10-loaded)
B_ROOTS=$(sysroot gb10-idle)
PIDS=""
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; rm -rf "$TMP"' EXIT

# start NAME ARGS... : a serve on a loopback port; its address in NAME_ADDR, pid in NAME_PID
start() {
	name=$1
	shift
	: >"$name.out"
	$S serve --listen 127.0.0.1:0 "$@" >>"$name.out" 2>&1 &
	eval "${name}_PID=$!"
	PIDS="$PIDS $!"
	i=0
	while [ $i -lt 100 ] && ! grep -q 'serving http' "$name.out"; do sleep 0.05; i=$((i + 1)); done
	eval "${name}_ADDR=$(sed -n 's|.*serving http://\([0-9.:]*\)/metrics$|\1|p' "$name.out")"
}
# stub MODE : a python peer (hang: accepts, never answers; redirect; huge;
# hostile: a status document with markup and escapes in its host name)
stub() {
	$PY - "$1" >"stub.$1.port" 2>"stub.$1.err" <<'PYEOF' &
import http.server, json, socket, sys, time
mode = sys.argv[1]
if mode == "hang":
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
    print(s.getsockname()[1], flush=True)
    held = []
    while True:
        c, _ = s.accept(); held.append(c)   # read nothing, answer nothing
if mode == "keepalive":
    # a whole answer with its Content-Length, then the connection held open
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
    print(s.getsockname()[1], flush=True)
    held = []
    body = json.dumps({"version": "0.1.0", "host": "keeps-open", "pool": {"total_bytes": 1 << 30}}).encode()
    while True:
        c, _ = s.accept(); held.append(c); c.recv(4096)
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        if mode == "redirect":
            self.send_response(302); self.send_header("Location", "http://169.254.169.254/"); self.end_headers(); return
        if mode == "huge":
            self.send_response(200); self.end_headers(); self.wfile.write(b"[" + b"0," * (3 << 20) + b"0]"); return
        doc = {"version": "0.1.0", "host": "<img src=x onerror=alert(1)>\x1b[31mEVIL\x07",
               "pool": {"total_bytes": 128 << 30, "used_bytes": 10 << 30, "free_bytes": 100 << 30},
               "budget": {"now_bytes": 90 << 30, "after_flush_bytes": 100 << 30},
               "gpu_status": "ok", "gpus": [{"temperature_c": 50, "power_w": 10.0, "utilization_pct": 1, "sm_clock_mhz": 500}],
               "links": [{"interface": "enp1s0f0np0\x1b[2J", "operstate": "up", "speed_mbps": 200000, "rx_errors": 0, "tx_errors": 0,
                          "rx_bytes_per_s": 1.5e9, "tx_bytes_per_s": 2e6, "rdma": None}]}
        body = json.dumps(doc).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.end_headers(); self.wfile.write(body)
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PYEOF
	PIDS="$PIDS $!"
	i=0
	while [ $i -lt 100 ] && [ ! -s "stub.$1.port" ]; do sleep 0.05; i=$((i + 1)); done
}
# secs CMD... : run it, the wall seconds (tenths) in SECS
secs() {
	t0=$(date +%s%N)
	run "$@"
	SECS=$((($(date +%s%N) - t0) / 100000000))
}

# ---- URLs ------------------------------------------------------------------------
run $S top --once --node https://10.0.0.2:9851
expect_rc 2 "top --node https://: refused"
expect_err "https is not supported" "says https is not supported"
run $S top --once --node http://10.0.0.2:9851/api/status?x=1
expect_rc 2 "a URL with a path or query is refused"
run $S top --once --node http://user@10.0.0.2
expect_rc 2 "a URL with a user is refused"
run $S top --once --node http://a:1 --node http://b:2 --node http://c:3 --node http://d:4
expect_rc 2 "a fifth node is refused"
expect_err "more than four nodes is Prometheus's job.*contrib/grafana" "points to Prometheus and the Grafana dashboard"
run $S serve --peer ftp://10.0.0.2 --listen 127.0.0.1:0
expect_rc 2 "serve --peer ftp:// is refused"

# ---- the link's health in status --json ---------------------------------------
run $S status --json $A_ROOTS
expect_jq '[.links[].interface] == ["enp1s0f0np0", "enp1s0f1np1"]' "links: the ConnectX interfaces only (not lo, not the 10 GbE port)"
expect_jq '.links[0] | .operstate == "up" and .speed_mbps == 200000 and .rx_bytes == 918273645102 and .rx_dropped == 12 and .rdma.device == "rocep1s0f0" and .rdma.state == "ACTIVE" and .rdma.rate == "200 Gb/sec (4X HDR)" and .rdma.counters.symbol_error == 2 and .rdma.counters.port_xmit_discards == 5' \
	"links: state, speed, counters, the RoCE port's state, rate and error counters"
expect_jq '.links[1] | .operstate == "down" and .speed_mbps == null and .unavailable.speed_mbps == "not_supported" and .rdma.state == "DOWN"' \
	"a link that is down: no speed (not 0), the port DOWN"
expect_jq '.links[0].rx_bytes_per_s == null and .links[0].unavailable.bytes_per_s == "one_reading"' "one reading: no bytes per second"
run $S status --json $(sysroot discrete)
expect_jq '.links == []' "a machine without ConnectX: an empty links array"

run $S top --once $A_ROOTS --node self
expect_rc 0 "top --once --node self: this machine alone"
[ "$(grep -c '^spark-gb10-loaded +ok' "$OUT")" -le 1 ] && [ "$(grep -Ec '^spark-gb10-loaded +ok ' "$OUT")" = 1 ]
_report $? "this machine is one row, not two"

# ---- two nodes ---------------------------------------------------------------------
start B $B_ROOTS
[ -n "$B_ADDR" ]
_report $? "node B serves ($B_ADDR)"
stub hang
HANG=$(cat stub.hang.port)
start A $A_ROOTS --peer "http://$B_ADDR" --peer "http://127.0.0.1:$HANG"
[ -n "$A_ADDR" ]
_report $? "node A serves with --peer ($A_ADDR)"

secs $S top --once $A_ROOTS --node "http://$B_ADDR"
expect_rc 0 "top --once --node: every node answered"
expect_out '^NODE +STATE +POOL USED/TOTAL +BUDGET NOW/FLUSH +GPU +HOTTEST' "the header"
expect_out '^spark-gb10-loaded +ok +[0-9.]+/119\.7 GiB +2\.2/46\.8 GiB +84C 98\.6W 97% 2405MHz +85\.5C die' "this machine's row: pool, budget, GPU, hottest sensor"
expect_out '^spark-gb10-idle +ok +[0-9.]+/119\.7 GiB +88\.4/110\.3 GiB ' "node B's row, from its /api/status"
expect_out '^spark-gb10-loaded +enp1s0f0np0 +up +200 Gb/s .* 7 +rocep1s0f0 ACTIVE 200 Gb/sec' "this machine's link: state, speed, errors, RoCE"
expect_out '^spark-gb10-idle +enp1s0f0np0 +up +200 Gb/s ' "node B's link, from its /api/status"
expect_out '^spark-gb10-loaded +enp1s0f1np1 +down +no speed' "the link that is down"

sleep 2.5
run curl -s -m 5 "http://$A_ADDR/api/nodes"
expect_jq '.max_nodes == 4 and (.nodes | length) == 3 and .nodes[0].self and .nodes[0].name == "spark-gb10-loaded" and .nodes[0].state == "ok"' "/api/nodes: this node first"
expect_jq ".nodes[1].url == \"http://$B_ADDR\" and .nodes[1].name == \"spark-gb10-idle\" and .nodes[1].state == \"ok\" and .nodes[1].status.pool.total_bytes > 0 and .nodes[1].age_s < 3" "/api/nodes: node B ok, with its document"
expect_jq '.nodes[1].status.links[0].rx_bytes_per_s == 0' "node B's link: bytes per second from its own two readings"
expect_jq '.nodes[2].state != "ok" and .nodes[2].status == null' "a peer that never answers: not ok, no figures"

# the page in a browser: both nodes side by side
CHROME=$(command -v chromium || command -v chromium-browser || true)
chrome_ok=false
if [ -n "$CHROME" ] && timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/probe" \
	--dump-dom 'data:text/html,<p>ok</p>' >/dev/null 2>&1; then
	chrome_ok=true
fi
chrome() {
	timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$TMP/chrome.$$" --virtual-time-budget=4000 --dump-dom "$1" 2>>"$TMP/chrome.err"
}
if $chrome_ok; then
	chrome "http://$A_ADDR/" >dom.html
	grep -q 'id="nodes-section" class="on"' dom.html && grep -q '<tr class="ok" data-node="self"><td>spark-gb10-loaded</td><td>ok</td>' dom.html &&
		grep -q "<tr class=\"ok\" data-node=\"http://$B_ADDR\"><td>spark-gb10-idle</td><td>ok</td><td class=\"n\">[0-9.]*/119.7 GiB</td>" dom.html
	_report $? "the page shows both nodes side by side"
	grep -q 'enp1s0f0np0 up 200 Gb/s rx [0-9.]* [kMG]*B/s tx [0-9.]* [kMG]*B/s err 7 RoCE rocep1s0f0 ACTIVE' dom.html
	_report $? "the page shows each node's link"
else
	skip_case "the page shows both nodes" "Chromium cannot start here (apt-get install chromium)"
	skip_case "the page shows each node's link" "Chromium cannot start here"
fi

# a peer that never answers does not block the local view
secs curl -s -m 5 -o /dev/null -w '%{http_code}' "http://$A_ADDR/api/status"
[ "$(cat "$OUT")" = 200 ] && [ "$SECS" -lt 10 ]
_report $? "with a peer that never answers, /api/status answers at once (${SECS}/10 s)"
secs curl -s -m 5 -o /dev/null -w '%{http_code}' "http://$A_ADDR/metrics"
[ "$(cat "$OUT")" = 200 ] && [ "$SECS" -lt 10 ]
_report $? "and /metrics too (${SECS}/10 s)"
secs $S top --once $A_ROOTS --node "http://127.0.0.1:$HANG"
expect_rc 1 "top --once with a peer that never answers: trouble"
[ "$SECS" -lt 40 ]
_report $? "within the deadline, not a hang (${SECS}/10 s)"
expect_out '^spark-gb10-loaded +ok ' "this machine's row is shown"
expect_out "^127\.0\.0\.1:$HANG +down +no whole answer within 2\.0s \(never answered\)" "the silent peer is down, and why"

# the live screen (tmux): the NODES pane, then node B stopping
TMUX_OK=false
if command -v tmux >/dev/null 2>&1; then
	TMUX_OK=true
	SOCK="$TMP/tmux.sock"
	tm() { tmux -S "$SOCK" -f /dev/null "$@"; }
	trap 'tm kill-server 2>/dev/null; for p in $PIDS; do kill $p 2>/dev/null; done; rm -rf "$TMP"' EXIT
	tm new-session -d -x 120 -y 40 "env SPARKOPS_NVML_LIB=$FAKE_NVML FAKE_NVML_SCENARIO=$SC/gb10.scn $S top $A_ROOTS --node http://$B_ADDR"
	i=0
	while [ $i -lt 50 ] && ! tm capture-pane -p | grep -Eq '^spark-gb10-idle +ok'; do sleep 0.1; i=$((i + 1)); done
	tm capture-pane -p >"$OUT"
	expect_out '^NODE +STATE +POOL' "top's screen: the NODES pane under the title"
	expect_out '^spark-gb10-idle +ok +[0-9.]+/119\.7 GiB' "top's screen: node B's row"
else
	skip_case "top's screen: the NODES pane" "tmux is not installed"
	skip_case "top's screen: node B's row" "tmux is not installed"
fi

# node B stops: marked down at once
kill "$B_PID"
wait "$B_PID" 2>/dev/null
if $TMUX_OK; then
	i=0
	while [ $i -lt 50 ] && ! tm capture-pane -p | grep -Eq "^spark-gb10-idle +down"; do sleep 0.1; i=$((i + 1)); done
	tm capture-pane -p >"$OUT"
	expect_out "^spark-gb10-idle +down +cannot connect: Connection refused \(last answer [0-9]+s ago\)" "top's screen: node B down within a poll (${i}/50 tenths)"
	expect_no_out '88\.4/110\.3' "top's screen: node B's old figures are gone"
	tm kill-server 2>/dev/null
else
	skip_case "top's screen: node B down" "tmux is not installed"
	skip_case "top's screen: node B's old figures are gone" "tmux is not installed"
fi
secs $S top --once $A_ROOTS --node "http://$B_ADDR"
expect_rc 1 "top --once after node B stopped: trouble"
[ "$SECS" -lt 30 ]
_report $? "node B marked down without waiting out a deadline (${SECS}/10 s)"
expect_out "^$B_ADDR +down +cannot connect: Connection refused" "node B is down: connection refused"
expect_no_out '88\.4/110\.3' "node B's old figures are not shown"
sleep 1.5
run curl -s -m 5 "http://$A_ADDR/api/nodes"
expect_jq '.nodes[1].state == "down" and (.nodes[1].error | test("refused")) and .nodes[1].age_s > 0' "/api/nodes: node B down within a poll, its last answer's age"
if $chrome_ok; then
	chrome "http://$A_ADDR/" >dom.html
	grep -q "<tr class=\"down\" data-node=\"http://$B_ADDR\"><td>spark-gb10-idle</td><td>down</td><td colspan=\"5\" class=\"why\">cannot connect: Connection refused (last answer [0-9]*s ago)</td>" dom.html
	_report $? "the page marks the stopped node down, without its old figures"
else
	skip_case "the page marks the stopped node down" "Chromium cannot start here"
fi

# ---- hostile and broken peers -------------------------------------------------------
stub hostile
EVIL=$(cat stub.hostile.port)
run $S top --once $A_ROOTS --node "http://127.0.0.1:$EVIL"
expect_rc 0 "a peer with a hostile host name answers"
! grep -q "$(printf '\033')" "$OUT" && ! grep -q "$(printf '\007')" "$OUT"
_report $? "top: no escape or control byte from a peer reaches the terminal"
expect_out '^<img src=x onerror +ok +10\.0/128\.0 GiB' "top: the hostile name is plain text, its figures shown"
start E $A_ROOTS --peer "http://127.0.0.1:$EVIL"
sleep 1.5
if $chrome_ok; then
	chrome "http://$E_ADDR/" >dom.html
	grep -q '<td>&lt;img src=x onerror=alert(1)&gt;' dom.html && ! grep -q '<img src=x' dom.html
	_report $? "the page: a peer's hostile host name is text, never markup"
else
	skip_case "the page: a peer's hostile host name is text" "Chromium cannot start here"
fi
# more than four nodes: the others are named, not read, and the page points to Prometheus
start M $A_ROOTS --peer http://127.0.0.1:1 --peer http://127.0.0.1:2 --peer http://127.0.0.1:3 --peer http://127.0.0.1:4
grep -q "1 of the --peer nodes are not read: a cluster of more than four nodes is Prometheus's job" M.out
_report $? "serve with four peers: says one is not read, and why"
run curl -s -m 5 "http://$M_ADDR/api/nodes"
expect_jq '(.nodes | length) == 4 and .not_shown == ["http://127.0.0.1:4"] and (.note | test("Prometheus.*contrib/grafana/sparkops.json"))' "/api/nodes: four nodes, the fifth named with the note"
if $chrome_ok; then
	chrome "http://$M_ADDR/" >dom.html
	grep -q "id=\"nodes-note\" class=\"warn\">not shown: http://127.0.0.1:4. a cluster of more than four nodes is Prometheus's job" dom.html
	_report $? "the page says more than four nodes is Prometheus's job"
else
	skip_case "the page says more than four nodes is Prometheus's job" "Chromium cannot start here"
fi
stub keepalive
secs $S top --once $A_ROOTS --node "http://127.0.0.1:$(cat stub.keepalive.port)"
expect_out '^keeps-open +ok' "a peer that keeps the connection open after a whole answer is read at once"
[ "$SECS" -lt 15 ]
_report $? "without waiting out the deadline (${SECS}/10 s)"
stub redirect
run $S top --once $A_ROOTS --node "http://127.0.0.1:$(cat stub.redirect.port)"
expect_out 'down +HTTP 302 \(redirects are not followed\)' "a redirect is not followed"
stub huge
run $S top --once $A_ROOTS --node "http://127.0.0.1:$(cat stub.huge.port)"
expect_out 'down +an answer over 4 MiB \(refused\)' "an answer over the cap is refused"
done_testing
