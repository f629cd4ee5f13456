// SPDX-License-Identifier: MIT
/* The long-job engine behind `sparkops run` and `sparkops watch`.
 *
 * One thread samples (every --interval: the probes, the GPU, the job's
 * process tree), writes the log, derives events, feeds attribution and copies
 * progress from the relay (watch/child.c). A second thread, only when a guard
 * is asked for, watches MemFree and PSI on its own short clock: it never waits
 * for the sampler or the GPU read, so a hung driver cannot stop it. */
#include "engine/engine.h"
#include "ladder/ladder.h"
#include "ladder/oomlog.h"
#include "out/prom.h"
#include "out/serve_http.h"
#include "probe/container.h"
#include "probe/evict.h"
#include "probe/flush.h"
#include "probe/harden.h"
#include "probe/kmsg.h"
#include "probe/pool.h"
#include "probe/poolmodel.h"
#include "probe/probe.h"
#include "probe/sysctl.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/msg.h"
#include "util/paths.h"
#include "util/units.h"
#include "watch/attribute.h"
#include "watch/child.h"
#include "watch/jobstat.h"
#include "watch/loadguard.h"
#include "watch/logrow.h"
#include "out/statusline.h"
#include "watch/follow.h"
#include "watch/progress.h"
#include "watch/sampler.h"
#include "watch/summary.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LIVE_PROC SP_LIVE_PROC /* the job runs on this machine, whatever --procfs says */
#define DRAIN_S 1.0       /* after the job ends, wait this long for its last output */
#define GUARD_JOIN_S 1     /* at the end, wait this long for the guard thread (a read, a sync) */
/* At short intervals the two scans of every process (competing processes,
 * the job's tree) run at most this often; between them the job's known
 * processes are re-read alone. Keeps a 1 s sample cheap on a busy machine. */
#define SCAN_EVERY_S 5.0
#define FOLLOW_MS 100     /* watch --follow: how often the log file is read */

void sp_engine_opts_init(struct sp_engine_opts *o)
{
	memset(o, 0, sizeof *o);
	o->interval_s = 30;
	o->fsync_s = SP_DEFAULT_FSYNC_S;
	o->baseline_window_s = SP_ATTR_DEFAULT_WINDOW_S;
	o->slowdown_pct = SP_ATTR_DEFAULT_SLOWDOWN_PCT;
	o->guard.grace_s = SP_GUARD_DEFAULT_GRACE_S;
	o->guard.confirm_s = SP_GUARD_DEFAULT_CONFIRM_S;
	o->guard.can_evict = true; /* the job's own files: costs nothing, needs no root */
	o->reserve = SP_DEFAULT_RESERVE;
	o->load_deadline_s = SP_LG_DEFAULT_DEADLINE_S;
	o->ladder.max_tries = SP_RETRY_DEFAULT_MAX_TRIES;
}

/* ---- state ------------------------------------------------------------------ */

/* --metrics-listen: the server's thread renders the loop's latest sample and
 * the job's state from this copy, under its lock; it never reads the machine. */
struct wl_metrics {
	pthread_mutex_t lock;
	bool on, have;
	struct sp_sample s;
	struct sp_prom_job job;
	char command[64], unit[16];
	uint64_t drv[SP_DRV_N]; /* the driver's lines counted so far (probe/kmsg.h) */
};

#define GQ_MAX 32
/* run --ladder: one try of the series */
struct wl_try {
	int rung;            /* 0: the command as given; 1, 2 */
	char change[200];    /* retry.h's word: "none", "flush", "--max_seq_length:2048->1024" ... */
	json_t *argv;        /* the command, an array of strings */
	char cmd[512];       /* the same, words (for people and the log) */
	int exit_code;       /* -1 while it runs */
	char ended_by[16];   /* exit, signal, oom_kill, guard */
	char failure[32];    /* the OOM kind key; "not_oom"; "" none (it succeeded) */
	double seconds;
};

/* The engine's whole state: one instance per sp_engine_run, on the heap (the
 * sample, the trees and the relay's buffer are big), passed by pointer to
 * every function here and to the guard thread. */
