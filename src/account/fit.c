// SPDX-License-Identifier: MIT
/* The verdict, the published anchors (fit.h) and the cheapest change that fits,
 * searched in the OOM ladder's order (never the batch size first). */
#include "account/fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* What each figure counts: "70B QLoRA about 40 GB" is the NF4 weights
 * (70e9 x 0.516 B ~ 36 GB, plus 16-bit embeddings); gpt-oss-120b's 68 GB is
 * the pool use measured while its LoRA trains on a Spark; the "fits"
 * anchors speak of the whole peak against the Spark's pool. */
static const struct sp_anchor anchors[] = {
	{ "70b-qlora", "70B QLoRA: about 40 GB", 70e9, 40e9, SP_METHOD_QLORA, 0, true },
	{ "27b-lora", "27B LoRA: fits a Spark at packing <= 1024", 27e9, 0, SP_METHOD_LORA, 1024, false },
	{ "9b-full", "9B full fine-tune: fits a Spark comfortably", 9e9, 0, SP_METHOD_FULL, 0, false },
	{ "gpt-oss-120b-lora", "gpt-oss-120b NVFP4 LoRA: about 68 GB", 117e9, 68e9, SP_METHOD_LORA, 0, false },
};

const struct sp_anchor *sp_anchor_nearest(const struct sp_model_shape *m, const struct sp_plan_opts *o)
{
	const struct sp_anchor *best = NULL;
	double bd = INFINITY;
	if (!(m->params > 0))
		return NULL;
	for (size_t i = 0; i < sizeof anchors / sizeof anchors[0]; i++) {
		const struct sp_anchor *a = &anchors[i];
		if (a->method != o->method)
			continue; /* another method says nothing about this plan */
		if (!(m->params > a->params / 1.6 && m->params < a->params * 1.6))
			continue; /* nor another size class */
		double d = fabs(log(m->params / a->params));
		if (d < bd) {
			bd = d;
			best = a;
		}
	}
	return best;
}

const char *sp_anchor_counts(const struct sp_anchor *a)
{
	if (!a)
		return "";
	return a->counts_weights ? "weights" : a->figure_bytes > 0 ? "peak" : "fits";
}

uint64_t sp_anchor_plan_bytes(const struct sp_anchor *a, const struct sp_footprint *f)
{
	if (!a)
		return 0;
	return a->counts_weights ? f->term[SP_T_WEIGHTS] : f->peak_bytes;
}

bool sp_anchor_far(const struct sp_anchor *a, const struct sp_plan_opts *o, uint64_t plan)
{
	if (!a || a->method != o->method)
		return false; /* only the same method is comparable */
	if (a->figure_bytes > 0)
		return (double)plan > a->figure_bytes * 1.5 || (double)plan < a->figure_bytes / 1.5;
	if (a->max_seq > 0 && o->seq > a->max_seq)
		return false; /* outside the anchor's packing bound */
	return plan > SP_SPARK_POOL_BYTES;
}

/* ---- the fit search ---------------------------------------------------------------- */

static uint64_t need_of(const struct sp_model_shape *m, const struct sp_plan_opts *o)
{
	struct sp_footprint f;
	sp_footprint_compute(m, o, &f);
	return sp_node_need(&f);
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

	/* 0. the same job on a current bitsandbytes, which no longer keeps every
	 * 4-bit linear's input: nothing traded */
	if (train && o0->bnb_legacy) {
		o = *o0;
		o.bnb_legacy = false;
		if (fits(m, &o, budget, &need)) {
			snprintf(a->flags, sizeof a->flags, "pip install -U 'bitsandbytes>=0.43.2' (and drop --bnb-legacy)");
			snprintf(a->why, sizeof a->why,
				 "bitsandbytes 0.43.2 and later keep no 4-bit linear's input for backward: the same job, "
				 "nothing traded");
			return found(a, "bitsandbytes", &o, need);
		}
	}
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
	} else if ((o0->quant == SP_QUANT_NONE || o0->quant == SP_QUANT_INT8) && !m->prequantized) {
		/* 3. a quantized base, alone, then with fewer sequences and a
		 * shorter context on top: all before another node */
		const enum sp_quant steps[] = { SP_QUANT_INT8, SP_QUANT_NF4 };
		for (size_t i = 0; i < 2; i++) {
			if (steps[i] <= o0->quant)
				continue;
			o = *o0;
			o.quant = steps[i];
			char flags[32], why[64];
			snprintf(flags, sizeof flags, "--quant %s", sp_quant_name(steps[i]));
			snprintf(why, sizeof why, "serve %s weights", sp_quant_name(steps[i]));
			if (try_change(m, o0, o, budget, "quant", flags, why, a))
				return 1;
		}
	}
	/* 5. nothing on this box */
	snprintf(a->rung, sizeof a->rung, "model");
	snprintf(a->flags, sizeof a->flags, "a smaller model, or more Sparks");
	if (train)
		snprintf(a->why, sizeof a->why,
			 "no change of packing, batch, checkpointing, optimizer or method fits one node: use a smaller "
			 "model, or FSDP over more Sparks (never tensor parallelism over the link)");
	else
		snprintf(a->why, sizeof a->why,
			 "no shorter context, fewer sequences or quantized base fits one node: use a smaller model, "
			 "or tensor parallelism over more Sparks");
	a->opts = *o0;
	return 0;
}

