// SPDX-License-Identifier: MIT
/* The OOM ladder: 1 flush the page cache; concurrent workloads
 * judged by their cap before any change to the job; 2 shorter packing /
 * sequence first, then a smaller micro-batch with more gradient accumulation;
 * 3 bf16 LoRA before QLoRA; 4 a smaller model or two Sparks. A load-phase OOM
 * points at the load-time peak, never at the batch. */
#include "ladder/ladder.h"
#include "model/model.h"
#include "util/units.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the ladder -------------------------------------------------------------------- */

int sp_ladder_next(unsigned tried)
{
	for (int r = 1; r <= SP_RUNGS; r++)
		if (!(tried >> r & 1))
			return r;
	return 0;
}

const char *sp_ladder_rung_title(int rung)
{
	switch (rung) {
	case 1: return "flush the page cache";
	case 2: return "shorter sequence/packing first, then a smaller micro-batch with more gradient accumulation";
	case 3: return "downgrade the method one tier: bf16 LoRA before QLoRA";
	case 4: return "a smaller model, or two Sparks";
	default: return "every rung tried";
	}
}

enum sp_job_family sp_ladder_family(enum sp_oom_kind k)
{
	switch (k) {
	case SP_OOM_VLLM_STARTUP:
	case SP_OOM_VLLM_KV: return SP_FAMILY_VLLM;
	case SP_OOM_OLLAMA: return SP_FAMILY_OLLAMA;
	case SP_OOM_SGLANG: return SP_FAMILY_SGLANG;
	case SP_OOM_LLAMACPP: return SP_FAMILY_LLAMACPP;
	case SP_OOM_TGI: return SP_FAMILY_TGI;
	default: return SP_FAMILY_TRAINING;
	}
}

enum sp_job_family sp_ladder_family_of(enum sp_oom_kind k, enum sp_log_engine e)
{
	enum sp_job_family fam = sp_ladder_family(k);
	if (fam == SP_FAMILY_OLLAMA && e == SP_ENGINE_LLAMACPP)
		return SP_FAMILY_LLAMACPP; /* llama.cpp's own server, not Ollama's */
	if (fam != SP_FAMILY_TRAINING || k == SP_OOM_BNB)
		return fam; /* bitsandbytes is a training library */
	switch (e) {
	case SP_ENGINE_VLLM: return SP_FAMILY_VLLM;
	case SP_ENGINE_SGLANG: return SP_FAMILY_SGLANG;
	case SP_ENGINE_LLAMACPP: return SP_FAMILY_LLAMACPP;
	case SP_ENGINE_OLLAMA: return SP_FAMILY_OLLAMA;
	case SP_ENGINE_TGI: return SP_FAMILY_TGI;
	default: return SP_FAMILY_TRAINING;
	}
}

const char *sp_ladder_family_key(enum sp_job_family f)
{
	switch (f) {
	case SP_FAMILY_VLLM: return "vllm";
	case SP_FAMILY_OLLAMA: return "ollama";
	case SP_FAMILY_SGLANG: return "sglang";
	case SP_FAMILY_LLAMACPP: return "llamacpp";
	case SP_FAMILY_TGI: return "tgi";
	case SP_FAMILY_RAY: return "ray";
	default: return "training";
	}
}

static enum sp_job_family facts_family(const struct sp_job_facts *f)
{
	if (f->ray)
		return SP_FAMILY_RAY;
	return sp_ladder_family_of(f->kind, f->engine);
}

const char *sp_ladder_rung_title_for(int rung, const struct sp_job_facts *f)
{
	enum sp_job_family fam = facts_family(f);
	if (rung == 2) {
		switch (fam) {
		case SP_FAMILY_VLLM:
			return "the server's own knobs: a shorter --max-model-len, fewer --max-num-seqs, a fixed or "
			       "quantized KV cache, then a --gpu-memory-utilization that fits";
		case SP_FAMILY_SGLANG:
			return "the server's own knobs: a shorter --context-length, fewer --max-running-requests, a "
			       "quantized KV cache, then a --mem-fraction-static that fits";
		case SP_FAMILY_LLAMACPP:
			return "a smaller context (-c) first, then one slot (-np 1) and a quantized KV cache";
		case SP_FAMILY_OLLAMA:
			return "a smaller context first, then fewer parallel requests and loaded models, and a quantized KV cache";
		case SP_FAMILY_TGI:
			return "smaller prefill batches and token limits first, then a memory fraction that fits";
		case SP_FAMILY_RAY:
			return "Ray's memory monitor: its threshold and refresh, and fewer tasks at once";
		default:
			break;
		}
		if (f->phase == SP_PHASE_LOAD)
			return "lower the load-time peak (not the batch: it failed while loading)";
	}
	if (rung == 3 && fam != SP_FAMILY_TRAINING)
		return "quantized weights, one tier down";
	if (rung == 3 && f->method == SP_LOG_METHOD_LORA && f->kind != SP_OOM_BNB)
		return "downgrade the method one tier: bf16 LoRA becomes QLoRA";
	if (rung == 3 && f->method == SP_LOG_METHOD_FULL)
		return "downgrade the method one tier: a full fine-tune becomes bf16 LoRA";
	if (rung == 4 && fam != SP_FAMILY_TRAINING)
		return "a smaller or more quantized model, or two Sparks";
	return sp_ladder_rung_title(rung);
}

