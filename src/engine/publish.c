// SPDX-License-Identifier: MIT
/* What the engine shows others while it runs: the live status line on
 * stderr's terminal (and the message hook that clears it), the copy of the
 * latest sample the --metrics-listen endpoint's thread renders, the status
 * file `sparkops top` reads; and at the end --summary's JSON. */
#include "engine/engine_int.h"
#include "out/serve_http.h"
#include "out/statusline.h"
#include "util/clock.h"
#include "util/json.h"
#include "util/msg.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- --metrics-listen ---- */

void eng_metrics_publish(struct eng_run *w, const struct sp_sample *s)
{
	struct eng_metrics *m = &w->metrics;
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

/* the server's thread; ctx is the engine's struct eng_metrics */
static size_t metrics_fill(char *buf, size_t cap, void *ctx)
{
	struct eng_metrics *m = ctx;
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

struct sp_server *eng_metrics_start(struct eng_run *w, char **argv, double start_unix)
{
	const struct sp_engine_opts *o = w->o;
	struct eng_metrics *m = &w->metrics;
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

/* ---- the status file ---- */

/* The status file `sparkops top` reads (watch/jobstat.h): the job, its
 * throughput, the slowdown's cause, the guard; rewritten once per sample. */
void eng_stat_publish(struct eng_run *w)
{
	static const char *const gname[] = { "ok", "warned", "stopping", "killed" };
	if (!w->stat.on)
		return;
	struct sp_jobstat j;
	sp_jobstat_clear(&j);
	j.pid = (int)w->self;
	snprintf(j.mode, sizeof j.mode, "%s", w->o->argv ? "run" : "watch");
	if (w->argv)
		eng_cmd_words(j.command, sizeof j.command, w->argv);
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

/* ---- the live status line ---- */

/* Off the job's line: before a message of ours, the summary, the end. The
 * status line is cleared; a line the job left open (a tqdm bar between
 * redraws) is ended so the message starts a line of its own: on a terminal
 * the bar's line is erased (the job redraws it), in a file or pipe a line
 * end is written (the bar's text stays as it was). The message hook
 * (util/msg.h): ctx is the engine's state. */
static void status_clear(void *ctx)
{
	const struct eng_run *w = ctx;
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
void eng_status_open(struct eng_run *w)
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
	sp_msg_before(status_clear, w);
}

void eng_status_close(struct eng_run *w)
{
	if (!w->tty)
		return;
	status_clear(w);
	if (w->titled) { /* the user's title back (xterm's title stack) */
		ssize_t x = write(STDERR_FILENO, SP_TITLE_POP, sizeof SP_TITLE_POP - 1);
		(void)x;
		w->titled = false;
	}
	sp_msg_before(NULL, NULL);
	munmap(w->tty, sizeof *w->tty);
	w->tty = NULL;
	w->child.tty = NULL;
}

/* Once per sample: the line, redrawn in place; while the job's own line (a
 * tqdm bar between redraws, which for tqdm and the HF Trainer is always) is
 * open on the terminal, the same text as the terminal's title, which never
 * touches the job's line. The relay is locked out while either is written. */
void eng_status_draw(struct eng_run *w, const struct sp_logrow *r)
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

/* ---- --summary ---- */

/* --summary FILE: the summary as JSON. 0, or -1 when it could not be
 * written (said). */
int eng_summary_write(struct eng_run *w)
{
	json_t *j = sp_summary_json(&w->sum);
	if (w->oom)
		eng_ladder_json(w, j);
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
