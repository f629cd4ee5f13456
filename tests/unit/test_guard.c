// SPDX-License-Identifier: MIT
/* The pool guard's step function (watch/guard.h) on scripted time and
 * scripted looks: it frees what costs nothing first, leaves a job alone while
 * the page cache covers the floor, and stops it only when the pool is short
 * (nothing reclaimable left) for the confirmation window, or at once when the
 * short pool keeps falling (a fast allocator), or on PSI full. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "watch/guard.h"

#define GiB (1024.0 * 1024 * 1024)
#define MiB (1024.0 * 1024)

static enum sp_guard_act look(struct sp_guard *g, double t, double fr, double rec, bool alive)
{
	struct sp_guard_look l = { .free_bytes = fr, .reclaimable = rec, .psi_full = NAN, .job_alive = alive };
	return sp_guard_step(g, t, &l);
}

/* MemFree 5 GiB, 17 GiB of page cache, a 6 GiB floor: the healthy job */
static void cache_covers_the_floor(void **st)
{
	(void)st;
	struct sp_guard_cfg c = { .min_free = (uint64_t)(6 * GiB), .can_evict = true, .grace_s = 10, .confirm_s = 3 };
	struct sp_guard g;
	sp_guard_init(&g, &c);
	assert_int_equal(look(&g, 0.0, 5 * GiB, 17 * GiB, true), SP_GA_WARN);
	assert_int_equal(look(&g, 0.02, 5 * GiB, 17 * GiB, true), SP_GA_FREE); /* what costs nothing, first */
	sp_guard_freed(&g, 0); /* the job's own files: nothing to give */
	assert_int_equal(look(&g, 0.04, 5 * GiB, 17 * GiB, true), SP_GA_HOLD); /* said once */
	for (double t = 0.06; t < 60; t += 0.5) /* never a stop; the futile eviction is not repeated */
		assert_int_equal(look(&g, t, 5 * GiB, 17 * GiB, true), SP_GA_NONE);
	assert_int_equal(g.state, SP_GUARD_WARNED);
	assert_int_equal(g.frees, 1);
	/* the job ends by itself: back above the floor */
	assert_int_equal(look(&g, 61, 8 * GiB, 17 * GiB, false), SP_GA_RECOVERED);

	/* without a way to free (no flush, no eviction): warned and held, never stopped */
	c.can_evict = false;
	sp_guard_init(&g, &c);
	assert_int_equal(look(&g, 0.0, 5 * GiB, 17 * GiB, true), SP_GA_WARN);
	assert_int_equal(look(&g, 0.02, 5 * GiB, 17 * GiB, true), SP_GA_HOLD);
	assert_int_equal(look(&g, 10, 5 * GiB, 17 * GiB, true), SP_GA_NONE);
}

/* a flush that works: MemFree rises, the cache falls, the guard recovers */
static void flush_lifts_it(void **st)
{
	(void)st;
	struct sp_guard_cfg c = { .min_free = (uint64_t)(6 * GiB), .can_flush = true, .grace_s = 10 };
	struct sp_guard g;
	sp_guard_init(&g, &c);
	assert_float_equal(sp_guard_confirm_s(&g), SP_GUARD_DEFAULT_CONFIRM_S, 0);
	assert_int_equal(look(&g, 0.0, 5 * GiB, 17 * GiB, true), SP_GA_WARN);
	assert_int_equal(look(&g, 0.02, 5 * GiB, 17 * GiB, true), SP_GA_FREE);
	sp_guard_freed(&g, 16 * GiB);
	assert_float_equal(g.freed_bytes, 16 * GiB, 0);
	/* the flush takes a moment to show */
	assert_int_equal(look(&g, 0.5, 5.5 * GiB, 16 * GiB, true), SP_GA_HOLD);
	assert_int_equal(look(&g, 1.5, 21 * GiB, 1 * GiB, true), SP_GA_RECOVERED);

	/* a flush that gave back 4 GiB, the floor still crossed: once per window, not more often */
	sp_guard_init(&g, &c);
	assert_int_equal(look(&g, 0.0, 5 * GiB, 17 * GiB, true), SP_GA_WARN);
	assert_int_equal(look(&g, 0.02, 5 * GiB, 17 * GiB, true), SP_GA_FREE);
	sp_guard_freed(&g, 4 * GiB);
	assert_int_equal(look(&g, 0.5, 5 * GiB, 13 * GiB, true), SP_GA_HOLD);
	assert_int_equal(look(&g, 2.9, 5 * GiB, 13 * GiB, true), SP_GA_NONE);
	assert_int_equal(look(&g, 3.1, 5 * GiB, 13 * GiB, true), SP_GA_FREE);
	assert_int_equal(g.frees, 2);
}

