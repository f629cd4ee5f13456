// SPDX-License-Identifier: MIT
/* Planning around the footprint: --cohost parsing, the verdict and its
 * margin, the anchors, and the fit search's order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "account/fit.h"
#include "shapes.h"

#define GiB (1ULL << 30)

static int parse(const char *s, struct sp_cohost *c)
{
	char err[256];
	return sp_cohost_parse(s, strlen(s), c, err, sizeof err);
}

static void cohost(void **st)
{
	(void)st;
	struct sp_cohost c;
	char err[256];
	assert_int_equal(parse("vllm:0.5", &c), 0);
	assert_int_equal(c.kind, SP_COHOST_VLLM);
	assert_true(sp_cohost_bytes(&c, 100 * GiB) == 50 * GiB);
	assert_int_equal(parse("VLLM:1", &c), 0);
	assert_int_equal(parse("ollama:12GiB", &c), 0);
	assert_true(c.kind == SP_COHOST_OLLAMA_SIZE && c.bytes == 12 * GiB);
	assert_true(sp_cohost_bytes(&c, 1) == 12 * GiB);
	assert_int_equal(parse("ollama:/m/x.GGUF", &c), 0);
	assert_true(c.kind == SP_COHOST_OLLAMA_FILE && strcmp(c.path, "/m/x.GGUF") == 0);
	const char *bad[] = { "", "vllm", "vllm:", "vllm:0", "vllm:-0.5", "vllm:1.01", "vllm:nan", "vllm:inf",
			      "vllm:0.5x", "ollama:", "ollama:0", "ollama:lots", "sglang:0.5", ":0.5", ".gguf" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (parse(bad[i], &c) != -1) {
			print_error("'%s' was accepted\n", bad[i]);
			fail();
		}
	}
	/* not NUL-terminated, embedded NUL, too long */
	assert_int_equal(sp_cohost_parse("vllm:0.5xxxx", 8, &c, err, sizeof err), 0);
	assert_int_equal(sp_cohost_parse("vllm:0\0.5", 9, &c, err, sizeof err), -1);
	char big[2000];
	memset(big, 'a', sizeof big);
	assert_int_equal(sp_cohost_parse(big, sizeof big, &c, err, sizeof err), -1);
	assert_non_null(strstr(err, "--cohost"));
}

static void verdict(void **st)
{
	(void)st;
	/* margin: max(2 GiB, 10%) */
	assert_true(sp_tight_margin(10 * GiB) == 2 * GiB);
	assert_true(sp_tight_margin(100 * GiB) == 10 * GiB);
	assert_int_equal(sp_judge(10 * GiB, 13 * GiB), SP_FITS);
	assert_int_equal(sp_judge(10 * GiB, 11 * GiB), SP_TIGHT);
	assert_int_equal(sp_judge(10 * GiB, 10 * GiB), SP_TIGHT);
	assert_int_equal(sp_judge(10 * GiB + 1, 10 * GiB), SP_NO);
	assert_int_equal(sp_judge(100 * GiB, 109 * GiB), SP_TIGHT);
	assert_int_equal(sp_judge(100 * GiB, 111 * GiB), SP_FITS);
	assert_string_equal(sp_verdict_name(SP_TIGHT), "tight");
	struct sp_footprint f = { .peak_bytes = 5, .load_peak_bytes = 7 };
	assert_true(sp_need(&f) == 7);
}

static struct sp_plan_opts opts(enum sp_method m)
{
	struct sp_plan_opts o;
	sp_plan_opts_init(&o);
	o.method = m;
	return o;
}