int sp_ladder_competitors(const struct sp_sample *s, struct sp_competitor *out, int max)
{
	int n = 0;
	char g1[32], g2[32];
	/* the cap is a fraction of the GPU's memory on a discrete GPU, of the pool on UMA */
	const char *of = "pool";
	const double total = sp_cap_base_bytes(s, &of);
	const bool total_ok = total > 0;
	for (int i = 0; i < s->nprocs && n < max; i++) {
		const struct sp_proc *p = &s->procs[i];
		struct sp_competitor *c = &out[n];
		memset(c, 0, sizeof *c);
		c->proc = p;
		/* what it holds now (RSS + GPU memory), never its cap (probe/poolmodel.h) */
		c->holds_ok = true;
		c->holds_bytes = sp_pool_proc_held(p);
		if (p->kind == SP_PROC_SERVER && p->has_cap) {
			c->cap_ok = total_ok;
			c->cap_bytes = sp_pool_proc_cap(p, total);
			/* " = 107.7 GiB", or nothing when the pool size is unknown */
			char eq[48] = "";
			if (total_ok)
				snprintf(eq, sizeof eq, " = %s", sp_fmt_gib(g1, sizeof g1, (double)c->cap_bytes));
			if (p->cap_default) {
				c->suspect = true;
				snprintf(c->judgement, sizeof c->judgement,
					 "uncapped: reserves the default %.2f of the %s%s at start-up (holds %s now)", p->cap_frac, of,
					 eq, sp_fmt_gib(g2, sizeof g2, (double)c->holds_bytes));
			} else if (p->cap_frac > SP_SMALL_CAP) {
				c->suspect = true;
				snprintf(c->judgement, sizeof c->judgement, "capped high: %s %.2f%s (holds %s now)", p->cap_flag,
					 p->cap_frac, eq, sp_fmt_gib(g2, sizeof g2, (double)c->holds_bytes));
			} else {
				snprintf(c->judgement, sizeof c->judgement,
					 "capped at %s %.2f%s, holds %s now: a small cap, judged fine", p->cap_flag,
					 p->cap_frac, eq, sp_fmt_gib(g2, sizeof g2, (double)c->holds_bytes));
			}
			if (c->suspect)
				snprintf(c->action, sizeof c->action,
					 "stop %s (pid %d) or restart it with a small cap (%s %.2g or lower)", p->name, p->pid,
					 p->cap_flag[0] == '-' ? p->cap_flag : "--gpu-memory-utilization", SP_SMALL_CAP);
			n++;
			continue;
		}
		sp_fmt_gib(g1, sizeof g1, (double)c->holds_bytes);
		if (c->holds_bytes >= SP_SUSPECT_RSS) {
			c->suspect = true;
			if (strcmp(p->name, "ollama") == 0) {
				snprintf(c->judgement, sizeof c->judgement,
					 "no cap; holds %s resident (models stay loaded for keep_alive, 5 min by default)", g1);
				snprintf(c->action, sizeof c->action,
					 "unload ollama's models ('ollama stop MODEL', or keep_alive 0) or stop ollama (pid %d)",
					 p->pid);
			} else if (p->kind == SP_PROC_SERVER) {
				snprintf(c->judgement, sizeof c->judgement, "no cap; holds %s resident", g1);
				snprintf(c->action, sizeof c->action, "stop %s (pid %d) while the job runs", p->name, p->pid);
			} else {
				snprintf(c->judgement, sizeof c->judgement, "%s holds %s resident",
					 p->kind == SP_PROC_TRAINER ? "another training process" : "a memory-heavy process", g1);
				snprintf(c->action, sizeof c->action,
					 "make sure %s (pid %d) is not a leftover of the failed run; stop it if it is not needed",
					 p->name, p->pid);
			}
		} else {
			snprintf(c->judgement, sizeof c->judgement, "holds %s resident (under %s): judged fine", g1,
				 sp_fmt_gib(g2, sizeof g2, (double)SP_SUSPECT_RSS));
		}
		n++;
	}
	return n;
}

static void cat(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t n, const char *fmt, ...)
{
	size_t l = strlen(buf);
	if (l + 1 >= n)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + l, n - l, fmt, ap);
	va_end(ap);
}

void sp_ladder_facts_from_log(struct sp_job_facts *f, const struct sp_oomlog *log)
{
	const struct sp_u64 miss = { 0, SP_MISSING };
	f->kv_needed = f->kv_available = f->reserved_unalloc = f->tried = miss;
	f->contig_free = miss;
	if (!log)
		return;
	f->weights_alloc = log->weights_alloc;
	f->weights_need = log->weights_need;
	f->killer_threshold = log->killer_threshold;
	f->fragmented = log->fragmented;
	f->fragmented_why = log->fragmented_why[0] ? log->fragmented_why : NULL;
	f->kind = log->kind;
	f->phase = log->phase;
	f->engine = log->engine;
	f->batch_per_device = log->batch_per_device;
	f->grad_accum = log->grad_accum;
	f->seq_len = log->seq_len;
	f->method = log->method;
	f->method_why = log->method_why[0] ? log->method_why : NULL;
	f->trainable_pct = log->trainable_pct;
	f->model = log->model[0] ? log->model : NULL;
	f->max_model_len = log->max_model_len;
	/* llama.cpp's context is its n_ctx; its model is the file it loaded */
	if (!f->max_model_len && log->more.n_ctx)
		f->max_model_len = log->more.n_ctx;
	f->model_file = log->more.model_file[0] ? log->more.model_file : NULL;
	f->prefill_tokens = log->more.prefill_tokens;
	f->est_max_model_len = log->est_max_model_len;
	f->max_num_seqs = log->max_num_seqs;
	f->kv_negative = log->kv_negative;
	f->vllm_v1 = log->vllm_v1;
	f->kv_needed = log->fig.kv_needed;
	f->kv_available = log->fig.kv_available;
	f->reserved_unalloc = log->fig.reserved_unalloc;
	f->tried = log->fig.tried;
	f->more = &log->more;
	f->ray = log->more.ray_oom || log->kind == SP_OOM_RAY; /* the facts' reading or the classifier's kind */
	if (log->weights_bytes) {
		f->weights = log->weights_bytes;
		f->weights_src = "the log";
	}
}

static bool serving_family(enum sp_job_family fam)
{
	return fam != SP_FAMILY_TRAINING && fam != SP_FAMILY_RAY;
}

/* " served in bf16", " (as --plan gives it)" */
static const char *plan_as(const struct sp_job_facts *f, char *buf, size_t n)
{
	if (f->plan_prec)
		snprintf(buf, n, " served in %s", f->plan_prec);
	else
		snprintf(buf, n, " (as --plan gives it)");
	return buf;
}

uint64_t sp_ladder_min_need(const struct sp_job_facts *f, const char **why)
{
	static char buf[400];
	char g1[32], g2[32], g3[32], as[48];
	/* the weights the server itself reported are measured: they come first */
	const bool measured = f->weights && f->weights_src && strcmp(f->weights_src, "the log") == 0;
	if (f->plan_need_min && serving_family(facts_family(f)) && !measured) {
		bool given = f->plan_need_min == f->plan_need;
		snprintf(buf, sizeof buf, "the planner puts %s%s%s at %s", f->plan_name, plan_as(f, as, sizeof as),
			 !given ? " at a 2048 context and one sequence" : "",
			 sp_fmt_gib(g1, sizeof g1, (double)f->plan_need_min));
		if (why)
			*why = buf;
		return f->plan_need_min;
	}
	if (f->weights && serving_family(facts_family(f))) {
		uint64_t need = f->weights + SP_SERVER_OVERHEAD;
		snprintf(buf, sizeof buf, "its weights (%s, as %s says) and the runtime's overhead (%s) need %s",
			 sp_fmt_gib(g1, sizeof g1, (double)f->weights), f->weights_src ? f->weights_src : "the log",
			 sp_fmt_gib(g2, sizeof g2, (double)SP_SERVER_OVERHEAD), sp_fmt_gib(g3, sizeof g3, (double)need));
		if (why)
			*why = buf;
		return need;
	}
	if (why)
		*why = NULL;
	return 0;
}