struct wl { // NOLINT(clang-analyzer-optin.performance.Padding): one instance, grouped by purpose
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
	struct wl_metrics metrics;
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
	struct wl_try tries[SP_RETRY_MAX_TRIES];
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

/* ---- the log --------------------------------------------------------------------- */

static void emit(struct wl *w, struct sp_logrow *r)
{
	sp_summary_add(&w->sum, r);
	if (!w->log_ok)
		return;
	int e = sp_csvlog_write(&w->log, r, sp_mono_now());
	if (e < 0 && !w->log_warned) {
		sp_error("'%s': %s; the log stops here, the job keeps running", w->log.path, strerror(-e));
		w->log_warned = true;
	} else if (e == 0 && w->log_warned) {
		sp_note("'%s': writing again (%ld rows lost)", w->log.path, w->log.lost);
		w->log_warned = false;
	}
}

static void emit_event(struct wl *w, const char *ev, const char *detail)
{
	struct sp_logrow r;
	sp_logrow_event(&r, sp_wall_now(), ev, detail);
	emit(w, &r);
}

/* ---- the job's process tree ---------------------------------------------------------- */

static void scan_tree(struct wl *w, struct sp_tree *t)
{
	if (w->root_is_self)
		sp_tree_scan(t, LIVE_PROC, getpid(), false, w->child.relay);
	else if (w->root > 0)
		sp_tree_scan(t, LIVE_PROC, w->root, true, getpid()); /* --pid $$: sparkops is not the job */
	else
		t->n = 0, t->rss_bytes = 0;
}

/* ---- the guard thread ------------------------------------------------------------------ */

static void guard_queue(struct wl *w, const char *ev, const char *detail)
{
	pthread_mutex_lock(&w->gq_lock);
	if (w->gq_n < GQ_MAX)
		sp_logrow_event(&w->gq[w->gq_n++], sp_wall_now(), ev, detail);
	pthread_mutex_unlock(&w->gq_lock);
	uint64_t one = 1;
	ssize_t x = write(w->g_wake, &one, sizeof one);
	(void)x;
}

static double read_free(void)
{
	struct sp_meminfo m;
	sp_meminfo_read(&m);
	return m.why == SP_OK ? (double)m.v[SP_MI_FREE] : NAN;
}

static double read_psi_full(void)
{
	struct sp_psi p[SP_PSI_N];
	sp_psi_read(p);
	return p[SP_PSI_MEMORY].why == SP_OK && p[SP_PSI_MEMORY].full.ok ? p[SP_PSI_MEMORY].full.avg10 : NAN;
}

/* One look at the pool for the guard: MemFree and what a flush gives back,
 * from the pool model (meminfo alone: the cheap read). */
static void guard_look(struct sp_guard_look *l)
{
	struct sp_meminfo m;
	sp_meminfo_read(&m);
	struct sp_pool pm;
	sp_pool_from_meminfo(&pm, &m);
	l->free_bytes = m.why == SP_OK ? (double)pm.free : NAN;
	l->reclaimable = sp_ok(pm.reclaimable.why) ? (double)pm.reclaimable.v : NAN;
}

static void guard_keep_own(struct wl *w, struct sp_tree *t);

/* What costs nothing: as root with --guard-flush the page-cache flush; else,
 * or when it failed, the page cache of the job's own open and mapped files
 * (its user's) and of the user's files under --guard-evict. */
static void guard_free(struct wl *w, const struct sp_guard_look *l)
{
	char d[200], a[32], b[32], c[32];
	double gained = 0;
	bool flushed = false;
	if (w->guard.cfg.can_flush) {
		struct sp_flush_result r;
		int e = sp_flush_page_cache(&r);
		if (e < 0) {
			snprintf(d, sizeof d, "error=%s reclaimable_bytes=%.0f", sp_procsys_strerror(e), l->reclaimable);
			sp_warn("guard: page cache flush failed: '%s': %s", r.path, sp_procsys_strerror(e));
		} else {
			gained = (double)r.mem_free_gain;
			flushed = true;
			double after = (double)r.after.v[SP_MI_FREE];
			snprintf(d, sizeof d, "freed_bytes=%.0f free_bytes=%.0f", gained, after);
			sp_warn("guard: flushed the page cache: %s freed, %s free now", sp_fmt_gib(a, sizeof a, gained),
				sp_fmt_gib(b, sizeof b, after));
		}
		guard_queue(w, SP_EV_GUARD_FLUSH, d);
	}
	if (!flushed) { /* not asked, or the flush failed: what needs no root */
		struct sp_evict *ev = malloc(sizeof *ev);
		if (!ev)
			return;
		sp_evict_init(ev, false);
		scan_tree(w, &w->guard_tree);
		guard_keep_own(w, &w->guard_tree);
		for (int i = 0; i < w->guard_tree.n; i++)
			sp_evict_pid(ev, w->guard_tree.pids[i]);
		long own = ev->files;
		/* --guard-evict: the user's cold files (each file once: the job's were seen first) */
		const char *cold = w->o->guard_evict_path;
		int ce = cold ? sp_evict_path(ev, cold) : 0;
		if (ce < 0)
			sp_warn("guard: --guard-evict '%s': %s", cold, strerror(-ce));
		gained = ev->resident_before > ev->resident_after ? (double)(ev->resident_before - ev->resident_after) : 0;
		struct sp_guard_look after = { 0 };
		guard_look(&after);
		snprintf(d, sizeof d, "freed_bytes=%.0f files=%ld cold_files=%ld free_bytes=%.0f reclaimable_bytes=%.0f", gained,
			 own, ev->files - own, after.free_bytes, after.reclaimable);
		char more[64] = "";
		if (cold)
			snprintf(more, sizeof more, " and %ld under --guard-evict", ev->files - own);
		sp_warn("guard: evicted the job's own files from the page cache (%ld file%s%s): %s freed, %s free now, "
			"%s reclaimable (a flush needs --guard-flush as root)",
			own, own == 1 ? "" : "s", more, sp_fmt_gib(a, sizeof a, gained),
			sp_fmt_gib(b, sizeof b, after.free_bytes), sp_fmt_gib(c, sizeof c, after.reclaimable));
		free(ev);
		guard_queue(w, SP_EV_GUARD_EVICT, d);
	}
	sp_guard_freed(&w->guard, gained);
}

/* pid 1 and other users' processes are not the job's to lose: left out of
 * what the guard signals or evicts unless --force (said once) */
static void guard_keep_own(struct wl *w, struct sp_tree *t)
{
	if (w->o->force)
		return;
	struct sp_tree_odd odd;
	if (sp_tree_foreign(t, LIVE_PROC, w->owner, &odd) == 0)
		return;
	int n = sp_tree_drop_foreign(t, LIVE_PROC, w->owner);
	if (!atomic_exchange(&w->said_foreign, true)) {
		struct passwd *pw = getpwuid(odd.uid);
		sp_warn("guard: left alone %d process%s not the job's own (pid %d, user %s, %s); --force includes them",
			n, n == 1 ? "" : "es", (int)odd.pid, pw ? pw->pw_name : "?", odd.comm);
	}
}

/* watch --pid with a guard: a tree that holds pid 1 or another user's
 * processes is refused before anything starts (the guard would signal
 * them), unless --force. 0, or the exit code. */
static int guard_tree_check(struct wl *w)
{
	const struct sp_engine_opts *o = w->o;
	uid_t u = 0;
	if (sp_proc_owner(LIVE_PROC, o->pid, &u) < 0)
		u = geteuid();
	w->owner = u;
	if (!(sp_guard_enabled(&o->guard) || o->guard_load) || o->force)
		return 0;
	scan_tree(w, &w->guard_tree);
	sp_tree_drop_self_line(&w->guard_tree, LIVE_PROC);
	struct sp_tree_odd odd = { 1, 0, "init" };
	int n = o->pid == 1 ? 1 : sp_tree_foreign(&w->guard_tree, LIVE_PROC, w->owner, &odd);
	w->guard_tree.n = 0;
	if (n == 0)
		return 0;
	struct passwd *pw = getpwuid(odd.uid);
	sp_error("--pid %d: the guard would signal %d process%s that %s not the job's own: pid %d (user %s, %s)%s; "
		 "name the job's own process, or add --force",
		 (int)o->pid, n, n == 1 ? "" : "es", n == 1 ? "is" : "are", (int)odd.pid, pw ? pw->pw_name : "?",
		 odd.comm, odd.pid == 1 ? ": init, the whole machine's tree" : "");
	return SP_EXIT_USAGE;
}

static void guard_stop_job(struct wl *w, int sig)
{
	char d[200];
	scan_tree(w, &w->guard_tree);
	/* never sparkops itself nor a process above it (watch --pid $$) */
	sp_tree_drop_self_line(&w->guard_tree, LIVE_PROC);
	guard_keep_own(w, &w->guard_tree);
	int n = sp_tree_signal(&w->guard_tree, sig);
	atomic_store(&w->guard_stopped, true);
	struct sp_guard_look l = { 0 };
	guard_look(&l);
	snprintf(d, sizeof d, "signal=%d processes=%d free_bytes=%.0f reclaimable_bytes=%.0f", sig, n, l.free_bytes,
		 l.reclaimable);
	if (sig == SIGTERM)
		sp_warn("guard: stopping the job: SIGTERM to %d process%s (SIGKILL in %gs if it is still running): %s", n,
			n == 1 ? "" : "es", w->guard.cfg.grace_s,
			w->guard.short_now ? "nothing reclaimable is left to take" : "memory PSI full: the box is stalling");
	else
		sp_warn("guard: the job did not stop within %gs: SIGKILL to %d process%s", w->guard.cfg.grace_s, n,
			n == 1 ? "" : "es");
	guard_queue(w, sig == SIGTERM ? SP_EV_GUARD_TERM : SP_EV_GUARD_KILL, d);
}

static int psi_trigger_open(void)
{
	if (sp_paths_is_fixture())
		return -1; /* never write a trigger into a fixture file */
	/* wake when tasks stall 100 ms on memory within a 1 s window */
	static const char trig[] = "some 100000 1000000";
	return sp_psi_trigger_open(SP_PSI_MEMORY, trig, sizeof trig);
}

static void *guard_main(void *arg)
{
	struct wl *w = arg;
	struct sp_guard *g = &w->guard;
	int trig = psi_trigger_open();
	char d[200], a[32], b[32], c[32];
	for (;;) {
		double t = sp_mono_now();
		struct sp_guard_look l = { 0 };
		guard_look(&l);
		l.psi_full = g->cfg.psi_full_pct > 0 ? read_psi_full() : NAN;
		l.job_alive = atomic_load(&w->job_alive);
		double fr = l.free_bytes;
		enum sp_guard_act act = sp_guard_step(g, t, &l);
		atomic_store(&w->guard_state, (int)g->state);
		switch (act) {
		case SP_GA_WARN:
			if (g->by_psi) {
				snprintf(d, sizeof d, "psi_memory_full_avg10=%.2f threshold=%.2f", l.psi_full, g->cfg.psi_full_pct);
				sp_warn("guard: memory pressure: PSI memory full %.1f%% above %.1f%%", l.psi_full, g->cfg.psi_full_pct);
			} else {
				snprintf(d, sizeof d, "free_bytes=%.0f floor_bytes=%llu reclaimable_bytes=%.0f", fr,
					 (unsigned long long)g->cfg.min_free, l.reclaimable);
				sp_warn("guard: free memory %s is %.0f MiB below the %s floor (%s reclaimable)",
					sp_fmt_gib(a, sizeof a, fr), ((double)g->cfg.min_free - fr) / 1048576.0,
					sp_fmt_gib(b, sizeof b, (double)g->cfg.min_free), sp_fmt_gib(c, sizeof c, l.reclaimable));
			}
			guard_queue(w, SP_EV_GUARD_WARN, d);
			break;
		case SP_GA_RECOVERED:
			snprintf(d, sizeof d, "free_bytes=%.0f", fr);
			sp_note("guard: back above the floor (%s free)", sp_fmt_gib(a, sizeof a, fr));
			guard_queue(w, SP_EV_GUARD_OK, d);
			break;
		case SP_GA_FREE:
			guard_free(w, &l);
			break;
		case SP_GA_HOLD:
			snprintf(d, sizeof d, "free_bytes=%.0f reclaimable_bytes=%.0f floor_bytes=%llu", fr, l.reclaimable,
				 (unsigned long long)g->cfg.min_free);
			sp_note("guard: not stopping the job: %s free is under the floor, but %s of page cache is "
				"reclaimable (%s with it): the kernel gives it back as the job asks",
				sp_fmt_gib(a, sizeof a, fr), sp_fmt_gib(b, sizeof b, l.reclaimable),
				sp_fmt_gib(c, sizeof c, fr + l.reclaimable));
			guard_queue(w, SP_EV_GUARD_HOLD, d);
			break;
		case SP_GA_TERM:
			guard_stop_job(w, SIGTERM);
			break;
		case SP_GA_KILL:
			guard_stop_job(w, SIGKILL);
			break;
		default:
			break;
		}
		struct pollfd p[2] = { { .fd = w->g_stop, .events = POLLIN }, { .fd = trig, .events = POLLPRI } };
		double pool = isfinite(l.reclaimable) ? fr + l.reclaimable : fr;
		int r = poll(p, 2, sp_guard_sleep_ms(g, pool));
		if (r > 0 && (p[0].revents & POLLIN))
			break;
		if (r > 0 && (p[1].revents & (POLLERR | POLLNVAL))) {
			close(trig);
			trig = -1;
		}
	}
	if (trig >= 0)
		close(trig);
	return NULL;
}

static void guard_drain(struct wl *w)
{
	uint64_t v;
	ssize_t x = read(w->g_wake, &v, sizeof v);
	(void)x;
	struct sp_logrow rows[GQ_MAX];
	pthread_mutex_lock(&w->gq_lock);
	int n = w->gq_n;
	memcpy(rows, w->gq, sizeof rows[0] * (size_t)n);
	w->gq_n = 0;
	pthread_mutex_unlock(&w->gq_lock);
	for (int i = 0; i < n; i++)
		emit(w, &rows[i]);
}


/* ---- the load guard (run --guard-load) ------------------------------------------------- */

static double read_contig(void)
{
	struct sp_contig c;
	sp_buddyinfo_read(&c);
	return c.why == SP_OK ? (double)c.free_2mib : NAN;
}

static void receipt(struct wl *w, json_t *j)
{
	json_object_set_new(j, "time_unix", json_real(floor(sp_wall_now() * 1000.0) / 1000.0));
	char *txt = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
	json_decref(j);
	if (!txt)
		return;
	if (w->rcpt.fd >= 0) {
		size_t l = strlen(txt);
		txt[l] = '\n';
		int e = sp_out_write(&w->rcpt, txt, l + 1);
		(void)e; /* a stalled reader's drops are counted and said at the end */
	}
	free(txt);
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_integer((json_int_t)v) : json_null();
}

static json_t *vm_json(char vals[SP_VM_GUARDED_N][32])
{
	json_t *o = json_object();
	for (int i = 0; i < SP_VM_GUARDED_N; i++)
		json_object_set_new(o, sp_vm_guarded[i], vals[i][0] ? json_string(vals[i]) : json_null());
	return o;
}

struct lg_ctx {
	bool root, compact_missing, said_evict_none;
	char vm0[SP_VM_GUARDED_N][32];
};

/* As root: sync + drop_caches 3 (the one flush function), then compact_memory 1. */
static void lg_act_root(struct wl *w, struct lg_ctx *x, json_t *j, const char **action)
{
	json_t *wrote = json_array();
	double t1 = sp_mono_now();
	struct sp_flush_result fr;
	int e = sp_flush_page_cache(&fr);
	double t2 = sp_mono_now();
	json_object_set_new(j, "flush_ms", json_real(round((t2 - t1) * 1e4) / 10));
	if (e < 0) {
		json_object_set_new(j, "flush_error", json_string(sp_procsys_strerror(e)));
		sp_warn("load guard: page cache flush failed: '%s': %s", fr.path, sp_procsys_strerror(e));
	} else {
		json_array_append_new(wrote, json_string("3 > vm/drop_caches (after sync)"));
	}
	*action = "flush";
	if (!x->compact_missing) {
		int c = sp_compact_memory();
		double t3 = sp_mono_now();
		json_object_set_new(j, "compact_ms", json_real(round((t3 - t2) * 1e4) / 10));
		if (c == 0) {
			json_array_append_new(wrote, json_string("1 > vm/compact_memory"));
			*action = e < 0 ? "compact" : "flush+compact";
		} else if (c == -ENOENT) {
			x->compact_missing = true;
			sp_note("load guard: this kernel has no /proc/sys/vm/compact_memory: flushing only");
			json_object_set_new(j, "compact_error", json_string("compact_memory missing"));
		} else {
			json_object_set_new(j, "compact_error", json_string(sp_procsys_strerror(c)));
		}
	}
	json_object_set_new(j, "wrote", wrote);
	(void)w;
}

/* Without root: the page cache of the files the job's processes have open
 * or mapped, those its user owns. */
static void lg_act_evict(struct wl *w, struct lg_ctx *x, json_t *j, const char **action)
{
	struct sp_evict *ev = malloc(sizeof *ev);
	*action = "evict";
	if (!ev)
		return;
	sp_evict_init(ev, false);
	scan_tree(w, &w->lg_tree);
	guard_keep_own(w, &w->lg_tree);
	for (int i = 0; i < w->lg_tree.n; i++)
		sp_evict_pid(ev, w->lg_tree.pids[i]);
	json_object_set_new(j, "files", json_integer(ev->files));
	/* residency is a figure only for files whose pages the kernel tells us
	 * about: with every evicted file unknown, it is null, not 0 */
	const bool known = ev->files > ev->unknown_files;
	json_object_set_new(j, "resident_before_bytes", known ? json_integer((json_int_t)ev->resident_before) : json_null());
	json_object_set_new(j, "resident_after_bytes", known ? json_integer((json_int_t)ev->resident_after) : json_null());
	json_object_set_new(j, "residency_unknown_files", json_integer(ev->unknown_files));
	json_object_set_new(j, "skipped_not_owned", json_integer(ev->not_owned));
	json_object_set_new(j, "wrote", json_array());
	if (ev->files == 0) {
		/* nothing taken this time: said so of this moment (the job may open
		 * its model's files later, and the next action evicts them) */
		*action = "evict_none";
		if (!x->said_evict_none) {
			x->said_evict_none = true;
			sp_note("load guard: not root, and none of the files the job has open or mapped now is its user's "
				"to evict (the next action looks again)");
		}
	}
	free(ev);
}

static void lg_act(struct wl *w, struct lg_ctx *x, double free_b, double contig_b)
{
	json_t *j = json_object();
	json_object_set_new(j, "event", json_string("action"));
	const char *action = "none";
	double t0 = sp_mono_now();
	if (x->root)
		lg_act_root(w, x, j, &action);
	else
		lg_act_evict(w, x, j, &action);
	double ms = (sp_mono_now() - t0) * 1000.0;
	double fa = read_free(), ca = read_contig();
	json_object_set_new(j, "action", json_string(action));
	json_object_set_new(j, "trigger", json_string(w->lg.by_driver ? "driver_oom" : "floor"));
	json_object_set_new(j, "mem_free_before_bytes", num_or_null(free_b));
	json_object_set_new(j, "mem_free_after_bytes", num_or_null(fa));
	json_object_set_new(j, "free_2mib_before_bytes", num_or_null(contig_b));
	json_object_set_new(j, "free_2mib_after_bytes", num_or_null(ca));
	json_object_set_new(j, "ms", json_real(round(ms * 10) / 10));
	receipt(w, j);
	char d[256], a[32], b[32], c[32], e[32];
	snprintf(d, sizeof d, "action=%s trigger=%s free_before=%.0f free_after=%.0f contig_before=%.0f contig_after=%.0f ms=%.0f",
		 action, w->lg.by_driver ? "driver_oom" : "floor", free_b, fa, contig_b, ca, ms);
	guard_queue(w, SP_EV_LOAD_GUARD, d);
	if (strcmp(action, "evict_none") == 0) /* said once as a note; the receipt and the row keep each */
		return;
	sp_warn("load guard: %s%s in %.0f ms: MemFree %s -> %s, in 2 MiB blocks %s -> %s", action,
		w->lg.by_driver ? " (the driver logged out-of-memory lines)" : "", ms,
		sp_fmt_gib(a, sizeof a, free_b), sp_fmt_gib(b, sizeof b, fa), sp_fmt_gib(c, sizeof c, contig_b),
		sp_fmt_gib(e, sizeof e, ca));
}

static void lg_stopped(struct wl *w, double t)
{
	struct sp_lguard *g = &w->lg;
	const char *why = sp_lg_end_name(g->end);
	char d[200];
	snprintf(d, sizeof d, "reason=%s actions=%d after_s=%.1f", why, g->actions, t - g->t0);
	guard_queue(w, SP_EV_LOAD_GUARD_END, d);
	json_t *j = json_object();
	json_object_set_new(j, "event", json_string("stop"));
	json_object_set_new(j, "reason", json_string(why));
	json_object_set_new(j, "ready_line", g->end == SP_LG_READY ? sp_json_text(w->ready_what) : json_null());
	json_object_set_new(j, "actions", json_integer(g->actions));
	json_object_set_new(j, "after_s", json_real(round((t - g->t0) * 10) / 10));
	receipt(w, j);
	switch (g->end) {
	case SP_LG_READY:
		sp_note("load guard: the job is ready (%s) after %.0fs, %d action%s; it stops acting now (its drops would "
			"evict pages the job still maps) and keeps counting",
			w->ready_what, t - g->t0, g->actions, g->actions == 1 ? "" : "s");
		break;
	case SP_LG_DEADLINE:
		sp_warn("load guard: the %gs deadline passed and the readiness line never came%s; it stops acting",
			g->cfg.deadline_s, w->o->ready_re ? " (--ready did not match)" : "");
		break;
	case SP_LG_STOP_FILE:
		sp_note("load guard: the stop file '%s' is there; it stops acting", w->o->load_stop_file);
		break;
	default:
		sp_note("load guard: the job ended before it was ready");
		break;
	}
}

/* At the end: the vm sysctls as found; the guard writes only the two
 * triggers (drop_caches, compact_memory), which hold no setting, so a
 * setting that changed was changed by someone else, and is said, not undone. */
static void lg_final(struct wl *w, struct lg_ctx *x)
{
	char vm1[SP_VM_GUARDED_N][32];
	sp_vm_snapshot(vm1);
	json_t *changed = json_array();
	for (int i = 0; i < SP_VM_GUARDED_N; i++)
		if (strcmp(x->vm0[i], vm1[i]) != 0) {
			json_array_append_new(changed, json_string(sp_vm_guarded[i]));
			sp_warn("load guard: vm.%s changed during the run (%s -> %s), not by sparkops", sp_vm_guarded[i],
				x->vm0[i], vm1[i]);
		}
	json_t *j = json_object();
	json_object_set_new(j, "event", json_string("end"));
	json_object_set_new(j, "actions", json_integer(w->lg.actions));
	json_object_set_new(j, "stopped_by", json_string(sp_lg_end_name(w->lg.end)));
	json_object_set_new(j, "below_floor_after_stop", json_integer(w->lg.below_after));
	json_object_set_new(j, "sysctls_after", vm_json(vm1));
	json_object_set_new(j, "sysctls_changed", changed);
	json_object_set_new(j, "sysctls_touched", json_array()); /* none: drop_caches and compact_memory are triggers */
	receipt(w, j);
}

static void *lg_main(void *arg)
{
	struct wl *w = arg;
	const struct sp_engine_opts *o = w->o;
	struct lg_ctx x;
	memset(&x, 0, sizeof x);
	x.root = geteuid() == 0;
	sp_vm_snapshot(x.vm0);
	struct sp_lg_cfg cfg = { o->load_floor, o->load_contig_floor, o->load_deadline_s };
	struct sp_meminfo m;
	sp_meminfo_read(&m);
	uint64_t total = m.why == SP_OK ? m.v[SP_MI_TOTAL] : 0;
	if (cfg.floor == 0)
		cfg.floor = total && total / 8 < SP_LG_DEFAULT_FLOOR ? total / 8 : SP_LG_DEFAULT_FLOOR;
	if (cfg.contig_floor == 0)
		cfg.contig_floor = total && total / 64 < SP_LG_DEFAULT_CONTIG_FLOOR ? total / 64 : SP_LG_DEFAULT_CONTIG_FLOOR;
	sp_lguard_init(&w->lg, &cfg, sp_mono_now());
	char a[32], b[32];
	sp_note("load guard: until the job is ready (%s) or %gs: MemFree under %s or under %s in 2 MiB blocks -> %s; "
		"receipts in '%s'",
		o->ready_re ? "--ready" : w->ready_progress ? "a known server's line or its first progress update"
							     : "a known server's line",
		cfg.deadline_s, sp_fmt_gib(a, sizeof a, (double)cfg.floor), sp_fmt_gib(b, sizeof b, (double)cfg.contig_floor),
		x.root ? "flush + compact" : "evict the job's own files", w->receipts);
	json_t *j = json_object();
	json_object_set_new(j, "event", json_string("start"));
	json_object_set_new(j, "mode", json_string(x.root ? "root" : "evict"));
	json_object_set_new(j, "floor_bytes", json_integer((json_int_t)cfg.floor));
	json_object_set_new(j, "contig_floor_bytes", json_integer((json_int_t)cfg.contig_floor));
	json_object_set_new(j, "deadline_s", json_real(cfg.deadline_s));
	json_object_set_new(j, "sysctls_before", vm_json(x.vm0));
	receipt(w, j);
	uint64_t drv_oom = atomic_load(&w->drv_oom); /* the sample loop's count (kmsg_turn) */
	for (;;) {
		double t = sp_mono_now();
		double fr = read_free(), cg = read_contig();
		uint64_t d = atomic_load(&w->drv_oom);
		w->lg.driver_oom = d > drv_oom; /* NVRM out-of-memory lines arrived: act as on a dip */
		bool stopf = o->load_stop_file && access(o->load_stop_file, F_OK) == 0;
		enum sp_lg_act act = sp_lguard_step(&w->lg, t, fr, cg, atomic_load(&w->ready), stopf,
						    atomic_load(&w->job_alive));
		if (act == SP_LG_ACT) {
			lg_act(w, &x, fr, cg);
			sp_lguard_acted(&w->lg, sp_mono_now());
		} else if (act == SP_LG_STOP) {
			lg_stopped(w, t);
		}
		/* lines seen during the cooldown wait for the next action */
		if (act == SP_LG_ACT || w->lg.end != SP_LG_RUNNING)
			drv_oom = d;
		struct pollfd p = { .fd = w->l_stop, .events = POLLIN };
		if (poll(&p, 1, (int)(SP_LG_LOOK_S * 1000)) > 0)
			break;
	}
	/* the end came while it was acting (or between two looks): say why it stopped */
	if (w->lg.end == SP_LG_RUNNING) {
		double t = sp_mono_now();
		bool stopf = o->load_stop_file && access(o->load_stop_file, F_OK) == 0;
		if (sp_lguard_step(&w->lg, t, NAN, NAN, atomic_load(&w->ready), stopf, false) == SP_LG_STOP)
			lg_stopped(w, t);
	}
	lg_final(w, &x);
	return NULL;
}

/* The guard threads' stack: small, because once mlockall(MCL_FUTURE) is on
 * (probe/harden.c) the whole stack is locked, and a default 8 MiB stack does
 * not fit a non-root RLIMIT_MEMLOCK (8 MiB on Debian): pthread_create failed
 * with EAGAIN and the guard did not run. Their frames are a few KiB. */
#define GUARD_THREAD_STACK ((size_t)512 << 10)

static int thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	int e = pthread_attr_init(&attr);
	if (e != 0)
		return e;
	pthread_attr_setstacksize(&attr, GUARD_THREAD_STACK);
	e = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return e;
}

