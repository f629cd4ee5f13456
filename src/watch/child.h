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
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "probe/jobtree.h" /* struct sp_tree, the scan, the kernel log's OOM record */

struct sp_child {
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