static void anchors(void **st)
{
	(void)st;
	struct sp_model_shape l70 = LLAMA31_70B, l8 = LLAMA31_8B;
	struct sp_plan_opts o = opts(SP_METHOD_QLORA);
	const struct sp_anchor *a = sp_anchor_nearest(&l70, &o);
	assert_string_equal(a->name, "70b-qlora");
	/* it counts the weights: the plan's NF4 weights (~39.5 GB) are not far */
	assert_string_equal(sp_anchor_counts(a), "weights");
	struct sp_footprint f;
	sp_footprint_compute(&l70, &o, &f);
	assert_true(sp_anchor_plan_bytes(a, &f) == f.term[SP_T_WEIGHTS]);
	assert_false(sp_anchor_far(a, &o, sp_anchor_plan_bytes(a, &f)));
	/* forgetting --method qlora: bf16 weights, 141 GB, far */
	assert_true(sp_anchor_far(a, &o, 141e9));
	/* another size class or method shows no anchor at all */
	assert_null(sp_anchor_nearest(&l8, &o));
	o = opts(SP_METHOD_LORA);
	assert_null(sp_anchor_nearest(&l70, &o));
	o = opts(SP_METHOD_FULL);
	a = sp_anchor_nearest(&l8, &o);
	assert_string_equal(a->name, "9b-full");
	assert_string_equal(sp_anchor_counts(a), "fits");
	assert_false(sp_anchor_far(a, &o, 80e9));
	assert_true(sp_anchor_far(a, &o, 140e9)); /* over the Spark's pool */
	struct sp_model_shape none = { 0 };
	assert_null(sp_anchor_nearest(&none, &o));
}

/* rung 4: more Sparks (the smallest N <= 4) and a smaller model of the family */
static void fit_rung4(void **st)
{
	(void)st;
	struct sp_model_shape l70 = LLAMA31_70B, l8 = LLAMA31_8B, l2 = LLAMA2_7B, q7 = QWEN25_7B;
	struct sp_plan_opts o = opts(SP_METHOD_QLORA);
	enum sp_strategy s;
	uint64_t need;
	/* 70B QLoRA at 30 GiB a node: four Sparks under FSDP fit, fewer do not */
	int n = sp_fit_nodes(&l70, &o, 30 * GiB, &s, &need);
	assert_int_equal(n, 4);
	assert_int_equal(s, SP_STRAT_FSDP);
	assert_true(need <= 30 * GiB);
	struct sp_plan_opts o3 = o;
	o3.nodes = 3;
	o3.strategy = SP_STRAT_FSDP;
	struct sp_footprint f;
	sp_footprint_compute(&l70, &o3, &f);
	assert_true(sp_judge(sp_node_need(&f), 30 * GiB) != SP_FITS);
	/* no N <= 4 fits 10 GiB */
	assert_int_equal(sp_fit_nodes(&l70, &o, 10 * GiB, &s, &need), 0);
	/* serving: tensor parallelism */
	o = opts(SP_METHOD_INFER);
	n = sp_fit_nodes(&l70, &o, 100 * GiB, &s, &need);
	assert_int_equal(n, 2);
	assert_int_equal(s, SP_STRAT_TP);
	/* a smaller model: the family prefix first, the same arch, smaller */
	snprintf(l70.name, sizeof l70.name, "llama-3.1-70b");
	snprintf(l8.name, sizeof l8.name, "llama-3.1-8b");
	snprintf(l2.name, sizeof l2.name, "llama-2-7b");
	struct sp_model_shape c[] = { q7, l2, l8 };
	o = opts(SP_METHOD_QLORA);
	assert_int_equal(sp_fit_smaller(&l70, c, 3, &o, 30 * GiB, &need), 2);
	assert_true(need <= 30 * GiB);
	/* nothing of the family fits 4 GiB */
	assert_int_equal(sp_fit_smaller(&l70, c, 3, &o, 4 * GiB, &need), -1);
	/* under a Llama 3.1 8B (the smallest 3.1), the same generation (3.2)
	 * before an older one (Llama 2 7B), though the older one is larger */
	struct sp_model_shape l32 = l8;
	snprintf(l32.name, sizeof l32.name, "llama-3.2-3b");
	l32.params = l8.params * 0.4;
	struct sp_model_shape c2[] = { l2, l32, q7 };
	uint64_t huge = UINT64_MAX / 4;
	assert_int_equal(sp_fit_smaller(&l8, c2, 3, &o, huge, &need), 1);
	/* no generation of its own: the same arch, the largest (Llama 2 7B under an 8B of another name) */
	snprintf(l8.name, sizeof l8.name, "mymodel-8b");
	assert_int_equal(sp_fit_smaller(&l8, c2, 3, &o, huge, &need), 0);
}

