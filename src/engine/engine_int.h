/* SPDX-License-Identifier: MIT */
/* The engine's insides, shared by its files and by nothing else (commands
 * see engine/engine.h). One struct eng_run holds a whole sp_engine_run: the
 * log, the job, the samples, both guard threads' state, what is published,
 * and run --ladder's series of tries. Every function of the engine takes it
 * as `w`; nothing in the engine is file-scope state.
 *
 * The files, by job:
 *   engine.c     the public entry: sp_engine_opts_init, sp_engine_run
 *   try.c        the start, the loop (one poll), the end of a try; the
 *                run's opening and closing around the tries
 *   sample.c     a sample: the machine read, its events and rows, the
 *                attribution, the driver's kernel-log lines; the log rows
 *   publish.c    what others see: the live status line, the metrics copy
 *                for --metrics-listen, the status file for top, --summary
 *   guard.c      the guard thread (the pool guard's actions) and the queue
 *                both guard threads hand their rows to the loop through
 *   loadguard.c  the load-guard thread (run --guard-load)
 *   series.c     run --ladder: the tries of a series, each run by try.c */
#ifndef SP_ENGINE_INT_H
#define SP_ENGINE_INT_H
#include "engine/engine.h"
#include "engine/retry.h"
#include "out/prom.h"
#include "probe/jobtree.h"
#include "probe/kmsg.h"
#include "probe/sample.h"
#include "util/fileio.h"
#include "watch/attribute.h"
#include "watch/child.h"
#include "watch/follow.h"
#include "watch/guard.h"
#include "watch/jobstat.h"
#include "watch/loadguard.h"
#include "watch/logrow.h"
#include "watch/progress.h"
#include "watch/sampler.h"
#include "watch/summary.h"

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct sp_oomlog;
struct sp_server;

#define LIVE_PROC SP_LIVE_PROC /* the job runs on this machine, whatever --procfs says */

/* --metrics-listen: the server's thread renders the loop's latest sample and
 * the job's state from this copy, under its lock; it never reads the machine. */
struct eng_metrics {
	pthread_mutex_t lock;
	bool on, have;
	struct sp_sample s;
	struct sp_prom_job job;
	char command[64], unit[16];
	uint64_t drv[SP_DRV_N]; /* the driver's lines counted so far (probe/kmsg.h) */
};

#define GQ_MAX 32 /* the guards' rows waiting for the loop (guard.c) */

/* run --ladder: one try of the series */
struct eng_try {
	int rung;            /* 0: the command as given; 1, 2 */
	char change[200];    /* retry.h's word: "none", "flush", "--max_seq_length:2048->1024" ... */
	json_t *argv;        /* the command, an array of strings */
	char cmd[512];       /* the same, words (for people and the log) */
	int exit_code;       /* -1 while it runs */
	char ended_by[16];   /* exit, signal, oom_kill, guard */
	char failure[32];    /* the OOM kind key; "not_oom"; "" none (it succeeded) */
	double seconds;
};

/* One run of the engine, its whole state: one instance per sp_engine_run, on
 * the heap (the sample, the trees and the relay's buffer are big), passed by
 * pointer to every function of the engine and to the guard threads. What the
 * threads share with the loop is atomic or under gq_lock / metrics.lock. */
