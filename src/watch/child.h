/* SPDX-License-Identifier: MIT */
/* The job: started with its argv exactly (execvp, no shell), stdin inherited,
 * stdout and stderr through pipes to a small relay process that copies them
 * byte for byte to our own stdout/stderr and hands a copy to us for the
 * progress parser. The relay, not sparkops, holds the job's output pipes, so
 * the job keeps running (and printing) if sparkops itself is killed, and a
 * slow sample never delays the job's output. Design notes: docs/run.md. */
#ifndef SP_CHILD_H
#define SP_CHILD_H
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "probe/jobtree.h" /* struct sp_tree, the scan, the kernel log's OOM record */

/* The live status line (run/watch on a terminal) and the job's output share
 * the terminal: this, in memory shared with the relay, keeps them apart. The
 * relay clears the status line before it copies a chunk to the same
 * terminal; sparkops draws it only when the job's last chunk there ended its
 * line (a tqdm bar sitting unfinished owns the line). Neither ever waits
 * long on the other: the lock is taken with a bounded spin. */
struct sp_ttyline {
	atomic_int lock;  /* 0 free, 1 held */
	atomic_int shown; /* the status line is on the terminal now */
	atomic_int dirty; /* the job's last chunk to the terminal did not end its line */
	bool same[2];     /* the job's stdout / stderr go to sparkops' stderr terminal */
};
/* Take the lock, trying at most tries times (about 0.1 ms apart): false when
 * it could not (then go on without it). */
bool sp_ttyline_lock(struct sp_ttyline *t, int tries);
void sp_ttyline_unlock(struct sp_ttyline *t);

struct sp_child {
	struct sp_ttyline *tty; /* set before the spawn: the status line's share, NULL none */
	pid_t pid;        /* the job */
	pid_t relay;      /* the output relay */
	int prog_fd[2];   /* read ends: copies of the job's stdout and stderr (non-blocking), -1 once closed */
};

/* Start the job. orig_mask: the signal mask to restore in the job.
 * Returns 0, or -errno when it could not start (exec's errno: -ENOENT for a
 * command not found, -EACCES ...); nothing is left running then. */
int sp_child_spawn(struct sp_child *c, char *const argv[], const sigset_t *orig_mask);

/* Send sig to every process of the tree; returns how many were signalled. */
int sp_tree_signal(const struct sp_tree *t, int sig);
#endif
