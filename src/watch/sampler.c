// SPDX-License-Identifier: MIT
/* The log file and the events between samples. See sampler.h. */
#include "watch/sampler.h"
#include "probe/container.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/fileio.h"

static int put(struct sp_csvlog *l, const char *buf, size_t n)
{
	int e = sp_out_write(&l->out, buf, n);
	if (e < 0 && l->out.cut)
		l->partial = true;
	return e;
}

static int start(struct sp_csvlog *l, const char *path, double fsync_s, double now, int excl)
{
	memset(l, 0, offsetof(struct sp_csvlog, out));
	l->fd = -1;
	snprintf(l->path, sizeof l->path, "%s", path);
	l->fsync_s = fsync_s;
	l->last_fsync = now;
	/* the one door: no link planted where the log goes, no block device,
	 * the folder held; a FIFO without a reader fails (ENXIO) at once */
	int e = sp_out_open(&l->out, path, (excl ? SP_OUT_EXCL : SP_OUT_TRUNC) | SP_OUT_NOLINK, 0644, l->msg, sizeof l->msg);
	if (e < 0)
		return l->err = -e, e;
	l->fd = l->out.fd;
	char h[2048];
	size_t n = sp_logrow_header(h, sizeof h);
	int r = put(l, h, n);
	if (r < 0 && r != -EAGAIN) {
		l->err = -r;
		return r;
	}
	return 0;
}

int sp_csvlog_open(struct sp_csvlog *l, const char *path, double fsync_s, double now)
{
	int r = start(l, path, fsync_s, now, 0);
	if (r == -ELOOP)
		l->err = ELOOP;
	return r;
}

int sp_csvlog_open_new(struct sp_csvlog *l, double fsync_s, double now)
{
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	char base[64], name[96];
	strftime(base, sizeof base, "sparkops-%Y%m%d-%H%M%S", &tm);
	int r = -EEXIST;
	for (int i = 1; i <= 1000 && r == -EEXIST; i++) {
		if (i == 1)
			snprintf(name, sizeof name, "%s.csv", base);
		else
			snprintf(name, sizeof name, "%s-%d.csv", base, i);
		r = start(l, name, fsync_s, now, 1);
	}
	return r;
}

int sp_csvlog_check(const char *log, const char *summary, char *msg, size_t n)
{
	struct stat st;
	if (log && lstat(log, &st) == 0 && S_ISLNK(st.st_mode)) {
		snprintf(msg, n, "--log: '%s' is a symbolic link: not following it (name the file itself)", log);
		return -1;
	}
	if (log && summary && sp_same_file(log, summary)) {
		snprintf(msg, n, "--log '%s' and --summary '%s' are the same file: the summary would replace the log",
			 log, summary);
		return -1;
	}
	return 0;
}

int sp_csvlog_write(struct sp_csvlog *l, const struct sp_logrow *r, double now)
{
	if (l->fd < 0) {
		l->lost++;
		return -EBADF;
	}
	char buf[2048];
	size_t n = sp_logrow_format(r, buf + 1, sizeof buf - 1);
	if (n == 0) {
		l->lost++;
		return -EOVERFLOW;
	}
	const char *p = buf + 1;
	if (l->partial) {
		buf[0] = '\n'; /* end the cut row; the reader rejects it, not this one */
		p = buf;
		n++;
	}
	bool was_partial = l->partial;
	l->partial = false;
	int e = put(l, p, n);
	if (e == -EAGAIN) {
		/* a stream whose reader stalled: the row is dropped (counted by
		 * the door), the log goes on; not a failure of the log */
		if (was_partial && !l->partial)
			l->partial = true;
		return 0;
	}
	if (e < 0) {
		if (was_partial && !l->partial)
			l->partial = true;
		l->lost++;
		l->err = -e;
		return e;
	}
	l->err = 0;
	l->rows++;
	if (!l->out.stream && (l->urgent || (l->fsync_s >= 0 && now - l->last_fsync >= l->fsync_s))) {
		fdatasync(l->fd);
		l->last_fsync = now;
		if (l->urgent)
			l->urgent_synced++;
	}
	return 0;
}

void sp_csvlog_close(struct sp_csvlog *l)
{
	if (l->fd >= 0 && !l->out.stream)
		fdatasync(l->fd);
	sp_out_close(&l->out, 0.5); /* a slow reader gets half a second for what is held */
	l->fd = -1;
}

long sp_csvlog_dropped(const struct sp_csvlog *l)
{
	return sp_out_dropped(&l->out);
}

void sp_evstate_init(struct sp_evstate *e)
{
	memset(e, 0, sizeof *e);
	e->gpu_status = SP_OK;
}

static bool in(const int *v, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

int sp_events_diff(struct sp_evstate *e, const struct sp_sample *s, bool procs_fresh, const int *skip, int nskip,
		   struct sp_logrow *rows, int max, bool *appeared)
{
	int n = 0;
	char d[256];
	*appeared = false;
	const struct sp_gpu *g = s->ngpu > 0 ? &s->gpus[0] : NULL;
	bool rok = g && sp_ok(g->reasons.why);
	uint64_t rv = rok ? g->reasons.v : 0;
	/* the GPU going away and coming back */
	enum sp_why gs = sp_sample_gpu_state(s);
	if (e->have_prev && gs != e->gpu_status && gs != SP_MISSING) {
		if (gs != SP_OK && n < max) {
			snprintf(d, sizeof d, "%s", sp_why_key(gs));
			sp_logrow_event(&rows[n++], s->wall, SP_EV_GPU_LOST, d);
		} else if (gs == SP_OK && n < max) {
			sp_logrow_event(&rows[n++], s->wall, SP_EV_GPU_BACK, "");
		}
	}
	if (gs != SP_MISSING)
		e->gpu_status = gs;
	/* reasons: the first sample reports what is already on */
	if (rok) {
		uint64_t before = e->reasons_ok ? e->reasons : 0;
		for (int b = 0; b < 9; b++) {
			uint64_t m = 1ULL << b;
			if (m == SP_REASON_GPU_IDLE)
				continue; /* idle is not a throttle */
			if ((rv & m) && !(before & m) && n < max)
				sp_logrow_event(&rows[n++], s->wall, SP_EV_REASON_ON, sp_reason_name(b));
			else if (!(rv & m) && (before & m) && n < max)
				sp_logrow_event(&rows[n++], s->wall, SP_EV_REASON_OFF, sp_reason_name(b));
		}
		e->reasons = rv;
		e->reasons_ok = true;
	}
	if (!procs_fresh)
		return n;
	/* memory-heavy processes that were not there before */
	int cur[SP_EV_MAX_PIDS] = { 0 }, nc = 0;
	for (int i = 0; i < s->nprocs && nc < SP_EV_MAX_PIDS; i++) {
		const struct sp_proc *p = &s->procs[i];
		if (in(skip, nskip, p->pid))
			continue;
		cur[nc++] = p->pid;
		if (e->have_prev && !in(e->pids, e->npids, p->pid)) {
			*appeared = true;
			if (n < max) {
				char cw[112];
				snprintf(d, sizeof d, "pid=%d name=%s kind=%s rss_bytes=%llu%s", p->pid, p->name,
					 sp_proc_kind_name(p->kind), (unsigned long long)p->rss_bytes,
					 sp_container_word(&p->ct, cw, sizeof cw));
				sp_logrow_event(&rows[n++], s->wall, SP_EV_PROCESS, d);
			}
		}
	}
	memcpy(e->pids, cur, sizeof(int) * (size_t)nc);
	e->npids = nc;
	e->have_prev = true;
	return n;
}
