// SPDX-License-Identifier: MIT
/* The load guard's driver trigger (watch/loadguard.c): NVRM out-of-memory
 * lines seen since the last look act as a floor crossed, under the same
 * cooldown, and the step says the trigger was the driver alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <regex.h>
#include <string.h>

#include "watch/loadguard.h"

#define GIB (1024.0 * 1024 * 1024)

static const struct sp_lg_cfg CFG = { .floor = 8ULL << 30, .contig_floor = 1ULL << 30, .deadline_s = 60 };

static enum sp_lg_act look(struct sp_lguard *g, double t, bool drv)
{
	g->driver_oom = drv;
	return sp_lguard_step(g, t, 40 * GIB, 20 * GIB, false, false, true);
}

static void driver_lines_trigger(void **st)
{
	(void)st;
	struct sp_lguard g;
	sp_lguard_init(&g, &CFG, 100);
	assert_int_equal(look(&g, 101, false), SP_LG_NONE); /* roomy, the driver quiet */
	assert_false(g.by_driver);
	assert_int_equal(look(&g, 102, true), SP_LG_ACT);   /* roomy, but the driver failed to allocate */
	assert_true(g.by_driver);
	sp_lguard_acted(&g, 102);
	assert_int_equal(look(&g, 102.5, true), SP_LG_NONE); /* the cooldown holds for it too */
	assert_int_equal(look(&g, 102 + SP_LG_COOLDOWN_S, true), SP_LG_ACT);
	/* a floor crossed is the trigger whatever the driver says */
	g.driver_oom = true;
	sp_lguard_step(&g, 200, 1 * GIB, 20 * GIB, false, false, true);
	assert_false(g.by_driver);
}

static void after_the_end_counted_only(void **st)
{
	(void)st;
	struct sp_lguard g;
	sp_lguard_init(&g, &CFG, 100);
	g.driver_oom = false;
	assert_int_equal(sp_lguard_step(&g, 101, 40 * GIB, 20 * GIB, true, false, true), SP_LG_STOP);
	assert_int_equal(look(&g, 102, true), SP_LG_NONE);
	assert_int_equal(g.below_after, 1);
}

int main(void)
{
	const struct CMUnitTest t[] = {
		cmocka_unit_test(driver_lines_trigger),
		cmocka_unit_test(after_the_end_counted_only),
	};
	return cmocka_run_group_tests(t, NULL, NULL);
}
