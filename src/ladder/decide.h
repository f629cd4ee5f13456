/* SPDX-License-Identifier: MIT */
/* The ladder's decision, a pure function: from the classified log, the job's
 * state and the live facts (the sample: budget, what a flush gives back, the
 * cgroup's OOM kills, the competing processes; whether rung 1 was just done)
 * to what happened, the next rung, the advice and the state to remember.
 * No I/O: cmd/ladder.c reads, writes and prints; the unit tests and
 * fuzz/fuzz_ladder_state.c call it directly. */
#ifndef SP_LADDER_DECIDE_H
#define SP_LADDER_DECIDE_H
#include "ladder/ladder.h"

/* What --apply N may do now (pure). Asked twice: before anything is read
 * (watchers < 0: not looked at yet), then with the number of 'sparkops
 * run|watch' processes found. */
enum sp_apply_verdict {
	SP_APPLY_NONE,       /* no --apply: advise only */
	SP_APPLY_FLUSH,      /* rung 1: go ahead */
	SP_APPLY_NEED_ROOT,  /* rung 1 needs root */
	SP_APPLY_WATCHED,    /* rung 1 while a job is watched, without --force */
	SP_APPLY_PRINT_ONLY, /* rungs 2-4 change the job: the change is printed, nothing done */
	SP_APPLY_EVICT,      /* rung 1 without root: evict the caller's own files (--evict PATH) */
};
enum sp_apply_verdict sp_ladder_apply_verdict(int apply, bool root, int watchers, bool force);
/* The same where rung 1 may be done without root by evicting the caller's own
 * files (ladder --apply 1 --evict PATH): SP_APPLY_EVICT instead of
 * SP_APPLY_NEED_ROOT when paths were given. */
enum sp_apply_verdict sp_ladder_apply_verdict_evict(int apply, bool root, bool have_paths, int watchers, bool force);

struct sp_ladder_in {
	const struct sp_oomlog *log;  /* the classified log; NULL without --log */
	const struct sp_sample *s;    /* the live state */
	struct sp_ladder_state st;    /* as loaded (empty after --reset) */
	unsigned mark;                /* rungs marked tried by hand (bit r: rung r) */
	bool flushed;                 /* rung 1 was just done (--apply 1) */
};

/* a rung that does not apply to this job, and why (re-judged on every call,
 * never written to the state: the page cache fills again, a new log may show
 * another method) */
struct sp_ladder_skip {
	int rung;
	char reason[256];
};

struct sp_ladder_decision {
	/* what happened */
	enum sp_oom_kind kind;
	enum sp_oom_phase phase;
	const char *phase_why;        /* into the log, or NULL */
	const char *evidence;         /* the deciding line (into the log) or cg_evidence */
	uint64_t evidence_line;       /* 0: not a line of the log */
	char cg_evidence[400];        /* the cgroup's OOM-kill counter, when it decided */
	bool figures;                 /* the log's figures belong to this failure */
	struct sp_job_facts facts;    /* for the change of any rung */
	bool not_memory;              /* the log holds no memory failure: no rung (ladder exits 3); st proposes
				       * nothing, and the caller keeps the job's state as it was (marks added) */
	bool ray;                     /* Ray's memory monitor killed the task (failure "ray_oom_kill") */
	/* what next */
	int counted_tried;            /* the rung proposed last time, counted as tried: the job failed again */
	int next;                     /* 0: every rung tried (or skipped) */
	unsigned skipped;             /* bit r: rung r does not apply (sp_ladder_skip_reason) */
	int nskip;
	struct sp_ladder_skip skip[SP_RUNGS];
	char fragmentation[512];      /* the expandable_segments advice, "" none */
	char change[2048];            /* the next rung's change, or what to do when none is left */
	char before[2048];            /* what to do first: competitors, fragmentation; "" none */
	char advice[8192];            /* all of it in one sentence */
	int ncomp;
	struct sp_competitor comp[SP_MAX_PROCS];
	/* what to remember (updated is left as it was: the writer stamps it) */
	struct sp_ladder_state st;
};

/* Decide. d points into in->log and into itself (evidence): not to be copied. */
void sp_ladder_decide(const struct sp_ladder_in *in, struct sp_ladder_decision *d);
/* The same, with what the planner said for rung 4 (ladder --plan): planned's
 * smaller_model, smaller_need, two_sparks, two_sparks_strategy and
 * two_sparks_need go into the facts, and its model where the log names none
 * (NULL: not planned). */
void sp_ladder_decide_planned(const struct sp_ladder_in *in, const struct sp_job_facts *planned,
			      struct sp_ladder_decision *d);
#endif
