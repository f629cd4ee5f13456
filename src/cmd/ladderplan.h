/* SPDX-License-Identifier: MIT */
/* ladder --plan: a quoted 'sparkops plan' command line, parsed by plan's own
 * option table (cmd/planargs.h), planned for the next rung's change by the
 * library (account/rungplan.h) against plan's own budget (account/budget.h),
 * and rendered. Kept apart from cmd/ladder.c: it holds plan's parsed
 * arguments between the two calls the ladder makes. */
#ifndef SP_LADDERPLAN_H
#define SP_LADDERPLAN_H
#include "account/rungplan.h"
#include "probe/sample.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Parse the line with plan's option table and checks (a bad one exits 2,
 * naming it); 0, or -1 after plan's --help was printed. */
int sp_ladder_plan_parse(const char *line);
/* Plan rung's change against s's budget; 0, or an exit status after saying why. */
int sp_ladder_plan_run(struct sp_ladder_plan *lp, const struct sp_sample *s, int rung);
json_t *sp_ladder_plan_json(const struct sp_ladder_plan *lp);
/* What the planner says of the job's model before any rung is offered
 * (account/rungplan.h): from --plan's model and options when --plan was
 * given, else from the model the log names when the catalog knows it,
 * planned as served (serving true: --method infer, bf16) and only then. 0,
 * or -1 when there is nothing to plan. */
int sp_ladder_model_check(const char *log_model, bool serving, struct sp_ladder_model_check *mc);
void sp_ladder_plan_print(const struct sp_ladder_plan *lp, const char *bold, const char *off);
#endif