int sp_fit_nodes(const struct sp_model_shape *m, const struct sp_plan_opts *o0, uint64_t budget,
		 enum sp_strategy *strategy, uint64_t *node_need)
{
	bool train = o0->method != SP_METHOD_INFER;
	const enum sp_strategy train_s[] = { SP_STRAT_FSDP }, serve_s[] = { SP_STRAT_TP, SP_STRAT_PP };
	const enum sp_strategy *ss = train ? train_s : serve_s;
	size_t ns = train ? 1 : 2;
	int from = o0->nodes > 1 ? o0->nodes + 1 : 2;
	for (int n = from; n <= 4; n++) {
		for (size_t i = 0; i < ns; i++) {
			struct sp_plan_opts o = *o0;
			uint64_t need;
			o.nodes = n;
			o.strategy = ss[i];
			if (fits(m, &o, budget, &need)) {
				*strategy = ss[i];
				*node_need = need;
				return n;
			}
		}
	}
	return 0;
}

/* the name less its last "-" part: "llama-3.1-70b" -> "llama-3.1" */
static size_t family_len(const char *name)
{
	const char *d = strrchr(name, '-');
	return d ? (size_t)(d - name) : 0;
}

/* the family's generation: its name up to the first '.' ("llama-3.1" ->
 * "llama-3", "qwen2.5" -> "qwen2"), the family itself without one */
static size_t generation_len(const char *name)
{
	size_t fl = family_len(name);
	const char *dot = memchr(name, '.', fl);
	return dot ? (size_t)(dot - name) : fl;
}

static bool same_prefix(const char *a, const char *b, size_t (*len)(const char *))
{
	size_t la = len(a);
	return la > 0 && len(b) == la && strncmp(a, b, la) == 0;
}

int sp_fit_smaller(const struct sp_model_shape *m, const struct sp_model_shape *cands, size_t n,
		   const struct sp_plan_opts *o0, uint64_t budget, uint64_t *need)
{
	struct sp_plan_opts o = *o0;
	o.nodes = 1;
	o.strategy = SP_STRAT_NONE;
	/* pass 0: the same family ("llama-3.1"); pass 1: the same generation
	 * ("llama-3": Llama 3.2 before Llama 2 under a Llama 3.1); pass 2: the same arch */
	for (int pass = 0; pass < 3; pass++) {
		int best = -1;
		uint64_t bneed = 0;
		for (size_t i = 0; i < n; i++) {
			const struct sp_model_shape *c = &cands[i];
			if (!(c->params < m->params * 0.95) || strcmp(c->arch, m->arch) != 0)
				continue;
			if (pass == 0 && !same_prefix(c->name, m->name, family_len))
				continue;
			if (pass == 1 && !same_prefix(c->name, m->name, generation_len))
				continue;
			if (best >= 0 && c->params <= cands[best].params)
				continue;
			uint64_t nd;
			if (fits(c, &o, budget, &nd)) {
				best = (int)i;
				bneed = nd;
			}
		}
		if (best >= 0) {
			*need = bneed;
			return best;
		}
	}
	return -1;
}

const struct sp_word sp_solve_words[] = {
	{ "seq", SP_SOLVE_SEQ, 0, NULL }, { "batch", SP_SOLVE_BATCH, 0, NULL }, { NULL, 0, 0, NULL },
};

int sp_solve(const struct sp_model_shape *m, const struct sp_plan_opts *o0, uint64_t budget, enum sp_solve_what what,
	     uint64_t *need)
{
	struct sp_plan_opts o = *o0;
	int step = what == SP_SOLVE_SEQ ? 64 : 1;
	int lo = 0, hi = what == SP_SOLVE_SEQ ? (1 << 24) / 64 : 1 << 16;
	uint64_t nd, best = 0;
	if (what == SP_SOLVE_NONE)
		return 0;
	/* invariant: lo fits (or is 0), everything past hi does not */
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (what == SP_SOLVE_SEQ)
			o.seq = mid * step;
		else
			o.batch = mid;
		if (fits(m, &o, budget, &nd)) {
			lo = mid;
			best = nd;
		} else {
			hi = mid - 1;
		}
	}
	*need = best;
	return lo * step;
}

