/* SPDX-License-Identifier: MIT */
/* The running job's status file: how `sparkops top` sees a `run` or `watch`
 * in progress. The engine writes one small key=value text file per process,
 * atomically (a temporary file renamed over it) once per sample, and removes
 * it at exit; top lists the folder, parses each file and keeps those whose
 * process is alive and whose last update is recent (a crashed engine leaves
 * its file behind, and its pid may be reused).
 *
 * The folder (sp_jobstat_dir): $SPARKOPS_RUN_DIR/run when that is set (the
 * one root, util/paths.h: then no other folder is read either), else
 * $XDG_RUNTIME_DIR/sparkops when that is set, else /run/sparkops for root,
 * else /tmp/sparkops-UID. It is created 0700
 * (/run/sparkops 0755, so every user's top sees root's jobs) and refused
 * when it is not a directory owned by us (a symlink planted in /tmp) or is
 * writable by group or others (run, watch and top warn once). The
 * file is named by the engine's pid, mode 0644. Format (docs/ARCHITECTURE.md,
 * "The job status file"): one `key=value` a line, unknown keys ignored,
 * values without newlines; an empty value is unknown. */
#ifndef SP_JOBSTAT_H
#define SP_JOBSTAT_H
#include <stdbool.h>

#include "util/fileio.h"
#include <stddef.h>
#include <sys/types.h>

#define SP_JOBSTAT_VERSION 1
#define SP_JOBSTAT_MAX 8 /* jobs top shows */

struct sp_jobstat {
	int pid;               /* the sparkops engine's own pid */
	char mode[8];          /* "run" or "watch" */
	char command[160];     /* the job's words (run), "" for watch */
	int job_pid;           /* the job (run) or --pid (watch); 0 none */
	double started_unix, updated_unix, interval_s;
	long samples;
	double job_rss_bytes;  /* NAN unknown */
	double rate;           /* the job's latest throughput; NAN none yet */
	char unit[16];         /* "it/s" */
	double baseline;       /* the early throughput; NAN not yet */
	char cause[24];        /* "none", "thermal", ... (watch/cause.h) */
	char guard[12];        /* "off", "ok", "warned", "stopping", "killed" */
	char log[1024];        /* the CSV log's path */
	unsigned long seq;     /* the write's number: first line seq=N, last end=N (0: neither) */
};

void sp_jobstat_clear(struct sp_jobstat *j);

/* The text of j into buf (NUL-terminated); its length, or -1 when it did
 * not fit. Values are cleaned of control bytes. Pure. */
int sp_jobstat_format(const struct sp_jobstat *j, char *buf, size_t n);
/* Parse a file's text. 0 when it has a version this reader knows and a
 * pid; -1 otherwise; -EAGAIN when it opens with seq=N but has no end=N (a
 * read that met a write in progress: read it again). Nothing after the end
 * line is read. Pure. */
int sp_jobstat_parse(const char *buf, size_t len, struct sp_jobstat *j);

/* The status folder for this user into buf; 0, or -1 when there is none
 * usable (the reason in why, for a message). create: make it if missing. */
int sp_jobstat_dir(char *buf, size_t n, bool create, char *why, size_t whylen);
/* The folder exists but is refused (not a folder, not ours, or writable by
 * group or others): true, WHY says which. Missing is not refused. */
bool sp_jobstat_dir_refused(char *why, size_t whylen);

/* The writer (the engine): opened once, written each sample, closed at exit.
 * The file appears whole (a temporary file renamed over it); after that it is
 * rewritten in place through the descriptor kept from then (pwrite at 0, cut
 * to length when shorter): no create and no rename a sample, which on a /run
 * that is not tmpfs cost more than the rest of a sample. A reader tells a
 * read that met a write by its seq and end lines; a file unlinked under us
 * (a cleaner of /tmp) is made anew. */
struct sp_jobstat_file {
	bool on;
	unsigned long seq;
	char path[300];
	struct sp_out out;     /* the one door (util/fileio.h): the folder held, the file kept open once made */
	double checked;        /* monotonic: when the open file was last looked at (still linked?) */
};
/* how often a write looks whether the open file was unlinked under it (s) */
#define SP_JOBSTAT_RECHECK_S 5.0
/* 0, or -errno (nothing will be written; the reason, in f->path when the
 * folder was refused, is said once by the caller) */
int sp_jobstat_open(struct sp_jobstat_file *f, pid_t pid);
/* Write j (a reader sees the old text or the new one, never a mix it
 * accepts). 0 or -errno. No heap. */
int sp_jobstat_write(struct sp_jobstat_file *f, const struct sp_jobstat *j);
/* Remove the file (at exit). */
void sp_jobstat_close(struct sp_jobstat_file *f);

/* The reader (top): the live jobs in this user's folder and in root's
 * /run/sparkops, newest first; how many (<= max). A file whose process is
 * gone, or not updated for 3 intervals + 10 s, is skipped. now_unix is the
 * wall clock (a parameter so tests can pin it). */
int sp_jobstat_find(struct sp_jobstat *out, int max, double now_unix);
/* The freshness rule alone (pure): true when j was updated recently enough. */
bool sp_jobstat_fresh(const struct sp_jobstat *j, double now_unix);
#endif