static bool gq_open(struct wl *w)
{
	if (w->gq_on)
		return true;
	pthread_mutex_init(&w->gq_lock, NULL);
	w->g_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	w->gq_on = w->g_wake >= 0;
	return w->gq_on;
}

static bool argv_is_server(char **argv)
{
	static const char *const servers[] = { "vllm", "sglang", "llama-server", "llama_cpp", "ollama", "tritonserver" };
	for (int i = 0; argv && argv[i]; i++)
		for (size_t k = 0; k < sizeof servers / sizeof servers[0]; k++)
			if (strstr(argv[i], servers[k]))
				return true;
	return false;
}

static void lg_start(struct wl *w)
{
	const struct sp_engine_opts *o = w->o;
	if (!o->guard_load || !o->argv)
		return;
	snprintf(w->receipts, sizeof w->receipts, "%s.receipts.jsonl", w->logname);
	/* the one door: a link planted by another user, a block device, a
	 * hard link to someone else's file are refused; a FIFO never blocks */
	char msg[1400];
	if (sp_out_open(&w->rcpt, w->receipts, w->lg_append ? SP_OUT_APPEND : SP_OUT_TRUNC, 0644, msg, sizeof msg) < 0)
		sp_warn("load guard: %s; acting without receipts", msg[0] ? msg : w->receipts);
	for (int i = 0; i < 2; i++)
		sp_ready_init(&w->readyx[i], o->ready_re);
	w->ready_progress = !o->ready_re && !argv_is_server(w->argv);
	w->l_stop = eventfd(0, EFD_CLOEXEC);
	if (!gq_open(w) || w->l_stop < 0 || thread_start(&w->lthread, lg_main, w) != 0)
		sp_error("the load guard could not start: %s", strerror(errno));
	else
		w->lthread_on = true;
}

static void lg_end(struct wl *w)
{
	bool was_on = w->lthread_on;
	if (was_on) {
		uint64_t one = 1;
		ssize_t x = write(w->l_stop, &one, sizeof one);
		(void)x;
		pthread_join(w->lthread, NULL);
		w->lthread_on = false;
	}
	if (w->rcpt.fd >= 0 || w->rcpt.dirfd >= 0) {
		sp_out_close(&w->rcpt, 0.2);
		if (sp_out_dropped(&w->rcpt) > 0)
			sp_warn("'%s': %ld receipts dropped: its reader stopped reading", w->receipts,
				sp_out_dropped(&w->rcpt));
	}
	if (was_on)
		guard_drain(w);
}

/* ---- --metrics-listen -------------------------------------------------------------------- */


static void metrics_publish(struct wl *w, const struct sp_sample *s)
{
	struct wl_metrics *m = &w->metrics;
	pthread_mutex_lock(&m->lock);
	memcpy(&m->s, s, sizeof *s);
	struct sp_prom_job *j = &m->job;
	j->pid = w->root > 0 ? (int)w->root : 0;
	j->rate_ok = !isnan(w->rate);
	j->rate = w->rate;
	snprintf(m->unit, sizeof m->unit, "%s", w->unit);
	char *sl = strstr(m->unit, "/s");
	if (sl)
		*sl = 0;
	j->rate_unit = m->unit;
	j->baseline_ok = w->attr.have_baseline;
	j->baseline = w->attr.baseline;
	j->cause_ok = w->attr.have_baseline;
	j->cause = w->attr.in_episode ? w->attr.cause : SP_CAUSE_NONE;
	j->episodes = (uint64_t)w->sum.n_episodes;
	memcpy(m->drv, w->drv_seen, sizeof m->drv);
	m->have = true;
	pthread_mutex_unlock(&m->lock);
}

