// SPDX-License-Identifier: MIT
/* One try of the engine: its start (the signals, the job, the log, the
 * guards), its loop (one poll until the next sample) and its end (how the
 * job ended, the last rows); and the run's opening before the first try and
 * closing after the last (series.c starts the tries in between). */
#include "engine/engine_int.h"
#include "ladder/oomlog.h"
#include "out/serve_http.h"
#include "probe/container.h"
#include "probe/harden.h"
#include "util/clock.h"
#include "util/msg.h"
#include "util/paths.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define DRAIN_S 1.0       /* after the job ends, wait this long for its last output */
#define FOLLOW_MS 100     /* watch --follow: how often the log file is read */

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

void eng_cmd_words(char *out, size_t n, char **argv)
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

/* ---- the start ---- */

void eng_init(struct eng_run *w, const struct sp_engine_opts *o)
{
	memset(w, 0, sizeof *w);
	w->o = o;
	w->self = getpid();
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
static int signals_open(struct eng_run *w)
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
static void start_undo(struct eng_run *w)
{
	sp_serve_stop(w->srv);
	w->srv = NULL;
	close(w->sfd);
	sigprocmask(SIG_SETMASK, &w->orig, NULL);
}

/* The job (run), or the process we watch (--pid). 0, or the exit code. */
int eng_job_start(struct eng_run *w)
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
		int rc = eng_guard_tree_check(w);
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
static void log_open(struct eng_run *w)
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
static void start_event(struct eng_run *w)
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
		eng_cmd_words(words, sizeof words, o->argv);
		snprintf(detail, sizeof detail, "interval=%g host=%s pid=%d%s cmd=%s", o->interval_s, host,
			 (int)w->child.pid, cw, words);
	} else {
		snprintf(detail, sizeof detail, "interval=%g host=%s%s", o->interval_s, host, "");
		if (o->pid > 0) {
			size_t l = strlen(detail);
			snprintf(detail + l, sizeof detail - l, " pid=%d%s", (int)o->pid, cw);
		}
	}
	eng_emit_event(w, SP_EV_START, detail);
}

/* Everything before the loop. 0, or the exit code of a start that failed
 * (then nothing is left open). */
int eng_start(struct eng_run *w)
{
	const struct sp_engine_opts *o = w->o;
	int rc = signals_open(w);
	if (rc)
		return rc;
	/* the endpoint first: a busy port must not leave a job started */
	if (o->metrics_listen) {
		w->srv = eng_metrics_start(w, o->argv, sp_wall_now());
		if (!w->srv) {
			start_undo(w);
			return SP_EXIT_TROUBLE;
		}
	}
	eng_status_open(w);
	rc = eng_job_start(w);
	if (rc) {
		eng_status_close(w);
		start_undo(w);
		return rc;
	}
	log_open(w);
	start_event(w);
	eng_kmsg_start(w);
	eng_guard_start(w);
	w->start_unix = sp_wall_now();
	/* no folder of our own: top will not see us; said once, the job runs on */
	if (sp_jobstat_open(&w->stat, w->self) == -EACCES && w->stat.path[0])
		sp_warn("status folder refused: %s: 'sparkops top' will not show this job", w->stat.path);
	eng_lg_start(w);
	w->next = w->t0;
	w->t_end = o->duration_s > 0 ? w->t0 + o->duration_s : INFINITY;
	/* the threads are up: their stacks locked too where the first lock could not cover them */
	sp_harden_relock();
	return 0;
}

/* ---- the loop ---- */

/* SIGCHLD: reap; the job's end is noted (the relay's too). */
static void reap_children(struct eng_run *w)
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
void eng_on_signals(struct eng_run *w)
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
static void on_relay(struct eng_run *w, int i)
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
static void follow_turn(struct eng_run *w)
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

/* Wait in one poll until the next sample (or the drain's or --duration's
 * end) for a signal, the relay, the guard's rows or --pid's end. false:
 * the loop ends (poll failed). */
static bool loop_wait(struct eng_run *w, double now)
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
		eng_on_signals(w);
	for (int i = 0; i < 2; i++)
		if (p[1 + i].revents & (POLLIN | POLLHUP | POLLERR))
			on_relay(w, i);
	if (w->g_wake >= 0 && (p[3].revents & POLLIN))
		eng_guard_drain(w);
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
static bool loop_turn(struct eng_run *w)
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
		eng_take_sample(w);
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

void eng_try_run(struct eng_run *w)
{
	while (loop_turn(w))
		;
}

/* ---- the end ---- */

/* How the job ended: its exit code, and by what (exit, signal, oom_kill,
 * guard). Reads the last sample (the cgroup's OOM-kill counter). */
int eng_job_end_how(struct eng_run *w, const char **by)
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
int eng_end_event(struct eng_run *w)
{
	const struct sp_engine_opts *o = w->o;
	int status = w->status;
	char d[200];
	if (w->attr.in_episode) {
		/* an episode still open: its judgement over the whole length */
		sp_attr_detail(&w->attr, d, sizeof d);
		eng_emit_event(w, SP_EV_EPISODE_UPDATE, d);
	}
	if (w->end_done)
		return w->end_code;
	if (w->have_child) {
		const char *by;
		int code = eng_job_end_how(w, &by);
		if (WIFSIGNALED(status))
			snprintf(d, sizeof d, "ended_by=%s exit_code=%d signal=%d", by, code, WTERMSIG(status));
		else
			snprintf(d, sizeof d, "ended_by=%s exit_code=%d", by, code);
		eng_emit_event(w, SP_EV_EXIT, d);
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
	eng_emit_event(w, SP_EV_STOP, d);
	return 0;
}

/* After the loop: the guard stops, a last sample, the last row, the
 * endpoint stops, the log closes, the summary. Returns the exit code. */
int eng_finish(struct eng_run *w)
{
	eng_lg_end(w);
	eng_guard_end(w);
	eng_status_close(w); /* the end's rows and the summary: no status line any more */
	follow_turn(w);
	for (int i = 0; i < 2; i++)
		sp_progress_flush(&w->prog[i]);
	if (!w->counted && !w->end_sampled)
		eng_take_sample(w); /* the state at the end */
	int rc = eng_end_event(w);
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
		eng_ladder_print(w, stderr);
	fflush(stderr);
	if (w->o->summary_path && eng_summary_write(w) < 0 && !w->have_child)
		rc = SP_EXIT_IO;
	return rc;
}

/* Close what the loop held, reap what already ended, restore the mask. */
void eng_close(struct eng_run *w)
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
