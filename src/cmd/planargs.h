/* SPDX-License-Identifier: MIT */
/* sparkops plan's command line, shared with 'ladder --plan' (which plans the
 * next rung's change from a quoted plan command line): the same option
 * table and the same checks. What both do with it is the library's: the
 * model (account/planmodel.h), the budget (account/budget.h). */
#ifndef SP_PLANARGS_H
#define SP_PLANARGS_H
#include "account/budget.h"
#include "account/fit.h"
#include "model/model.h"
#include "probe/probe.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_COHOSTS 8

/* --cohost SPEC, repeatable */
struct cohosts {
	struct sp_cohost c[MAX_COHOSTS];
	int n;
	char err[600];
};

/* what the command line asks for */
struct plan_args {
	struct sp_plan_opts p;
	struct sp_read_opts ro;
	bool json, list, quant_given;
	uint64_t budget; /* --budget (0: the live budget) */
	int uma;         /* --uma: 1 yes, 0 no, -1 auto */
	double params;   /* --params (0: not given) */
	const char *config, *model;
	struct cohosts co;
	int strategy;      /* --strategy: enum sp_strategy (-1: the default for the method) */
	double link_gbps;  /* --link-gbps */
	enum sp_solve_what solve; /* --solve */
};

/* a set to its defaults (what cmd_plan starts from) */
void sp_plan_args_init(struct plan_args *a);
/* argv[1..] (argv[0] is the command's name) through plan's option table and
 * its checks: the first operand is the model. Returns 0, or -1 after --help
 * was printed. A bad option or a contradiction exits 2, naming it. */
int sp_plan_args_parse(int argc, char **argv, struct plan_args *a);
#endif