/* the server's thread; ctx is the engine's struct wl_metrics */
static size_t metrics_fill(char *buf, size_t cap, void *ctx)
{
	struct wl_metrics *m = ctx;
	struct sp_prom pw;
	sp_prom_init(&pw, buf, cap);
	struct sp_prom_info info = { SPARKOPS_VERSION, -1, false };
	pthread_mutex_lock(&m->lock);
	if (m->have) {
		sp_prom_write_sample(&pw, &m->s, &info);
		sp_prom_job_append(&pw, &m->job);
	}
	pthread_mutex_unlock(&m->lock);
	return sp_prom_end(&pw);
}

static struct sp_server *metrics_start(struct wl *w, char **argv, double start_unix)
{
	const struct sp_engine_opts *o = w->o;
	struct wl_metrics *m = &w->metrics;
	m->job.start_unix = start_unix;
	m->job.command = NULL;
	if (argv) {
		const char *b = strrchr(argv[0], '/');
		snprintf(m->command, sizeof m->command, "%s", b ? b + 1 : argv[0]);
		m->job.command = m->command;
	}
	struct sp_serve_opts so;
	sp_serve_opts_init(&so);
	so.listen = o->metrics_listen;
	so.cache_s = 0; /* the body is a copy already */
	if (o->metrics_web) {
		/* --web-config: TLS and basic authentication, as serve */
		so.tls_cert_pem = o->metrics_web->tls_cert_pem;
		so.tls_key_pem = o->metrics_web->tls_key_pem;
		so.users = o->metrics_web->users;
		so.n_users = o->metrics_web->n_users;
	}
	int err = 0;
	struct sp_server *srv = sp_serve_start(&so, metrics_fill, m, &err);
	if (!srv) {
		sp_error("--metrics-listen '%s': %s", o->metrics_listen, strerror(-err));
		return NULL;
	}
	m->on = true;
	sp_note("metrics at %s://%s/metrics", so.tls_cert_pem ? "https" : "http", sp_serve_address(srv));
	return srv;
}

/* ---- sampling ------------------------------------------------------------------------- */

/* Our own stderr line while a tqdm bar sits unfinished on the terminal:
 * start it on a line of its own, as tqdm.write does. */
static void own_line(struct wl *w)
{
	if (w->prog[1].len > 0 && isatty(STDERR_FILENO)) {
		ssize_t x = write(STDERR_FILENO, "\n", 1);
		(void)x;
	}
}

static void episode_line(struct wl *w, enum sp_attr_event e)
{
	struct sp_attr *a = &w->attr;
	char d[256];
	own_line(w);
	if (e == SP_ATTR_EPISODE_START) {
		sp_attr_start_detail(a, d, sizeof d); /* the evidence readable, spaces kept */
		emit_event(w, SP_EV_EPISODE_START, d);
		sp_warn("slowdown: %.3g %s is %.0f%% under the %.3g %s baseline: %s (%s)%s", a->last_rate, a->unit,
			a->drop_pct, a->baseline, a->unit, sp_attr_cause_name(a->cause), a->evidence,
			a->cause == SP_AC_POWER_CAP
				? "; this is the platform's sustained power limit (PL1), expected under long load: "
				  "not a reason to retune the batch size"
				: "");
	} else if (e == SP_ATTR_EPISODE_UPDATE) {
		/* judged over its whole length, the episode has another dominant cause */
		sp_attr_detail(a, d, sizeof d);
		emit_event(w, SP_EV_EPISODE_UPDATE, d);
		sp_note("slowdown: now mostly %s (%s)%s%s", sp_attr_cause_name(a->cause), a->evidence,
			a->shares[0] ? "; also " : "", a->shares);
	} else {
		sp_attr_detail(a, d, sizeof d);
		emit_event(w, SP_EV_EPISODE_END, d);
		sp_note("slowdown over: %.3g %s, back within %.0f%% of the baseline (it was %s)", a->last_rate, a->unit,
			a->slowdown_pct, sp_attr_cause_name(a->cause));
	}
}

/* Read the machine into w->sample and the job's tree into w->tree (the two
 * scans of every process at most every SCAN_EVERY_S); keep the cgroup's
 * first OOM-kill count. Returns whether the scans were full. */
static bool sample_read(struct wl *w)
{
	struct sp_sample *s = &w->sample;
	/* the GPU is read by the GPU thread behind a deadline (probe/gpuwatch.c):
	 * a hung driver costs this sample at most ro.gpu_timeout_s, and the
	 * guard, on its own thread, never waits for it at all */
	double t = sp_mono_now();
	bool full = !w->scanned || t - w->last_scan >= SCAN_EVERY_S || w->o->interval_s >= SCAN_EVERY_S;
	struct sp_read_opts ro = w->ro;
	if (!full)
		ro.what &= ~(unsigned)SP_READ_PROCS;
	sp_sample_read(s, &ro);
	if (full) {
		scan_tree(w, &w->tree);
		w->last_scan = t;
		w->scanned = true;
	} else {
		sp_tree_refresh(&w->tree, LIVE_PROC);
	}
	if (!w->oom_first_ok && sp_ok(s->cg.oom_kill.why)) {
		w->oom_kill_first = s->cg.oom_kill.v;
		w->oom_first_ok = true;
	}
	return full;
}

/* The job's latest throughput from the relay's progress lines, into r. */
static void sample_rate(struct wl *w, struct sp_logrow *r)
{
	for (int i = 0; i < 2; i++)
		sp_progress_flush(&w->prog[i]);
	for (int i = 0; i < 2; i++)
		if (w->prog[i].updates != w->prog_seen[i]) {
			w->prog_seen[i] = w->prog[i].updates;
			w->rate = w->prog[i].rate;
			snprintf(w->unit, sizeof w->unit, "%s", w->prog[i].unit);
			w->rate_fresh = true;
		}
	if (!isnan(w->rate)) {
		r->throughput = w->rate;
		snprintf(r->throughput_unit, sizeof r->throughput_unit, "%s", w->unit);
	}
}

/* Feed attribution the sample's row; an episode's start or end is said. */
static void sample_attr(struct wl *w, const struct sp_sample *s, const struct sp_logrow *r, bool appeared)
{
	struct sp_attr_obs o;
	sp_attr_obs_clear(&o);
	o.t = s->mono;
	o.rate = w->rate;
	snprintf(o.unit, sizeof o.unit, "%s", w->unit);
	o.rate_fresh = w->rate_fresh;
	w->rate_fresh = false;
	o.reasons_ok = r->gpu_reasons_ok;
	o.reasons = r->gpu_reasons;
	o.viol_thermal_s = r->gpu_thermal_viol_s;
	o.viol_power_s = r->gpu_power_viol_s;
	o.gpu_temp_c = r->gpu_temp_c;
	o.soc_temp_c = r->soc_temp_c;
	o.gpu_power_w = r->gpu_power_w;
	o.pl1_w = r->pl1_w;
	o.pl1_cap_w = r->pl1_cap_w;
	o.psi_mem_some = r->psi_mem_some;
	o.psi_mem_full = r->psi_mem_full;
	o.psi_cpu_some = r->psi_cpu_some;
	o.psi_io_some = r->psi_io_some;
	o.swap_used = r->swap_used;
	o.page_cache = r->page_cache;
	o.process_appeared = appeared;
	enum sp_attr_event e = sp_attr_feed(&w->attr, &o);
	if (e != SP_ATTR_NONE) {
		/* the episode row carries the sample's time */
		episode_line(w, e);
	}
}

static void cmd_words(char *out, size_t n, char **argv);
static void status_draw(struct wl *w, const struct sp_logrow *r);
static void status_open(struct wl *w);
static void status_close(struct wl *w);

/* The status file `sparkops top` reads (watch/jobstat.h): the job, its
 * throughput, the slowdown's cause, the guard; rewritten once per sample. */
static void stat_publish(struct wl *w)
{
	static const char *const gname[] = { "ok", "warned", "stopping", "killed" };
	if (!w->stat.on)
		return;
	struct sp_jobstat j;
	sp_jobstat_clear(&j);
	j.pid = (int)getpid();
	snprintf(j.mode, sizeof j.mode, "%s", w->o->argv ? "run" : "watch");
	if (w->argv)
		cmd_words(j.command, sizeof j.command, w->argv);
	j.job_pid = (int)w->root;
	j.started_unix = w->start_unix;
	j.updated_unix = sp_wall_now();
	j.interval_s = w->o->interval_s;
	j.samples = w->sum.samples;
	if (w->root > 0 || w->root_is_self)
		j.job_rss_bytes = (double)w->tree.rss_bytes;
	j.rate = w->rate;
	snprintf(j.unit, sizeof j.unit, "%s", w->unit);
	if (w->attr.have_baseline)
		j.baseline = w->attr.baseline;
	snprintf(j.cause, sizeof j.cause, "%s", sp_cause_name(w->attr.in_episode ? w->attr.cause : SP_CAUSE_NONE));
	int gs = atomic_load(&w->guard_state);
	snprintf(j.guard, sizeof j.guard, "%s", !w->gthread_on ? "off" : gs >= 0 && gs < 4 ? gname[gs] : "ok");
	snprintf(j.log, sizeof j.log, "%s", w->log_ok ? w->log.path : "");
	sp_jobstat_write(&w->stat, &j);
}

/* A GPU lost or hung mid-run is said at once on the terminal, and again
 * when it answers (the event row, the summary and the exposition say it
 * too): its readings are unknown meanwhile, never the last ones. */
static void gpu_said(struct wl *w, const struct sp_logrow *r)
{
	if (r->type != SP_ROW_EVENT)
		return;
	char t[16];
	time_t tt = (time_t)r->unix_time;
	struct tm tm;
	if (!localtime_r(&tt, &tm) || strftime(t, sizeof t, "%H:%M:%S", &tm) == 0)
		snprintf(t, sizeof t, "?");
	if (strcmp(r->event, SP_EV_GPU_LOST) == 0) {
		w->gpu_gone_wall = r->unix_time;
		sp_warn("the GPU stopped answering at %s (%s): its temperature, power and clocks are unknown until it "
			"answers again; the job goes on", t, r->detail);
	} else if (strcmp(r->event, SP_EV_GPU_BACK) == 0) {
		char d[32];
		if (isfinite(w->gpu_gone_wall))
			sp_warn("the GPU answers again at %s, after %s", t,
				sp_fmt_duration(d, sizeof d, r->unix_time - w->gpu_gone_wall));
		else
			sp_warn("the GPU answers at %s (it had not at the start)", t);
		w->gpu_gone_wall = NAN;
	}
}

/* The kernel log: --kmsg FILE, else /dev/kmsg when the roots are the
 * machine's (unreadable: not root, dmesg_restrict: left out, as the exporters do).
 * What it held before the start is read once and not reported: only lines
 * that arrive during the run are events. */
static void kmsg_start(struct wl *w)
{
	const struct sp_engine_opts *o = w->o;
	w->kmsg.fd = -1;
	if (!o->kmsg_path && sp_paths_is_fixture())
		return;
	sp_kmsg_open(&w->kmsg, o->kmsg_path);
	if (w->kmsg.why != SP_OK) {
		if (o->kmsg_path)
			sp_warn("--kmsg '%s': %s; the driver's lines are not read", o->kmsg_path, sp_why_text(w->kmsg.why));
		return;
	}
	sp_kmsg_poll(&w->kmsg);
	memcpy(w->drv_seen, w->kmsg.count, sizeof w->drv_seen);
	atomic_store(&w->drv_oom, w->drv_seen[SP_DRV_NVRM_OOM]); /* before the load guard's first look */
	if (w->metrics.on) {
		pthread_mutex_lock(&w->metrics.lock);
		sp_prom_set_driver_errors(w->metrics.drv);
		pthread_mutex_unlock(&w->metrics.lock);
	}
}

/* New driver lines since the last sample: one event row and one line on
 * the terminal per kind that arrived. */
