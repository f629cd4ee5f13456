// SPDX-License-Identifier: MIT
/* Attribution with scripted time (the guard: test_guard.c); /proc/PID/stat parsing;
 * events between samples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <signal.h>
#include <errno.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "qemu_skip.h"

#include "probe/sample.h"
#include "watch/attribute.h"
#include "watch/child.h"
#include "watch/sampler.h"

/* A run at 10 it/s that falls to 6 it/s at t=drop; tweak() adds evidence. */
typedef void (*tweak_fn)(struct sp_attr_obs *o, double t, double drop);

static enum sp_cause script(tweak_fn tweak, int *start_at, int *end_at, bool recover)
{
	struct sp_attr a;
	sp_attr_init(&a, 10, 15);
	enum sp_cause cause = SP_AC_N;
	*start_at = *end_at = -1;
	for (int t = 0; t < 60; t++) {
		struct sp_attr_obs o;
		sp_attr_obs_clear(&o);
		o.t = t;
		o.rate = t < 20 ? 10.0 + (t % 2) * 0.2 : (recover && t >= 40 ? 9.9 : 6.0);
		strcpy(o.unit, "it/s");
		o.rate_fresh = true;
		o.reasons_ok = true;
		o.reasons = 0;
		o.gpu_temp_c = 70;
		o.gpu_power_w = 90 + (t % 3) * 10; /* not a plateau */
		o.psi_mem_some = o.psi_mem_full = o.psi_cpu_some = o.psi_io_some = 0.1;
		o.swap_used = 0;
		o.page_cache = 20e9;
		if (tweak)
			tweak(&o, t, 20);
		enum sp_attr_event e = sp_attr_feed(&a, &o);
		if (e == SP_ATTR_EPISODE_START) {
			*start_at = t;
			cause = a.cause;
			assert_float_equal(a.baseline, 10.0, 0.21);
			assert_true(a.drop_pct > 35 && a.drop_pct < 45);
		}
		if (e == SP_ATTR_EPISODE_END)
			*end_at = t;
	}
	return cause;
}

static void tw_thermal(struct sp_attr_obs *o, double t, double drop)
{
	if (t >= drop - 1)
		o->reasons = SP_REASON_SW_THERMAL;
}
static void tw_power_plateau(struct sp_attr_obs *o, double t, double drop);
/* on since well before the drop, but after the baseline: still new */
static void tw_thermal_early(struct sp_attr_obs *o, double t, double drop)
{
	tw_power_plateau(o, t, drop);
	if (t >= 13)
		o->reasons = SP_REASON_SW_THERMAL;
}
static void tw_thermal_viol(struct sp_attr_obs *o, double t, double drop)
{
	o->viol_thermal_s = t < drop ? 5 : 5 + (t - drop + 1) * 0.8;
}
static void tw_power_pl1(struct sp_attr_obs *o, double t, double drop)
{
	o->pl1_cap_w = 140;
	o->pl1_w = t < drop ? 120 : 139.5;
}
static void tw_power_plateau(struct sp_attr_obs *o, double t, double drop)
{
	(void)drop;
	o->gpu_power_w = 100;                  /* flat */
	o->gpu_temp_c = 60 + t * 0.5;          /* while the die warms */
	o->viol_power_s = 42;                  /* frozen (seen on GB10): not evidence */
}
static void tw_power_frozen_counter(struct sp_attr_obs *o, double t, double drop)
{
	(void)t;
	(void)drop;
	o->viol_power_s = 42; /* never relied on alone */
}
static void tw_memory(struct sp_attr_obs *o, double t, double drop)
{
	if (t >= drop)
		o->psi_mem_some = 22;
}
static void tw_swap(struct sp_attr_obs *o, double t, double drop)
{
	if (t >= drop)
		o->swap_used = 2e9;
}
static void tw_cache(struct sp_attr_obs *o, double t, double drop)
{
	if (t >= drop)
		o->page_cache = 2e9;
}
static void tw_competing(struct sp_attr_obs *o, double t, double drop)
{
	o->process_appeared = t == drop;
}
static void tw_cpu(struct sp_attr_obs *o, double t, double drop)
{
	if (t >= drop)
		o->psi_cpu_some = 60;
}
static void tw_io(struct sp_attr_obs *o, double t, double drop)
{
	if (t >= drop)
		o->psi_io_some = 45;
}
static void tw_thermal_and_memory(struct sp_attr_obs *o, double t, double drop)
{
	tw_memory(o, t, drop);
	tw_thermal(o, t, drop);
}
static void tw_persistent_power(struct sp_attr_obs *o, double t, double drop)
{
	(void)t;
	(void)drop;
	o->reasons = SP_REASON_SW_POWER_CAP; /* on all along */
}