/* nothing reclaimable: stopped after the window, not before */
static void nothing_to_take(void **st)
{
	(void)st;
	struct sp_guard_cfg c = { .min_free = (uint64_t)(6 * GiB), .can_evict = true, .grace_s = 2, .confirm_s = 3 };
	struct sp_guard g;
	sp_guard_init(&g, &c);
	assert_int_equal(look(&g, 0.0, 5 * GiB, 0.1 * GiB, true), SP_GA_WARN);
	assert_true(g.short_now);
	/* 100 MiB reclaimable is under SP_GUARD_TAKE_MIN: no free action either */
	assert_int_equal(look(&g, 0.1, 5 * GiB, 0.1 * GiB, true), SP_GA_NONE);
	assert_int_equal(look(&g, 2.9, 5 * GiB, 0.1 * GiB, true), SP_GA_NONE);
	assert_int_equal(look(&g, 3.2, 5 * GiB, 0.1 * GiB, true), SP_GA_TERM);
	assert_int_equal(look(&g, 4.0, 5 * GiB, 0.1 * GiB, true), SP_GA_NONE);
	assert_int_equal(look(&g, 5.3, 5 * GiB, 0.1 * GiB, true), SP_GA_KILL); /* still alive after the grace */
	assert_int_equal(look(&g, 9.0, 1 * GiB, 0, true), SP_GA_NONE);
	assert_float_equal(g.lowest_free, 1 * GiB, 0);

	/* a dip shorter than the window is no reason to stop */
	sp_guard_init(&g, &c);
	assert_int_equal(look(&g, 0.0, 5 * GiB, 0, true), SP_GA_WARN);
	assert_int_equal(look(&g, 1.0, 5 * GiB, 0, true), SP_GA_NONE);
	assert_int_equal(look(&g, 1.2, 7 * GiB, 0, true), SP_GA_RECOVERED);
	assert_int_equal(look(&g, 2.0, 5 * GiB, 0, true), SP_GA_WARN); /* a new episode: a new window */
	assert_int_equal(look(&g, 4.5, 5 * GiB, 0, true), SP_GA_NONE);
	assert_int_equal(look(&g, 5.1, 5 * GiB, 0, true), SP_GA_TERM);

	/* a job that already ended is not stopped */
	sp_guard_init(&g, &c);
	assert_int_equal(look(&g, 0, 5 * GiB, 0, true), SP_GA_WARN);
	assert_int_equal(look(&g, 4, 5 * GiB, 0, false), SP_GA_NONE);

	/* unknown free memory is not "below the floor" */
	sp_guard_init(&g, &c);
	assert_int_equal(look(&g, 0, NAN, 0, true), SP_GA_NONE);
	/* unknown reclaimable counts as none */
	assert_int_equal(look(&g, 0, 5 * GiB, NAN, true), SP_GA_WARN);
	assert_true(g.short_now);
}

/* a 2 GiB/s allocator, looked at every 20 ms: stopped within SP_GUARD_FALL
 * of the floor, long before the 3 s window */
