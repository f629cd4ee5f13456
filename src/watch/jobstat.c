// SPDX-License-Identifier: MIT
/* The running job's status file (jobstat.h): written by the engine each
 * sample, read by `sparkops top`. */
#include "watch/jobstat.h"
#include "util/clock.h"
#include "util/dirscan.h"
#include "util/fileio.h"
#include "util/paths.h"
#include "util/text.h"
#include "util/units.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROOT_DIR "/run/sparkops"

void sp_jobstat_clear(struct sp_jobstat *j)
{
	memset(j, 0, sizeof *j);
	j->job_rss_bytes = j->rate = j->baseline = NAN;
	snprintf(j->cause, sizeof j->cause, "none");
	snprintf(j->guard, sizeof j->guard, "off");
}

/* ---- the text ---------------------------------------------------------------- */

struct wbuf {
	char *p;
	size_t n, len;
	bool over;
};

/* key=val\n, val cleaned of control bytes and cut at 1,099 bytes; no printf:
 * the file is rewritten every sample beside the job */
static void put(struct wbuf *w, const char *key, const char *val)
{
	size_t kl = strlen(key), vl = strnlen(val, 1099);
	if (kl + vl + 2 >= w->n - w->len) {
		w->over = true;
		return;
	}
	char *o = w->p + w->len;
	memcpy(o, key, kl);
	o[kl] = '=';
	memcpy(o + kl + 1, val, vl);
	o[kl + 1 + vl] = 0;
	sp_text_clean(o + kl + 1);
	o[kl + 1 + vl] = '\n';
	o[kl + 2 + vl] = 0;
	w->len += kl + vl + 2;
}

/* decimals < 0: six significant digits */
static void putnum(struct wbuf *w, const char *key, double v, int decimals)
{
	char b[48] = "";
	if (!isnan(v) && decimals >= 0)
		sp_fmt_fixed(b, sizeof b, decimals, v);
	else if (!isnan(v))
		snprintf(b, sizeof b, "%.6g", v);
	put(w, key, b);
}

/* FNV-1a over the text before the end line: the end line says both which
 * write it closes and what that write put before it, so a read that met a
 * write in progress (a start, an end and anything between from different
 * writes) is told from a whole one */
static unsigned text_sum(const char *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 16777619u;
	return h;
}

int sp_jobstat_format(const struct sp_jobstat *j, char *buf, size_t n)
{
	struct wbuf w = { buf, n, 0, n == 0 };
	if (n)
		buf[0] = 0;
	if (j->seq)
		putnum(&w, "seq", (double)j->seq, 0);
	putnum(&w, "version", SP_JOBSTAT_VERSION, 0);
	putnum(&w, "pid", j->pid, 0);
	put(&w, "mode", j->mode);
	put(&w, "command", j->command);
	putnum(&w, "job_pid", j->job_pid > 0 ? j->job_pid : NAN, 0);
	putnum(&w, "started_unix", j->started_unix, 3);
	putnum(&w, "updated_unix", j->updated_unix, 3);
	putnum(&w, "interval_s", j->interval_s, -1);
	putnum(&w, "samples", (double)j->samples, 0);
	putnum(&w, "job_rss_bytes", j->job_rss_bytes, 0);
	putnum(&w, "rate", j->rate, -1);
	put(&w, "unit", j->unit);
	putnum(&w, "baseline", j->baseline, -1);
	put(&w, "cause", j->cause);
	put(&w, "guard", j->guard);
	put(&w, "log", j->log);
	if (j->seq && !w.over) {
		char end[48];
		snprintf(end, sizeof end, "%lu/%08x", j->seq, text_sum(buf, w.len));
		put(&w, "end", end);
	}
	return w.over ? -1 : (int)w.len;
}

