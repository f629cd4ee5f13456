// SPDX-License-Identifier: MIT
/* The rest of run/watch's per-sample path allocates nothing either, after
 * warm-up: the job's process tree (full scan and refresh), events between
 * samples, the log row, the summary, progress parsing, attribution and the
 * guard. Same counting as test_noalloc.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "qemu_skip.h"

#include "probe/probe.h"
#include "util/paths.h"
#include "watch/attribute.h"
#include "watch/child.h"
#include "watch/guard.h"
#include "watch/logrow.h"
#include "watch/progress.h"
#include "watch/sampler.h"
#include "watch/summary.h"

#include <math.h>

#include "alloc_count.h"

static struct sp_sample S;
static struct sp_tree T;
static struct sp_summary SUM;
static struct sp_attr A;
static struct sp_progress P;
static struct sp_evstate E;

static void one(int i, struct sp_guard *g)
{
	char line[2048];
	struct sp_logrow rows[24], r;
	bool app;
	if (i % 5 == 0)
		sp_tree_scan(&T, "/proc", getpid(), true, 0);
	else
		sp_tree_refresh(&T, "/proc");
	S.wall = 1795945000.0 + i;
	int n = sp_events_diff(&E, &S, i % 5 == 0, T.pids, T.n, rows, 24, &app);
	for (int k = 0; k < n; k++) {
		sp_logrow_format(&rows[k], line, sizeof line);
		sp_summary_add(&SUM, &rows[k]);
	}
	sp_logrow_from_sample(&r, &S);
	r.job_rss_bytes = (double)T.rss_bytes;
	char bar[160];
	int bl = snprintf(bar, sizeof bar, "\r 10%%|#| %d/1000 [00:01<00:09, %.2fit/s, loss=0.5]", i, i < 30 ? 10.0 : 5.0);
	sp_progress_feed(&P, bar, (size_t)bl);
	sp_progress_flush(&P);
	r.throughput = P.rate;
	struct sp_attr_obs o;
	sp_attr_obs_clear(&o);
	o.t = i;
	o.rate = P.rate;
	strcpy(o.unit, P.unit);
	o.rate_fresh = true;
	o.gpu_temp_c = r.gpu_temp_c;
	if (sp_attr_feed(&A, &o) == SP_ATTR_EPISODE_START) {
		char d[256];
		snprintf(d, sizeof d, "cause=%s drop_pct=%.1f", sp_attr_cause_name(A.cause), A.drop_pct);
		sp_logrow_event(&rows[0], S.wall, SP_EV_EPISODE_START, d);
		sp_logrow_format(&rows[0], line, sizeof line);
		sp_summary_add(&SUM, &rows[0]);
	}
	sp_logrow_format(&r, line, sizeof line);
	sp_summary_add(&SUM, &r);
	struct sp_guard_look gl = { .free_bytes = 5e9 - i * 1e8, .reclaimable = 1e9, .psi_full = NAN, .job_alive = true };
	sp_guard_step(g, i * 0.1, &gl);
	sp_guard_sleep_ms(g, 5e9);
}

static void per_sample_path_allocates_nothing(void **st)
{
	SKIP_UNDER_QEMU(QEMU_PROCSTAT);
	(void)st;
	sp_paths_init("tests/fixtures/gb10-loaded/proc", "tests/fixtures/gb10-loaded/sys");
	struct sp_read_opts o;
	sp_read_opts_init(&o);
	o.what = SP_READ_ALL & ~(unsigned)SP_READ_GPU;
	sp_sample_read(&S, &o);
	sp_summary_init(&SUM);
	sp_attr_init(&A, 10, 15);
	sp_progress_init(&P, NULL);
	sp_evstate_init(&E);
	struct sp_guard_cfg c = { .min_free = 1ULL << 30, .grace_s = 1 };
	struct sp_guard g;
	sp_guard_init(&g, &c);
	for (int i = 0; i < 5; i++)
		one(i, &g);
	unsigned long before = atomic_load(&n_alloc);
	for (int i = 5; i < 60; i++)
		one(i, &g);
	unsigned long after = atomic_load(&n_alloc);
	assert_true(T.n >= 1 && T.rss_bytes > 0);
	assert_true(A.have_baseline);
	assert_int_equal(SUM.n_episodes, 1); /* the path was really taken */
	if (after != before)
		fprintf(stderr, "%lu allocations in 55 samples\n", after - before);
	assert_int_equal(after - before, 0);
}

int main(void)
{
	install_counter();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(per_sample_path_allocates_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