static double down05(double x)
{
	return floor(x * 20 + 1e-9) / 20;
}

static double up05(double x)
{
	return ceil(x * 20 - 1e-9) / 20;
}

double sp_ladder_share(const struct sp_job_facts *f, char *why, size_t n)
{
	char g1[32], g2[32];
	if (n)
		why[0] = 0;
	if (!sp_ok(f->budget_after_flush.why) || !sp_ok(f->total.why) || !f->total.v)
		return 0;
	const double total = (double)f->total.v;
	double cap = down05((double)f->budget_after_flush.v / total);
	if (cap > 0.95)
		cap = 0.95;
	const char *need_why;
	uint64_t need = sp_ladder_min_need(f, &need_why);
	double floor_share = need ? up05((double)need / total) : 0.05;
	const struct sp_log_facts *m = f->more;
	const int hint = m ? m->frac_hint : 0;
	const double used = m ? m->frac_used : 0;
	if (need && (double)need > 0.95 * total) {
		snprintf(why, n, "no share fits: %s, more than the whole pool (%s)", need_why,
			 sp_fmt_gib(g1, sizeof g1, total));
		return 0;
	}
	if (hint < 0 && used > 0) {
		double lower = down05(used - 0.05);
		if (lower < floor_share) {
			snprintf(why, n, "the server's own hint is a share below the %.2f it ran with, but %s, a share of "
				 "at least %.2f: no lower share holds them", used, need_why ? need_why : "the weights",
				 floor_share);
			return 0;
		}
		if (lower < cap)
			cap = lower;
	}
	if (cap < floor_share || cap < 0.05) {
		if (need)
			snprintf(why, n, "no share fits now: %s, a share of at least %.2f, and only %s is free after a "
				 "flush (%.2f of the pool)", need_why, floor_share,
				 sp_fmt_gib(g1, sizeof g1, (double)f->budget_after_flush.v),
				 down05((double)f->budget_after_flush.v / total));
		else
			snprintf(why, n, "no share fits now: only %s is free after a flush",
				 sp_fmt_gib(g1, sizeof g1, (double)f->budget_after_flush.v));
		return 0;
	}
	if (hint > 0 && used > 0 && cap <= used) {
		snprintf(why, n, "the server's own hint is a share above the %.2f it ran with, but only %s is free "
			 "after a flush (%.2f of the pool)", used, sp_fmt_gib(g1, sizeof g1, (double)f->budget_after_flush.v),
			 down05((double)f->budget_after_flush.v / total));
		return 0;
	}
	if (need)
		snprintf(why, n, "at least %.2f for what the model needs (%s)", floor_share, need_why);
	else
		snprintf(why, n, "the log names neither the model nor its weights: make sure they and about %s of "
			 "runtime overhead fit in that share", sp_fmt_gib(g2, sizeof g2, (double)SP_SERVER_OVERHEAD));
	return cap;
}

static uint64_t down_1024(uint64_t v)
{
	return v >= 1024 ? v / 1024 * 1024 : v;
}

uint64_t sp_ladder_model_len(const struct sp_job_facts *f)
{
	if (f->est_max_model_len)
		return down_1024(f->est_max_model_len);
	if (f->max_model_len && sp_ok(f->kv_needed.why) && sp_ok(f->kv_available.why) && f->kv_needed.v &&
	    f->kv_available.v && f->kv_available.v < f->kv_needed.v)
		return down_1024((uint64_t)((double)f->max_model_len * (double)f->kv_available.v / (double)f->kv_needed.v));
	if (f->max_model_len >= 2)
		return down_1024(f->max_model_len / 2);
	return 0;
}

enum sp_log_method sp_ladder_method_down(enum sp_log_method m)
{
	switch (m) {
	case SP_LOG_METHOD_FULL: return SP_LOG_METHOD_LORA;
	case SP_LOG_METHOD_LORA: return SP_LOG_METHOD_QLORA;
	default: return SP_LOG_METHOD_UNKNOWN;
	}
}


/* The kinds whose figure "tried" is the whole of what the job asked for (not
 * one allocation on top of what it held): vLLM's start-up reservation,
 * Ollama's "requires more system memory (X)". */
static bool tried_is_whole(enum sp_oom_kind k)
{
	return k == SP_OOM_VLLM_STARTUP || k == SP_OOM_OLLAMA;
}

/* rung 1 (flush, rerun unchanged) refuted by the figures: "" when not */
static void flush_refuted(const struct sp_job_facts *f, char *buf, size_t n)
{
	char g1[32], g2[32], g3[32];
	if (!sp_ok(f->budget_after_flush.why))
		return;
	const uint64_t after = f->budget_after_flush.v;
	const char *gives = sp_ok(f->reclaimable.why) ? sp_fmt_gib(g1, sizeof g1, (double)f->reclaimable.v) : "what it can";
	if (tried_is_whole(f->kind) && sp_ok(f->tried.why) && after < f->tried.v) {
		snprintf(buf, n, "a flush gives back %s (%s free after it); the job asked for %s: rerunning it unchanged "
			 "cannot pass", gives, sp_fmt_gib(g2, sizeof g2, (double)after),
			 sp_fmt_gib(g3, sizeof g3, (double)f->tried.v));
		return;
	}
	/* the job as the planner was given it (or served as the log names it) */
	const char *why;
	char plan_why[400];
	uint64_t need = sp_ladder_min_need(f, &why);
	if (f->plan_need) {
		char as[48];
		snprintf(plan_why, sizeof plan_why, "the planner puts %s%s at %s", f->plan_name, plan_as(f, as, sizeof as),
			 sp_fmt_gib(g3, sizeof g3, (double)f->plan_need));
		need = f->plan_need;
		why = plan_why;
	}
	if (need && after < need)
		snprintf(buf, n, "%s; a flush gives back %s (%s free after it): rerunning it unchanged cannot fit", why,
			 gives, sp_fmt_gib(g2, sizeof g2, (double)after));
}

/* rung 2 (a server's knobs: context, sequences, KV cache, share) refuted:
 * what the model needs is more than the whole pool */