struct eng_run { // NOLINT(clang-analyzer-optin.performance.Padding): one instance, grouped by purpose
	const struct sp_engine_opts *o;
	struct sp_csvlog log;
	bool log_ok, log_warned;
	struct sp_summary sum;
	struct sp_evstate ev;
	struct sp_attr attr;
	struct sp_progress prog[2];
	struct sp_ttyline *tty; /* the live status line on stderr's terminal; NULL: off */
	bool titled;            /* the status went to the terminal's title (the user's was pushed) */
	bool tty_live;          /* stderr is a terminal and not --quiet: the status line is drawn */
	double gpu_gone_wall;   /* when the GPU stopped answering (wall clock); NAN: it answers */
	struct sp_follow follow; /* watch --follow: its lines feed prog[0] */
	bool follow_on;
	unsigned long prog_seen[2];
	double rate;
	char unit[16];
	bool rate_fresh;
	struct sp_child child;
	bool have_child;
	pid_t root;          /* whose tree is the job: the child's (via us, a subreaper) or --pid */
	uid_t owner;         /* the job's user: the guard signals only its processes (unless --force) */
	bool root_is_self;   /* run: the tree under sparkops, less the relay */
	pid_t self;          /* getpid(), asked once (the sample's own files name it every time) */
	atomic_bool job_alive;
	atomic_bool guard_stopped; /* the guard sent SIGTERM/SIGKILL */
	atomic_bool said_foreign;  /* the guard left other users' processes alone: said */
	uint64_t oom_kill_first;
	bool oom_first_ok;
	struct sp_read_opts ro;
	double last_scan;    /* monotonic time of the last full process scans */
	bool scanned;
	/* guard thread */
	pthread_t gthread;
	bool gthread_on;
	bool gthread_stuck; /* did not end within GUARD_JOIN_S: left running, w kept */
	int g_wake;   /* eventfd: the guard queued rows */
	int g_stop;   /* eventfd: stop the guard */
	pthread_mutex_t gq_lock;
	int gq_n;
	struct sp_logrow gq[GQ_MAX];
	struct sp_guard guard;
	atomic_int guard_state; /* the guard thread's last state, for the status file */
	struct sp_tree guard_tree; /* the guard thread's scan */
	bool gq_on;   /* the queue above is set up (either guard) */
	/* the load guard thread (run --guard-load) */
	pthread_t lthread;
	bool lthread_on;
	int l_stop;   /* eventfd: stop the load guard */
	atomic_bool ready;       /* the job said it is ready */
	struct sp_ready readyx[2]; /* the matchers on stdout and stderr */
	bool ready_progress;     /* a trainer: its first progress update is readiness */
	char ready_what[64];
	char logname[1024];
	struct sp_lguard lg;
	struct sp_tree lg_tree;
	char receipts[1100];
	struct sp_out rcpt;      /* the receipts file, through the one door (util/fileio.h) */
	struct sp_out sum_out;   /* --summary: its folder held from the start (a swapped parent cannot redirect it) */
	int sum_err;             /* what resolving it at the start said (0 ok) */
	char sum_msg[1400];
	/* the sampling */
	struct sp_sample sample;
	struct sp_tree tree;
	struct eng_metrics metrics;
	struct sp_jobstat_file stat; /* what `sparkops top` reads (watch/jobstat.h) */
	double start_unix;
	/* the loop */
	int sfd;              /* signalfd: SIGCHLD, SIGINT, SIGTERM, SIGHUP */
	sigset_t orig;        /* the signal mask to restore */
	int pidfd;            /* watch --pid, -1 none */
	struct sp_server *srv; /* --metrics-listen */
	double t0, next, t_end, t_done;
	bool job_done, stop, counted;
	bool interrupted;      /* run: a signal came (passed to the job) */
	int status, stop_sig;
	char buf[65536];      /* the relay's copy of the job's output */
	/* the end of the (current) try: taken once */
	bool end_sampled, end_done;
	int end_code;
	/* run --ladder (engine/retry.h) */
	char **argv;           /* the current try's command: o->argv, or owned_argv */
	char **owned_argv;
	struct sp_oomlog *oom; /* [2]: the job's stdout and stderr classified; NULL without --ladder */
	struct sp_retry_state rst;
	int ntries;
	struct eng_try tries[SP_RETRY_MAX_TRIES];
	double try_t0;
	char stop_reason[24];  /* why the series stopped: succeeded, not_oom, interrupted, guard, human, max_tries */
	int stop_rung;         /* the rung it stopped at (human, max_tries), 0 none */
	char stop_change[2048];
	bool lg_append;        /* the load guard's receipts: appended from the second try on */
	/* the kernel log (probe/kmsg.h): the driver's warning signs, read each sample */
	struct sp_kmsg kmsg;
	uint64_t drv_seen[SP_DRV_N];
	bool drv_new;               /* this sample brought new driver lines */
	atomic_uint_fast64_t drv_oom; /* nvrm_oom lines so far: the load guard's trigger */
};

/* ---- try.c: the run's opening and closing, one try's start, loop and end ---- */

/* The state zeroed and set from o (nothing opened yet). */
void eng_init(struct eng_run *w, const struct sp_engine_opts *o);
/* Everything before the loop: signals, the endpoint, the status line, the
 * job, the log, the guards, the status file. 0, or the exit code of a start
 * that failed (then nothing is left open). */
int eng_start(struct eng_run *w);
/* The job (run), or the process watched (--pid). 0, or the exit code. */
int eng_job_start(struct eng_run *w);
/* One try's loop: until the job ended and its output drained, a stop,
 * --count or --duration. */
void eng_try_run(struct eng_run *w);
/* The signals queued on the signalfd: children reaped, INT, TERM, HUP
 * passed to the job (run) or the watch stopped. */
