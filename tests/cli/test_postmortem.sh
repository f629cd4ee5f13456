#!/bin/sh
# SPDX-License-Identifier: MIT
# sparkops postmortem on journals made from export-format fixtures
# (tests/fixtures/journal/*.export) with systemd-journal-remote, so the real
# sd-journal reader (libsystemd.so.0, loaded with dlopen) is what runs: one
# fixture per verdict, the profiler's harmless start-up probes against a
# real wedge, pstore's panic record, the run log's timeline. The machine's
# own journal is never read: every case names --journal, --pstore or a
# fixture sysfs, and an empty --log-dir.
. "$(dirname "$0")/lib.sh"
S=$SPARKOPS
J=$FIX/journal
REMOTE=
for r in /lib/systemd/systemd-journal-remote /usr/lib/systemd/systemd-journal-remote; do
	[ -x "$r" ] && REMOTE=$r && break
done
if [ -z "$REMOTE" ]; then
	echo "# skip: systemd-journal-remote is not installed (Debian: systemd-journal-remote)"
	done_testing
	exit 0
fi
export TZ=UTC
mkdir -p "$TMP/j" "$TMP/empty" "$TMP/dir"
for f in "$J"/*.export; do
	n=$(basename "$f" .export)
	"$REMOTE" -o "$TMP/j/$n.journal" - <"$f" 2>"$TMP/remote.err" || { cat "$TMP/remote.err"; exit 1; }
done
# pm NAME ARGS... : postmortem of fixture NAME, sealed from the machine
pm() {
	n=$1
	shift
	run "$S" postmortem --journal "$TMP/j/$n.journal" --pstore "$TMP/empty" "$@"
}
pmj() {
	n=$1
	shift
	pm "$n" --json --log-dir "$TMP/empty" "$@"
}
T_A=1795939200 # boot A's first entry (mkfix.py T0)

# ---- one verdict per fixture ------------------------------------------------------
pmj clean
expect_rc 0 "clean: an orderly reboot"
expect_jq '.end.kind == "clean"' "clean: end.kind"
expect_jq '[.end.evidence[].line] | any(test("Reached target reboot.target"))' "clean: the reboot target is the evidence"
expect_jq '[.end.evidence[].line] | any(. == "Journal stopped")' "clean: Journal stopped is evidence"
expect_jq '.end.last_entry_time == "2026-11-29T10:00:06.000+00:00"' "clean: end.last_entry_time"
expect_jq '.boot.id == "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1" and .boot.offset == -1' "clean: the previous boot by default"

pmj wedge-load
expect_rc 1 "wedge during a load: an abnormal end"
expect_jq '.end.kind == "driver_wedge"' "wedge during a load: driver_wedge"
expect_jq '.driver.xids == [79] and .driver.phase == "load"' "wedge during a load: Xid 79, phase load"
expect_jq '[.end.evidence[].line] | any(test("fallen off the bus"))' "wedge during a load: the Xid line is evidence"
expect_jq '.driver.judgement == "run_up_to_wedge"' "wedge during a load: the driver's lines are the run-up"

pm wedge-run --json --log "$J/wedge-run.csv"
expect_rc 1 "wedge during a run: an abnormal end"
expect_jq '.end.kind == "driver_wedge" and .driver.phase == "run"' "wedge during a run: driver_wedge, phase run"
expect_jq '.driver.by_phase == {"startup": 1, "load": 0, "run": 28}' "wedge during a run: the start-up probe told apart from the 28 of the run-up"
expect_jq '.driver.in_window == 28 and .driver.rate_per_min > 150' "wedge during a run: count and rate of the run-up"
expect_jq '[.end.evidence[].line] | any(test("NV_ERR_NO_MEMORY"))' "wedge during a run: an NVRM line is evidence"
expect_jq '[.end.evidence[] | select(.class == "nvrm_oom")][0].time == "2026-11-29T09:00:00.000+00:00"' "wedge during a run: the first line of the burst, with its time"
expect_jq '[.timeline[] | select(.source == "log" and .class == "sample")] | length > 60' "wedge during a run: the log's samples are in the timeline"
expect_jq '[.timeline[] | select(.source == "log" and .class == "sample")] | last | .free_2mib_bytes < 200000000 and .mem_free_bytes < 3000000000' "wedge during a run: the timeline ends on the collapsed pool"
expect_jq '[.timeline[] | .unix_time] | . == sort' "wedge during a run: the timeline is in time order"
expect_jq '.log.rows_in_boot > 100' "wedge during a run: the log's rows counted"

pmj probes
expect_rc 1 "start-up probes, then the journal stops: abnormal"
expect_jq '.end.kind == "power"' "start-up probes: not a driver wedge (the journal just stops)"
expect_jq '.driver.judgement == "startup_probes" and .driver.by_phase.startup == 3' "start-up probes: judged harmless, 3 before readiness"
expect_jq '.end.detail | test("start-up probes")' "start-up probes: the verdict says which"
expect_jq '.driver.in_window == 3' "start-up probes: inside the window all the same"

pmj kernel-oom
expect_rc 1 "kernel OOM: abnormal"
expect_jq '.end.kind == "kernel_oom" and .end.victim == {"pid": 4242, "name": "python3"}' "kernel OOM: the victim"
expect_jq '[.end.evidence[].line] | any(test("invoked oom-killer"))' "kernel OOM: the invoking line is evidence"

pmj earlyoom
expect_jq '.end.kind == "userspace_kill" and .end.killer == "earlyoom"' "earlyoom: userspace_kill, which one"
expect_jq '.end.victim.pid == 4242 and .end.victim.name == "python3"' "earlyoom: the victim"

pmj oomd
expect_jq '.end.kind == "userspace_kill" and .end.killer == "systemd-oomd" and .end.victim.name == "vllm.scope"' "systemd-oomd: userspace_kill, the unit"

pmj thermal
expect_rc 1 "thermal: abnormal"
expect_jq '.end.kind == "thermal"' "thermal: a critical temperature, although the shutdown was orderly"
expect_jq '[.end.evidence[].line] | any(test("critical temperature reached"))' "thermal: the trip is evidence"

pmj power
expect_rc 1 "power: abnormal"
expect_jq '.end.kind == "power" and (.end.detail | test("just stops"))' "power: the journal just stops"
pm power --json --log "$J/pdcap.csv"
expect_jq '.end.kind == "power" and (.end.detail | test("20 W power-delivery cap"))' "power: the run log's 20 W cap is named"

pmj lockup
expect_rc 3 "a soft lockup with no panic record: unknown"
expect_jq '.end.kind == "unknown" and ([.end.evidence[].line] | any(test("soft lockup")))' "unknown: the lockup lines are evidence"

# ---- pstore ----------------------------------------------------------------------
cp -r "$J/pstore-panic" "$TMP/ps"
touch -d "@$((T_A + 1502))" "$TMP/ps/dmesg-ramoops-0"
run "$S" postmortem --journal "$TMP/j/panic.journal" --pstore "$TMP/ps" --json --log-dir "$TMP/empty"
expect_rc 1 "panic: abnormal"
expect_jq '.end.kind == "panic" and .pstore.panic and .pstore.records == 1' "panic: pstore's record decides"
expect_jq '.end.evidence[0].line | test("Kernel panic - not syncing: System is deadlocked")' "panic: the panic line is evidence"
expect_jq '.end.evidence[0].time == "2026-11-29T08:25:02.000+00:00"' "panic: the record's time"
touch -d "@$((T_A - 86400))" "$TMP/ps/dmesg-ramoops-0"
run "$S" postmortem --journal "$TMP/j/panic.journal" --pstore "$TMP/ps" --json --log-dir "$TMP/empty"
expect_jq '.end.kind == "power" and .pstore.older_than_boot' "panic: a record older than the boot is an earlier crash's"
run "$S" postmortem --journal "$TMP/j/panic.journal" $(sysroot gb10-healthy) --json --log-dir "$TMP/empty"
expect_jq '.pstore.unavailable != null and .end.kind == "power"' "pstore: none under the fixture sysfs is no record, not an error"
run "$S" postmortem --journal "$TMP/j/panic.journal" --pstore "$TMP/nope" --log-dir "$TMP/empty"
expect_rc 2 "--pstore: a missing folder is an input error"

# ---- boots ----------------------------------------------------------------------
pmj clean --boot 0
expect_jq '.boot.id == "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2" and .boot.offset == 0' "--boot 0: the newest"
pmj clean --boot 1
expect_jq '.boot.id == "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"' "--boot 1: the oldest"
pmj clean --boot a1a1a1a1-a1a1-a1a1-a1a1-a1a1a1a1a1a1
expect_jq '.boot.id == "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1" and .end.kind == "clean"' "--boot ID: by id, dashes allowed"
pm clean --boot -5 --log-dir "$TMP/empty"
expect_rc 2 "--boot -5: no such boot"
expect_err "no boot -5: the journal holds 2 boots" "--boot -5: says how many there are"
pm clean --boot soon
expect_rc 2 "--boot soon: a usage error"
expect_err "is not a boot" "--boot soon: says why"
run "$S" postmortem --journal "$TMP/missing.journal"
expect_rc 2 "--journal missing: input error"
expect_err "missing.journal" "--journal missing: names it"
cp "$TMP/j/wedge-load.journal" "$TMP/dir/"
run "$S" postmortem --journal "$TMP/dir" --pstore "$TMP/empty" --log-dir "$TMP/empty" --json
expect_jq '.end.kind == "driver_wedge"' "--journal DIR: a folder of journal files"

# ---- the run log ----------------------------------------------------------------
mkdir -p "$TMP/logs"
cp "$J/wedge-run.csv" "$TMP/logs/sparkops-20261129-080055.csv"
touch -d "@$((T_A + 3609))" "$TMP/logs/sparkops-20261129-080055.csv"
cp "$J/pdcap.csv" "$TMP/logs/sparkops-20261128-080000.csv"
touch -d "@$((T_A - 80000))" "$TMP/logs/sparkops-20261128-080000.csv"
pm wedge-run --json --log-dir "$TMP/logs"
expect_jq '.log.path | test("sparkops-20261129-080055.csv$")' "--log-dir: the log written during the boot is found"
expect_jq '[.timeline[] | select(.source == "log")] | length > 60' "--log-dir: its rows are in the timeline"
pm power --json --log-dir "$TMP/logs"
expect_jq '.log.path == null and (.end.detail | test("cap") | not)' "--log-dir: a log of another boot is not used"
printf 'not,a,log\n' >"$TMP/bad.csv"
pm power --log "$TMP/bad.csv"
expect_rc 2 "--log: not a sparkops log is an input error"
pm power --log "$TMP/bad.csv" --log-dir "$TMP/logs"
expect_rc 2 "--log and --log-dir together: usage error"

# ---- the window -------------------------------------------------------------------
pmj wedge-run --window 2s
expect_jq '.end.kind == "power" and .driver.in_window == 0' "--window 2s: the burst 2.4 s before the end is outside the run-up"

# ---- human output ----------------------------------------------------------------------
pm wedge-run --log "$J/wedge-run.csv"
expect_out '^end: driver_wedge$' "human: the verdict first"
expect_out 'the run-up to the wedge: 28 in the last 300 s' "human: the run-up's count"
expect_out 'log +free 2\.5 GiB +2MiB\+ 0\.1 GiB' "human: the log's last sample in the timeline"
expect_out '\(1 more of the same' "human: repeated lines folded"
pm probes --log-dir "$TMP/empty"
expect_out 'start-up probes \(a server sizing its memory' "human: the probes said harmless"
for n in clean probes wedge-run wedge-load kernel-oom earlyoom oomd thermal power lockup panic; do
	pmj "$n"
	jq -e . "$OUT" >/dev/null 2>&1
	_report $? "--json is one valid object: $n"
done
done_testing