static void knobs_refuted(const struct sp_job_facts *f, char *buf, size_t n)
{
	char g1[32];
	const char *why;
	uint64_t need = sp_ladder_min_need(f, &why);
	if (!need || !sp_ok(f->total.why))
		return;
	if ((double)need > 0.95 * (double)f->total.v) {
		snprintf(buf, n, "%s, more than the whole pool (%s): no context length, sequence count, KV cache or "
			 "memory share makes the weights fit", why, sp_fmt_gib(g1, sizeof g1, (double)f->total.v));
		return;
	}
	/* vLLM, SGLang and TGI reserve their share of the pool when they start,
	 * from what is free then: a flush and stopping the suspects is all there is */
	enum sp_job_family fam = facts_family(f);
	if ((fam == SP_FAMILY_VLLM || fam == SP_FAMILY_SGLANG || fam == SP_FAMILY_TGI) &&
	    sp_ok(f->budget_after_flush.why) && f->budget_after_flush.v + f->suspect_bytes < need) {
		char g2[32], g3[32];
		snprintf(buf, n, "%s; a flush leaves %s", why, sp_fmt_gib(g2, sizeof g2, (double)f->budget_after_flush.v));
		if (f->suspect_bytes)
			cat(buf, n, " and stopping the suspects would add at most %s",
			    sp_fmt_gib(g3, sizeof g3, (double)f->suspect_bytes));
		cat(buf, n, ": the server cannot reserve that at any setting of its knobs");
	}
}

/* a checkpoint whose name says 8-bit weights (FP8, INT8, W8A8) */
static bool model_8bit(const char *m)
{
	static const char *const marks[] = { "fp8", "int8", "w8a8", "8bit", "8-bit" };
	if (!m)
		return false;
	char low[128];
	size_t i = 0;
	for (; m[i] && i + 1 < sizeof low; i++)
		low[i] = (char)tolower((unsigned char)m[i]);
	low[i] = 0;
	for (size_t k = 0; k < sizeof marks / sizeof marks[0]; k++)
		if (strstr(low, marks[k]))
			return true;
	return false;
}

bool sp_ladder_weights_exceed(const struct sp_job_facts *f)
{
	if (!sp_ok(f->total.why) || !f->total.v)
		return false;
	return (f->weights_alloc && sp_ok(f->tried.why) && f->tried.v > f->total.v) || f->weights_need > f->total.v;
}

bool sp_ladder_compact(const struct sp_job_facts *f)
{
	return f->fragmented || (sp_ok(f->contig_free.why) && f->contig_free.v < SP_CONTIG_LOW);
}

void sp_ladder_skip_reason(int rung, const struct sp_job_facts *f, char *buf, size_t n)
{
	char g[32], g2[32];
	if (!n)
		return;
	buf[0] = 0;
	enum sp_job_family fam = facts_family(f);
	if ((rung == 1 || rung == 2) && sp_ladder_weights_exceed(f))
		snprintf(buf, n,
			 "the weights alone (%s) are larger than the whole pool (%s): no flush, context length or batch "
			 "makes them fit; a smaller quantization or model, or more Sparks",
			 sp_fmt_bytes(g, sizeof g, (double)(f->weights_need > f->total.v ? f->weights_need : f->tried.v)),
			 sp_fmt_bytes(g2, sizeof g2, (double)f->total.v));
	else if (rung == 1 && f->killer_threshold)
		snprintf(buf, n, "a threshold someone set killed it, not the kernel running out, and that killer counts "
			 "the page cache as free: a flush gives it nothing (its knob is named before the next rung)");
	else if (rung == 1 && f->kind == SP_OOM_VLLM_KV)
		snprintf(buf, n, "vLLM sized its KV cache as --gpu-memory-utilization x the pool less what the model "
			 "took after start-up; the page cache already there at start-up is not in that sum, so a flush "
			 "does not make the KV cache larger");
	else if (rung == 1 && sp_ok(f->reclaimable.why) && f->reclaimable.v < SP_FLUSH_WORTH)
		snprintf(buf, n, "a flush would give back only %s: it costs a rerun for nothing",
			 sp_fmt_bytes(g, sizeof g, (double)f->reclaimable.v));
	else if (rung == 1)
		flush_refuted(f, buf, n);
	else if (rung == 2 && serving_family(fam))
		knobs_refuted(f, buf, n);
	else if (rung == 3 && fam == SP_FAMILY_TRAINING && f->method == SP_LOG_METHOD_QLORA && f->kind != SP_OOM_BNB)
		snprintf(buf, n, "the job is already QLoRA (%s): there is no lower tier",
			 f->method_why ? f->method_why : "the log says so");
	else if (rung == 3 && fam != SP_FAMILY_TRAINING && sp_name_weight_bits(f->model) == 4)
		snprintf(buf, n, "'%s' is already a 4-bit checkpoint: there is no lower tier that keeps its quality",
			 f->model);
	else if (rung == 3 && serving_family(fam) && f->plan_need_q4 && sp_ok(f->total.why) &&
		 f->plan_need_q4 > f->total.v) {
		snprintf(buf, n, "even with 4-bit weights the planner puts %s at %s, more than the whole pool (%s)",
			 f->plan_name, sp_fmt_gib(g, sizeof g, (double)f->plan_need_q4),
			 sp_fmt_gib(g2, sizeof g2, (double)f->total.v));
	}
}

void sp_ladder_fragmentation(const struct sp_job_facts *f, char *buf, size_t n)
{
	char g1[32], g2[32];
	if (!n)
		return;
	buf[0] = 0;
	if (!sp_ok(f->reserved_unalloc.why) || f->reserved_unalloc.v < SP_FRAG_MIN)
		return;
	if (sp_ok(f->tried.why) && f->reserved_unalloc.v < f->tried.v)
		return;
	snprintf(buf, n, "PyTorch held %s reserved but unallocated", sp_fmt_gib(g1, sizeof g1, (double)f->reserved_unalloc.v));
	if (sp_ok(f->tried.why))
		cat(buf, n, ", more than the %s it failed to allocate", sp_fmt_bytes(g2, sizeof g2, (double)f->tried.v));
	cat(buf, n, ": the memory is there but fragmented. Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True in "
		    "the job's environment and rerun (it changes no result, so it comes before any change to the job)");
}

static const char *model_or(const struct sp_job_facts *f, const char *dflt)
{
	return f->model ? f->model : dflt;
}

