// SPDX-License-Identifier: MIT
/* ladder --plan (ladderplan.h): the next rung's change through the planner. */
#include "account/footprint.h"
#include "account/budget.h"
#include "account/fit.h"
#include "account/planmodel.h"
#include "cmd/cli.h"
#include "cmd/ladderplan.h"
#include "cmd/planargs.h"
#include "util/json.h"
#include "util/msg.h"
#include "util/units.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


/* The quoted plan command line split into words as a shell would for simple
 * cases: blanks separate, '...' and "..." quote, a backslash escapes the next
 * character. 0, or -1 with the reason (an unclosed quote, too many words). */
#define PLAN_WORDS 64
struct plan_line {
	char buf[4096];
	char *argv[PLAN_WORDS + 2];
	int argc;
};

static const char *split_words(const char *line, struct plan_line *pl)
{
	size_t o = 0;
	const char *p = line;
	pl->argc = 0;
	pl->argv[pl->argc++] = (char *)"plan";
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		if (pl->argc > PLAN_WORDS)
			return "has too many words";
		pl->argv[pl->argc++] = pl->buf + o;
		char q = 0;
		for (; *p && (q || (*p != ' ' && *p != '\t' && *p != '\n')); p++) {
			if (o + 2 >= sizeof pl->buf)
				return "is too long";
			if (q && *p == q) {
				q = 0;
			} else if (!q && (*p == '\'' || *p == '"')) {
				q = *p;
			} else if (*p == '\\' && q != '\'' && p[1]) {
				pl->buf[o++] = *++p;
			} else {
				pl->buf[o++] = *p;
			}
		}
		if (q)
			return "has an unclosed quote";
		pl->buf[o++] = 0;
	}
	pl->argv[pl->argc] = NULL;
	if (pl->argc == 1)
		return "is empty: give MODEL and plan's options, e.g. 'llama-3.1-8b --method lora --seq 4096 --batch 4'";
	return NULL;
}

static struct plan_line plan_words;
static struct plan_args plan_a;
static const char *plan_line_text;

int sp_ladder_plan_parse(const char *line)
{
	const char *bad = split_words(line, &plan_words);
	if (bad)
		sp_usage_error("ladder", "--plan '%s' %s", line, bad);
	for (int i = 1; i < plan_words.argc; i++)
		if (strncmp(plan_words.argv[i], "--procfs", 8) == 0 || strncmp(plan_words.argv[i], "--sysfs", 7) == 0)
			sp_usage_error("ladder", "--plan: give %s to ladder itself, not inside the plan", plan_words.argv[i]);
	sp_plan_args_init(&plan_a);
	if (sp_plan_args_parse(plan_words.argc, plan_words.argv, &plan_a) < 0)
		return -1;
	if (plan_a.list || plan_a.solve != SP_SOLVE_NONE)
		sp_usage_error("ladder", "--plan: --list-models and --solve belong to 'sparkops plan' on its own");
	plan_line_text = line;
	return 0;
}

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

/* Plan the next rung's change; 0, or an exit status after saying why. */
int sp_ladder_plan_run(struct sp_ladder_plan *lp, const struct sp_sample *s, int rung)
{
	struct plan_args *a = &plan_a;
	lp->line = plan_line_text;
	char err[600];
	struct sp_model_shape *m = sp_plan_load_model(a->model, a->config, a->params, err, sizeof err);
	if (!m) {
		sp_error("%s", err);
		return SP_EXIT_USAGE;
	}
	snprintf(lp->model, sizeof lp->model, "%s", m->name);
	snprintf(lp->model_arg, sizeof lp->model_arg, "%s", a->model ? a->model : m->name);
	/* plan's own budget: --budget or the live one, less every --cohost */
	struct sp_plan_budget b;
	enum sp_budget_fail f = sp_plan_budget_make(&b, s, a->budget, a->uma, a->co.c, a->co.n, err, sizeof err);
	if (f != SP_BUDGET_OK) {
		free(m);
		if (f == SP_BUDGET_UNREAD)
			sp_error("--plan: cannot read the memory budget (%s): add --budget SIZE to the plan", err);
		else if (f == SP_BUDGET_GPU_UNREAD)
			sp_error("--plan: --uma no: the GPU's memory cannot be read (%s); add --budget SIZE to the plan", err);
		else
			sp_error("--plan: %s", err);
		return SP_EXIT_USAGE;
	}
	lp->budget_source = b.source;
	lp->budget = b.bytes;
	lp->budget_flush = b.after_flush;
	lp->rung = rung;
	lp->chosen = -1;
	struct sp_plan_opts p = a->p;
	p.uma = b.uma;
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
	free(m);
	return 0;
}

static json_t *step_json(const struct sp_ladder_plan_step *st)
{
	json_t *o = json_object();
	json_object_set_new(o, "change", st->change[0] ? json_string(st->change) : json_null());
	json_object_set_new(o, "what", st->note[0] ? json_string(st->note) : json_null());
	json_object_set_new(o, "peak_bytes", json_integer((json_int_t)st->need));
	json_object_set_new(o, "budget_bytes", json_integer((json_int_t)st->budget));
	json_object_set_new(o, "fits", json_boolean(st->fits));
	json_object_set_new(o, "verdict", json_string(!st->fits ? "no" : st->tight ? "tight" : "fits"));
	json_object_set_new(o, "margin_bytes", json_integer((json_int_t)st->budget - (json_int_t)st->need));
	return o;
}