void eng_on_signals(struct eng_run *w);
/* How the job ended: its exit code, and by what (*by: exit, signal,
 * oom_kill, guard). */
int eng_job_end_how(struct eng_run *w, const char **by);
/* The try's last row: how the job ended (run: returns its exit code; the
 * row is written once a try, a second call returns the same code) or why
 * the watch stopped (returns 0). */
int eng_end_event(struct eng_run *w);
/* After the tries: the guards stop, a last sample, the last row, the log
 * closes, the summary. Returns the exit code. */
int eng_finish(struct eng_run *w);
/* Close what the loop held, reap what already ended, restore the mask. */
void eng_close(struct eng_run *w);
/* The command as one line of words (for people and the log): line ends,
 * quotes and commas made spaces. */
void eng_cmd_words(char *out, size_t n, char **argv);

/* ---- sample.c: the samples and the log rows ---- */

/* A row to the summary and the log (a failing log is said once). */
void eng_emit(struct eng_run *w, struct sp_logrow *r);
/* An event row, now. */
void eng_emit_event(struct eng_run *w, const char *ev, const char *detail);
/* The job's process tree into t: the child's (run), --pid's, or none. */
void eng_scan_tree(struct eng_run *w, struct sp_tree *t);
/* One sample: read, its events, its row, attribution, the log, what is
 * published. */
void eng_take_sample(struct eng_run *w);
/* The kernel log opened and read to its end (what it held before is not
 * reported). */
void eng_kmsg_start(struct eng_run *w);

/* ---- publish.c: the status line, the metrics copy, the status file, --summary ---- */

/* The shared memory the relay reads the line's state from, and the message
 * hook that clears the line (util/msg.h). */
void eng_status_open(struct eng_run *w);
void eng_status_close(struct eng_run *w);
/* Once per sample: the status line (or the terminal's title). */
void eng_status_draw(struct eng_run *w, const struct sp_logrow *r);
/* --metrics-listen: the endpoint started on the metrics copy; NULL: said. */
struct sp_server *eng_metrics_start(struct eng_run *w, char **argv, double start_unix);
/* The sample and the job's state copied for the endpoint's thread. */
void eng_metrics_publish(struct eng_run *w, const struct sp_sample *s);
/* The status file top reads, rewritten. */
void eng_stat_publish(struct eng_run *w);
/* --summary FILE: the summary as JSON. 0, or -1 when it could not be
 * written (said). */
int eng_summary_write(struct eng_run *w);

/* ---- guard.c: the guard thread, the guards' row queue ---- */

/* The guard thread started when a guard is asked for (a failure is said). */
void eng_guard_start(struct eng_run *w);
/* The guard thread stopped (waited for at most GUARD_JOIN_S), its rows logged. */
void eng_guard_end(struct eng_run *w);
/* watch --pid with a guard: pid 1 or other users' processes in the tree
 * are refused unless --force. 0, or the exit code. */
int eng_guard_tree_check(struct eng_run *w);
/* pid 1 and other users' processes left out of t unless --force (said once). */
void eng_guard_keep_own(struct eng_run *w, struct sp_tree *t);
/* A guard thread's event row, queued for the loop (which logs it). */
void eng_guard_queue(struct eng_run *w, const char *ev, const char *detail);
/* The loop: the queued rows logged. */
void eng_guard_drain(struct eng_run *w);
/* The queue set up (once, for either guard). false: it could not be. */
bool eng_gq_open(struct eng_run *w);
/* A guard thread on a small stack (see guard.c). 0 or the error number. */
int eng_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* ---- loadguard.c: the load-guard thread (run --guard-load) ---- */

/* Its receipts opened and its thread started (run --guard-load only). */
void eng_lg_start(struct eng_run *w);
/* Its thread stopped and joined, the receipts closed, its rows logged. */
void eng_lg_end(struct eng_run *w);

/* ---- series.c: run --ladder ---- */

/* run --ladder: the two classifiers of the job's output. false: out of memory. */
bool eng_series_open(struct eng_run *w);
/* The tries, each by eng_try_run, until the series ends (without --ladder
 * the one try). */
void eng_series_run(struct eng_run *w);
/* --summary: the tries and how the series stopped, into j. */
void eng_ladder_json(struct eng_run *w, json_t *j);
/* The end summary's lines of the tries. */
void eng_ladder_print(struct eng_run *w, FILE *f);
/* What the series holds: the tries' commands, the classifiers. */
void eng_series_free(struct eng_run *w);
#endif