/* "N/SUM" of an end line: N when SUM (8 hex digits) is the text's, else -1 */
static double end_value(const char *v, unsigned want)
{
	char *e;
	errno = 0;
	unsigned long long n = strtoull(v, &e, 10);
	if (e == v || *e != '/' || errno)
		return -1;
	const char *h = e + 1;
	unsigned long long sum = strtoull(h, &e, 16);
	if (e - h != 8 || *e || errno || sum != want)
		return -1;
	return (double)n;
}

static double num(const char *v)
{
	if (!*v)
		return NAN;
	char *end;
	double d = strtod(v, &end);
	return end != v && *end == 0 && isfinite(d) ? d : NAN;
}

static void setstr(char *dst, size_t n, const char *v)
{
	snprintf(dst, n, "%s", v);
	sp_text_clean(dst);
}

int sp_jobstat_parse(const char *buf, size_t len, struct sp_jobstat *j)
{
	sp_jobstat_clear(j);
	double version = NAN, pid = NAN, seq = NAN, end = NAN;
	size_t i = 0;
	while (i < len && isnan(end)) {
		size_t at = i, e = i;
		while (e < len && buf[e] != '\n')
			e++;
		char line[1100];
		size_t l = e - i < sizeof line - 1 ? e - i : sizeof line - 1;
		memcpy(line, buf + i, l);
		line[l] = 0;
		i = e + 1;
		char *eq = strchr(line, '=');
		if (!eq || memchr(line, 0, l))
			continue;
		*eq = 0;
		const char *k = line, *v = eq + 1;
		double d = num(v);
		if (!strcmp(k, "seq"))
			seq = at == 0 && !isnan(d) ? d : -1; /* the first line's only */
		else if (!strcmp(k, "end"))
			end = end_value(v, text_sum(buf, at));
		else if (!strcmp(k, "version"))
			version = d;
		else if (!strcmp(k, "pid"))
			pid = d;
		else if (!strcmp(k, "mode"))
			setstr(j->mode, sizeof j->mode, v);
		else if (!strcmp(k, "command"))
			setstr(j->command, sizeof j->command, v);
		else if (!strcmp(k, "job_pid"))
			j->job_pid = d > 0 && d < INT32_MAX ? (int)d : 0;
		else if (!strcmp(k, "started_unix"))
			j->started_unix = isnan(d) ? 0 : d;
		else if (!strcmp(k, "updated_unix"))
			j->updated_unix = isnan(d) ? 0 : d;
		else if (!strcmp(k, "interval_s"))
			j->interval_s = isnan(d) || d < 0 ? 0 : d;
		else if (!strcmp(k, "samples"))
			j->samples = isnan(d) || d < 0 || d > 1e15 ? 0 : (long)d;
		else if (!strcmp(k, "job_rss_bytes"))
			j->job_rss_bytes = d;
		else if (!strcmp(k, "rate"))
			j->rate = d;
		else if (!strcmp(k, "unit"))
			setstr(j->unit, sizeof j->unit, v);
		else if (!strcmp(k, "baseline"))
			j->baseline = d;
		else if (!strcmp(k, "cause"))
			setstr(j->cause, sizeof j->cause, v);
		else if (!strcmp(k, "guard"))
			setstr(j->guard, sizeof j->guard, v);
		else if (!strcmp(k, "log"))
			setstr(j->log, sizeof j->log, v);
	}
	if (!isnan(seq) && (seq < 1 || isnan(end) || end != seq))
		return -EAGAIN; /* the start of one write without its end */
	if (isnan(version) || version < 1 || version > SP_JOBSTAT_VERSION || isnan(pid) || pid < 1 || pid > INT32_MAX)
		return -1;
	j->pid = (int)pid;
	j->seq = isnan(seq) ? 0 : (unsigned long)seq;
	return 0;
}

/* ---- the folder ------------------------------------------------------------------ */