/* --solve: the largest packing (a multiple of 64) or batch that fits */
static void solve(void **st)
{
	(void)st;
	struct sp_model_shape l8 = LLAMA31_8B;
	struct sp_plan_opts o = opts(SP_METHOD_QLORA);
	uint64_t need, need2;
	int s = sp_solve(&l8, &o, 40 * GiB, SP_SOLVE_SEQ, &need);
	assert_true(s > 0 && s % 64 == 0);
	assert_int_equal(sp_judge(need, 40 * GiB), SP_FITS);
	struct sp_plan_opts p = o;
	p.seq = s + 64;
	struct sp_footprint f;
	sp_footprint_compute(&l8, &p, &f);
	assert_true(sp_judge(sp_node_need(&f), 40 * GiB) != SP_FITS);
	p.seq = s;
	sp_footprint_compute(&l8, &p, &f);
	assert_true(sp_node_need(&f) == need);
	int b = sp_solve(&l8, &o, 40 * GiB, SP_SOLVE_BATCH, &need2);
	assert_true(b >= 1);
	p = o;
	p.batch = b + 1;
	sp_footprint_compute(&l8, &p, &f);
	assert_true(sp_judge(sp_node_need(&f), 40 * GiB) != SP_FITS);
	/* nothing fits 2 GiB */
	assert_int_equal(sp_solve(&l8, &o, 2 * GiB, SP_SOLVE_SEQ, &need), 0);
}

static void fit_order(void **st)
{
	(void)st;
	struct sp_model_shape l8 = LLAMA31_8B, l70 = LLAMA31_70B;
	struct sp_advice a;
	/* long packing that does not fit: the packing goes first, not the batch */
	struct sp_plan_opts o = opts(SP_METHOD_QLORA);
	o.seq = 16384;
	o.batch = 4;
	assert_int_equal(sp_fit_search(&l8, &o, 30 * GiB, &a), 1);
	assert_string_equal(a.rung, "seq");
	assert_true(a.opts.batch == 4 && a.opts.seq < 16384);
	assert_true(a.need_bytes <= 30 * GiB);
	/* at the shortest packing, the batch (the flags name it exactly) */
	o.seq = 256;
	o.batch = 64;
	assert_int_equal(sp_fit_search(&l8, &o, 24 * GiB, &a), 1);
	assert_string_equal(a.rung, "batch");
	assert_non_null(strstr(a.why, "gradient_accumulation_steps"));
	assert_true(strncmp(a.flags, "--batch ", 8) == 0);
	/* full 70B: bf16 LoRA does not fit 100 GiB; QLoRA does */
	o = opts(SP_METHOD_FULL);
	assert_int_equal(sp_fit_search(&l70, &o, 100 * GiB, &a), 1);
	assert_string_equal(a.rung, "method");
	assert_int_equal(a.opts.method, SP_METHOD_QLORA);
	/* full 8B: bf16 LoRA comes before QLoRA */
	o = opts(SP_METHOD_FULL);
	assert_int_equal(sp_fit_search(&l8, &o, 40 * GiB, &a), 1);
	assert_int_equal(a.opts.method, SP_METHOD_LORA);
	/* nothing fits: a smaller model or two Sparks */
	o = opts(SP_METHOD_QLORA);
	assert_int_equal(sp_fit_search(&l70, &o, 20 * GiB, &a), 0);
	assert_string_equal(a.rung, "model");
	/* infer: quantize the weights */
	o = opts(SP_METHOD_INFER);
	assert_int_equal(sp_fit_search(&l70, &o, 100 * GiB, &a), 1);
	assert_string_equal(a.rung, "quant");
}

