// SPDX-License-Identifier: MIT
/* The next rung's change through the planner (account/rungplan.h), on the
 * catalog's shapes and a scripted budget: each rung's steps, the chosen
 * one, rung 4's facts, the log model's check and the next size down. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "account/footprint.h"
#include "account/rungplan.h"

#define GiB (1ULL << 30)

static struct sp_model_shape M;

static void load(const char *name)
{
	char err[512];
	memset(&M, 0, sizeof M);
	assert_int_equal(sp_catalog_find(name, &M, err, sizeof err), 0);
	assert_int_equal(sp_shape_complete(&M), 0);
}

static struct sp_ladder_plan LP;

static void plan_at(const struct sp_plan_opts *o, uint64_t budget, uint64_t flush, uint64_t seq_advised, int rung)
{
	memset(&LP, 0, sizeof LP);
	LP.budget = budget;
	LP.budget_flush = flush;
	LP.seq_advised = seq_advised;
	sp_rung_plan(&LP, &M, o, rung);
}

static void plan(const struct sp_plan_opts *o, uint64_t budget, uint64_t flush, int rung)
{
	plan_at(o, budget, flush, 0, rung);
}

static void rungs(void **st)
{
	(void)st;
	load("llama-3.1-8b");
	struct sp_plan_opts o;
	sp_plan_opts_init(&o);
	o.uma = true;
	o.seq = 4096;
	o.batch = 4;
	/* rung 1: the same job against the budget after a flush */
	plan(&o, 10 * GiB, 200 * GiB, 1);
	assert_int_equal(LP.nsteps, 1);
	assert_string_equal(LP.steps[0].change, "flush");
	assert_true(LP.steps[0].need == LP.given.need && LP.steps[0].budget == 200 * GiB);
	assert_true(LP.steps[0].fits && !LP.given.fits);
	assert_int_equal(LP.chosen, 0);
	/* rung 2: the sequence halved, then the batch; lower needs */
	plan(&o, 200 * GiB, 0, 2);
	assert_true(LP.nsteps >= 2);
	assert_string_equal(LP.steps[0].change, "--seq 2048");
	assert_string_equal(LP.steps[1].change, "--batch 2");
	assert_true(LP.steps[0].need < LP.given.need && LP.steps[1].need < LP.given.need);
	assert_int_equal(LP.chosen, 0);
	/* the context the advice names instead of a halving */
	plan_at(&o, 200 * GiB, 0, 1024, 2);
	assert_string_equal(LP.steps[0].change, "--seq 1024");
	/* rung 3: LoRA becomes QLoRA; nothing below QLoRA, said */
	plan(&o, 200 * GiB, 0, 3);
	assert_string_equal(LP.steps[0].change, "--method qlora");
	assert_true(LP.steps[0].need < LP.given.need);
	struct sp_plan_opts q = o;
	q.method = SP_METHOD_QLORA, q.quant = SP_QUANT_NF4;
	plan(&q, 200 * GiB, 0, 3);
	assert_int_equal(LP.nsteps, 0);
	assert_non_null(strstr(LP.none_why, "no lower tier"));
	assert_int_equal(LP.chosen, -1);
	/* nothing fits: the chosen step is the last */
	plan(&o, 1 * GiB, 0, 2);
	assert_false(LP.steps[0].fits);
	assert_int_equal(LP.chosen, LP.nsteps - 1);
}

static void rung4(void **st)
{
	(void)st;
	load("llama-3.1-70b");
	struct sp_plan_opts o;
	sp_plan_opts_init(&o);
	o.uma = true;
	plan(&o, 100 * GiB, 0, 4);
	assert_true(LP.smaller_model[0] != 0);
	assert_true(LP.smaller_need <= 100 * GiB);
	assert_int_not_equal(LP.two_sparks, 0);
	assert_string_equal(LP.two_sparks_strategy, "FSDP");
	assert_true(LP.nsteps == 2);
	assert_string_equal(LP.steps[0].change, LP.smaller_model);
	assert_string_equal(LP.steps[1].change, "--nodes 2 --strategy fsdp");
	/* rung 4's facts are planned whatever the rung */
	plan(&o, 100 * GiB, 0, 2);
	assert_true(LP.smaller_model[0] != 0);
}

static void the_logs_model(void **st)
{
	(void)st;
	struct sp_ladder_model_check mc;
	assert_int_equal(sp_rung_log_model_check("meta-llama/Llama-3.1-8B-Instruct", &mc), 0);
	assert_string_equal(mc.name, "llama-3.1-8b");
	assert_string_equal(mc.how, "the log's model");
	assert_string_equal(mc.precision, "bf16");
	assert_true(mc.need_q4 < mc.need_q8 && mc.need_q8 < mc.need && mc.need_min <= mc.need);
	assert_true(mc.weights > 14 * GiB && mc.weights < 16 * GiB);
	/* a quantized checkpoint's name says its precision */
	assert_int_equal(sp_rung_log_model_check("RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic", &mc), 0);
	assert_string_equal(mc.precision, "8-bit weights");
	assert_int_equal(sp_rung_log_model_check("no-such/model-7b", &mc), -1);
	assert_int_equal(sp_rung_log_model_check("", &mc), -1);
	char name[128], hf[128];
	assert_int_equal(sp_rung_next_size_down("meta-llama/Llama-3.1-70B-Instruct", name, sizeof name, hf, sizeof hf), 0);
	assert_string_equal(name, "llama-3.1-8b");
	assert_true(hf[0] != 0);
	assert_int_equal(sp_rung_next_size_down("no-such/model-7b", name, sizeof name, hf, sizeof hf), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rungs),
		cmocka_unit_test(rung4),
		cmocka_unit_test(the_logs_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
