// SPDX-License-Identifier: MIT
/* The next rung's change through the planner (rungplan.h). */
#include "account/rungplan.h"
#include "account/fit.h"
#include "account/footprint.h"
#include "account/planmodel.h"
#include "model/model.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the rungs ----------------------------------------------------------------------------- */

static void verdict(struct sp_ladder_plan_step *st)
{
	enum sp_verdict v = sp_judge(st->need, st->budget);
	st->fits = v != SP_NO;
	st->tight = v == SP_TIGHT;
}

static void plan_one(const struct sp_model_shape *m, const struct sp_plan_opts *o, uint64_t budget, struct sp_ladder_plan_step *st)
{
	static struct sp_footprint f;
	sp_footprint_compute(m, o, &f);
	st->need = o->nodes > 1 ? sp_node_need(&f) : sp_need(&f);
	st->budget = budget;
	verdict(st);
}

static struct sp_ladder_plan_step *plan_add(struct sp_ladder_plan *lp, const struct sp_model_shape *m, const struct sp_plan_opts *o,
				  uint64_t budget, const char *note)
{
	struct sp_ladder_plan_step *st = &lp->steps[lp->nsteps++];
	snprintf(st->note, sizeof st->note, "%s", note);
	plan_one(m, o, budget, st);
	return st;
}

/* rung 3: the plan's method one tier down (serving: the weights' quantization) */
static void plan_rung3(struct sp_ladder_plan *lp, const struct sp_model_shape *m, const struct sp_plan_opts *p)
{
	struct sp_plan_opts o = *p;
	struct sp_ladder_plan_step *st;
	if (p->method == SP_METHOD_FULL) {
		o.method = SP_METHOD_LORA;
		st = plan_add(lp, m, &o, lp->budget, "a full fine-tune becomes bf16 LoRA");
		snprintf(st->change, sizeof st->change, "--method lora");
	} else if (p->method == SP_METHOD_LORA && p->quant == SP_QUANT_NONE) {
		o.method = SP_METHOD_QLORA, o.quant = SP_QUANT_NF4;
		st = plan_add(lp, m, &o, lp->budget, "bf16 LoRA becomes QLoRA");
		snprintf(st->change, sizeof st->change, "--method qlora");
	} else if (p->method == SP_METHOD_INFER && (p->quant == SP_QUANT_NONE || p->quant == SP_QUANT_INT8) &&
		   !m->prequantized) {
		o.quant = p->quant == SP_QUANT_NONE ? SP_QUANT_INT8 : SP_QUANT_FP4;
		st = plan_add(lp, m, &o, lp->budget, "quantized weights, one tier down");
		snprintf(st->change, sizeof st->change, "--quant %s", sp_quant_name(o.quant));
	} else {
		snprintf(lp->none_why, sizeof lp->none_why, "the plan is already %s%s%s: there is no lower tier",
			 sp_method_name(p->method), p->quant != SP_QUANT_NONE ? " with " : "",
			 p->quant != SP_QUANT_NONE ? sp_quant_name(p->quant) : "");
	}
}

/* rung 4: the catalog's smaller model of the family, and two Sparks */
static void plan_rung4(struct sp_ladder_plan *lp, const struct sp_model_shape *m, const struct sp_plan_opts *p, bool steps)
{
	struct sp_ladder_plan *pf = lp;
	uint64_t need = 0;
	if (sp_plan_smaller_model(m, p, lp->budget, pf->smaller_model, sizeof pf->smaller_model, &need) == 0) {
		pf->smaller_need = need;
		if (steps) {
			struct sp_ladder_plan_step *st = &lp->steps[lp->nsteps++];
			snprintf(st->change, sizeof st->change, "%s", pf->smaller_model);
			snprintf(st->note, sizeof st->note, "the catalog's largest smaller model of the family that fits");
			st->need = need, st->budget = lp->budget;
			verdict(st);
		}
	}
	struct sp_plan_opts o = *p;
	o.nodes = 2;
	o.strategy = p->method == SP_METHOD_INFER ? SP_STRAT_TP : SP_STRAT_FSDP;
	char why[300];
	if (sp_strategy_refused(&o, why, sizeof why))
		return;
	struct sp_ladder_plan_step two;
	plan_one(m, &o, lp->budget, &two);
	pf->two_sparks = two.fits ? 1 : -1;
	pf->two_sparks_strategy = p->method == SP_METHOD_INFER ? "tensor parallelism" : "FSDP";
	pf->two_sparks_need = two.need;
	if (steps) {
		struct sp_ladder_plan_step *st = &lp->steps[lp->nsteps++];
		*st = two;
		snprintf(st->change, sizeof st->change, "--nodes 2 --strategy %s", sp_strategy_name(o.strategy));
		snprintf(st->note, sizeof st->note, "two Sparks over the link: the need is per node");
	}
}

