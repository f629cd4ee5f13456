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

struct sp_child {
	pid_t pid;        /* the job */
	pid_t relay;      /* the output relay */
	int prog_fd[2];   /* read ends: copies of the job's stdout and stderr (non-blocking), -1 once closed */
};

/* Start the job. orig_mask: the signal mask to restore in the job.
 * Returns 0, or -errno when it could not start (exec's errno: -ENOENT for a
 * command not found, -EACCES ...); nothing is left running then. */
int sp_child_spawn(struct sp_child *c, char *const argv[], const sigset_t *orig_mask);

/* The processes of a tree, from one pass over <proc>/[0-9]*\/stat (ppid and
 * rss fields). Fixed size: no heap per sample. */
#define SP_TREE_MAX_SCAN 16384
#define SP_TREE_MAX 1024
struct sp_tree {
	int n;
	pid_t pids[SP_TREE_MAX];
	uint64_t rss_bytes;      /* the sum over the tree */
	bool truncated;          /* more processes than the buffers hold */
	/* scratch */
	int nscan;
	pid_t spid[SP_TREE_MAX_SCAN], sppid[SP_TREE_MAX_SCAN];
	uint64_t srss[SP_TREE_MAX_SCAN];
};
/* Collect root's descendants (and root itself when include_root), leaving out
 * `skip` and its descendants (skip 0: none). proc is the /proc to read (the
 * live one: the job runs here whatever --procfs says). Returns 0 or -errno. */
int sp_tree_scan(struct sp_tree *t, const char *proc, pid_t root, bool include_root, pid_t skip);
/* /proc/PID/stat: ppid and rss pages (pure, for tests and the fuzzer). 0 or -1. */
int sp_stat_parse(const char *buf, size_t len, pid_t *ppid, uint64_t *rss_pages);
/* Send sig to every process of the tree; returns how many were signalled. */
int sp_tree_signal(const struct sp_tree *t, int sig);
#endif