static void kmsg_turn(struct wl *w)
{
	w->drv_new = false;
	if (w->kmsg.fd < 0)
		return;
	sp_kmsg_poll(&w->kmsg);
	uint64_t add[SP_DRV_N];
	for (int k = 0; k < SP_DRV_N; k++) {
		add[k] = w->kmsg.count[k] - w->drv_seen[k];
		w->drv_seen[k] = w->kmsg.count[k];
		w->drv_new |= add[k] > 0;
	}
	atomic_store(&w->drv_oom, w->drv_seen[SP_DRV_NVRM_OOM]);
	if (!w->drv_new)
		return;
	w->log.urgent = true; /* the rows that say it are on disk at once */
	for (int k = 0; k < SP_DRV_N; k++) {
		if (!add[k])
			continue;
		char d[96];
		snprintf(d, sizeof d, "kind=%s count=%llu", sp_drv_kind_name((enum sp_drv_kind)k),
			 (unsigned long long)add[k]);
		emit_event(w, SP_EV_DRIVER_ERROR, d);
		sp_warn("the NVIDIA driver logged %llu %s line%s in the kernel log (%llu in this run)%s",
			(unsigned long long)add[k], sp_drv_kind_name((enum sp_drv_kind)k), add[k] == 1 ? "" : "s",
			(unsigned long long)w->drv_seen[k],
			k == SP_DRV_NVRM_OOM ? ": the driver could not allocate; the pool is near its end" : "");
	}
}

/* The log's fsync policy (docs/run.md "A log that survives the end"):
 * every row at once while the machine is near its end, else every
 * --fsync-interval. Near its end: a guard is on and MemFree is within its
 * margin of the floor (a quarter of the floor, at least 1 GiB, above it),
 * free memory in 2 MiB blocks is under SP_CONTIG_LOW, or driver lines
 * arrived this sample. */
static void log_urgency(struct wl *w, const struct sp_sample *s)
{
	const struct sp_engine_opts *o = w->o;
	bool near = false;
	uint64_t fl = o->guard.min_free;
	if (fl > 0 && s->mem.why == SP_OK) {
		uint64_t margin = fl / 4 > (1ULL << 30) ? fl / 4 : (1ULL << 30);
		near = s->mem.v[SP_MI_FREE] < fl + margin;
	}
	if (s->contig.why == SP_OK && s->contig.free_2mib < SP_CONTIG_LOW)
		near = true;
	w->log.urgent = near;
	kmsg_turn(w); /* sets it too when the driver speaks */
}

/* One sample: read, its events, its row (with the job's memory and
 * throughput), attribution, the log, the metrics endpoint's copy. */
static void take_sample(struct wl *w)
{
	struct sp_sample *s = &w->sample;
	bool full = sample_read(w);

	struct sp_logrow rows[24];
	bool appeared = false;
	int n = sp_events_diff(&w->ev, s, full, w->tree.pids, w->tree.n, rows, 24, &appeared);
	log_urgency(w, s);
	for (int i = 0; i < n; i++) {
		emit(w, &rows[i]);
		gpu_said(w, &rows[i]);
	}

	struct sp_logrow r;
	sp_logrow_from_sample(&r, s);
	if (w->root > 0 || w->root_is_self) {
		r.job_rss_bytes = (double)w->tree.rss_bytes;
		r.job_majflt = (double)sp_tree_majflt(&w->tree, LIVE_PROC);
	}
	sample_rate(w, &r);
	sample_attr(w, s, &r, appeared);
	emit(w, &r);
	if (w->metrics.on)
		metrics_publish(w, s);
	stat_publish(w);
	status_draw(w, &r);
}

/* ---- signals and children ------------------------------------------------------------------ */

static bool sent_to_us(const struct signalfd_siginfo *si)
{
	/* kill(2)/sigqueue(3) aimed at sparkops; the terminal's ^C arrives with
	 * SI_KERNEL and has already reached the whole foreground group, job included */
	return si->ssi_code == SI_USER || si->ssi_code == SI_QUEUE || si->ssi_code == SI_TKILL;
}

static int pidfd_open_(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

static void cmd_words(char *out, size_t n, char **argv)
{
	size_t l = 0;
	out[0] = 0;
	for (int i = 0; argv[i] && l + 2 < n; i++) {
		int k = snprintf(out + l, n - l, "%s%s", i ? " " : "", argv[i]);
		if (k < 0)
			break;
		l += (size_t)k;
		if (l >= n)
			l = n - 1;
	}
	for (char *p = out; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '"' || *p == ',')
			*p = ' ';
}

/* ---- the start ----------------------------------------------------------------------------- */

static void engine_init(struct wl *w, const struct sp_engine_opts *o)
{
	memset(w, 0, sizeof *w);
	w->o = o;
	w->rcpt.fd = w->rcpt.dirfd = -1;
	w->sum_out.fd = w->sum_out.dirfd = -1;
	w->kmsg.fd = -1;
	w->argv = o->argv;
	w->rate = NAN;
	w->gpu_gone_wall = NAN;
	w->g_wake = w->g_stop = w->l_stop = -1;
	atomic_init(&w->ready, false);
	w->sfd = w->pidfd = -1;
	atomic_init(&w->job_alive, false);
	atomic_init(&w->guard_stopped, false);
	atomic_init(&w->guard_state, 0);
	pthread_mutex_init(&w->metrics.lock, NULL);
	sp_read_opts_init(&w->ro);
	w->ro.reserve = o->reserve;
	/* the GPU waits at most half the interval (docs/RELIABILITY.md): a slow
	 * driver must not stretch the samples' spacing */
	w->ro.gpu_timeout_s = sp_gpu_timeout_for_interval(w->ro.gpu_timeout_s, o->interval_s);
	sp_summary_init(&w->sum);
	sp_evstate_init(&w->ev);
	sp_attr_init(&w->attr, o->baseline_window_s, o->slowdown_pct);
	for (int i = 0; i < 2; i++)
		sp_progress_init(&w->prog[i], o->progress_re);
	if (o->follow_path) {
		sp_follow_open(&w->follow, o->follow_path);
		w->follow_on = true;
	}
}

/* SIGCHLD, SIGINT, SIGTERM and SIGHUP come through w->sfd. 0, or the exit code. */
static int signals_open(struct wl *w)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, &w->orig);
	w->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (w->sfd < 0) {
		sigprocmask(SIG_SETMASK, &w->orig, NULL);
		return sp_error("signalfd: %s", strerror(errno)), SP_EXIT_TROUBLE;
	}
	return 0;
}

/* A start that failed after signals_open: the endpoint, the signalfd, the mask. */
static void start_undo(struct wl *w)
{
	sp_serve_stop(w->srv);
	w->srv = NULL;
	close(w->sfd);
	sigprocmask(SIG_SETMASK, &w->orig, NULL);
}

/* The job (run), or the process we watch (--pid). 0, or the exit code. */
static int job_start(struct wl *w)
{
	const struct sp_engine_opts *o = w->o;
	if (o->argv) {
		/* orphans of the job (a daemonised helper) come back to us, so the
		 * tree, its memory and the guard still cover them */
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
		int e = sp_child_spawn(&w->child, w->argv, &w->orig);
		if (e < 0) {
			sp_error("'%s': %s", w->argv[0], e == -ENOENT ? "command not found" : strerror(-e));
			return e == -ENOENT ? 127 : 126;
		}
		w->have_child = true;
		w->root_is_self = true;
		w->root = w->child.pid;
		w->owner = geteuid();
		atomic_store(&w->job_alive, true);
	} else if (o->pid > 0) {
		if (kill(o->pid, 0) < 0 && errno == ESRCH)
			return sp_error("--pid %d: no such process", (int)o->pid), SP_EXIT_USAGE;
		w->root = o->pid;
		int rc = guard_tree_check(w);
		if (rc)
			return rc;
		w->pidfd = pidfd_open_(o->pid);
		pid_t line[SP_SELF_LINE_MAX];
		int nl = sp_self_line(LIVE_PROC, line, SP_SELF_LINE_MAX);
		for (int i = 0; i < nl && sp_guard_enabled(&o->guard); i++)
			if (line[i] == o->pid) {
				sp_note("--pid %d is %s: the guard signals the rest of its tree, never sparkops "
					"or a process above it", (int)o->pid,
					i == 0 ? "sparkops itself" : "an ancestor of sparkops");
				break;
			}
		atomic_store(&w->job_alive, true);
	}
	return 0;
}

/* The log (a failure is said and the job runs without it), then the
 * watcher's own hardening. */
static void log_open(struct wl *w)
{
	const struct sp_engine_opts *o = w->o;
	double t0 = sp_mono_now();
	w->t0 = t0;
	/* the summary's folder is resolved and held now: written at the end
	 * relative to it, whatever its path has become by then */
	if (o->summary_path) {
		w->sum_err = sp_out_resolve(&w->sum_out, o->summary_path, w->sum_msg, sizeof w->sum_msg);
		/* a folder the job itself will make is looked up again at the end */
		if (w->sum_err < 0 && w->sum_err != -ENOENT)
			sp_warn("--summary: %s", w->sum_msg);
	}
	/* a name of our own is made with O_EXCL: two runs started in the same
	 * second write two logs */
	int le = o->log_path ? sp_csvlog_open(&w->log, o->log_path, o->fsync_s, t0)
			     : sp_csvlog_open_new(&w->log, o->fsync_s, t0);
	const char *logname = w->log.path;
	snprintf(w->logname, sizeof w->logname, "%s", logname);
	if (le < 0) {
		if (w->log.msg[0])
			sp_error("%s; %s without a log", w->log.msg, o->argv ? "the job runs" : "watching");
		else
			sp_error("'%s': %s; %s without a log", logname, strerror(-le),
				 o->argv ? "the job runs" : "watching");
		w->log_warned = true;
		w->log_ok = w->log.fd >= 0;
	} else {
		w->log_ok = true;
		sp_note("logging to '%s' every %gs", logname, o->interval_s);
	}
	/* the watcher must outlive the pressure it watches: locked in memory,
	 * and (as root) a low OOM score of its own; the job is already forked
	 * and keeps its own */
	char hw[256] = "";
	sp_harden_process(SP_HARDEN_ALL, hw, sizeof hw);
	if (hw[0])
		sp_warn("%s", hw);
	if (o->guard_flush_asked && !o->guard.can_flush)
		sp_note("guard: --guard-flush needs root; the guard will skip the page cache flush");
}

/* The log's first row: the interval, the host, the job. */
static void start_event(struct wl *w)
{
	const struct sp_engine_opts *o = w->o;
	char host[64] = "", detail[256], words[160], cw[112] = "";
	gethostname(host, sizeof host - 1);
	/* the job's container, pod or unit (the child starts in ours) */
	int jpid = o->argv ? (int)w->child.pid : (int)o->pid;
	if (jpid > 0) {
		struct sp_container ct;
		sp_container_read(jpid, &ct);
		sp_container_word(&ct, cw, sizeof cw);
	}
	if (o->argv) {
		cmd_words(words, sizeof words, o->argv);
		snprintf(detail, sizeof detail, "interval=%g host=%s pid=%d%s cmd=%s", o->interval_s, host,
			 (int)w->child.pid, cw, words);
	} else {
		snprintf(detail, sizeof detail, "interval=%g host=%s%s", o->interval_s, host, "");
		if (o->pid > 0) {
			size_t l = strlen(detail);
			snprintf(detail + l, sizeof detail - l, " pid=%d%s", (int)o->pid, cw);
		}
	}
	emit_event(w, SP_EV_START, detail);
}

static void guard_start(struct wl *w)
{
	const struct sp_engine_opts *o = w->o;
	if (!sp_guard_enabled(&o->guard))
		return;
	sp_guard_init(&w->guard, &o->guard);
	gq_open(w);
	w->g_stop = eventfd(0, EFD_CLOEXEC);
	if (w->g_wake >= 0 && w->g_stop >= 0 && thread_start(&w->gthread, guard_main, w) == 0)
		w->gthread_on = true;
	else
		sp_error("the guard could not start: %s", strerror(errno));
}