/* the co-hosted servers come out of the budget and of what a flush would give */
static void budget_cohosts(void **st)
{
	(void)st;
	struct sp_cohost c[2];
	assert_int_equal(parse("vllm:0.5", &c[0]), 0);
	assert_int_equal(parse("ollama:10GiB", &c[1]), 0);
	struct sp_plan_budget b = { .raw_bytes = 100 * GiB, .after_flush = 110 * GiB, .pool_total = 100 * GiB };
	sp_budget_less_cohosts(&b, c, 2);
	assert_true(b.cohost_bytes == 60 * GiB);
	assert_true(b.bytes == 40 * GiB && b.raw_bytes == 100 * GiB);
	assert_true(b.after_flush == 50 * GiB);
	/* never below 0; an unknown flush stays unknown */
	b = (struct sp_plan_budget){ .raw_bytes = 50 * GiB, .pool_total = 200 * GiB };
	sp_budget_less_cohosts(&b, c, 2);
	assert_true(b.bytes == 0 && b.after_flush == 0);
	sp_budget_less_cohosts(&b, c, 0);
	assert_true(b.cohost_bytes == 0 && b.bytes == 50 * GiB);
}

/* the whole judgement: verdict, host side, the ladder's first rungs */
static void judge_plan(void **st)
{
	(void)st;
	struct sp_model_shape l8 = LLAMA31_8B;
	struct sp_plan_opts o = opts(SP_METHOD_QLORA);
	o.uma = true;
	struct sp_footprint f;
	sp_footprint_compute(&l8, &o, &f);
	struct sp_judgement j;
	struct sp_plan_budget b = { .bytes = 100 * GiB, .raw_bytes = 100 * GiB, .uma = true };
	sp_plan_judge(&l8, &o, &f, &b, &j);
	assert_int_equal(j.verdict, SP_FITS);
	assert_true(j.need == sp_need(&f));
	assert_false(j.flush_fits || j.cohost_fits || j.have_advice);
	assert_true(sp_model_state_bytes(&f) == f.term[SP_T_WEIGHTS] + f.term[SP_T_KBIT_UPCAST] +
							   f.term[SP_T_ADAPTER] + f.term[SP_T_GRADIENTS] +
							   f.term[SP_T_OPTIMIZER] + f.term[SP_T_MASTER]);
	/* short, but a flush returns enough: the flush is named, nothing else */
	b = (struct sp_plan_budget){ .bytes = j.need / 2, .raw_bytes = j.need / 2, .after_flush = 100 * GiB, .uma = true };
	sp_plan_judge(&l8, &o, &f, &b, &j);
	assert_int_equal(j.verdict, SP_NO);
	assert_true(j.flush_fits && !j.cohost_fits);
	/* short because of the co-hosted servers: they come before the job's settings */
	b = (struct sp_plan_budget){ .bytes = j.need / 2, .raw_bytes = 100 * GiB, .cohost_bytes = 60 * GiB, .uma = true };
	sp_plan_judge(&l8, &o, &f, &b, &j);
	assert_true(!j.flush_fits && j.cohost_fits);
	/* discrete: the device fits, the host side does not */
	o.uma = false;
	sp_footprint_compute(&l8, &o, &f);
	b = (struct sp_plan_budget){ .bytes = 100 * GiB, .raw_bytes = 100 * GiB, .host_bytes = 1 * GiB };
	sp_plan_judge(&l8, &o, &f, &b, &j);
	assert_true(j.host_short);
	assert_int_equal(j.verdict, SP_NO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cohost),
		cmocka_unit_test(verdict),
		cmocka_unit_test(anchors),
		cmocka_unit_test(fit_order),
		cmocka_unit_test(fit_rung4),
		cmocka_unit_test(solve),
		cmocka_unit_test(budget_cohosts),
		cmocka_unit_test(judge_plan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
