// SPDX-License-Identifier: MIT
/* The guard thread: the pool guard's actions (watch/guard.c decides, on
 * scripted time; this thread looks and acts). On its own short clock it reads
 * MemFree and PSI only, never waiting for the loop or the GPU; it warns,
 * frees what costs nothing (a page-cache flush as root with --guard-flush,
 * else the job's own files' cache), and stops the job (SIGTERM, then
 * SIGKILL) when nothing reclaimable is left. Its rows, and the load guard's,
 * reach the log through a small locked queue the loop drains. */
#include "engine/engine_int.h"
#include "probe/evict.h"
#include "probe/flush.h"
#include "probe/poolmodel.h"
#include "probe/probe.h"
#include "probe/sysctl.h"
#include "util/clock.h"
#include "util/msg.h"
#include "util/paths.h"
#include "util/units.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define GUARD_JOIN_S 1     /* at the end, wait this long for the guard thread (a read, a sync) */

/* ---- the guards' row queue ---- */

void eng_guard_queue(struct eng_run *w, const char *ev, const char *detail)
{
	pthread_mutex_lock(&w->gq_lock);
	if (w->gq_n < GQ_MAX)
		sp_logrow_event(&w->gq[w->gq_n++], sp_wall_now(), ev, detail);
	pthread_mutex_unlock(&w->gq_lock);
	uint64_t one = 1;
	ssize_t x = write(w->g_wake, &one, sizeof one);
	(void)x;
}

void eng_guard_drain(struct eng_run *w)
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
		eng_emit(w, &rows[i]);
}

bool eng_gq_open(struct eng_run *w)
{
	if (w->gq_on)
		return true;
	pthread_mutex_init(&w->gq_lock, NULL);
	w->g_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	w->gq_on = w->g_wake >= 0;
	return w->gq_on;
}

/* The guard threads' stack: small, because once mlockall(MCL_FUTURE) is on
 * (probe/harden.c) the whole stack is locked, and a default 8 MiB stack does
 * not fit a non-root RLIMIT_MEMLOCK (8 MiB on Debian): pthread_create failed
 * with EAGAIN and the guard did not run. Their frames are a few KiB. */
#define GUARD_THREAD_STACK ((size_t)512 << 10)

int eng_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
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

/* ---- the guard thread ---- */

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

/* pid 1 and other users' processes are not the job's to lose: left out of
 * what the guard signals or evicts unless --force (said once) */
void eng_guard_keep_own(struct eng_run *w, struct sp_tree *t)
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

/* What costs nothing: as root with --guard-flush the page-cache flush; else,
 * or when it failed, the page cache of the job's own open and mapped files
 * (its user's) and of the user's files under --guard-evict. */
static void guard_free(struct eng_run *w, const struct sp_guard_look *l)
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
		eng_guard_queue(w, SP_EV_GUARD_FLUSH, d);
	}
	if (!flushed) { /* not asked, or the flush failed: what needs no root */
		struct sp_evict *ev = malloc(sizeof *ev);
		if (!ev)
			return;
		sp_evict_init(ev, false);
		eng_scan_tree(w, &w->guard_tree);
		eng_guard_keep_own(w, &w->guard_tree);
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
		eng_guard_queue(w, SP_EV_GUARD_EVICT, d);
	}
	sp_guard_freed(&w->guard, gained);
}

/* watch --pid with a guard: a tree that holds pid 1 or another user's
 * processes is refused before anything starts (the guard would signal
 * them), unless --force. 0, or the exit code. */
int eng_guard_tree_check(struct eng_run *w)
{
	const struct sp_engine_opts *o = w->o;
	uid_t u = 0;
	if (sp_proc_owner(LIVE_PROC, o->pid, &u) < 0)
		u = geteuid();
	w->owner = u;
	if (!(sp_guard_enabled(&o->guard) || o->guard_load) || o->force)
		return 0;
	eng_scan_tree(w, &w->guard_tree);
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

static void guard_stop_job(struct eng_run *w, int sig)
{
	char d[200];
	eng_scan_tree(w, &w->guard_tree);
	/* never sparkops itself nor a process above it (watch --pid $$) */
	sp_tree_drop_self_line(&w->guard_tree, LIVE_PROC);
	eng_guard_keep_own(w, &w->guard_tree);
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
	eng_guard_queue(w, sig == SIGTERM ? SP_EV_GUARD_TERM : SP_EV_GUARD_KILL, d);
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
	struct eng_run *w = arg;
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
			eng_guard_queue(w, SP_EV_GUARD_WARN, d);
			break;
		case SP_GA_RECOVERED:
			snprintf(d, sizeof d, "free_bytes=%.0f", fr);
			sp_note("guard: back above the floor (%s free)", sp_fmt_gib(a, sizeof a, fr));
			eng_guard_queue(w, SP_EV_GUARD_OK, d);
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
			eng_guard_queue(w, SP_EV_GUARD_HOLD, d);
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

void eng_guard_start(struct eng_run *w)
{
	const struct sp_engine_opts *o = w->o;
	if (!sp_guard_enabled(&o->guard))
		return;
	sp_guard_init(&w->guard, &o->guard);
	eng_gq_open(w);
	w->g_stop = eventfd(0, EFD_CLOEXEC);
	if (w->g_wake >= 0 && w->g_stop >= 0 && eng_thread_start(&w->gthread, guard_main, w) == 0)
		w->gthread_on = true;
	else
		sp_error("the guard could not start: %s", strerror(errno));
}

void eng_guard_end(struct eng_run *w)
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
	eng_guard_drain(w); /* the thread never blocks holding the queue's lock */
}