/* Everything before the loop. 0, or the exit code of a start that failed
 * (then nothing is left open). */
static int engine_start(struct wl *w)
{
	const struct sp_engine_opts *o = w->o;
	int rc = signals_open(w);
	if (rc)
		return rc;
	/* the endpoint first: a busy port must not leave a job started */
	if (o->metrics_listen) {
		w->srv = metrics_start(w, o->argv, sp_wall_now());
		if (!w->srv) {
			start_undo(w);
			return SP_EXIT_TROUBLE;
		}
	}
	status_open(w);
	rc = job_start(w);
	if (rc) {
		status_close(w);
		start_undo(w);
		return rc;
	}
	log_open(w);
	start_event(w);
	kmsg_start(w);
	guard_start(w);
	w->start_unix = sp_wall_now();
	/* no folder of our own: top will not see us; said once, the job runs on */
	if (sp_jobstat_open(&w->stat, getpid()) == -EACCES && w->stat.path[0])
		sp_warn("status folder refused: %s: 'sparkops top' will not show this job", w->stat.path);
	lg_start(w);
	w->next = w->t0;
	w->t_end = o->duration_s > 0 ? w->t0 + o->duration_s : INFINITY;
	/* the threads are up: their stacks locked too where the first lock could not cover them */
	sp_harden_relock();
	return 0;
}

/* ---- the loop ------------------------------------------------------------------------------ */

/* SIGCHLD: reap; the job's end is noted (the relay's too). */
static void reap_children(struct wl *w)
{
	int st;
	pid_t c;
	while ((c = waitpid(-1, &st, WNOHANG)) > 0) {
		if (w->have_child && c == w->child.pid) {
			w->status = st;
			w->job_done = true;
			w->t_done = sp_mono_now();
			atomic_store(&w->job_alive, false);
		} else if (c == w->child.relay) {
			w->child.relay = 0;
		}
	}
}

/* The signalfd: children ended; INT, TERM, HUP go to the job (run) or end
 * the watch. */