/* dir exists (made with mode when missing) and is ours: 0, or -1 with why */
static int dir_ok(const char *dir, mode_t mode, bool create, char *why, size_t whylen)
{
	struct stat st;
	if (lstat(dir, &st) < 0) {
		if (errno != ENOENT || !create) {
			int e = errno;
			snprintf(why, whylen, "'%s': %s", dir, strerror(e));
			errno = e;
			return -1;
		}
		if (mkdir(dir, mode) < 0 && errno != EEXIST) {
			snprintf(why, whylen, "'%s': %s", dir, strerror(errno));
			return -1;
		}
		if (lstat(dir, &st) < 0) {
			snprintf(why, whylen, "'%s': %s", dir, strerror(errno));
			return -1;
		}
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		if (S_ISDIR(st.st_mode))
			snprintf(why, whylen, "'%s' is owned by uid %u, not by us (uid %u)", dir, (unsigned)st.st_uid,
				 (unsigned)geteuid());
		else
			snprintf(why, whylen, "'%s' is not a folder of our own", dir);
		errno = EPERM;
		return -1;
	}
	/* a folder others may write: they could plant, replace or remove the
	 * status files (top shown a fake job, or blinded) */
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, whylen, "'%s' is writable by group or others", dir);
		errno = EPERM;
		return -1;
	}
	return 0;
}

bool sp_jobstat_dir_refused(char *why, size_t whylen)
{
	char dir[256];
	if (sp_jobstat_dir(dir, sizeof dir, false, why, whylen) == 0)
		return false;
	return errno != ENOENT; /* not made yet: the first run makes it */
}

int sp_jobstat_dir(char *buf, size_t n, bool create, char *why, size_t whylen)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	const char *root = sp_run_root();
	int k;
	mode_t mode = 0700;
	if (root) {
		k = snprintf(buf, n, "%s/run", root);
		if (k > 0 && (size_t)k < n && create && mkdir(root, 0700) < 0 && errno != EEXIST) {
			snprintf(why, whylen, "'%s' (SPARKOPS_RUN_DIR): %s", root, strerror(errno));
			return -1;
		}
	} else if (xdg && xdg[0] == '/') {
		k = snprintf(buf, n, "%s/sparkops", xdg);
	} else if (geteuid() == 0) {
		k = snprintf(buf, n, "%s", ROOT_DIR);
		mode = 0755;
	} else {
		k = snprintf(buf, n, "/tmp/sparkops-%u", (unsigned)geteuid());
	}
	if (k < 0 || (size_t)k >= n) {
		snprintf(why, whylen, "the status folder's name is too long");
		return -1;
	}
	return dir_ok(buf, mode, create, why, whylen);
}

/* ---- the writer ------------------------------------------------------------------- */

int sp_jobstat_open(struct sp_jobstat_file *f, pid_t pid)
{
	char dir[256], why[300];
	f->on = false;
	f->out.fd = f->out.dirfd = -1;
	f->path[0] = '\0';
	if (sp_jobstat_dir(dir, sizeof dir, true, why, sizeof why) < 0) {
		snprintf(f->path, sizeof f->path, "%s", why);
		return -EACCES;
	}
	int k = snprintf(f->path, sizeof f->path, "%s/%d", dir, (int)pid);
	if (k < 0 || (size_t)k >= sizeof f->path)
		return -ENAMETOOLONG;
	/* the folder is resolved and held once: every write is relative to it */
	int e = sp_out_resolve(&f->out, f->path, NULL, 0);
	if (e < 0) {
		sp_out_close(&f->out, 0);
		return e;
	}
	if (f->out.stream) {
		sp_out_close(&f->out, 0);
		return -EINVAL; /* not a file of ours: nothing is written */
	}
	f->on = true;
	f->seq = 0;
	f->checked = -INFINITY; /* the first write looks */
	return 0;
}