static void rung1(const struct sp_job_facts *f, char *buf, size_t n)
{
	char g1[32], g2[32], g3[32];
	enum sp_job_family fam = facts_family(f);
	char g4[32];
	if (sp_ladder_compact(f)) {
		/* fragmentation: the driver's large allocations need contiguous memory */
		cat(buf, n, "sync; echo 3 | sudo tee /proc/sys/vm/drop_caches; echo 1 | sudo tee /proc/sys/vm/compact_memory "
			    "(or: sudo sparkops ladder --apply 1), then rerun the job unchanged. Flush and compact: ");
		if (f->fragmented_why)
			cat(buf, n, "the log shows %s", f->fragmented_why);
		else
			cat(buf, n, "only %s is free in blocks of 2 MiB or more", sp_fmt_bytes(g4, sizeof g4, (double)f->contig_free.v));
		cat(buf, n, ", and the GPU driver's large allocations (NV_ERR_NO_MEMORY) need contiguous memory, "
			    "which a flush alone does not make");
	} else {
		cat(buf, n, "sync; echo 3 | sudo tee /proc/sys/vm/drop_caches (or: sudo sparkops ladder --apply 1), "
			    "then rerun the job unchanged");
	}
	if (sp_ok(f->reclaimable.why) && sp_ok(f->budget_now.why) && sp_ok(f->budget_after_flush.why))
		cat(buf, n, ". A flush gives back about %s now: the budget goes from %s to %s",
		    sp_fmt_gib(g1, sizeof g1, (double)f->reclaimable.v), sp_fmt_gib(g2, sizeof g2, (double)f->budget_now.v),
		    sp_fmt_gib(g3, sizeof g3, (double)f->budget_after_flush.v));
	if (tried_is_whole(f->kind) && sp_ok(f->tried.why) && sp_ok(f->budget_after_flush.why))
		cat(buf, n, ", which covers the %s the job asked for", sp_fmt_gib(g1, sizeof g1, (double)f->tried.v));
	const char *need_why;
	if (sp_ladder_min_need(f, &need_why) && need_why)
		cat(buf, n, " (%s)", need_why);
	if (fam == SP_FAMILY_VLLM)
		cat(buf, n, ". vLLM's start-up check compares the free memory it reads when its CUDA context starts "
			    "(torch.cuda.mem_get_info) with --gpu-memory-utilization x the whole pool, before loading "
			    "anything; on a Spark that reading leaves the page cache out, like MemFree, not MemAvailable "
			    "(vLLM issue #48140, 0.24; releases whose UMA path reads psutil's MemAvailable, as after PR "
			    "#35356, report more than the check uses): on unified memory a flush is often all it needs");
	else if (fam == SP_FAMILY_RAY)
		cat(buf, n, ". Ray's memory monitor counts the node's used memory; the page cache earlier loads left "
			    "shares the pool the task loads into, and a flush returns it before the rerun");
	else if (fam != SP_FAMILY_TRAINING)
		cat(buf, n, ". A server sizes its pool from what is free when it starts, and on a Spark the page cache "
			    "left by earlier loads shares that pool");
	else if (f->phase == SP_PHASE_LOAD)
		cat(buf, n, ". It failed while loading: the load-time peak is the mapped weight files plus their copy, "
			    "and page cache left by earlier loads shares the same pool");
	cat(buf, n, ". A between-runs reset, not a mid-training step");
}

/* the share of the whole pool a server may reserve here (sp_ladder_share) */
static double fits_fraction(const struct sp_job_facts *f)
{
	char why[400];
	return sp_ladder_share(f, why, sizeof why);
}

/* "--gpu-memory-utilization 0.55: ..." judged against the weights, the
 * server's hint and the other holders */
static void util_step(const struct sp_job_facts *f, const char *flag, char *buf, size_t n)
{
	char g1[32], g2[32], g3[32], why[400];
	double frac = sp_ladder_share(f, why, sizeof why);
	const struct sp_log_facts *m = f->more;
	if (frac > 0) {
		cat(buf, n, "%s %.2f: the server reserves that share of the whole pool (%s) when it starts; %s is "
			    "free after a flush", flag, frac, sp_fmt_gib(g1, sizeof g1, (double)f->total.v),
		    sp_fmt_gib(g2, sizeof g2, (double)f->budget_after_flush.v));
		if (m && m->frac_hint && m->frac_used > 0)
			cat(buf, n, "; %s than the %.2f it ran with, as its own hint says (line %llu: %.100s)",
			    m->frac_hint < 0 ? "lower" : "higher", m->frac_used, (unsigned long long)m->frac_hint_line,
			    m->frac_hint_text);
		if (why[0])
			cat(buf, n, "; %s", why);
	} else if (why[0]) {
		cat(buf, n, "%s: %s", flag, why);
		if (m && m->frac_hint < 0 && m->frac_used > 0)
			cat(buf, n, " (its own hint, line %llu: %.100s)", (unsigned long long)m->frac_hint_line,
			    m->frac_hint_text);
		cat(buf, n, "; then quantized weights or a smaller model (rungs 3 and 4)");
	} else {
		cat(buf, n, "a %s that fits what is free after a flush (the share of the whole pool the server reserves "
			    "when it starts)", flag);
	}
	if (f->nothers)
		cat(buf, n, ", with %d other process%s holding %s", f->nothers, f->nothers == 1 ? "" : "es",
		    sp_fmt_gib(g3, sizeof g3, (double)f->others_bytes));
	if (f->nsuspects)
		cat(buf, n, " (%d of them a suspect holding %s: stop or cap %s first, and the share can be higher)",
		    f->nsuspects, sp_fmt_gib(g1, sizeof g1, (double)f->suspect_bytes), f->nsuspects == 1 ? "it" : "them");
}