static void fast_allocator(void **st)
{
	(void)st;
	struct sp_guard_cfg c = { .min_free = (uint64_t)(6 * GiB), .can_evict = true, .grace_s = 2, .confirm_s = 3 };
	struct sp_guard g;
	sp_guard_init(&g, &c);
	double fr = 8 * GiB, rec = 1 * GiB, t = 0, term_free = NAN;
	for (int i = 0; i < 400 && isnan(term_free); i++) {
		enum sp_guard_act a = look(&g, t, fr, rec, true);
		if (a == SP_GA_FREE)
			sp_guard_freed(&g, 0);
		if (a == SP_GA_TERM)
			term_free = fr + rec;
		t += 0.02;
		/* the kernel takes the cache first, then the free pages */
		double take = SP_GUARD_FAST_RATE * 0.02;
		double from_cache = rec > take / 2 ? take / 2 : rec;
		rec -= from_cache;
		fr -= take - from_cache;
	}
	assert_true(isfinite(term_free));
	assert_true(t < 3.0);
	double under = 6 * GiB - term_free;
	assert_true(under >= 0 && under < SP_GUARD_FALL + SP_GUARD_FAST_RATE * 0.05);
}

static void psi_stall(void **st)
{
	(void)st;
	/* PSI full: stopped after its own window, whatever is reclaimable */
	struct sp_guard_cfg p = { .psi_full_pct = 20, .grace_s = 1, .can_evict = true };
	struct sp_guard g;
	sp_guard_init(&g, &p);
	struct sp_guard_look l = { .free_bytes = 50 * GiB, .reclaimable = 40 * GiB, .psi_full = 30, .job_alive = true };
	assert_int_equal(sp_guard_step(&g, 0, &l), SP_GA_WARN);
	assert_true(g.by_psi);
	assert_int_equal(sp_guard_step(&g, 1, &l), SP_GA_NONE);
	assert_int_equal(sp_guard_step(&g, 5.5, &l), SP_GA_TERM);
	/* and a floor crossed with the cache covering it, but the box stalling */
	struct sp_guard_cfg b = { .min_free = (uint64_t)(6 * GiB), .psi_full_pct = 20, .grace_s = 1 };
	sp_guard_init(&g, &b);
	struct sp_guard_look m = { .free_bytes = 5 * GiB, .reclaimable = 17 * GiB, .psi_full = 30, .job_alive = true };
	assert_int_equal(sp_guard_step(&g, 0, &m), SP_GA_WARN);
	assert_int_equal(sp_guard_step(&g, 0.1, &m), SP_GA_HOLD);
	assert_int_equal(sp_guard_step(&g, 5.1, &m), SP_GA_TERM);

	struct sp_guard_cfg off = { 0 };
	assert_false(sp_guard_enabled(&off));
}

static void guard_sleep(void **st)
{
	(void)st;
	struct sp_guard_cfg c = { .min_free = 1ULL << 30, .grace_s = 1 };
	struct sp_guard g;
	sp_guard_init(&g, &c);
	/* far from the floor: the slowest look */
	assert_int_equal(sp_guard_sleep_ms(&g, 100e9), SP_GUARD_MAX_SLEEP_MS);
	/* 256 MiB above it: a 2 GiB/s allocator needs 125 ms; look within half that */
	int ms = sp_guard_sleep_ms(&g, (double)(1ULL << 30) + 256.0 * MiB);
	assert_true(ms >= 60 && ms <= 63);
	assert_int_equal(sp_guard_sleep_ms(&g, 1e6), SP_GUARD_MIN_SLEEP_MS);
	assert_int_equal(sp_guard_sleep_ms(&g, NAN), SP_GUARD_MAX_SLEEP_MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cache_covers_the_floor),
		cmocka_unit_test(flush_lifts_it),
		cmocka_unit_test(nothing_to_take),
		cmocka_unit_test(fast_allocator),
		cmocka_unit_test(psi_stall),
		cmocka_unit_test(guard_sleep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