int sp_jobstat_write(struct sp_jobstat_file *f, const struct sp_jobstat *j)
{
	if (!f->on)
		return -EBADF;
	char buf[2048];
	struct sp_jobstat c = *j;
	c.seq = ++f->seq;
	int len = sp_jobstat_format(&c, buf, sizeof buf);
	if (len < 0)
		return -EOVERFLOW;
	/* no fsync: the file describes a live process and dies with it */
	/* unlinked under us (a cleaner of /run, a user's rm): looked at every
	 * SP_JOBSTAT_RECHECK_S, not every sample, and made anew below */
	struct stat st;
	double now = sp_mono_now();
	bool look = f->out.fd >= 0 && !(now - f->checked < SP_JOBSTAT_RECHECK_S && now >= f->checked);
	if (look)
		f->checked = now;
	if (look && (fstat(f->out.fd, &st) < 0 || st.st_nlink == 0)) {
		close(f->out.fd);
		f->out.fd = -1;
	}
	if (f->out.fd >= 0) {
		int e = sp_out_rewrite(&f->out, buf, (size_t)len);
		if (e == 0)
			return 0;
		close(f->out.fd); /* a failing file: try a new one next time */
		f->out.fd = -1;
		return e;
	}
	/* the first write (or after a failure): a whole file renamed into place
	 * in the held folder, 0644 whatever the umask (top of another user may
	 * read it), kept open for the later writes */
	f->out.type = 0;
	return sp_out_replace(&f->out, buf, (size_t)len, 0644, 0, true, NULL, 0);
}

void sp_jobstat_close(struct sp_jobstat_file *f)
{
	if (!f->on)
		return;
	sp_out_unlink(&f->out);
	sp_out_close(&f->out, 0);
	f->on = false;
}

/* ---- the reader ------------------------------------------------------------------------ */

bool sp_jobstat_fresh(const struct sp_jobstat *j, double now_unix)
{
	double slack = 3 * j->interval_s + 10;
	return j->updated_unix > 0 && now_unix - j->updated_unix <= slack;
}

static bool alive(int pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

static int scan_dir(const char *dir, struct sp_jobstat *out, int n, int max, double now_unix)
{
	struct sp_dir d;
	if (sp_dir_open(&d, dir) < 0)
		return n;
	const char *name;
	while (n < max && (name = sp_dir_next(&d))) {
		char *end;
		long pid = strtol(name, &end, 10);
		if (*end || pid <= 0 || name[0] == '.')
			continue;
		char path[512], buf[3072];
		size_t len;
		snprintf(path, sizeof path, "%s/%s", dir, name);
		struct sp_jobstat *j = &out[n];
		int r = -EAGAIN;
		/* a read that met a write in place is read again (a write is one
		 * pwrite of a few hundred bytes: the next read misses it) */
		for (int tries = 0; r == -EAGAIN && tries < 3; tries++)
			r = sp_read_file(path, buf, sizeof buf, &len) < 0 ? -1 : sp_jobstat_parse(buf, len, j);
		if (r < 0 || j->pid != pid)
			continue;
		bool dup = false;
		for (int i = 0; i < n; i++)
			dup |= out[i].pid == j->pid;
		if (dup || !alive(j->pid) || !sp_jobstat_fresh(j, now_unix))
			continue;
		n++;
	}
	sp_dir_close(&d);
	return n;
}

int sp_jobstat_find(struct sp_jobstat *out, int max, double now_unix)
{
	char dir[256], why[300];
	int n = 0;
	if (sp_jobstat_dir(dir, sizeof dir, false, why, sizeof why) == 0)
		n = scan_dir(dir, out, n, max, now_unix);
	/* root's jobs too (a user's top sees them), unless SPARKOPS_RUN_DIR
	 * seals us into one root */
	if (!sp_run_root() && strcmp(dir, ROOT_DIR) != 0)
		n = scan_dir(ROOT_DIR, out, n, max, now_unix);
	/* newest first (a handful: insertion sort) */
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && out[k].started_unix > out[k - 1].started_unix; k--) {
			struct sp_jobstat t = out[k];
			out[k] = out[k - 1];
			out[k - 1] = t;
		}
	return n;
}