void sp_rung_plan(struct sp_ladder_plan *lp, const struct sp_model_shape *m, const struct sp_plan_opts *p0, int rung)
{
	lp->rung = rung;
	lp->chosen = -1;
	struct sp_plan_opts p = *p0;
	plan_one(m, &p, lp->budget, &lp->given);
	struct sp_plan_opts o = p;
	struct sp_ladder_plan_step *st;
	switch (rung) {
	case 1:
		if (lp->budget_flush) {
			st = plan_add(lp, m, &p, lp->budget_flush, "the same job after a flush");
			snprintf(st->change, sizeof st->change, "flush");
		}
		break;
	case 2:
		if (lp->seq_advised >= 128 && lp->seq_advised < (uint64_t)p.seq) {
			/* the advice names a context: the planner checks that one */
			o.seq = (int)lp->seq_advised;
			st = plan_add(lp, m, &o, lp->budget, "the context the advice names");
			snprintf(st->change, sizeof st->change, "--seq %d", o.seq);
		} else if (p.seq >= 128) {
			o.seq = p.seq / 2;
			st = plan_add(lp, m, &o, lp->budget, "the sequence/packing length halved");
			snprintf(st->change, sizeof st->change, "--seq %d", o.seq);
		}
		o = p;
		if (p.batch >= 2) {
			o.batch = p.batch / 2;
			st = plan_add(lp, m, &o, lp->budget,
				      p.method == SP_METHOD_INFER ? "half the concurrent sequences"
								  : "the micro-batch halved; double the accumulation to "
								    "keep the effective batch");
			snprintf(st->change, sizeof st->change, "--batch %d", o.batch);
		} else if (!p.grad_ckpt && p.method != SP_METHOD_INFER) {
			o.grad_ckpt = true;
			st = plan_add(lp, m, &o, lp->budget, "the micro-batch is 1: gradient checkpointing on");
			snprintf(st->change, sizeof st->change, "--grad-ckpt");
		}
		if (lp->nsteps == 2 && p.seq >= 128 && p.batch >= 2 && !lp->steps[0].fits && !lp->steps[1].fits) {
			o.seq = p.seq / 2;
			st = plan_add(lp, m, &o, lp->budget, "both halved");
			snprintf(st->change, sizeof st->change, "--seq %d --batch %d", o.seq, o.batch);
		}
		break;
	case 3:
		plan_rung3(lp, m, &p);
		break;
	default:
		break;
	}
	/* rung 4's facts always (the decision names them when rung 4 is proposed) */
	plan_rung4(lp, m, &p, rung == 4);
	for (int i = 0; i < lp->nsteps; i++)
		if (lp->steps[i].fits) {
			lp->chosen = i;
			break;
		}
	if (lp->chosen < 0 && lp->nsteps)
		lp->chosen = lp->nsteps - 1;
}

/* ---- the planner's check of the job's model --------------------------------------------- */

static uint64_t need_of(const struct sp_model_shape *m, const struct sp_plan_opts *o, uint64_t *weights)
{
	static struct sp_footprint f;
	sp_footprint_compute(m, o, &f);
	if (weights)
		*weights = f.term[SP_T_WEIGHTS];
	return sp_need(&f);
}

void sp_rung_model_needs(const struct sp_model_shape *m, const struct sp_plan_opts *o0,
			 struct sp_ladder_model_check *mc)
{
	struct sp_plan_opts o = *o0;
	o.uma = true;
	snprintf(mc->name, sizeof mc->name, "%s", m->name);
	mc->prequantized = m->prequantized;
	mc->need = need_of(m, &o, &mc->weights);
	mc->need_min = mc->need;
	if (o.method == SP_METHOD_INFER) {
		/* what a server's knobs cannot take away: the weights, one short sequence */
		struct sp_plan_opts k = o;
		k.seq = k.seq > 2048 ? 2048 : k.seq;
		k.batch = 1;
		mc->need_min = need_of(m, &k, NULL);
	}
	if (o.method == SP_METHOD_INFER && !m->prequantized && (o.quant == SP_QUANT_NONE || o.quant == SP_QUANT_INT8)) {
		struct sp_plan_opts q = o;
		q.quant = SP_QUANT_INT8;
		mc->need_q8 = need_of(m, &q, NULL);
		q.quant = SP_QUANT_FP4;
		mc->need_q4 = need_of(m, &q, NULL);
	}
}