static void causes(void **st)
{
	(void)st;
	int s, e;
	assert_int_equal(script(NULL, &s, &e, false), SP_AC_UNKNOWN);
	assert_int_equal(s, 22); /* 3 samples below: t=20,21,22 */
	assert_int_equal(e, -1);
	assert_int_equal(script(tw_thermal, &s, &e, false), SP_AC_THERMAL);
	assert_int_equal(script(tw_thermal_viol, &s, &e, false), SP_AC_THERMAL);
	assert_int_equal(script(tw_thermal_early, &s, &e, false), SP_AC_THERMAL);
	assert_int_equal(script(tw_power_pl1, &s, &e, false), SP_AC_POWER_CAP);
	assert_int_equal(script(tw_power_plateau, &s, &e, false), SP_AC_POWER_CAP);
	assert_int_equal(script(tw_power_frozen_counter, &s, &e, false), SP_AC_UNKNOWN);
	assert_int_equal(script(tw_memory, &s, &e, false), SP_AC_MEMORY);
	assert_int_equal(script(tw_swap, &s, &e, false), SP_AC_MEMORY);
	assert_int_equal(script(tw_cache, &s, &e, false), SP_AC_MEMORY);
	assert_int_equal(script(tw_competing, &s, &e, false), SP_AC_COMPETING);
	assert_int_equal(script(tw_cpu, &s, &e, false), SP_AC_CPU);
	assert_int_equal(script(tw_io, &s, &e, false), SP_AC_IO);
	assert_int_equal(script(tw_thermal_and_memory, &s, &e, false), SP_AC_THERMAL);
	assert_int_equal(script(tw_persistent_power, &s, &e, false), SP_AC_POWER_CAP);
}

/* Item 1 of "every message true": an episode judged over its whole length.
 * Rate 10 it/s, 6 it/s from t=20 on; tweak() scripts the evidence. Returns the
 * cause at the episode's start, *final the cause at the last sample. */
static enum sp_cause script_final(tweak_fn tweak, enum sp_cause *final, int *updates, char *shares, size_t n)
{
	static struct sp_attr a;
	sp_attr_init(&a, 10, 15);
	enum sp_cause first = SP_AC_N;
	*updates = 0;
	for (int t = 0; t < 60; t++) {
		struct sp_attr_obs o;
		sp_attr_obs_clear(&o);
		o.t = t;
		o.rate = t < 20 ? 10.0 : 6.0;
		strcpy(o.unit, "it/s");
		o.rate_fresh = true;
		o.reasons_ok = true;
		o.gpu_temp_c = 70;
		o.gpu_power_w = 90 + (t % 3) * 10;
		o.psi_mem_some = o.psi_mem_full = o.psi_cpu_some = o.psi_io_some = 0.1;
		o.swap_used = 0;
		o.page_cache = 20e9;
		tweak(&o, t, 20);
		enum sp_attr_event e = sp_attr_feed(&a, &o);
		if (e == SP_ATTR_EPISODE_START)
			first = a.cause;
		if (e == SP_ATTR_EPISODE_UPDATE)
			(*updates)++;
	}
	assert_true(a.in_episode);
	*final = a.cause;
	snprintf(shares, n, "%s", a.shares);
	return first;
}

/* the power-cap reason comes on with the drop, sw_thermal_slowdown once the
 * episode is open and stays on, the die warming at flat power */
static void tw_power_then_thermal(struct sp_attr_obs *o, double t, double drop)
{
	o->gpu_power_w = 100;
	o->gpu_temp_c = 70 + (t > drop ? (t - drop) * 0.5 : 0);
	if (t >= drop)
		o->reasons = SP_REASON_SW_POWER_CAP;
	if (t >= drop + 3)
		o->reasons = SP_REASON_SW_THERMAL;
}
/* both reasons on from the drop, thermal a second later, both staying on */
static void tw_power_and_thermal(struct sp_attr_obs *o, double t, double drop)
{
	if (t >= drop)
		o->reasons = SP_REASON_SW_POWER_CAP;
	if (t >= drop + 3)
		o->reasons |= SP_REASON_SW_THERMAL;
}
/* a long power-capped episode with a one-second thermal blip */
static void tw_power_blip(struct sp_attr_obs *o, double t, double drop)
{
	if (t >= drop)
		o->reasons = SP_REASON_SW_POWER_CAP;
	if (t == 30)
		o->reasons = SP_REASON_SW_THERMAL;
}
/* CPU contention: PSI avg10 climbs slowly and lags the detection */
static void tw_cpu_lag(struct sp_attr_obs *o, double t, double drop)
{
	if (t >= drop)
		o->psi_cpu_some = fmin(80, (t - drop) * 6);
}