static void rung2_vllm(const struct sp_job_facts *f, char *buf, size_t n)
{
	char g1[32];
	const char *m = model_or(f, "MODEL");
	uint64_t len = sp_ladder_model_len(f);
	double frac = fits_fraction(f);
	int step = 1;
	bool util_first = f->kind == SP_OOM_VLLM_STARTUP || f->kv_negative;
	if (util_first) {
		cat(buf, n, "(%d) ", step++);
		util_step(f, "--gpu-memory-utilization", buf, n);
		cat(buf, n, f->kv_negative ? ". The KV cache came out negative: the weights and the profiling peak "
					     "alone exceed the share vLLM was given, so no shorter context helps until it fits; "
					   : ". It failed the start-up free-memory check, which no context length changes; ");
	}
	cat(buf, n, "(%d) ", step++);
	if (len && f->est_max_model_len)
		cat(buf, n, "--max-model-len %llu (the log's own estimate, %llu, rounded down to a multiple of 1024; "
			    "the KV cache for one request scales with it)",
		    (unsigned long long)len, (unsigned long long)f->est_max_model_len);
	else if (len && f->max_model_len)
		cat(buf, n, "--max-model-len %llu (from %llu: the KV cache for one request scales with it)",
		    (unsigned long long)len, (unsigned long long)f->max_model_len);
	else
		cat(buf, n, "a shorter --max-model-len (halve it: the KV cache for one request scales with it)");
	cat(buf, n, "; (%d) ", step++);
	if (f->max_num_seqs >= 2)
		cat(buf, n, "--max-num-seqs %llu (from %llu)", (unsigned long long)f->max_num_seqs / 2,
		    (unsigned long long)f->max_num_seqs);
	else
		cat(buf, n, "fewer --max-num-seqs (halve it)");
	cat(buf, n, "; (%d) ", step++);
	if (sp_ok(f->kv_needed.why) && f->kv_needed.v)
		cat(buf, n, "--kv-cache-memory-bytes %llu (%s, what one request at the max length needs) instead of a "
			    "profiled share", (unsigned long long)f->kv_needed.v,
		    sp_fmt_gib(g1, sizeof g1, (double)f->kv_needed.v));
	else
		cat(buf, n, "--kv-cache-memory-bytes SIZE, a fixed KV cache instead of a profiled share");
	cat(buf, n, " (newer vLLM; the start-up check still compares free memory with --gpu-memory-utilization)");
	cat(buf, n, "; (%d) --kv-cache-dtype fp8 (half the KV cache's bytes per token)", step++);
	if (!util_first) {
		cat(buf, n, "; (%d) ", step++);
		util_step(f, "--gpu-memory-utilization", buf, n);
	}
	cat(buf, n, ". E.g. vllm serve %s", m);
	if (len)
		cat(buf, n, " --max-model-len %llu", (unsigned long long)len);
	if (frac > 0 && util_first)
		cat(buf, n, " --gpu-memory-utilization %.2f", frac);
}

static void rung2_sglang(const struct sp_job_facts *f, char *buf, size_t n)
{
	uint64_t len = sp_ladder_model_len(f);
	double frac = fits_fraction(f);
	const struct sp_log_facts *m = f->more;
	const bool graphs = m && (m->cuda_graph_failed || m->cuda_graph_bs_hint);
	uint64_t bs = m && m->cuda_graph_bs_example ? m->cuda_graph_bs_example : 16;
	int step = 1;
	if (graphs) {
		cat(buf, n, "(%d) --cuda-graph-max-bs %llu (%s: SGLang captures a CUDA graph for each batch size up to "
			    "it, in the memory outside its static pool; fewer, smaller graphs need less of it%s)", step++,
		    (unsigned long long)bs, m->cuda_graph_failed ? "the CUDA graph capture failed" : "the log names it",
		    m->cuda_graph_bs_example ? ", the log's own example value" : "");
		cat(buf, n, "; (%d) ", step++);
		util_step(f, "--mem-fraction-static", buf, n);
		cat(buf, n, "; ");
	}
	if (len)
		cat(buf, n, "(%d) --context-length %llu (the KV cache for one request scales with it)", step++,
		    (unsigned long long)len);
	else
		cat(buf, n, "(%d) a shorter --context-length (halve it: the KV cache for one request scales with it)", step++);
	cat(buf, n, "; (%d) fewer --max-running-requests (halve it)", step++);
	if (f->phase == SP_PHASE_SERVE)
		cat(buf, n, " and a smaller --chunked-prefill-size (e.g. 2048: it failed while serving, where the "
			    "prefill's activations live outside the static pool)");
	cat(buf, n, "; (%d) --kv-cache-dtype fp8_e5m2 (half the KV cache's bytes per token)", step++);
	if (!graphs) {
		cat(buf, n, "; (%d) ", step++);
		util_step(f, "--mem-fraction-static", buf, n);
	}
	if (f->phase == SP_PHASE_SERVE && !(m && m->frac_hint > 0))
		cat(buf, n, "; an OOM while serving wants a lower --mem-fraction-static (more room outside the pool)");
	cat(buf, n, ". E.g. python -m sglang.launch_server --model-path %s", model_or(f, "MODEL"));
	if (graphs)
		cat(buf, n, " --cuda-graph-max-bs %llu", (unsigned long long)bs);
	if (len)
		cat(buf, n, " --context-length %llu", (unsigned long long)len);
	if (frac > 0)
		cat(buf, n, " --mem-fraction-static %.2f", frac);
}

/* Ray's memory monitor (docs/ladder.md "Ray's memory monitor") */
static void rung2_ray(const struct sp_job_facts *f, char *buf, size_t n)
{
	const struct sp_log_facts *m = f->more;
	char g1[32], g2[32];
	double th = m && m->ray_threshold > 0 ? m->ray_threshold : SP_RAY_THRESHOLD_DEFAULT;
	cat(buf, n, "Ray's memory monitor (in the raylet) killed the task, not CUDA: it kills the newest task when the "
		    "node's used memory crosses RAY_memory_usage_threshold (%.2f here%s)", th,
	    th == SP_RAY_THRESHOLD_DEFAULT ? ", the default" : "");
	if (m && m->ray_total)
		cat(buf, n, "; the log says %s of %s was in use", sp_fmt_gib(g1, sizeof g1, (double)m->ray_used),
		    sp_fmt_gib(g2, sizeof g2, (double)m->ray_total));
	cat(buf, n, ". On a Spark the GPU's memory is that same pool, so a model load (the weights read through the "
		    "page cache, then copied into CUDA memory, which Ray counts as used) crosses it with no leak. "
		    "(1) start Ray with RAY_memory_usage_threshold=0.98 in its environment (ray start, or before "
		    "ray.init), so a load's transient peak passes; (2) or RAY_memory_monitor_refresh_ms=0 to turn the "
		    "monitor off (the kernel's OOM killer is then the only backstop); (3) fewer tasks at once (more "
		    "num_cpus or num_gpus per task, or a smaller max_concurrency), each loading its own copy");
	if (m && m->ray_rows)
		cat(buf, n, ". Ray's \"Top 10 memory users\" table (%d row%s, the largest %.60s at %s) is Ray's report of "
			    "the node, not this job's engine: stop what is not the job's", m->ray_rows,
		    m->ray_rows == 1 ? "" : "s", m->ray_top, sp_fmt_gib(g1, sizeof g1, (double)m->ray_top_bytes));
}

