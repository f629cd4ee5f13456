# SPDX-License-Identifier: MIT
# Helpers for the sparkops serve tests (sourced after lib.sh).
SC="$(cd "$(dirname "$0")/../fake-nvml/scenarios" && pwd)"
TOOLS="$(cd "$(dirname "$0")/../tools" && pwd)"

# httpc: the small test client, built once per run into $TMP
HTTPC="$TMP/httpc"
${CC:-cc} -O2 -o "$HTTPC" "$TOOLS/httpc.c" 2>"$TMP/httpc.err"
_report $? "the test client builds"

# start_serve ARGS... : starts `sparkops serve --listen 127.0.0.1:0 ARGS` on the
# gb10-loaded fixture with the gb10 fake NVML; sets SPID, ADDR (host:port), HOST, PORT
# (the address of an http:// or https:// server)
start_serve() {
	SLOG="$TMP/serve.$$.$(date +%s%N).err"
	: >"$SLOG" # made before serve starts: the wait below reads it at once
	env SPARKOPS_NVML_LIB="$FAKE_NVML" FAKE_NVML_SCENARIO="$SC/gb10.scn" \
		$SPARKOPS serve --procfs "$FIX/gb10-loaded/proc" --sysfs "$FIX/gb10-loaded/sys" "$@" \
		>/dev/null 2>"$SLOG" &
	SPID=$!
	ADDR=""
	i=0
	while [ -z "$ADDR" ] && [ $i -lt 200 ] && kill -0 $SPID 2>/dev/null; do
		ADDR=$(sed -n 's|^.*serving https*://\(.*\)/metrics$|\1|p' "$SLOG")
		[ -n "$ADDR" ] || sleep 0.05
		i=$((i + 1))
	done
	HOST=${ADDR%:*}
	PORT=${ADDR##*:}
	[ -n "$ADDR" ]
}

# stop_serve : SIGTERM and the exit code in RC
stop_serve() {
	kill -TERM $SPID 2>/dev/null
	wait $SPID
	RC=$?
}

rss_kib() { awk '/^VmRSS:/{print $2}' "/proc/$1/status"; }