static void whole_episode(void **st)
{
	(void)st;
	enum sp_cause fin;
	int up;
	char sh[96];
	assert_int_equal(script_final(tw_power_then_thermal, &fin, &up, sh, sizeof sh), SP_AC_POWER_CAP);
	assert_int_equal(fin, SP_AC_THERMAL);
	assert_true(up >= 1);
	assert_non_null(strstr(sh, "power_cap "));
	assert_int_equal(script_final(tw_power_and_thermal, &fin, &up, sh, sizeof sh), SP_AC_POWER_CAP);
	assert_int_equal(fin, SP_AC_THERMAL);
	assert_int_equal(script_final(tw_power_blip, &fin, &up, sh, sizeof sh), SP_AC_POWER_CAP);
	assert_int_equal(fin, SP_AC_POWER_CAP);
	assert_int_equal(up, 0);
	assert_string_equal(sh, "thermal 2%");
	assert_int_equal(script_final(tw_cpu_lag, &fin, &up, sh, sizeof sh), SP_AC_UNKNOWN);
	assert_int_equal(fin, SP_AC_CPU);
	assert_int_equal(script_final(tw_memory, &fin, &up, sh, sizeof sh), SP_AC_MEMORY);
	assert_int_equal(fin, SP_AC_MEMORY);
	assert_int_equal(up, 0);
	assert_int_equal(script_final(tw_cache, &fin, &up, sh, sizeof sh), SP_AC_MEMORY);
	assert_int_equal(fin, SP_AC_MEMORY);
	assert_int_equal(script_final(tw_competing, &fin, &up, sh, sizeof sh), SP_AC_COMPETING);
	assert_int_equal(fin, SP_AC_COMPETING);
	assert_int_equal(script_final(tw_power_plateau, &fin, &up, sh, sizeof sh), SP_AC_POWER_CAP);
	assert_int_equal(fin, SP_AC_POWER_CAP);
	assert_int_equal(script_final(tw_power_frozen_counter, &fin, &up, sh, sizeof sh), SP_AC_UNKNOWN);
	assert_int_equal(fin, SP_AC_UNKNOWN);
}

static void episode_ends(void **st)
{
	(void)st;
	int s, e;
	script(tw_thermal, &s, &e, true);
	assert_int_equal(s, 22);
	assert_int_equal(e, 42); /* 3 samples back above: t=40,41,42 */
}

static void baseline_rules(void **st)
{
	(void)st;
	struct sp_attr a;
	sp_attr_init(&a, 10, 15);
	struct sp_attr_obs o;
	/* no rate: nothing happens, ever */
	for (int t = 0; t < 30; t++) {
		sp_attr_obs_clear(&o);
		o.t = t;
		assert_int_equal(sp_attr_feed(&a, &o), SP_ATTR_NONE);
	}
	assert_false(a.have_baseline);
	/* the window starts at the first rate, not at t=0 */
	for (int t = 30; t < 45; t++) {
		sp_attr_obs_clear(&o);
		o.t = t;
		o.rate = 4;
		o.rate_fresh = true;
		strcpy(o.unit, "it/s");
		sp_attr_feed(&a, &o);
		if (t < 40)
			assert_false(a.have_baseline);
	}
	assert_true(a.have_baseline);
	assert_float_equal(a.baseline, 4, 1e-9);
	/* a rate in another unit never opens an episode */
	for (int t = 45; t < 60; t++) {
		sp_attr_obs_clear(&o);
		o.t = t;
		o.rate = 0.5;
		o.rate_fresh = true;
		strcpy(o.unit, "samples/s");
		assert_int_equal(sp_attr_feed(&a, &o), SP_ATTR_NONE);
	}
	assert_string_equal(sp_attr_cause_name(SP_AC_POWER_CAP), "power_cap");
	assert_string_equal(sp_attr_cause_name(SP_AC_MEMORY), "memory_pressure");
}

