// SPDX-License-Identifier: MIT
/* The verdict, the published anchors (plan.h) and the cheapest change that fits,
 * searched in the OOM ladder's order (never the batch size first). */
#include "account/plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *sp_verdict_name(enum sp_verdict v)
{
	return v == SP_FITS ? "fits" : v == SP_TIGHT ? "tight" : "no";
}

uint64_t sp_tight_margin(uint64_t need)
{
	uint64_t ten = need / 10, two = 2ULL << 30;
	return ten > two ? ten : two;
}

enum sp_verdict sp_judge(uint64_t need, uint64_t budget)
{
	/* a saturated need is beyond any budget, whatever the budget says */
	if (need > budget || need >= SP_BYTES_SAT)
		return SP_NO;
	if (budget - need < sp_tight_margin(need))
		return SP_TIGHT;
	return SP_FITS;
}

uint64_t sp_need(const struct sp_footprint *f)
{
	return f->peak_bytes > f->load_peak_bytes ? f->peak_bytes : f->load_peak_bytes;
}

/* ---- anchors ------------------------------------------------------------------ */

static const struct sp_anchor anchors[] = {
	{ "70b-qlora", "70B QLoRA: about 40 GB", 70e9, 40e9, SP_METHOD_QLORA, 0 },
	{ "27b-lora", "27B LoRA: fits a Spark at packing <= 1024", 27e9, 0, SP_METHOD_LORA, 1024 },
	{ "9b-full", "9B full fine-tune: fits a Spark comfortably", 9e9, 0, SP_METHOD_FULL, 0 },
	{ "gpt-oss-120b-lora", "gpt-oss-120b NVFP4 LoRA: about 68 GB", 117e9, 68e9, SP_METHOD_LORA, 0 },
};

static int method_class(enum sp_method m)
{
	return m == SP_METHOD_FULL ? 0 : m == SP_METHOD_INFER ? 2 : 1; /* lora and qlora are one class */
}

const struct sp_anchor *sp_anchor_nearest(const struct sp_model_shape *m, const struct sp_plan_opts *o)
{
	const struct sp_anchor *best = NULL;
	double bd = INFINITY;
	if (!(m->params > 0))
		return NULL;
	for (size_t i = 0; i < sizeof anchors / sizeof anchors[0]; i++) {
		const struct sp_anchor *a = &anchors[i];
		double d = fabs(log(m->params / a->params));
		if (method_class(a->method) != method_class(o->method))
			d += 10; /* another class is only a last resort */
		if (a->method != o->method)
			d += 0.3; /* lora vs qlora */
		if (d < bd) {
			bd = d;
			best = a;
		}
	}
	return best;
}

bool sp_anchor_far(const struct sp_anchor *a, const struct sp_plan_opts *o, double params, uint64_t peak,
		   uint64_t state)
{
	if (!a || a->method != o->method)
		return false; /* only the same method is comparable */
	if (!(params > a->params / 1.6 && params < a->params * 1.6))
		return false; /* nor another size class */
	if (a->figure_bytes > 0)
		return (double)state > a->figure_bytes * 1.5 || (double)state < a->figure_bytes / 1.5;
	if (a->max_seq > 0 && o->seq > a->max_seq)
		return false; /* outside the anchor's packing bound */
	return peak > SP_SPARK_POOL_BYTES;
}

/* ---- the fit search ---------------------------------------------------------------- */

static uint64_t need_of(const struct sp_model_shape *m, const struct sp_plan_opts *o)
{
	struct sp_footprint f;
	sp_footprint_compute(m, o, &f);
	return sp_need(&f);
}

static bool fits(const struct sp_model_shape *m, const struct sp_plan_opts *o, uint64_t budget, uint64_t *need)
{
	*need = need_of(m, o);
	return sp_judge(*need, budget) == SP_FITS;
}

/* a method downgrade, alone or with checkpointing, a smaller batch and a
 * shorter packing on top (each only if the one before does not fit) */
static int try_method(const struct sp_model_shape *m, const struct sp_plan_opts *o0, uint64_t budget,
		      enum sp_method meth, struct sp_advice *a);
static int try_change(const struct sp_model_shape *m, const struct sp_plan_opts *o0, struct sp_plan_opts o,
		      uint64_t budget, const char *rung, const char *flags, const char *why, struct sp_advice *a);

