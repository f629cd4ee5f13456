/* SPDX-License-Identifier: MIT */
/* ladder --plan: a quoted 'sparkops plan' command line, parsed by plan's own
 * option table, planned for the next rung's change (rung 1: the same job
 * against the budget after a flush; 2: the sequence halved, then the
 * micro-batch halved; 3: the method one tier down; 4: the catalog's smaller
 * model of the family and two Sparks) against the live budget. Kept apart
 * from cmd/ladder.c: the planner's headers and the log classifier's both
 * name a training method. */
#ifndef SP_LADDERPLAN_H
#define SP_LADDERPLAN_H
#include "probe/sample.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* one planned change */
struct sp_ladder_plan_step {
	char change[160];  /* plan's flags for it ("--seq 2048"), "flush", a model's name; "" as given */
	char note[120];    /* what it means for the job, "" none */
	uint64_t need;     /* the larger of the steady and load-time peak (per node across nodes) */
	uint64_t budget;   /* what it was judged against */
	bool fits, tight;  /* the plan's verdict: fits (tight: with little headroom) */
};

struct sp_ladder_plan {
	const char *line;     /* as given */
	char model[128];      /* the shape's name */
	char model_arg[128];  /* the model as the plan names it (for the job's commands) */
	int rung;             /* the rung planned, 0: none left */
	uint64_t seq_advised; /* set by the caller: the context the ladder's own advice names
			       * (a server's --max-model-len); rung 2 plans that, not a halving */
	uint64_t budget;      /* what the job can count on now (less --cohost) */
	const char *budget_source; /* "live", "--budget" */
	uint64_t budget_flush; /* after a flush (0: unknown) */
	struct sp_ladder_plan_step given;
	struct sp_ladder_plan_step steps[4];
	int nsteps;
	int chosen;           /* the first step that fits, else the last; -1 none */
	char none_why[160];   /* rung 3 with nothing lower, "" */
	/* rung 4, always planned: the smaller model ("" none fits) and two Sparks
	 * (1 fits, -1 does not, 0 not planned) */
	char smaller_model[128];
	uint64_t smaller_need;
	int two_sparks;
	const char *two_sparks_strategy; /* "FSDP", "tensor parallelism" */
	uint64_t two_sparks_need;
};

/* Parse the line with plan's option table and checks (a bad one exits 2,
 * naming it); 0, or -1 after plan's --help was printed. */
int sp_ladder_plan_parse(const char *line);
/* Plan rung's change against s's budget; 0, or an exit status after saying why. */
int sp_ladder_plan_run(struct sp_ladder_plan *lp, const struct sp_sample *s, int rung);
json_t *sp_ladder_plan_json(const struct sp_ladder_plan *lp);
/* Rung 4 without --plan: the model the log names ("meta-llama/Llama-3.1-70B-Instruct",
 * "unsloth/Qwen3-4B", "Meta Llama 3.1 70B Instruct"), found in the catalog,
 * and the catalog's next size down of its family (the largest smaller model,
 * same family name first, then the same architecture): its name and
 * Hugging Face id. No claim that it fits: that needs a plan. 0, or -1 when
 * the log's model is not in the catalog or nothing is smaller. */
int sp_ladder_next_size_down(const char *log_model, char *name, size_t n, char *hf, size_t hn);
/* What the planner says of the job's model before any rung is offered (the
 * ladder's checks, docs/ladder.md "What the ladder checks"): its weights and
 * its need as given (the larger of the steady and load-time peak), and for a
 * server the same with 8-bit and 4-bit weights, and across two Sparks. */
struct sp_ladder_model_check {
	char name[128];        /* the catalog's (or the plan's) name */
	const char *how;       /* "--plan", "the log's model" */
	uint64_t weights;      /* the weights term */
	uint64_t need;         /* the job as given (the plan's options, or served in bf16) */
	uint64_t need_min;     /* served, the least the knobs can make it (a 2048 context, one sequence); else need */
	uint64_t need_q8, need_q4; /* served with 8-bit / 4-bit weights; 0: not planned (training, pre-quantized) */
	bool prequantized;
	const char *precision; /* the log's model served: "bf16", "8-bit weights", "4-bit weights" (its name says); NULL for --plan */
};
/* From --plan's model and options when --plan was given, else from the model
 * the log names when the catalog knows it, planned as served (serving true:
 * --method infer, bf16) and only then. 0, or -1 when there is nothing to plan. */
int sp_ladder_model_check(const char *log_model, bool serving, struct sp_ladder_model_check *mc);
void sp_ladder_plan_print(const struct sp_ladder_plan *lp, const char *bold, const char *off);
#endif