json_t *sp_ladder_plan_json(const struct sp_ladder_plan *lp)
{
	json_t *o = json_object();
	json_object_set_new(o, "command", sp_json_text(lp->line));
	json_object_set_new(o, "model", sp_json_text(lp->model));
	json_object_set_new(o, "rung", lp->rung ? json_integer(lp->rung) : json_null());
	json_object_set_new(o, "budget_bytes", json_integer((json_int_t)lp->budget));
	json_object_set_new(o, "budget_source", json_string(lp->budget_source));
	json_object_set_new(o, "as_given", step_json(&lp->given));
	const struct sp_ladder_plan_step *c = lp->chosen >= 0 ? &lp->steps[lp->chosen] : NULL;
	json_object_set_new(o, "change", c ? json_string(c->change) : json_null());
	json_object_set_new(o, "peak_bytes", c ? json_integer((json_int_t)c->need) : json_null());
	json_object_set_new(o, "fits", c ? json_boolean(c->fits) : json_null());
	json_object_set_new(o, "why_none", lp->none_why[0] ? json_string(lp->none_why) : json_null());
	json_t *a = json_array();
	for (int i = 0; i < lp->nsteps; i++)
		json_array_append_new(a, step_json(&lp->steps[i]));
	json_object_set_new(o, "steps", a);
	const struct sp_ladder_plan *pf = lp;
	json_object_set_new(o, "smaller_model", pf->smaller_model[0] ? json_string(pf->smaller_model) : json_null());
	json_object_set_new(o, "smaller_model_peak_bytes",
			    pf->smaller_model[0] ? json_integer((json_int_t)pf->smaller_need) : json_null());
	json_object_set_new(o, "two_sparks_fit", pf->two_sparks ? json_boolean(pf->two_sparks > 0) : json_null());
	json_object_set_new(o, "two_sparks_peak_bytes",
			    pf->two_sparks ? json_integer((json_int_t)pf->two_sparks_need) : json_null());
	return o;
}

static void print_step(const char *label, const struct sp_ladder_plan_step *st)
{
	char g1[32], g2[32];
	int64_t margin = (int64_t)st->budget - (int64_t)st->need;
	printf("  %-22s peak %s of %s: ", label, sp_fmt_gib(g1, sizeof g1, (double)st->need),
	       sp_fmt_gib(g2, sizeof g2, (double)st->budget));
	if (!st->fits)
		printf("does not fit by %s", sp_fmt_gib(g1, sizeof g1, (double)-margin));
	else
		printf("fits with %s to spare%s", sp_fmt_gib(g1, sizeof g1, (double)margin), st->tight ? " (tight)" : "");
	if (st->note[0])
		printf("  (%s)", st->note);
	printf("\n");
}

void sp_ladder_plan_print(const struct sp_ladder_plan *lp, const char *bold, const char *off)
{
	printf("\n%sPLAN%s  %s  (budget: %s)\n", bold, off, lp->line, lp->budget_source);
	print_step("as given", &lp->given);
	for (int i = 0; i < lp->nsteps; i++) {
		char label[200];
		snprintf(label, sizeof label, "rung %d: %s", lp->rung, lp->steps[i].change);
		print_step(label, &lp->steps[i]);
	}
	if (lp->none_why[0])
		printf("  rung %d: %s\n", lp->rung, lp->none_why);
	if (!lp->nsteps && !lp->none_why[0] && lp->rung)
		printf("  rung %d changes nothing the planner models\n", lp->rung);
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

static int find_log_model(const char *log_model, struct sp_model_shape *m);

/* the weights' precision a checkpoint's name says (a published quantized
 * repository: "-FP8-dynamic", "-AWQ", "-GPTQ-Int4", "-bnb-4bit" ...); NONE
 * when it says none (bf16) */
static enum sp_quant name_quant(const char *name)
{
	static const char *const q4[] = { "awq", "gptq", "int4", "nvfp4", "mxfp4", "fp4", "4bit", "4-bit", "w4a16", "bnb-4" };
	static const char *const q8[] = { "fp8", "int8", "w8a8", "8bit", "8-bit" };
	char low[128];
	size_t i = 0;
	for (; name[i] && i + 1 < sizeof low; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[i] = 0;
	for (size_t k = 0; k < sizeof q4 / sizeof q4[0]; k++)
		if (strstr(low, q4[k]))
			return SP_QUANT_FP4;
	for (size_t k = 0; k < sizeof q8 / sizeof q8[0]; k++)
		if (strstr(low, q8[k]))
			return SP_QUANT_INT8;
	return SP_QUANT_NONE;
}

int sp_ladder_model_check(const char *log_model, bool serving, struct sp_ladder_model_check *mc)
{
	memset(mc, 0, sizeof *mc);
	struct sp_model_shape *m = NULL;
	struct sp_plan_opts o;
	if (plan_line_text) {
		char err[600];
		m = sp_plan_load_model(plan_a.model, plan_a.config, plan_a.params, err, sizeof err);
		if (!m) {
			sp_error("%s", err);
			return -1;
		}
		o = plan_a.p;
		mc->how = "--plan";
	} else {
		if (!serving || !log_model || !log_model[0])
			return -1;
		m = calloc(1, sizeof *m);
		if (!m || find_log_model(log_model, m) < 0) {
			free(m);
			return -1;
		}
		sp_plan_opts_init(&o);
		o.method = SP_METHOD_INFER;
		/* a published quantized checkpoint is planned at its precision */
		o.quant = m->prequantized ? SP_QUANT_NONE : name_quant(log_model);
		mc->how = "the log's model";
		mc->precision = o.quant == SP_QUANT_INT8 ? "8-bit weights" : o.quant == SP_QUANT_FP4 ? "4-bit weights" : "bf16";
	}
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

int sp_ladder_next_size_down(const char *log_model, char *name, size_t n, char *hf, size_t hn)
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