static int found(struct sp_advice *a, const char *rung, const struct sp_plan_opts *o, uint64_t need)
{
	snprintf(a->rung, sizeof a->rung, "%s", rung);
	a->need_bytes = need;
	a->opts = *o;
	return 1;
}

int sp_fit_search(const struct sp_model_shape *m, const struct sp_plan_opts *o0, uint64_t budget, struct sp_advice *a)
{
	memset(a, 0, sizeof *a);
	struct sp_plan_opts o;
	uint64_t need;
	bool train = o0->method != SP_METHOD_INFER;

	/* 1. shorter packing / sequence (the largest power-of-two step that fits) */
	for (int s = o0->seq / 2; s >= 256; s /= 2) {
		o = *o0;
		o.seq = s;
		if (fits(m, &o, budget, &need)) {
			snprintf(a->flags, sizeof a->flags, "--seq %d", s);
			snprintf(a->why, sizeof a->why, "%s from %d to %d tokens (activations%s scale with it)",
				 train ? "pack" : "cap the context", o0->seq, s, train ? " and logits" : " and KV cache");
			return found(a, "seq", &o, need);
		}
	}
	/* 2. smaller micro-batch, gradient accumulation keeps the effective batch */
	for (int b = o0->batch - 1; b >= 1; b--) {
		o = *o0;
		o.batch = b;
		if (fits(m, &o, budget, &need)) {
			int acc = (o0->batch + b - 1) / b;
			snprintf(a->flags, sizeof a->flags, "--batch %d", b);
			if (train)
				snprintf(a->why, sizeof a->why,
					 "micro-batch %d with gradient_accumulation_steps x%d keeps the effective batch of %d",
					 b, acc, o0->batch);
			else
				snprintf(a->why, sizeof a->why, "serve %d sequences at a time instead of %d", b, o0->batch);
			return found(a, "batch", &o, need);
		}
	}
	if (train) {
		/* 3. gradient checkpointing, then a leaner optimizer, then both */
		if (!o0->grad_ckpt) {
			o = *o0;
			o.grad_ckpt = true;
			if (fits(m, &o, budget, &need)) {
				snprintf(a->flags, sizeof a->flags, "--grad-ckpt");
				snprintf(a->why, sizeof a->why, "recompute activations in backward: keeps each layer's input only");
				return found(a, "grad_ckpt", &o, need);
			}
		}
		if (o0->optim == SP_OPTIM_ADAMW || o0->optim == SP_OPTIM_ADAFACTOR) {
			o = *o0;
			o.optim = SP_OPTIM_ADAMW8BIT;
			if (try_change(m, o0, o, budget, "optim", "--optim adamw8bit",
				       "8-bit AdamW states: 2 bytes per trainable param", a))
				return 1;
		}
		/* 4. one method tier down: bf16 LoRA before QLoRA */
		if (o0->method == SP_METHOD_FULL && try_method(m, o0, budget, SP_METHOD_LORA, a))
			return 1;
		if ((o0->method == SP_METHOD_FULL || o0->method == SP_METHOD_LORA) &&
		    try_method(m, o0, budget, SP_METHOD_QLORA, a))
			return 1;
	} else if (o0->quant == SP_QUANT_NONE || o0->quant == SP_QUANT_INT8) {
		const enum sp_quant steps[] = { SP_QUANT_INT8, SP_QUANT_NF4 };
		for (size_t i = 0; i < 2; i++) {
			if (steps[i] <= o0->quant)
				continue;
			o = *o0;
			o.quant = steps[i];
			if (fits(m, &o, budget, &need)) {
				snprintf(a->flags, sizeof a->flags, "--quant %s", sp_quant_name(steps[i]));
				snprintf(a->why, sizeof a->why, "serve %s weights", sp_quant_name(steps[i]));
				return found(a, "quant", &o, need);
			}
		}
	}
	/* 5. nothing on this box */
	snprintf(a->rung, sizeof a->rung, "model");
	snprintf(a->flags, sizeof a->flags, "a smaller model, or two Sparks");
	snprintf(a->why, sizeof a->why,
		 "no change of packing, batch, checkpointing, optimizer or method fits: use a smaller model, "
		 "or DDP/FSDP over two Sparks (never tensor parallelism over the link)");
	a->opts = *o0;
	return 0;
}

/* o (already changed by the rung) alone, then with checkpointing, a batch
 * of 1 and a shorter packing on top, each only if the one before does not fit */
