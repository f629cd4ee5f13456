/* SPDX-License-Identifier: MIT */
/* The verdict of a plan against its budget, the nearest anchor, the
 * cheapest change that fits, more Sparks, a smaller model and --solve
 * (fit.c). Pure: no I/O. */
#ifndef SP_FIT_H
#define SP_FIT_H
#include "account/budget.h"
#include "account/footprint.h"

#include <stddef.h>
#include <stdint.h>

/* ---- the verdict ------------------------------------------------------------ */
enum sp_verdict { SP_FITS, SP_TIGHT, SP_NO };
const char *sp_verdict_name(enum sp_verdict v); /* "fits" "tight" "no" */
/* tight: fits, but with less headroom than max(2 GiB, 10% of what it needs) */
uint64_t sp_tight_margin(uint64_t need);
enum sp_verdict sp_judge(uint64_t need, uint64_t budget);
/* what a plan needs: the larger of the steady and the load-time peak */
uint64_t sp_need(const struct sp_footprint *f);

/* ---- anchors: published rules of thumb the plan is checked against ------------- */
struct sp_anchor {
	const char *name;      /* "70b-qlora" */
	const char *text;      /* "70B QLoRA: about 40 GB" */
	double params;         /* the model size it speaks of */
	double figure_bytes;   /* 0: the anchor says "fits", not a number */
	enum sp_method method;
	int max_seq;           /* the anchor's packing bound (0: none) */
	bool counts_weights;   /* the figure counts the weights only (else a measured peak) */
};
/* The anchor of the same method and size class (a model within 1.6x of the
 * anchor's size), or NULL: an anchor of another method or size says nothing
 * about this plan. */
const struct sp_anchor *sp_anchor_nearest(const struct sp_model_shape *m, const struct sp_plan_opts *o);
/* what the anchor counts ("the weights only", "a measured peak", "fits
 * the Spark's pool") and the same quantity from the plan */
const char *sp_anchor_counts(const struct sp_anchor *a);
uint64_t sp_anchor_plan_bytes(const struct sp_anchor *a, const struct sp_footprint *f);
/* true when the plan's figure (sp_anchor_plan_bytes) is far from the
 * anchor's: off by more than 1.5x either way; "fits" anchors are far when
 * the peak exceeds the Spark's 119.7 GiB pool inside their packing bound. */
bool sp_anchor_far(const struct sp_anchor *a, const struct sp_plan_opts *o, uint64_t plan_bytes);
#define SP_SPARK_POOL_BYTES 128526000000ULL /* ~119.7 GiB usable on a DGX Spark */

/* ---- the cheapest change that fits ----------------------------------------------- */
struct sp_advice {
	char rung[24];        /* "bitsandbytes", "seq", "batch", "grad_ckpt", "optim", "method", "quant", "model" */
	char flags[160];      /* the exact flags to change: "--seq 1024" */
	char why[200];
	uint64_t need_bytes;  /* what the plan needs after the change (0 for "model") */
	struct sp_plan_opts opts; /* the changed options */
};
/* Search the OOM ladder's order: a current bitsandbytes (with --bnb-legacy),
 * then shorter --seq, then smaller --batch (with gradient accumulation
 * keeping the effective batch), then --grad-ckpt and a leaner --optim, then a method downgrade (bf16 LoRA before QLoRA), then a
 * smaller model or two Sparks. Writes the first change that fits into *a;
 * returns 1 when one was found, 0 when only "smaller model" is left. */
int sp_fit_search(const struct sp_model_shape *m, const struct sp_plan_opts *o, uint64_t budget, struct sp_advice *a);

/* Rung 4, more Sparks: the smallest N in 2..4 (with the strategy that saves
 * memory: fsdp for training, tp then pp for serving) whose per-node need
 * fits budget. Returns N (and the strategy and per-node need), or 0 when no
 * N <= 4 fits. */
int sp_fit_nodes(const struct sp_model_shape *m, const struct sp_plan_opts *o, uint64_t budget,
		 enum sp_strategy *strategy, uint64_t *node_need);
/* Rung 4, a smaller model: of n candidate shapes (complete), the index of the
 * largest one smaller than m whose plan with o fits one node's budget,
 * preferring those whose name shares m's family prefix (the name less its
 * last "-" part: "llama-3.1-70b" -> "llama-3.1"), then its generation (the
 * family up to its first '.': "llama-3"), then the same arch;
 * -1 when none fits. need gets its need. */
int sp_fit_smaller(const struct sp_model_shape *m, const struct sp_model_shape *cands, size_t n,
		   const struct sp_plan_opts *o, uint64_t budget, uint64_t *need);

/* ---- to the limit ------------------------------------------------------------------ */
enum sp_solve_what { SP_SOLVE_NONE, SP_SOLVE_SEQ, SP_SOLVE_BATCH };
extern const struct sp_word sp_solve_words[]; /* --solve's: "seq", "batch" */
/* The largest packing length (a multiple of 64, up to 2^24) or micro-batch
 * (up to 65536) whose plan, the rest of o as given, the verdict calls "fits"
 * (headroom kept) against budget (per node with o->nodes): a binary search
 * over the footprint, which grows with both. Returns it (need gets its
 * need), or 0 when not even 64 tokens / a batch of 1 fits. */
int sp_solve(const struct sp_model_shape *m, const struct sp_plan_opts *o, uint64_t budget, enum sp_solve_what what,
	     uint64_t *need);
/* --solve as the plan's verdict says it: sp_solve's search, then walked
 * (bounded) until its answer is what sp_plan_judge's verdict calls fits
 * against b (the per-node need; no when a discrete host side is short),
 * and the step past it with its verdict (tight or no). 0, or -1 out of
 * memory. */
struct sp_solve_answer {
	int value;                     /* the largest --seq / --batch that fits; 0: none */
	uint64_t need;                 /* its need */
	int next;                      /* one step past it (the smallest value when none fits) */
	enum sp_verdict next_verdict;  /* tight or no */
	uint64_t next_need;
};
int sp_solve_judged(const struct sp_model_shape *m, const struct sp_plan_opts *o, const struct sp_plan_budget *b,
		    enum sp_solve_what what, struct sp_solve_answer *r);

/* ---- the whole judgement of one plan ----------------------------------------------- */
struct sp_judgement {
	uint64_t need;                  /* sp_need */
	enum sp_verdict verdict;
	bool host_short;                /* discrete: the host side exceeds system memory (verdict no) */
	const struct sp_anchor *anchor; /* the nearest anchor, or NULL */
	bool far;                       /* sp_anchor_far */
	/* when it is not "fits", the ladder: a flush first, then the co-hosted
	 * servers, then the job's own settings (advice) */
	bool flush_fits, cohost_fits, have_advice;
	struct sp_advice advice;
	/* rung 4, when nothing on one node fits: the smallest N <= 4 that does
	 * (0: none) */
	int scale_nodes;
	enum sp_strategy scale_strategy;
	uint64_t scale_node_need;
};
/* The model state an anchor speaks of: weights, k-bit upcast, adapter,
 * gradients, optimizer state, master weights. */
uint64_t sp_model_state_bytes(const struct sp_footprint *f);
/* The verdict of footprint f (of m with o) against b, the anchor and the
 * advice. With o->nodes > 1 the need is one node's (sp_node_need). */
void sp_plan_judge(const struct sp_model_shape *m, const struct sp_plan_opts *o, const struct sp_footprint *f,
		   const struct sp_plan_budget *b, struct sp_judgement *j);
#endif