static void on_signals(struct wl *w)
{
	struct signalfd_siginfo si;
	while (read(w->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
		int sig = (int)si.ssi_signo;
		if (sig == SIGCHLD) {
			reap_children(w);
			continue;
		}
		if (w->have_child) {
			w->interrupted = true;
			if (sent_to_us(&si) && !w->job_done)
				kill(w->child.pid, sig);
		} else {
			w->stop = true;
			w->stop_sig = sig;
		}
	}
}

/* The relay's copy of the job's stdout (i 0) or stderr (i 1), to the
 * progress parser; the pipe is closed at its end. */
static void on_relay(struct wl *w, int i)
{
	ssize_t n = read(w->child.prog_fd[i], w->buf, sizeof w->buf);
	if (n > 0) {
		sp_progress_set_time(&w->prog[i], sp_mono_now());
		sp_progress_feed(&w->prog[i], w->buf, (size_t)n);
		if (w->oom)
			sp_oomlog_feed(&w->oom[i], w->buf, (size_t)n); /* run --ladder: was it an OOM? */
		/* run --guard-load: the job's output against the readiness lines */
		if (w->lthread_on && !atomic_load(&w->ready)) {
			if (sp_ready_feed(&w->readyx[i], w->buf, (size_t)n)) {
				snprintf(w->ready_what, sizeof w->ready_what, "%s", w->readyx[i].what);
				atomic_store(&w->ready, true);
			} else if (w->ready_progress && w->prog[i].updates > 0) {
				snprintf(w->ready_what, sizeof w->ready_what, "first progress update");
				atomic_store(&w->ready, true);
			}
		}
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		close(w->child.prog_fd[i]);
		w->child.prog_fd[i] = -1;
	}
}

/* watch --follow: what the log file gained since the last turn, to the
 * progress parser with the time it was read. */
static void follow_turn(struct wl *w)
{
	if (!w->follow_on)
		return;
	size_t n;
	int rounds = 0;
	while (rounds++ < 64 && (n = sp_follow_read(&w->follow, w->buf, sizeof w->buf)) > 0) {
		sp_progress_set_time(&w->prog[0], sp_mono_now());
		sp_progress_feed(&w->prog[0], w->buf, n);
	}
}

/* ---- the live status line -------------------------------------------------------------- */

static struct wl *status_w; /* for the message hook: one engine per process */

/* Off the job's line: before a message of ours, the summary, the end. The
 * status line is cleared; a line the job left open (a tqdm bar between
 * redraws) is ended so the message starts a line of its own: on a terminal
 * the bar's line is erased (the job redraws it), in a file or pipe a line
 * end is written (the bar's text stays as it was). */
static void status_clear(void)
{
	struct wl *w = status_w;
	if (!w || !w->tty)
		return;
	bool locked = sp_ttyline_lock(w->tty, 100);
	if (atomic_load(&w->tty->shown) || (w->tty_live && atomic_load(&w->tty->dirty))) {
		ssize_t x = write(STDERR_FILENO, "\r\033[K", 4);
		(void)x;
		atomic_store(&w->tty->shown, 0);
	} else if (atomic_load(&w->tty->dirty)) {
		ssize_t x = write(STDERR_FILENO, "\n", 1);
		(void)x;
	}
	atomic_store(&w->tty->dirty, 0);
	if (locked)
		sp_ttyline_unlock(w->tty);
}

/* two descriptors that write to the same place: one terminal, one file, one pipe */
static bool same_sink(int a, int b)
{
	struct stat sa, sb;
	if (fstat(a, &sa) != 0 || fstat(b, &sb) != 0)
		return false;
	if (S_ISCHR(sa.st_mode) && S_ISCHR(sb.st_mode))
		return sa.st_rdev == sb.st_rdev;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The memory the relay shares is set up before the job starts, whatever
 * stderr is: it tells where the job's line stands. The status line itself is
 * drawn only when stderr is a terminal and --quiet was not given. */
static void status_open(struct wl *w)
{
	void *m = mmap(NULL, sizeof *w->tty, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return;
	w->tty = m;
	memset(w->tty, 0, sizeof *w->tty);
	w->tty_live = !w->o->quiet && isatty(STDERR_FILENO);
	w->tty->same[1] = true;
	w->tty->same[0] = same_sink(STDOUT_FILENO, STDERR_FILENO);
	w->child.tty = w->tty;
	status_w = w;
	sp_msg_before = status_clear;
}

static void status_close(struct wl *w)
{
	if (!w->tty)
		return;
	status_clear();
	if (w->titled) { /* the user's title back (xterm's title stack) */
		ssize_t x = write(STDERR_FILENO, SP_TITLE_POP, sizeof SP_TITLE_POP - 1);
		(void)x;
		w->titled = false;
	}
	sp_msg_before = NULL;
	status_w = NULL;
	munmap(w->tty, sizeof *w->tty);
	w->tty = NULL;
	w->child.tty = NULL;
}

/* Once per sample: the line, redrawn in place; while the job's own line (a
 * tqdm bar between redraws, which for tqdm and the HF Trainer is always) is
 * open on the terminal, the same text as the terminal's title, which never
 * touches the job's line. The relay is locked out while either is written. */
static void status_draw(struct wl *w, const struct sp_logrow *r)
{
	if (!w->tty || !w->tty_live)
		return;
	struct sp_status_in in = {
		.elapsed_s = sp_mono_now() - w->t0,
		.pool_free = r->mem_free,
		.budget = r->budget_now,
		.gpu_temp_c = r->gpu_temp_c,
		.gpu_power_w = r->gpu_power_w,
		.rate = w->rate,
		.unit = w->unit,
		.cause = w->attr.in_episode ? sp_attr_cause_name(w->attr.cause) : NULL,
		.width = 80,
	};
	struct winsize ws;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		in.width = ws.ws_col;
	char line[512];
	size_t n = sp_statusline(line, sizeof line, &in);
	if (!sp_ttyline_lock(w->tty, 1))
		return;
	if (!atomic_load(&w->tty->dirty) && w->prog[1].len == 0) {
		ssize_t x = write(STDERR_FILENO, line, n);
		(void)x;
		atomic_store(&w->tty->shown, 1);
	} else {
		char title[320];
		size_t tn = sp_statusline_title(title, sizeof title, &in);
		if (!w->titled) {
			ssize_t x = write(STDERR_FILENO, SP_TITLE_PUSH, sizeof SP_TITLE_PUSH - 1);
			(void)x;
			w->titled = true;
		}
		ssize_t x = write(STDERR_FILENO, title, tn);
		(void)x;
	}
	sp_ttyline_unlock(w->tty);
}

/* Wait in one poll until the next sample (or the drain's or --duration's
 * end) for a signal, the relay, the guard's rows or --pid's end. false:
 * the loop ends (poll failed). */
static bool loop_wait(struct wl *w, double now)
{
	double until = w->job_done ? w->t_done + DRAIN_S : w->next;
	if (w->t_end < until)
		until = w->t_end;
	int ms = (int)ceil((until - now) * 1000.0);
	if (ms < 0)
		ms = 0;
	if (w->follow_on && ms > FOLLOW_MS)
		ms = FOLLOW_MS; /* --follow: the file is read every FOLLOW_MS */
	struct pollfd p[5] = {
		{ .fd = w->sfd, .events = POLLIN },
		{ .fd = w->child.prog_fd[0], .events = POLLIN },
		{ .fd = w->child.prog_fd[1], .events = POLLIN },
		{ .fd = w->g_wake, .events = POLLIN },
		{ .fd = w->pidfd, .events = POLLIN },
	};
	if (!w->have_child)
		p[1].fd = p[2].fd = -1;
	int pr = poll(p, 5, ms);
	if (pr < 0 && errno != EINTR)
		return false;
	if (pr <= 0)
		return true;
	if (p[0].revents & POLLIN)
		on_signals(w);
	for (int i = 0; i < 2; i++)
		if (p[1 + i].revents & (POLLIN | POLLHUP | POLLERR))
			on_relay(w, i);
	if (w->g_wake >= 0 && (p[3].revents & POLLIN))
		guard_drain(w);
	if (w->pidfd >= 0 && (p[4].revents & POLLIN)) {
		w->job_done = true;
		w->t_done = sp_mono_now();
		atomic_store(&w->job_alive, false);
		close(w->pidfd);
		w->pidfd = -1;
	}
	return true;
}

/* One turn of the loop: a sample when one is due, then the wait. false:
 * the loop ends (the job ended and its output drained, a stop, --count,
 * --duration). */
static bool loop_turn(struct wl *w)
{
	const struct sp_engine_opts *o = w->o;
	follow_turn(w);
	double now = sp_mono_now();
	/* without a pidfd (kernels before 5.3), --pid is checked each turn */
	if (!w->have_child && o->pid > 0 && w->pidfd < 0 && !w->job_done && kill(o->pid, 0) < 0 && errno == ESRCH) {
		w->job_done = true;
		w->t_done = now;
		atomic_store(&w->job_alive, false);
	}
	if (!w->job_done && !w->stop && now >= w->next) {
		take_sample(w);
		if (o->count > 0 && w->sum.samples >= o->count) {
			w->stop = true;
			w->counted = true;
			return true;
		}
		w->next += o->interval_s;
		now = sp_mono_now();
		if (w->next < now)
			w->next = now + o->interval_s; /* fell behind (a slow read): do not burst */
	}
	if (w->job_done) {
		bool drained = w->child.prog_fd[0] < 0 && w->child.prog_fd[1] < 0;
		if (drained || now - w->t_done >= DRAIN_S)
			return false;
	}
	if (w->stop || now >= w->t_end)
		return false;
	return loop_wait(w, now);
}

/* ---- the end ------------------------------------------------------------------------------- */

static void guard_end(struct wl *w)
{
	if (!w->gthread_on)
		return;
	uint64_t one = 1;
	ssize_t x = write(w->g_stop, &one, sizeof one);
	(void)x;
	/* bounded: a guard blocked in a read or in the flush's sync must not keep
	 * sparkops from its last rows and its exit (SIGTERM always ends it) */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += GUARD_JOIN_S;
	if (pthread_timedjoin_np(w->gthread, NULL, &until) != 0) {
		w->gthread_stuck = true;
		sp_warn("guard: its thread is blocked (in a read or a page cache flush); ending without it");
	}
	guard_drain(w); /* the thread never blocks holding the queue's lock */
}

/* How the job ended: its exit code, and by what (exit, signal, oom_kill,
 * guard). Reads the last sample (the cgroup's OOM-kill counter). */
static int job_end_how(struct wl *w, const char **by)
{
	int status = w->status;
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	*by = "exit";
	if (WIFSIGNALED(status)) {
		*by = "signal";
		/* the cgroup's counter rose, or the kernel's own word where we may
		 * read it (not in a fixture run) */
		bool cg_oom = w->oom_first_ok && sp_ok(w->sample.cg.oom_kill.why) &&
			      w->sample.cg.oom_kill.v > w->oom_kill_first;
		if (WTERMSIG(status) == SIGKILL &&
		    (cg_oom || (!sp_paths_is_fixture() && sp_kmsg_check_oom(w->child.pid) == 1)))
			*by = "oom_kill";
	}
	if (atomic_load(&w->guard_stopped))
		*by = "guard";
	return code;
}

/* The log's last row: how the job ended (run: returns its exit code) or
 * why the watch stopped (returns 0). */
static int end_event(struct wl *w)
{
	const struct sp_engine_opts *o = w->o;
	int status = w->status;
	char d[200];
	if (w->attr.in_episode) {
		/* an episode still open: its judgement over the whole length */
		sp_attr_detail(&w->attr, d, sizeof d);
		emit_event(w, SP_EV_EPISODE_UPDATE, d);
	}
	if (w->end_done)
		return w->end_code;
	if (w->have_child) {
		const char *by;
		int code = job_end_how(w, &by);
		if (WIFSIGNALED(status))
			snprintf(d, sizeof d, "ended_by=%s exit_code=%d signal=%d", by, code, WTERMSIG(status));
		else
			snprintf(d, sizeof d, "ended_by=%s exit_code=%d", by, code);
		emit_event(w, SP_EV_EXIT, d);
		w->end_done = true;
		w->end_code = code;
		return code;
	}
	if (o->pid > 0 && w->job_done)
		snprintf(d, sizeof d, "reason=pid_ended pid=%d", (int)o->pid);
	else if (w->stop_sig)
		snprintf(d, sizeof d, "reason=signal signal=%d", w->stop_sig);
	else if (w->counted)
		snprintf(d, sizeof d, "reason=count count=%ld", o->count);
	else
		snprintf(d, sizeof d, "reason=duration");
	emit_event(w, SP_EV_STOP, d);
	return 0;
}

/* ---- run --ladder: the automatic retry (engine/retry.h, docs/run.md "Automatic retry") ------ */

/* A try starts: its row in the log, its line on stderr, its record. */
static void ladder_try_begin(struct wl *w, int rung, const char *change)
{
	struct wl_try *t = &w->tries[w->ntries++];
	memset(t, 0, sizeof *t);
	t->rung = rung;
	t->exit_code = -1;
	snprintf(t->change, sizeof t->change, "%s", change);
	t->argv = json_array();
	for (int i = 0; w->argv[i]; i++)
		json_array_append_new(t->argv, sp_json_text(w->argv[i]));
	cmd_words(t->cmd, sizeof t->cmd, w->argv);
	w->try_t0 = sp_mono_now();
	char d[256];
	snprintf(d, sizeof d, "try=%d rung=%d change=%s pid=%d cmd=%s", w->ntries, rung, change, (int)w->child.pid, t->cmd);
	emit_event(w, SP_EV_LADDER_TRY, d);
	if (w->ntries > 1) {
		char h[256];
		sp_note("ladder: try %d of at most %d, rung %d (%s): %s", w->ntries, w->o->ladder.max_tries, rung,
			sp_detail_human(h, sizeof h, change), t->cmd);
	}
}

static void ladder_stop(struct wl *w, const char *reason, int rung, const char *change)
{
	char d[256];
	snprintf(w->stop_reason, sizeof w->stop_reason, "%s", reason);
	w->stop_rung = rung;
	snprintf(w->stop_change, sizeof w->stop_change, "%s", change ? change : "");
	if (rung)
		snprintf(d, sizeof d, "reason=%s tries=%d rung=%d change=%s", reason, w->ntries, rung, change ? change : "");
	else
		snprintf(d, sizeof d, "reason=%s tries=%d", reason, w->ntries);
	emit_event(w, SP_EV_LADDER_STOP, d);
}

/* Why rung 1 cannot be done here, or NULL when it can. */
static const char *rung1_why_not(struct wl *w)
{
	static char why[200];
	if (geteuid() == 0) {
		/* the ladder's own rule (sp_ladder_skip_reason): what a flush
		 * would give back now, under SP_FLUSH_WORTH, is not worth a rerun */
		struct sp_job_facts f;
		memset(&f, 0, sizeof f);
		f.reclaimable = w->sample.budget.reclaimable;
		sp_ladder_skip_reason(1, &f, why, sizeof why);
		return why[0] ? why : NULL;
	}
	if (w->o->guard_load)
		return NULL;
	return "not root (the page cache flush needs root), and without --guard-load no eviction of the job's own files";
}

/* Rung 1: as root the page-cache flush; without root (with --guard-load) the
 * page cache of the user's own files the command names (a model folder, a
 * data file), as the load guard evicts the job's own files. NULL when done,
 * else why not. */
static const char *rung1_do(struct wl *w, char *change, size_t n)
{
	static char why[300];
	char a[32], b[32];
	if (geteuid() == 0) {
		struct sp_flush_result r;
		int e = sp_flush_page_cache(&r);
		if (e < 0) {
			snprintf(why, sizeof why, "the page cache flush failed: '%.200s': %s", r.path, sp_procsys_strerror(e));
			return why;
		}
		sp_note("ladder: rung 1: flushed the page cache: %s freed, %s free now",
			sp_fmt_gib(a, sizeof a, (double)r.freed_bytes), sp_fmt_gib(b, sizeof b, (double)r.after.v[SP_MI_FREE]));
		snprintf(change, n, "flush:freed_bytes=%llu", (unsigned long long)r.freed_bytes);
		return NULL;
	}
	struct sp_evict *ev = malloc(sizeof *ev);
	if (!ev)
		return "out of memory";
	sp_evict_init(ev, false);
	for (int i = 1; w->argv[i]; i++) {
		const char *p = w->argv[i];
		const char *eq = p[0] == '-' ? strchr(p, '=') : NULL;
		if (eq)
			p = eq + 1; /* --model=/path */
		struct stat st;
		if (p[0] && strcmp(p, "/") != 0 && stat(p, &st) == 0)
			sp_evict_path(ev, p);
	}
	long files = ev->files;
	uint64_t before = ev->resident_before, after = ev->resident_after;
	free(ev);
	if (files == 0) {
		snprintf(why, sizeof why, "not root, and none of the files the command names is the user's to evict");
		return why;
	}
	sp_note("ladder: rung 1: evicted the page cache of %ld of the command's files: %s -> %s resident", files,
		sp_fmt_gib(a, sizeof a, (double)before), sp_fmt_gib(b, sizeof b, (double)after));
	snprintf(change, n, "evict:files=%ld", files);
	return NULL;
}

/* The failure of the try that just ended: the classifier's kind over the
 * job's stdout and stderr, or the kernel's OOM kill; SP_OOM_UNKNOWN when it
 * was not an OOM. */
static enum sp_oom_kind ladder_kind(struct wl *w, const char *by, int code, enum sp_oom_phase *phase)
{
	enum sp_oom_kind k = SP_OOM_UNKNOWN;
	*phase = SP_PHASE_UNKNOWN;
	for (int i = 0; i < 2; i++) {
		sp_oomlog_finish(&w->oom[i]);
		if (w->oom[i].kind > k) {
			k = w->oom[i].kind;
			*phase = w->oom[i].phase;
		}
	}
	/* "Killed" alone is an OOM only when the job did die of SIGKILL (137) */
	if (k == SP_OOM_SIGKILL && code != 137)
		k = SP_OOM_UNKNOWN;
	if (strcmp(by, "oom_kill") == 0 && k < SP_OOM_KERNEL)
		k = SP_OOM_KERNEL;
	return k;
}

/* What a person does next (rung 3), for the job as the log shows it. */
static void ladder_human(struct wl *w, enum sp_oom_kind kind, enum sp_oom_phase phase, char *out, size_t n)
{
	const struct sp_engine_opts *o = w->o;
	struct sp_job_facts f;
	memset(&f, 0, sizeof f);
	f.kind = kind;
	f.phase = phase;
	const struct sp_oomlog *l = w->oom[1].kind >= w->oom[0].kind ? &w->oom[1] : &w->oom[0];
	f.batch_per_device = l->batch_per_device;
	f.grad_accum = l->grad_accum;
	f.seq_len = l->seq_len;
	long v;
	if (o->ladder.batch_flag && sp_retry_flag_find(w->argv, o->ladder.batch_flag, &v) >= 0)
		f.batch_per_device = (uint64_t)v;
	if (o->ladder.accum_flag && sp_retry_flag_find(w->argv, o->ladder.accum_flag, &v) >= 0)
		f.grad_accum = (uint64_t)v;
	if (o->ladder.seq_flag && sp_retry_flag_find(w->argv, o->ladder.seq_flag, &v) >= 0)
		f.seq_len = (uint64_t)v;
	f.reclaimable.why = f.budget_now.why = f.budget_after_flush.why = f.total.why = SP_MISSING;
	char change[1536];
	sp_ladder_change(3, &f, change, sizeof change);
	snprintf(out, n, "%s: %s", sp_ladder_rung_title_for(3, &f), change);
}

/* Start the next try with w->argv: the per-try state reset, the job spawned.
 * false: it could not start (said; the exit code is set). */
static bool ladder_spawn(struct wl *w, int rung, const char *change)
{
	const struct sp_engine_opts *o = w->o;
	for (int i = 0; i < 2; i++)
		if (w->child.prog_fd[i] >= 0) {
			close(w->child.prog_fd[i]);
			w->child.prog_fd[i] = -1;
		}
	lg_end(w);
	w->job_done = false;
	w->status = 0;
	w->end_sampled = w->end_done = false;
	atomic_store(&w->ready, false);
	w->ready_what[0] = 0;
	for (int i = 0; i < 2; i++) {
		sp_oomlog_init(&w->oom[i]);
		sp_progress_init(&w->prog[i], o->progress_re);
		w->prog_seen[i] = 0;
	}
	sp_attr_init(&w->attr, o->baseline_window_s, o->slowdown_pct);
	w->rate = NAN;
	w->unit[0] = 0;
	w->rate_fresh = false;
	/* the cgroup's OOM kills are counted from here */
	w->oom_first_ok = sp_ok(w->sample.cg.oom_kill.why);
	w->oom_kill_first = w->sample.cg.oom_kill.v;
	int rc = job_start(w);
	if (rc) {
		w->end_done = true;
		w->end_code = rc;
		ladder_stop(w, "not_started", 0, NULL);
		return false;
	}
	ladder_try_begin(w, rung, change);
	w->lg_append = true;
	lg_start(w);
	sp_harden_relock();
	w->next = sp_mono_now();
	return true;
}

static void ladder_notes(struct wl *w, const struct sp_retry_plan *p)
{
	for (int i = 0; i < p->nnotes; i++) {
		sp_note("ladder: %s", p->notes[i]);
		emit_event(w, SP_EV_LADDER_SKIP, p->notes[i]);
	}
}

/* The series ends with this try: it succeeded, was interrupted or stopped
 * by the guard, or did not fail for want of memory. Said and logged. */
static bool ladder_ends_here(struct wl *w, int code, const char *by, enum sp_oom_kind kind)
{
	if (code == 0) {
		if (w->ntries > 1) {
			char h[256];
			sp_note("ladder: try %d succeeded (%s)", w->ntries,
				sp_detail_human(h, sizeof h, w->tries[w->ntries - 1].change));
		}
		ladder_stop(w, "succeeded", 0, NULL);
	} else if (w->interrupted) {
		sp_note("ladder: interrupted: no further try");
		ladder_stop(w, "interrupted", 0, NULL);
	} else if (strcmp(by, "guard") == 0) {
		sp_note("ladder: the guard stopped the job: not retried");
		ladder_stop(w, "guard", 0, NULL);
	} else if (kind == SP_OOM_UNKNOWN) {
		sp_note("ladder: exit %d is not an out-of-memory failure: not retried", code);
		ladder_stop(w, "not_oom", 0, NULL);
	} else {
		return false;
	}
	return true;
}

/* After a try ended: true when the next try started. */
static bool ladder_after(struct wl *w)
{
	const struct sp_engine_opts *o = w->o;
	if (!w->oom || !w->have_child || !w->job_done || w->ntries == 0)
		return false;
	on_signals(w); /* a Ctrl-C that came as the try ended stops the series too */
	take_sample(w);
	w->end_sampled = true;
	const char *by;
	int code = job_end_how(w, &by);
	enum sp_oom_phase phase;
	enum sp_oom_kind kind = ladder_kind(w, by, code, &phase);
	struct wl_try *t = &w->tries[w->ntries - 1];
	t->exit_code = code;
	snprintf(t->ended_by, sizeof t->ended_by, "%s", by);
	snprintf(t->failure, sizeof t->failure, "%s", code == 0 ? "" : kind == SP_OOM_UNKNOWN ? "not_oom" : sp_oom_kind_key(kind));
	t->seconds = w->t_done - w->try_t0;
	if (ladder_ends_here(w, code, by, kind))
		return false;
	sp_note("ladder: try %d ran out of memory (%s, exit %d)", w->ntries, sp_oom_kind_text(kind), code);
	const char *why1 = rung1_why_not(w);
	char change[256];
	struct sp_retry_plan p;
	for (;;) {
		if (sp_retry_next(&o->ladder, &w->rst, w->argv, why1, &p) < 0) {
			sp_error("ladder: out of memory");
			ladder_stop(w, "error", 0, NULL);
			return false;
		}
		ladder_notes(w, &p);
		if (p.step == SP_RS_HUMAN) {
			char h[2048];
			ladder_human(w, kind, phase, h, sizeof h);
			sp_warn("ladder: no automatic rung is left after %d tr%s; rung 3 needs a person: %s", w->ntries,
				w->ntries == 1 ? "y" : "ies", h);
			sp_note("ladder: the last command was: %s", t->cmd);
			ladder_stop(w, "human", 3, h);
			return false;
		}
		if (w->ntries >= o->ladder.max_tries) {
			char nx[400];
			snprintf(nx, sizeof nx, "%s%s", p.step == SP_RS_RUNG1 ? "rerun unchanged after " : "",
				 p.step == SP_RS_RUNG1 ? (geteuid() == 0 ? "a page cache flush" : "evicting the command's files")
						       : p.change);
			sp_warn("ladder: --ladder-max-tries %d reached; the next would have been rung %d: %s", o->ladder.max_tries,
				p.rung, nx);
			ladder_stop(w, "max_tries", p.rung, nx);
			free(p.argv);
			return false;
		}
		if (p.step != SP_RS_RUNG1)
			break;
		/* a Ctrl-C before the flush: nothing more is done */
		on_signals(w);
		if (w->interrupted)
			break;
		const char *no = rung1_do(w, change, sizeof change);
		if (!no)
			break;
		why1 = no; /* rung 1 failed: said as skipped, on to rung 2 */
		w->rst.rung1_done = false;
	}
	end_event(w); /* this try's exit row */
	on_signals(w);
	if (w->interrupted) {
		free(p.argv);
		sp_note("ladder: interrupted: no further try");
		ladder_stop(w, "interrupted", 0, NULL);
		return false;
	}
	if (p.step != SP_RS_RUNG1) {
		snprintf(change, sizeof change, "%s", p.change);
		free(w->owned_argv);
		w->owned_argv = w->argv = p.argv;
	}
	return ladder_spawn(w, p.rung, change);
}

/* --summary: the tries and how the series stopped */
static void ladder_json(struct wl *w, json_t *j)
{
	json_t *a = json_array();
	for (int i = 0; i < w->ntries; i++) {
		const struct wl_try *t = &w->tries[i];
		json_t *o = json_object();
		json_object_set_new(o, "try", json_integer(i + 1));
		json_object_set_new(o, "rung", json_integer(t->rung));
		json_object_set_new(o, "change", json_string(t->change));
		json_object_set_new(o, "argv", json_incref(t->argv));
		json_object_set_new(o, "command", sp_json_text(t->cmd));
		json_object_set_new(o, "exit_code", t->exit_code >= 0 ? json_integer(t->exit_code) : json_null());
		json_object_set_new(o, "ended_by", t->ended_by[0] ? json_string(t->ended_by) : json_null());
		json_object_set_new(o, "failure", t->failure[0] ? json_string(t->failure) : json_null());
		json_object_set_new(o, "seconds", t->exit_code >= 0 ? json_real(round(t->seconds * 1000) / 1000) : json_null());
		json_array_append_new(a, o);
	}
	json_object_set_new(j, "ladder_tries", a);
	json_t *s = json_object();
	json_object_set_new(s, "reason", w->stop_reason[0] ? json_string(w->stop_reason) : json_null());
	json_object_set_new(s, "rung", w->stop_rung ? json_integer(w->stop_rung) : json_null());
	json_object_set_new(s, "change", w->stop_change[0] ? sp_json_text(w->stop_change) : json_null());
	json_object_set_new(j, "ladder_stop", s);
}

static void ladder_print(struct wl *w, FILE *f)
{
	for (int i = 0; i < w->ntries; i++) {
		const struct wl_try *t = &w->tries[i];
		fprintf(f, "  ladder try %-2d rung %d %-28s ", i + 1, t->rung, t->change);
		if (t->exit_code >= 0)
			fprintf(f, "exit %d%s%s, %.1fs: %s\n", t->exit_code, t->failure[0] ? " " : "", t->failure, t->seconds,
				t->cmd);
		else
			fprintf(f, "did not end: %s\n", t->cmd);
	}
	if (w->stop_reason[0])
		fprintf(f, "  ladder        stopped: %s%s%s\n", w->stop_reason, w->stop_change[0] ? ": " : "", w->stop_change);
}

static void ladder_free(struct wl *w)
{
	for (int i = 0; i < w->ntries; i++)
		json_decref(w->tries[i].argv);
	free(w->owned_argv);
	free(w->oom);
}

/* --summary FILE: the summary as JSON. 0, or -1 when it could not be
 * written (said). */
static int summary_write(struct wl *w)
{
	json_t *j = sp_summary_json(&w->sum);
	if (w->oom)
		ladder_json(w, j);
	char *txt = sp_json_format(j);
	json_decref(j);
	/* one write, with a trailing newline for people who cat it; a device,
	 * a pipe or '-' is written in place (util/fileio.h) */
	size_t tl = txt ? strlen(txt) : 0;
	char *nl = txt ? realloc(txt, tl + 2) : NULL;
	if (nl) {
		txt = nl;
		memcpy(txt + tl, "\n", 2);
	}
	char msg[1400] = "out of memory";
	if (w->sum_err == -ENOENT) {
		sp_out_close(&w->sum_out, 0);
		w->sum_err = sp_out_resolve(&w->sum_out, w->o->summary_path, w->sum_msg, sizeof w->sum_msg);
	}
	int e = !nl ? -ENOMEM : w->sum_err < 0 ? w->sum_err
		: sp_out_replace(&w->sum_out, txt, strlen(txt), 0644, SP_OUT_STALL_S, false, msg, sizeof msg);
	if (w->sum_err < 0)
		snprintf(msg, sizeof msg, "%s", w->sum_msg);
	sp_out_close(&w->sum_out, 0);
	free(txt);
	if (e < 0) {
		sp_error("--summary: %s", msg);
		return -1;
	}
	return 0;
}

/* After the loop: the guard stops, a last sample, the last row, the
 * endpoint stops, the log closes, the summary. Returns the exit code. */
static int engine_finish(struct wl *w)
{
	lg_end(w);
	guard_end(w);
	status_close(w); /* the end's rows and the summary: no status line any more */
	follow_turn(w);
	for (int i = 0; i < 2; i++)
		sp_progress_flush(&w->prog[i]);
	if (!w->counted && !w->end_sampled)
		take_sample(w); /* the state at the end */
	int rc = end_event(w);
	if (w->srv) {
		sp_serve_stop(w->srv);
		w->srv = NULL;
		w->metrics.on = false;
	}
	sp_jobstat_close(&w->stat);
	sp_summary_finish(&w->sum);
	if (w->log.lost > 0)
		sp_warn("'%s': %ld rows could not be written", w->log.path, w->log.lost);
	sp_csvlog_close(&w->log);
	w->sum.rows_dropped = sp_csvlog_dropped(&w->log);
	if (w->sum.rows_dropped > 0)
		sp_warn("'%s': %ld rows dropped: its reader stopped reading", w->log.path, w->sum.rows_dropped);
	fflush(stdout);
	/* the line just before the summary: the summary itself is what report rebuilds from the log */
	if (w->log_ok && !w->log.out.stream)
		fprintf(stderr, "log: %ld row%s fsync'd at once (pressure), else every %gs\n", w->log.urgent_synced,
			w->log.urgent_synced == 1 ? "" : "s", w->log.fsync_s);
	sp_summary_print(stderr, &w->sum);
	if (w->oom)
		ladder_print(w, stderr);
	fflush(stderr);
	if (w->o->summary_path && summary_write(w) < 0 && !w->have_child)
		rc = SP_EXIT_IO;
	return rc;
}

/* Close what the loop held, reap what already ended, restore the mask. */
static void engine_close(struct wl *w)
{
	/* a stuck guard thread may still wake: its eventfds stay open */
	if (w->g_wake >= 0 && !w->gthread_stuck)
		close(w->g_wake);
	if (w->g_stop >= 0 && !w->gthread_stuck)
		close(w->g_stop);
	if (w->l_stop >= 0)
		close(w->l_stop);
	if (w->pidfd >= 0)
		close(w->pidfd);
	if (w->follow_on)
		sp_follow_close(&w->follow);
	sp_kmsg_close(&w->kmsg);
	for (int i = 0; i < 2; i++)
		if (w->child.prog_fd[i] >= 0)
			close(w->child.prog_fd[i]);
	/* a relay still copying output of a daemonised grandchild is left to
	 * finish on its own; reap whatever already ended so we hold no zombie */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	close(w->sfd);
	sigprocmask(SIG_SETMASK, &w->orig, NULL);
}

int sp_engine_run(const struct sp_engine_opts *o)
{
	struct wl *w = malloc(sizeof *w);
	if (!w)
		return sp_error("out of memory"), SP_EXIT_TROUBLE;
	engine_init(w, o);
	if (o->ladder.on && o->argv) {
		w->oom = calloc(2, sizeof *w->oom);
		if (!w->oom) {
			free(w);
			return sp_error("out of memory"), SP_EXIT_TROUBLE;
		}
		sp_oomlog_init(&w->oom[0]);
		sp_oomlog_init(&w->oom[1]);
	}
	int rc = engine_start(w);
	if (rc == 0) {
		if (w->oom)
			ladder_try_begin(w, 0, "none");
		do {
			while (loop_turn(w))
				;
		} while (ladder_after(w));
		rc = engine_finish(w);
		engine_close(w);
	}
	ladder_free(w);
	if (w->gthread_stuck)
		return rc; /* the blocked guard thread still holds w: kept until the process exits */
	pthread_mutex_destroy(&w->metrics.lock);
	free(w);
	return rc;
}