/* the verdict of o with --seq or --batch set to v, judged as the plan itself
 * is (sp_plan_judge's verdict: the per-node need against the budget, and no
 * when a discrete host side is short), without its advice search */
static enum sp_verdict verdict_at(const struct sp_model_shape *m, const struct sp_plan_opts *o0,
				  const struct sp_plan_budget *b, enum sp_solve_what what, int v, struct sp_footprint *f,
				  uint64_t *need)
{
	struct sp_plan_opts o = *o0;
	if (what == SP_SOLVE_SEQ)
		o.seq = v;
	else
		o.batch = v;
	sp_footprint_compute(m, &o, f);
	*need = sp_node_need(f);
	if (!b->uma && b->host_bytes && f->host_bytes > b->host_bytes)
		return SP_NO;
	return sp_judge(*need, b->bytes);
}

int sp_solve_judged(const struct sp_model_shape *m, const struct sp_plan_opts *o, const struct sp_plan_budget *b,
		    enum sp_solve_what what, struct sp_solve_answer *r)
{
	memset(r, 0, sizeof *r);
	if (what == SP_SOLVE_NONE)
		return 0;
	struct sp_footprint *f = malloc(sizeof *f);
	if (!f)
		return -1;
	const int step = what == SP_SOLVE_SEQ ? 64 : 1;
	uint64_t need;
	r->value = sp_solve(m, o, b->bytes, what, &r->need);
	/* the answer must be what the verdict calls fits: step down, then up, a bounded walk */
	for (int i = 0; i < 64 && r->value > 0 && verdict_at(m, o, b, what, r->value, f, &need) != SP_FITS; i++)
		r->value = r->value > step ? r->value - step : 0;
	for (int i = 0; i < 64 && verdict_at(m, o, b, what, r->value + step, f, &need) == SP_FITS; i++)
		r->value += step;
	if (r->value)
		verdict_at(m, o, b, what, r->value, f, &r->need);
	r->next = r->value + step;
	r->next_verdict = verdict_at(m, o, b, what, r->next, f, &r->next_need);
	free(f);
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
	bool infer = o.method == SP_METHOD_INFER;
	/* serving: a shorter context at the same concurrency first */
	for (int s = o0->seq / 2; infer && s >= 256 && !ok; s /= 2) {
		o.seq = s;
		ok = fits(m, &o, budget, &need);
		if (ok)
			snprintf(extra, sizeof extra, " --seq %d", s);
	}
	if (!ok)
		o.seq = o0->seq;
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
		 o.batch >= o0->batch ? ""
		 : infer	      ? "; one sequence at a time"
				      : "; gradient accumulation keeps the effective batch");
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

/* ---- the whole judgement ---------------------------------------------- */

uint64_t sp_model_state_bytes(const struct sp_footprint *f)
{
	return f->term[SP_T_WEIGHTS] + f->term[SP_T_KBIT_UPCAST] + f->term[SP_T_ADAPTER] + f->term[SP_T_GRADIENTS] +
	       f->term[SP_T_OPTIMIZER] + f->term[SP_T_MASTER];
}

void sp_plan_judge(const struct sp_model_shape *m, const struct sp_plan_opts *o, const struct sp_footprint *f,
		   const struct sp_plan_budget *b, struct sp_judgement *j)
{
	memset(j, 0, sizeof *j);
	j->need = sp_node_need(f);
	j->verdict = sp_judge(j->need, b->bytes);
	j->host_short = !b->uma && b->host_bytes && f->host_bytes > b->host_bytes;
	if (j->host_short)
		j->verdict = SP_NO;
	j->anchor = sp_anchor_nearest(m, o);
	j->far = sp_anchor_far(j->anchor, o, sp_anchor_plan_bytes(j->anchor, f));
	if (j->verdict == SP_FITS)
		return;
	/* the ladder: a flush first, then the concurrent workloads, then the job */
	j->flush_fits = b->after_flush && sp_judge(j->need, b->after_flush) == SP_FITS;
	j->cohost_fits = !j->flush_fits && b->cohost_bytes && sp_judge(j->need, b->raw_bytes) == SP_FITS;
	/* when a flush or the servers are enough and nothing else fits, that is the advice */
	j->have_advice = sp_fit_search(m, o, b->bytes, &j->advice) || !(j->flush_fits || j->cohost_fits);
	if (j->have_advice && strcmp(j->advice.rung, "model") == 0)
		j->scale_nodes = sp_fit_nodes(m, o, b->bytes, &j->scale_strategy, &j->scale_node_need);
}