static void rung2_llamacpp(const struct sp_job_facts *f, char *buf, size_t n)
{
	uint64_t len = sp_ladder_model_len(f);
	char num[32] = "N";
	if (len) {
		snprintf(num, sizeof num, "%llu", (unsigned long long)len);
		cat(buf, n, "(1) -c %s (--ctx-size: the KV cache scales with it)", num);
	} else {
		cat(buf, n, "(1) a smaller -c (--ctx-size; halve it: the KV cache scales with it)");
	}
	cat(buf, n, "; (2) -np 1 (one slot); (3) --cache-type-k q8_0 --cache-type-v q8_0 (half the KV cache; the "
		    "V cache needs flash attention, -fa); (4) -ngl: on a Spark's single pool a lower -ngl moves layers "
		    "from the GPU's share to the CPU's share of the same memory and frees nothing; only on a discrete "
		    "GPU does it help. E.g. llama-server -m %s -c %s -np 1 --cache-type-k q8_0",
	    f->model_file ? f->model_file : model_or(f, "MODEL.gguf"), num);
}

static void rung2_ollama(const struct sp_job_facts *f, char *buf, size_t n)
{
	uint64_t len = sp_ladder_model_len(f);
	if (len)
		cat(buf, n, "(1) a smaller context: num_ctx %llu (or OLLAMA_CONTEXT_LENGTH=%llu)", (unsigned long long)len,
		    (unsigned long long)len);
	else
		cat(buf, n, "(1) a smaller context first (num_ctx, or OLLAMA_CONTEXT_LENGTH; halve it)");
	cat(buf, n, "; (2) fewer parallel requests (OLLAMA_NUM_PARALLEL=1) and one loaded model at a time "
		    "(OLLAMA_MAX_LOADED_MODELS=1); (3) a quantized KV cache (OLLAMA_KV_CACHE_TYPE=q8_0, with "
		    "OLLAMA_FLASH_ATTENTION=1)");
	if (f->model)
		cat(buf, n, ". E.g. OLLAMA_NUM_PARALLEL=1 OLLAMA_MAX_LOADED_MODELS=1 OLLAMA_KV_CACHE_TYPE=q8_0 "
			    "OLLAMA_FLASH_ATTENTION=1 ollama serve, then run %s with a smaller num_ctx", f->model);
}

static void rung2_tgi(const struct sp_job_facts *f, char *buf, size_t n)
{
	double frac = fits_fraction(f);
	const uint64_t half = f->prefill_tokens >= 2 ? f->prefill_tokens / 2 : 0;
	if (half)
		cat(buf, n, "(1) --max-batch-prefill-tokens %llu (half the %llu the warm-up allocated a prefill batch "
			    "for)", (unsigned long long)half, (unsigned long long)f->prefill_tokens);
	else
		cat(buf, n, "(1) a smaller --max-batch-prefill-tokens (halve it: the warm-up allocates a prefill batch "
			    "this large)");
	cat(buf, n, "; (2) smaller --max-total-tokens and --max-input-tokens (each request's context); (3) ");
	util_step(f, "--cuda-memory-fraction", buf, n);
	if (half)
		cat(buf, n, ". E.g. text-generation-launcher --model-id %s --max-batch-prefill-tokens %llu", model_or(f, "MODEL"),
		    (unsigned long long)half);
	else
		cat(buf, n, ". E.g. text-generation-launcher --model-id %s --max-batch-prefill-tokens N (half what it has)",
		    model_or(f, "MODEL"));
	if (frac > 0)
		cat(buf, n, " --cuda-memory-fraction %.2f", frac);
}

static void rung2(const struct sp_job_facts *f, char *buf, size_t n)
{
	switch (facts_family(f)) {
	case SP_FAMILY_VLLM: rung2_vllm(f, buf, n); return;
	case SP_FAMILY_SGLANG: rung2_sglang(f, buf, n); return;
	case SP_FAMILY_LLAMACPP: rung2_llamacpp(f, buf, n); return;
	case SP_FAMILY_OLLAMA: rung2_ollama(f, buf, n); return;
	case SP_FAMILY_TGI: rung2_tgi(f, buf, n); return;
	case SP_FAMILY_RAY: rung2_ray(f, buf, n); return;
	default: break;
	}
	if (f->phase == SP_PHASE_LOAD) {
		cat(buf, n, "it failed while loading, so the batch and the sequence length are not the cause: lower "
			    "the load-time peak instead. Load straight to the GPU shard by shard (low_cpu_mem_usage=True, "
			    "device_map=\"cuda\"), do not keep the mapped safetensors pages or a CPU copy of the "
			    "state_dict around, and prefer pre-quantized weights (a published 4-bit or FP8 checkpoint) "
			    "to quantizing bf16 shards at load. 'sparkops plan %s --method ...' shows the load peak",
		    model_or(f, "MODEL"));
		return;
	}
	if (f->seq_len >= 512)
		cat(buf, n, "cut the sequence/packing length first: max_seq_length %llu -> %llu (activation memory "
			    "scales with it)", (unsigned long long)f->seq_len, (unsigned long long)f->seq_len / 2);
	else
		cat(buf, n, "cut the sequence/packing length first: halve max_seq_length (e.g. 4096 -> 2048; "
			    "activation memory scales with it)");
	if (f->batch_per_device > 1) {
		unsigned long long b = f->batch_per_device, a = f->grad_accum ? f->grad_accum : 1;
		cat(buf, n, "; if that is not enough, halve the micro-batch and double the accumulation: "
			    "per_device_train_batch_size %llu -> %llu, gradient_accumulation_steps %llu -> %llu "
			    "(the effective batch stays %llu)", b, b / 2, a, a * 2, (b / 2) * a * 2);
	} else if (f->batch_per_device == 1) {
		cat(buf, n, "; the micro-batch is already 1, so next turn on gradient checkpointing "
			    "(gradient_checkpointing=True) rather than cut the batch");
	} else {
		cat(buf, n, "; if that is not enough, halve the micro-batch and double the accumulation "
			    "(per_device_train_batch_size B -> B/2, gradient_accumulation_steps A -> 2A: the "
			    "effective batch stays the same)");
	}
	if (f->phase == SP_PHASE_UNKNOWN)
		cat(buf, n, ". The log does not say when it failed: if it was while loading, the batch is not the "
			    "cause (lower the load-time peak instead)");
}