static int find_log_model(const char *log_model, struct sp_model_shape *m);


int sp_rung_log_model_check(const char *log_model, struct sp_ladder_model_check *mc)
{
	memset(mc, 0, sizeof *mc);
	if (!log_model || !log_model[0])
		return -1;
	struct sp_model_shape *m = calloc(1, sizeof *m);
	if (!m || find_log_model(log_model, m) < 0) {
		free(m);
		return -1;
	}
	struct sp_plan_opts o;
	sp_plan_opts_init(&o);
	o.method = SP_METHOD_INFER;
	/* a published quantized checkpoint is planned at its precision */
	int bits = m->prequantized ? 0 : sp_name_weight_bits(log_model);
	o.quant = bits == 4 ? SP_QUANT_FP4 : bits == 8 ? SP_QUANT_INT8 : SP_QUANT_NONE;
	mc->how = "the log's model";
	mc->precision = o.quant == SP_QUANT_INT8 ? "8-bit weights" : o.quant == SP_QUANT_FP4 ? "4-bit weights" : "bf16";
	sp_rung_model_needs(m, &o, mc);
	free(m);
	return 0;
}

/* ---- rung 4 from the log's model name ------------------------------------------------- */

static bool strip_suffix(char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	if (n > m && strcasecmp(s + n - m, suf) == 0) {
		s[n - m] = 0;
		return true;
	}
	return false;
}

/* the log's name as the catalog may know it: the repository id as is, then
 * its last part without the usual release suffixes, spaces made '-' */
static int find_log_model(const char *log_model, struct sp_model_shape *m)
{
	static const char *const sufs[] = { "-Instruct", "-Chat", "-hf", "-it", "-bnb-4bit", "-unsloth", "-Base", "-GGUF",
					    "-FP8-dynamic", "-FP8-Dynamic", "-FP8", "-AWQ", "-GPTQ-Int4", "-GPTQ-Int8",
					    "-GPTQ", "-Int4", "-Int8", "-NVFP4", "-W8A8", "-W4A16", "-quantized.w8a8",
					    "-quantized.w4a16" };
	char err[512], v[128];
	if (sp_catalog_find(log_model, m, err, sizeof err) == 0)
		return 0;
	const char *base = strrchr(log_model, '/');
	snprintf(v, sizeof v, "%s", base ? base + 1 : log_model);
	for (char *q = v; *q; q++)
		if (*q == ' ')
			*q = '-';
	for (bool again = true; again;) {
		again = false;
		for (size_t i = 0; i < sizeof sufs / sizeof sufs[0]; i++)
			again |= strip_suffix(v, sufs[i]);
	}
	if (sp_catalog_find(v, m, err, sizeof err) == 0)
		return 0;
	/* "Meta-Llama-3.1-70B": the vendor's name before the family's */
	if (strncasecmp(v, "Meta-", 5) == 0 && sp_catalog_find(v + 5, m, err, sizeof err) == 0)
		return 0;
	return -1;
}

int sp_rung_next_size_down(const char *log_model, char *name, size_t n, char *hf, size_t hn)
{
	struct sp_model_shape *m = calloc(1, sizeof *m);
	if (!m || !log_model || !log_model[0] || find_log_model(log_model, m) < 0) {
		free(m);
		return -1;
	}
	struct sp_plan_opts o;
	sp_plan_opts_init(&o);
	uint64_t need;
	/* an unbounded budget: the largest smaller model of the family, whatever it needs */
	int rc = sp_plan_smaller_model(m, &o, UINT64_MAX, name, n, &need);
	free(m);
	if (rc < 0)
		return -1;
	struct sp_model_shape *c = calloc(1, sizeof *c);
	char err[512];
	if (hn)
		hf[0] = 0;
	if (c && sp_catalog_find(name, c, err, sizeof err) == 0)
		snprintf(hf, hn, "%s", c->hf_id);
	free(c);
	return 0;
}
