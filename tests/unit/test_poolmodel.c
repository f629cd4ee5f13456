// SPDX-License-Identifier: MIT
/* The pool model (probe/poolmodel.h) on scripted samples: one 'used', the
 * page cache with shmem apart, what a flush and an eviction give back, what
 * a process holds (never its cap), and the run summary's peak reading it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "probe/poolmodel.h"
#include "watch/logrow.h"
#include "watch/summary.h"

#define GiB (1ULL << 30)

static void mi_set(struct sp_meminfo *m, enum sp_mi k, uint64_t v)
{
	m->v[k] = v;
	m->have |= 1ull << k;
}

/* the loaded Spark's figures: 119.7 GiB, 6.2 free, 45.0 page cache */
static void loaded(struct sp_sample *s)
{
	memset(s, 0, sizeof *s);
	struct sp_meminfo *m = &s->mem;
	m->why = SP_OK;
	mi_set(m, SP_MI_TOTAL, 120 * GiB);
	mi_set(m, SP_MI_FREE, 6 * GiB);
	mi_set(m, SP_MI_AVAILABLE, 50 * GiB);
	mi_set(m, SP_MI_BUFFERS, 1 * GiB);
	mi_set(m, SP_MI_CACHED, 44 * GiB);
	mi_set(m, SP_MI_SHMEM, 2 * GiB);
	mi_set(m, SP_MI_MAPPED, 3 * GiB);
	mi_set(m, SP_MI_SRECLAIMABLE, 2 * GiB);
	mi_set(m, SP_MI_SUNRECLAIM, 1 * GiB);
	sp_budget_compute(&s->budget, m, NULL, 4 * GiB);
	s->nprocs = 2;
	struct sp_proc *p = s->procs;
	snprintf(p[0].name, sizeof p[0].name, "vllm");
	p[0].kind = SP_PROC_SERVER, p[0].has_cap = true, p[0].cap_frac = 0.5, p[0].rss_bytes = 3 * GiB;
	p[0].gpu_mem = (struct sp_u64){ 0, SP_NOT_SUPPORTED };
	snprintf(p[1].name, sizeof p[1].name, "train.py");
	p[1].kind = SP_PROC_TRAINER, p[1].rss_bytes = 38 * GiB;
	p[1].gpu_mem = (struct sp_u64){ 2 * GiB, SP_OK };
}

static void figures(void **st)
{
	(void)st;
	static struct sp_sample s;
	loaded(&s);
	struct sp_pool p;
	sp_pool_from_sample(&p, &s);
	assert_int_equal(p.why, SP_OK);
	assert_int_equal(p.cache, 45 * GiB);
	assert_int_equal(p.shmem, 2 * GiB);
	assert_int_equal(p.used, 69 * GiB); /* 120 - 6 - 45 */
	assert_int_equal(p.kernel, 3 * GiB);
	assert_int_equal(p.used + p.cache + p.free, p.total);
	/* a flush: cache - shmem - mapped + reclaimable slab = 45 - 2 - 3 + 2 */
	assert_int_equal(sp_pool_flush_gain(&s.mem), 42 * GiB);
	assert_int_equal(p.reclaimable.v, 42 * GiB);
	assert_int_equal(p.budget_now.v, 2 * GiB);
	assert_int_equal(p.budget_after_flush.v, 44 * GiB);
	/* held: RSS + GPU memory; the 0.5 cap (60 GiB) is not held */
	assert_int_equal(sp_pool_proc_held(&s.procs[0]), 3 * GiB);
	assert_int_equal(sp_pool_proc_held(&s.procs[1]), 40 * GiB);
	assert_int_equal(p.procs_held, 43 * GiB);
	assert_int_equal(sp_pool_proc_cap(&s.procs[0], 120.0 * (double)GiB), 60 * GiB);
	assert_int_equal(sp_pool_proc_cap(&s.procs[1], 120.0 * (double)GiB), 0);
	assert_int_equal(sp_pool_proc_cap(&s.procs[0], 0), 0);
	/* an eviction gives back what is resident, at most what a flush would */
	assert_int_equal(sp_pool_evict_gain(&p, 10 * GiB), 10 * GiB);
	assert_int_equal(sp_pool_evict_gain(&p, 100 * GiB), 42 * GiB);
	struct sp_u64 b = sp_pool_budget_after_evict(&p, 10 * GiB);
	assert_int_equal(b.why, SP_OK);
	assert_int_equal(b.v, 12 * GiB);
	/* the small cap: one constant, and the advice names it */
	assert_true(SP_POOL_SMALL_CAP > 0 && SP_POOL_SMALL_CAP < 1);
}

static void cheap_look(void **st)
{
	(void)st;
	static struct sp_sample s;
	loaded(&s);
	struct sp_pool p;
	sp_pool_from_meminfo(&p, &s.mem);
	assert_int_equal(p.used, 69 * GiB);
	assert_int_equal(p.reclaimable.v, 42 * GiB);
	assert_int_equal(p.budget_now.v, 6 * GiB); /* no reserve on the guard's look */
	assert_int_equal(p.procs_held, 0);
	/* meminfo unknown: nothing is made up */
	struct sp_meminfo m;
	memset(&m, 0, sizeof m);
	m.why = SP_MISSING;
	sp_pool_from_meminfo(&p, &m);
	assert_int_equal(p.why, SP_MISSING);
	assert_false(sp_ok(p.reclaimable.why));
	assert_false(sp_ok(p.budget_now.why));
	assert_false(sp_ok(sp_pool_budget_after_evict(&p, GiB).why));
}

static void used_of(void **st)
{
	(void)st;
	assert_float_equal(sp_pool_used_of(100, 10, 30), 60, 1e-9);
	assert_true(isnan(sp_pool_used_of(100, 10, NAN))); /* not total - free */
	assert_float_equal(sp_pool_used_of(100, 80, 30), 0, 1e-9);
	assert_true(isnan(sp_pool_used_of(NAN, 10, 30)));
	assert_true(isnan(sp_pool_used_of(100, NAN, 30)));
}

/* the summary's peak pool use is top's 'used': the page cache is not in it */
static void summary_peak(void **st)
{
	(void)st;
	static struct sp_summary s;
	sp_summary_init(&s);
	struct sp_logrow r;
	double cache[3] = { 45, 60, 10 }, fr[3] = { 6, 2, 30 };
	for (int i = 0; i < 3; i++) {
		sp_logrow_clear(&r, SP_ROW_SAMPLE);
		r.unix_time = 1000 + i;
		r.mem_total = 120 * (double)GiB;
		r.mem_free = fr[i] * (double)GiB;
		r.page_cache = cache[i] * (double)GiB;
		sp_summary_add(&s, &r);
	}
	sp_summary_finish(&s);
	/* used: 69, 58, 80: the peak is the third sample's, though MemFree was lowest at the second */
	assert_float_equal(s.peak_pool_used, 80 * (double)GiB, 1);
	assert_float_equal(s.peak_pool_used_t, 1002, 1e-9);
	assert_float_equal(s.peak_page_cache, 60 * (double)GiB, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(figures),
		cmocka_unit_test(cheap_look),
		cmocka_unit_test(used_of),
		cmocka_unit_test(summary_peak),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
