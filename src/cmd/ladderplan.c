// SPDX-License-Identifier: MIT
/* ladder --plan (ladderplan.h): the next rung's change through the planner. */
#include "account/budget.h"
#include "account/fit.h"
#include "account/planmodel.h"
#include "account/rungplan.h"
#include "cmd/cli.h"
#include "cmd/ladderplan.h"
#include "cmd/planargs.h"
#include "util/json.h"
#include "util/msg.h"
#include "util/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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
	struct sp_plan_opts p = a->p;
	p.uma = b.uma;
	sp_rung_plan(lp, m, &p, rung);
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
	json_object_set_new(o, "verdict", json_string(sp_verdict_name(!st->fits ? SP_NO : st->tight ? SP_TIGHT : SP_FITS)));
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

int sp_ladder_model_check(const char *log_model, bool serving, struct sp_ladder_model_check *mc)
{
	memset(mc, 0, sizeof *mc);
	if (!plan_line_text)
		return serving ? sp_rung_log_model_check(log_model, mc) : -1;
	char err[600];
	struct sp_model_shape *m = sp_plan_load_model(plan_a.model, plan_a.config, plan_a.params, err, sizeof err);
	if (!m) {
		sp_error("%s", err);
		return -1;
	}
	sp_rung_model_needs(m, &plan_a.p, mc);
	mc->how = "--plan";
	free(m);
	return 0;
}