static void stat_parse(void **st)
{
	(void)st;
	const char *s = "1234 (python3 (a) b) S 77 1234 1234 0 -1 4194560 5000 0 0 0 10 5 0 0 20 0 3 0 100 "
			"123456789 2500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n";
	pid_t pp;
	uint64_t rss;
	assert_int_equal(sp_stat_parse(s, strlen(s), &pp, &rss), 0);
	assert_int_equal(pp, 77);
	assert_int_equal(rss, 2500);
	assert_int_equal(sp_stat_parse("garbage", 7, &pp, &rss), -1);
	assert_int_equal(sp_stat_parse("1 (x) S -5 1", 12, &pp, &rss), -1);
	assert_int_equal(sp_stat_parse("1 (x) S 5 1", 11, &pp, &rss), -1); /* cut short */
}

static void kmsg_match(void **st)
{
	(void)st;
	const char *a = "6,1234,5678,-;Out of memory: Killed process 4321 (python3) total-vm:9000kB, anon-rss:8000kB";
	const char *b = "3,99,1,-;Memory cgroup out of memory: Killed process 77 (pt_main_thread) total-vm:1kB";
	assert_true(sp_kmsg_oom_killed(a, strlen(a), 4321));
	assert_false(sp_kmsg_oom_killed(a, strlen(a), 432));
	assert_false(sp_kmsg_oom_killed(a, strlen(a), 43210));
	assert_true(sp_kmsg_oom_killed(b, strlen(b), 77));
	assert_false(sp_kmsg_oom_killed("Killed process", 14, 1));
}

static void tree_of_self(void **st)
{
	SKIP_UNDER_QEMU(QEMU_PROCSTAT);
	(void)st;
	static struct sp_tree t;
	/* this process is in its own tree; our parent is not */
	assert_int_equal(sp_tree_scan(&t, "/proc", getpid(), true, 0), 0);
	assert_true(t.n >= 1);
	assert_int_equal(t.pids[0], getpid());
	assert_true(t.rss_bytes > 0);
	assert_int_equal(sp_tree_scan(&t, "/proc", 999999999, true, 0), -ESRCH);
}

static void events(void **st)
{
	(void)st;
	static struct sp_sample s;
	memset(&s, 0, sizeof s);
	struct sp_evstate e;
	sp_evstate_init(&e);
	struct sp_logrow rows[16];
	bool app;
	s.wall = 1000;
	s.gpu_status = SP_OK;
	s.ngpu = 1;
	s.gpus[0].reasons.why = SP_OK;
	s.gpus[0].reasons.v = SP_REASON_GPU_IDLE;
	s.nprocs = 1;
	s.procs[0].pid = 42; /* the job itself */
	int skip[] = { 42 };
	assert_int_equal(sp_events_diff(&e, &s, true, skip, 1, rows, 16, &app), 0);
	s.gpus[0].reasons.v = SP_REASON_SW_THERMAL | SP_REASON_SW_POWER_CAP;
	s.nprocs = 2;
	s.procs[1].pid = 77;
	strcpy(s.procs[1].name, "vllm");
	s.procs[1].kind = SP_PROC_SERVER;
	int n = sp_events_diff(&e, &s, true, skip, 1, rows, 16, &app);
	assert_int_equal(n, 3);
	assert_true(app);
	assert_string_equal(rows[0].event, "reason_on");
	assert_string_equal(rows[0].detail, "sw_power_cap");
	assert_string_equal(rows[1].detail, "sw_thermal_slowdown");
	assert_string_equal(rows[2].event, "process_appeared");
	assert_non_null(strstr(rows[2].detail, "pid=77 name=vllm kind=inference_server"));
	s.gpus[0].reasons.v = SP_REASON_SW_POWER_CAP;
	s.gpu_status = SP_TIMEOUT;
	n = sp_events_diff(&e, &s, true, skip, 1, rows, 16, &app);
	assert_false(app);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].event, "gpu_unavailable");
	assert_string_equal(rows[0].detail, "timeout");
	assert_string_equal(rows[1].event, "reason_off");
	s.gpu_status = SP_OK;
	n = sp_events_diff(&e, &s, true, skip, 1, rows, 16, &app);
	assert_int_equal(n, 1);
	assert_string_equal(rows[0].event, "gpu_available");
	/* a sample without a process scan: nothing vanishes, nothing appears */
	s.nprocs = 0;
	assert_int_equal(sp_events_diff(&e, &s, false, skip, 1, rows, 16, &app), 0);
	s.nprocs = 2;
	assert_int_equal(sp_events_diff(&e, &s, true, skip, 1, rows, 16, &app), 0);
	assert_false(app);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(causes), cmocka_unit_test(whole_episode),      cmocka_unit_test(episode_ends), cmocka_unit_test(baseline_rules), cmocka_unit_test(stat_parse),
		cmocka_unit_test(tree_of_self), cmocka_unit_test(kmsg_match), cmocka_unit_test(events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
