/* SPDX-License-Identifier: MIT */
/* run --ladder: the automatic retry's pure part. Where a flag's value is in
 * the job's command line ("--max_seq_length 2048" or "--max_seq_length=2048"),
 * a copy of the command line with a new value, and which rung the next try
 * takes: rung 1 (flush or evict, the same command), then rung 2 (the
 * sequence length halved while it stays at or above SP_RETRY_SEQ_FLOOR, then
 * the micro-batch halved with the accumulation doubled while the batch is 2
 * or more), then rung 3, which needs a person. The engine (engine.c) runs
 * the tries; the rules are docs/run.md "Automatic retry". */
#ifndef SP_ENGINE_RETRY_H
#define SP_ENGINE_RETRY_H
#include <stdbool.h>

#define SP_RETRY_DEFAULT_MAX_TRIES 5 /* the first try, rung 1, two halvings of the sequence, one of the batch */
#define SP_RETRY_MAX_TRIES 20
#define SP_RETRY_SEQ_FLOOR 128       /* the sequence length is not halved below this */
#define SP_RETRY_NOTES 4

struct sp_retry_cfg {
	bool on;                /* --ladder */
	const char *seq_flag;   /* --ladder-seq-flag, NULL none */
	const char *batch_flag; /* --ladder-batch-flag, NULL none */
	const char *accum_flag; /* --ladder-accum-flag, NULL none */
	int max_tries;          /* --ladder-max-tries: all tries, the first included */
};

/* Where flag's value is in argv (argv[0] is the program, never a flag).
 * Returns the index of the argument that holds the value ("--f=V" itself, or
 * the one after "--f"), -1 when flag is not there, -2 when it is there but its
 * value is not a whole number from 1 to 2^31-1 (*value untouched then). The
 * last occurrence counts (as argparse does). */
int sp_retry_flag_find(char *const *argv, const char *flag, long *value);

/* A copy of argv (NULL-terminated, one allocation) with flag's value set to
 * value: in place, in the form it had, or "FLAG VALUE" appended at the end
 * when flag is not there. NULL when out of memory. free() frees it. */
char **sp_retry_argv_set(char *const *argv, const char *flag, long value);

enum sp_retry_step {
	SP_RS_RUNG1, /* rung 1: flush (root) or evict, then the same command */
	SP_RS_SEQ,   /* rung 2: the sequence length halved */
	SP_RS_BATCH, /* rung 2: the micro-batch halved, the accumulation doubled */
	SP_RS_HUMAN, /* rung 3: the method; a person decides */
};

/* What the series has done so far. */
struct sp_retry_state {
	bool rung1_done;   /* rung 1 was taken or skipped (it is taken once) */
	unsigned said;     /* which skip reasons were given (bit per reason) */
};

struct sp_retry_plan {
	enum sp_retry_step step;
	int rung;                          /* 1, 2 or 3 */
	char change[200];                  /* one word: "flush", "--max_seq_length:2048->1024", ... */
	char **argv;                       /* the next command (malloc'd, free()) for SEQ and BATCH; else NULL */
	int nnotes;
	char notes[SP_RETRY_NOTES][240];   /* rungs skipped on the way, with the reason (each said once) */
};

/* The next try after an OOM. rung1_why_not: NULL when rung 1 can be done
 * here (root, or the eviction), else why not. A plan with SP_RS_RUNG1 marks
 * rung 1 done; the caller that then finds it cannot do it after all calls
 * again (the second call goes on to rung 2). -1: out of memory, else 0. */
int sp_retry_next(const struct sp_retry_cfg *c, struct sp_retry_state *st, char *const *argv,
		  const char *rung1_why_not, struct sp_retry_plan *p);
#endif