static int try_change(const struct sp_model_shape *m, const struct sp_plan_opts *o0, struct sp_plan_opts o,
		      uint64_t budget, const char *rung, const char *flags, const char *why, struct sp_advice *a)
{
	uint64_t need;
	char extra[96] = "";
	bool ok = fits(m, &o, budget, &need);
	if (!ok && !o.grad_ckpt && o.method != SP_METHOD_INFER) {
		o.grad_ckpt = true;
		snprintf(extra, sizeof extra, " --grad-ckpt");
		ok = fits(m, &o, budget, &need);
	}
	if (!ok && o.batch > 1) {
		o.batch = 1;
		size_t l = strlen(extra);
		snprintf(extra + l, sizeof extra - l, " --batch 1");
		ok = fits(m, &o, budget, &need);
	}
	if (!ok) {
		size_t l = strlen(extra);
		for (int s = o0->seq / 2; s >= 256 && !ok; s /= 2) {
			o.seq = s;
			ok = fits(m, &o, budget, &need);
			if (ok)
				snprintf(extra + l, sizeof extra - l, " --seq %d", s);
		}
	}
	if (!ok)
		return 0;
	snprintf(a->flags, sizeof a->flags, "%s%s", flags, extra);
	snprintf(a->why, sizeof a->why, "%s%s", why,
		 o.batch < o0->batch ? "; gradient accumulation keeps the effective batch" : "");
	return found(a, rung, &o, need);
}

static int try_method(const struct sp_model_shape *m, const struct sp_plan_opts *o0, uint64_t budget,
		      enum sp_method meth, struct sp_advice *a)
{
	struct sp_plan_opts o = *o0;
	char flags[32];
	o.method = meth;
	o.quant = meth == SP_METHOD_QLORA ? SP_QUANT_NF4 : SP_QUANT_NONE;
	snprintf(flags, sizeof flags, "--method %s", sp_method_name(meth));
	return try_change(m, o0, o, budget, "method", flags,
			  meth == SP_METHOD_LORA ? "bf16 LoRA: the base is frozen, only adapters train"
						 : "NF4 base under LoRA (its dequantization buffers are transient: keep headroom)",
			  a);
}

/* ---- the budget and the whole judgement ---------------------------------------------- */

void sp_budget_less_cohosts(struct sp_plan_budget *b, const struct sp_cohost *c, int n)
{
	b->cohost_bytes = 0;
	for (int i = 0; i < n; i++)
		b->cohost_bytes += sp_cohost_bytes(&c[i], b->pool_total);
	b->bytes = b->cohost_bytes >= b->raw_bytes ? 0 : b->raw_bytes - b->cohost_bytes;
	if (b->after_flush)
		b->after_flush = b->cohost_bytes >= b->after_flush ? 0 : b->after_flush - b->cohost_bytes;
}

uint64_t sp_model_state_bytes(const struct sp_footprint *f)
{
	return f->term[SP_T_WEIGHTS] + f->term[SP_T_KBIT_UPCAST] + f->term[SP_T_ADAPTER] + f->term[SP_T_GRADIENTS] +
	       f->term[SP_T_OPTIMIZER] + f->term[SP_T_MASTER];
}

void sp_plan_judge(const struct sp_model_shape *m, const struct sp_plan_opts *o, const struct sp_footprint *f,
		   const struct sp_plan_budget *b, struct sp_judgement *j)
{
	memset(j, 0, sizeof *j);
	j->need = sp_need(f);
	j->verdict = sp_judge(j->need, b->bytes);
	j->host_short = !b->uma && b->host_bytes && f->host_bytes > b->host_bytes;
	if (j->host_short)
		j->verdict = SP_NO;
	j->anchor = sp_anchor_nearest(m, o);
	j->far = sp_anchor_far(j->anchor, o, f->params, f->peak_bytes, sp_model_state_bytes(f));
	if (j->verdict == SP_FITS)
		return;
	/* the ladder: a flush first, then the concurrent workloads, then the job */
	j->flush_fits = b->after_flush && sp_judge(j->need, b->after_flush) == SP_FITS;
	j->cohost_fits = !j->flush_fits && b->cohost_bytes && sp_judge(j->need, b->raw_bytes) == SP_FITS;
	/* when a flush or the servers are enough and nothing else fits, that is the advice */
	j->have_advice = sp_fit_search(m, o, b->bytes, &j->advice) || !(j->flush_fits || j->cohost_fits);
}
