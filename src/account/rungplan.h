/* SPDX-License-Identifier: MIT */
/* The next rung's change through the planner (rungplan.c), for 'ladder
 * --plan': rung 1 the same job against the budget after a flush; 2 the
 * sequence halved (or the context the ladder's advice names), then the
 * micro-batch halved; 3 the method one tier down; 4 the catalog's smaller
 * model of the family and two Sparks. And what the planner says of the
 * job's model before any rung is offered (docs/ladder.md "What the ladder
 * checks"). Pure arithmetic over the footprint, but for the catalog's
 * lookups. The header names no planner type, so that the ladder's command
 * includes it beside the log classifier's. */
#ifndef SP_RUNGPLAN_H
#define SP_RUNGPLAN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sp_model_shape;
struct sp_plan_opts;

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

/* Plan rung's change (1-4; another: none) for the job m with p against
 * lp->budget (rung 1: lp->budget_flush; rung 2: lp->seq_advised, a
 * context >= 128 shorter than p's --seq, planned instead of a halving),
 * which the caller sets with line, model, model_arg and budget_source:
 * the job as given, the rung's steps, rung 4's facts (always: the decision
 * names them when rung 4 is proposed), and the chosen step (the first that
 * fits, else the last; -1 none). */
void sp_rung_plan(struct sp_ladder_plan *lp, const struct sp_model_shape *m, const struct sp_plan_opts *p, int rung);

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
/* The needs of m with o on the Spark's one pool (o's uma aside) into mc:
 * name, weights, need, need_min and need_q8/q4 for a server of
 * unquantized or 8-bit weights; how and precision are the caller's. */
void sp_rung_model_needs(const struct sp_model_shape *m, const struct sp_plan_opts *o,
			 struct sp_ladder_model_check *mc);
/* The model a log names ("meta-llama/Llama-3.1-70B-Instruct",
 * "unsloth/Qwen3-4B", "Meta Llama 3.1 70B Instruct"), found in the catalog,
 * planned as served (--method infer, at the precision its name says: bf16,
 * "-FP8", "-AWQ" ...) into mc (how: "the log's model"). 0, or -1 when the
 * catalog does not know it. */
int sp_rung_log_model_check(const char *log_model, struct sp_ladder_model_check *mc);
/* Rung 4 without a plan: the catalog's next size down of the log's model's
 * family (the largest smaller model, same family name first, then the same
 * architecture): its name and Hugging Face id. No claim that it fits: that
 * needs a plan. 0, or -1 when the log's model is not in the catalog or
 * nothing is smaller. */
int sp_rung_next_size_down(const char *log_model, char *name, size_t n, char *hf, size_t hn);
#endif