/* the planner's figures for quantized weights, when planned */
static void quant_figures(const struct sp_job_facts *f, char *buf, size_t n)
{
	char g1[32], g2[32], g3[32];
	if (!f->plan_need_q8 || !f->plan_need_q4)
		return;
	cat(buf, n, " (the planner: %s needs %s with 8-bit weights, %s with 4-bit", f->plan_name,
	    sp_fmt_gib(g1, sizeof g1, (double)f->plan_need_q8), sp_fmt_gib(g2, sizeof g2, (double)f->plan_need_q4));
	if (sp_ok(f->budget_after_flush.why))
		cat(buf, n, "; %s is free after a flush", sp_fmt_gib(g3, sizeof g3, (double)f->budget_after_flush.v));
	cat(buf, n, ")");
}

static void rung3(const struct sp_job_facts *f, char *buf, size_t n)
{
	const char *m = model_or(f, "MODEL");
	switch (facts_family(f)) {
	case SP_FAMILY_VLLM:
	case SP_FAMILY_SGLANG:
	case SP_FAMILY_RAY:
		if (model_8bit(f->model))
			cat(buf, n, "serve a 4-bit checkpoint of %s (NVFP4 or AWQ) instead of its 8-bit weights", m);
		else
			cat(buf, n, "serve a quantized checkpoint of %s (FP8, NVFP4 or AWQ) instead of bf16 weights", m);
		quant_figures(f, buf, n);
		return;
	case SP_FAMILY_TGI:
		cat(buf, n, "serve %s quantized (--quantize fp8, or a published AWQ/GPTQ checkpoint) instead of bf16 weights", m);
		quant_figures(f, buf, n);
		return;
	case SP_FAMILY_OLLAMA:
	case SP_FAMILY_LLAMACPP:
		cat(buf, n, "a smaller quantization of %s (e.g. q4_K_M instead of q8_0 or fp16)", m);
		quant_figures(f, buf, n);
		return;
	default:
		break;
	}
	if (f->kind == SP_OOM_BNB) {
		cat(buf, n, "this OOM came from bitsandbytes' transient (de)quantization buffers, which can fail before "
			    "an equivalent bf16 LoRA would: a QLoRA OOM is not proof the model does not fit. Try bf16 "
			    "LoRA (no quantization_config) if 'sparkops plan %s --method lora' says it fits; "
			    "otherwise stay on QLoRA with a pre-quantized checkpoint", m);
	} else if (f->method == SP_LOG_METHOD_LORA) {
		cat(buf, n, "the job is already bf16 LoRA (%s), so one tier down is QLoRA: load the base in 4-bit NF4 "
			    "(BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"nf4\"), or Unsloth's "
			    "load_in_4bit=True) and keep the same adapters. Check with 'sparkops plan %s --method qlora' first",
		    f->method_why ? f->method_why : "the log says so", m);
	} else if (f->method == SP_LOG_METHOD_FULL) {
		cat(buf, n, "the job is a full fine-tune%s%s%s, so one tier down is bf16 LoRA (PEFT, r=16 on the attention "
			    "and MLP projections); QLoRA only if that does not fit. Check with 'sparkops plan %s "
			    "--method lora' first", f->method_why ? " (" : "", f->method_why ? f->method_why : "",
		    f->method_why ? ")" : "", m);
	} else {
		cat(buf, n, "one tier down: a full fine-tune becomes bf16 LoRA (PEFT, r=16 on the attention and MLP "
			    "projections); only if bf16 LoRA does not fit, QLoRA (4-bit NF4). Check with 'sparkops plan "
			    "%s --method lora' first", m);
	}
}

static void rung4(const struct sp_job_facts *f, char *buf, size_t n)
{
	char g1[32], g2[32];
	bool serving = facts_family(f) != SP_FAMILY_TRAINING;
	if (f->plan_need && sp_ok(f->budget_after_flush.why) && f->plan_need > f->budget_after_flush.v)
		cat(buf, n, "the planner puts %s at %s against %s free after a flush: ", f->plan_name,
		    sp_fmt_gib(g1, sizeof g1, (double)f->plan_need), sp_fmt_gib(g2, sizeof g2, (double)f->budget_after_flush.v));
	if (f->smaller_model[0])
		cat(buf, n, "a smaller model: %s instead of %s (the catalog's largest smaller model of the family that "
			    "fits: it needs %s)", f->smaller_model, model_or(f, "this one"),
		    sp_fmt_gib(g1, sizeof g1, (double)f->smaller_need));
	else if (f->next_down[0])
		cat(buf, n, "a smaller%s model than %s: the catalog's next size down is %s%s%s%s (whether it fits is "
			    "for 'sparkops ladder --plan ...' to say)", serving ? " or more quantized" : "",
		    model_or(f, "this one"), f->next_down, f->next_down_hf[0] ? " (" : "", f->next_down_hf,
		    f->next_down_hf[0] ? ")" : "");
	else if (serving)
		cat(buf, n, "a smaller or more quantized model than %s (the next size down of the same family)",
		    model_or(f, "this one"));
	else
		cat(buf, n, "a smaller model than %s (the next size down of the same family)", model_or(f, "this one"));
	if (f->two_sparks == 1)
		cat(buf, n, "; or two Sparks with %s over the link (the planner: %s per node)",
		    f->two_sparks_strategy ? f->two_sparks_strategy : "FSDP", sp_fmt_gib(g1, sizeof g1, (double)f->two_sparks_need));
	else if (f->two_sparks < 0)
		cat(buf, n, "; two Sparks with %s do not fit either (the planner: %s per node)",
		    f->two_sparks_strategy ? f->two_sparks_strategy : "FSDP", sp_fmt_gib(g1, sizeof g1, (double)f->two_sparks_need));
	else if (serving)
		cat(buf, n, ", or more than one Spark (tensor or pipeline parallel over the link); 'sparkops ladder --plan "
			    "...' checks which fits");
	else
		cat(buf, n, ", or more than one Spark with DDP/FSDP over the link (never tensor parallelism); "
			    "'sparkops ladder --plan ...' checks which fits");
}

void sp_ladder_change(int rung, const struct sp_job_facts *f, char *buf, size_t n)
{
	if (!n)
		return;
	buf[0] = 0;
	switch (rung) {
	case 1: rung1(f, buf, n); break;
	case 2: rung2(f, buf, n); break;
	case 3: rung3(f, buf, n); break;
	case 4: rung4(f, buf, n); break;
	default:
		cat(buf, n, "every rung was tried or does not apply: as configured the job does not fit on one Spark. "
			    "'sparkops plan' shows each term of the footprint; '--reset' starts the ladder over");
	}
}
