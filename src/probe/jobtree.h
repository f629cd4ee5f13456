/* SPDX-License-Identifier: MIT */
/* The job's processes, read from the live proc tree, and the kernel log's
 * OOM-kill record: the reads run/watch make about the job it follows. */
#ifndef SP_JOBTREE_H
#define SP_JOBTREE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The live proc root: the job runs on this machine, whatever --procfs says. */
#define SP_LIVE_PROC "/proc"

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
 * `skip` and its descendants (skip 0: none). proc is the proc root to read
 * (SP_LIVE_PROC: the job runs here whatever --procfs says). Returns 0 or -errno. */
int sp_tree_scan(struct sp_tree *t, const char *proc, pid_t root, bool include_root, pid_t skip);
/* Re-read the rss of the processes already in the tree (one stat read each),
 * dropping those that ended: the cheap sample between full scans. */
void sp_tree_refresh(struct sp_tree *t, const char *proc);
/* This process and its ancestors (parent, grandparent, ... up to init), from
 * <proc>/PID/stat: at most max pids into out, this process first. Returns
 * how many. */
#define SP_SELF_LINE_MAX 256
int sp_self_line(const char *proc, pid_t *out, int max);
/* Drop this process and its ancestors from the tree (`watch --pid $$` names
 * sparkops' own shell: its tree holds sparkops, and the guard must signal
 * neither). Returns how many were dropped. */
int sp_tree_drop_self_line(struct sp_tree *t, const char *proc);
/* The owner (effective uid) of <proc>/PID: 0, or -errno. */
int sp_proc_owner(const char *proc, pid_t pid, uid_t *uid);
/* A process the guard must not signal for a job owned by OWNER: pid 1, or a
 * process of another user. How many the tree holds (0 none), the first one
 * described in *odd (its pid, owner and name). */
struct sp_tree_odd {
	pid_t pid;
	uid_t uid;
	char comm[32];
};
int sp_tree_foreign(const struct sp_tree *t, const char *proc, uid_t owner, struct sp_tree_odd *odd);
/* Drop those processes from the tree; how many were dropped. */
int sp_tree_drop_foreign(struct sp_tree *t, const char *proc, uid_t owner);
/* /proc/PID/stat: ppid and rss pages (pure, for tests and the fuzzer). 0 or -1. */
/* /proc/PID/stat: comm may hold spaces and ')', so the fields start after
 * the last ')'; NULL when there is none */
const char *sp_stat_after_comm(const char *buf, size_t len);
int sp_stat_parse(const char *buf, size_t len, pid_t *ppid, uint64_t *rss_pages);
/* /proc/PID/stat: majflt (field 12; pure). 0 or -1. */
int sp_stat_majflt(const char *buf, size_t len, uint64_t *majflt);
/* The major faults of the tree's processes, summed (one stat read each). */
uint64_t sp_tree_majflt(const struct sp_tree *t, const char *proc);
/* Does this kernel log text say the OOM killer killed pid ("Out of memory:
 * Killed process 1234 (python) ...", the memory cgroup's variant too)? Pure. */
bool sp_kmsg_oom_killed(const char *buf, size_t len, pid_t pid);
/* Read what /dev/kmsg holds now (non-blocking; root or dmesg_restrict=0) and
 * look for pid's OOM kill: 1 yes, 0 no, -errno when unreadable. */
int sp_kmsg_check_oom(pid_t pid);
#endif
