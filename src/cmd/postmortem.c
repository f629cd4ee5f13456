// SPDX-License-Identifier: MIT
/* sparkops postmortem — how did the last boot end? The previous boot's
 * kernel and service messages (the systemd journal), pstore's records and
 * the sparkops run log of that boot, judged by src/ladder/bootend.c. */
#include "cmd/cli.h"
#include "cmd/cmdutil.h"
#include "ladder/bootend.h"
#include "probe/journal.h"
#include "probe/pstore.h"
#include "util/dirscan.h"
#include "util/json.h"
#include "util/msg.h"
#include "util/opt.h"
#include "util/text.h"
#include "util/units.h"
#include "watch/logread.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXIT_UNKNOWN 3

static const struct sp_cmdspec spec = {
	.name = "postmortem",
	.usage = "usage: sparkops postmortem [--json] [--boot ID|-N] [--journal PATH] [--pstore DIR]\n"
		 "                           [--log FILE | --log-dir DIR] [--window DURATION]\n"
		 "\n"
		 "How did the last boot end? Reads the previous boot's kernel and service messages\n"
		 "from the systemd journal, pstore's records and the sparkops run log of that boot,\n"
		 "and names the end: driver_wedge, kernel_oom, userspace_kill, thermal, power,\n"
		 "panic, clean or unknown, with the deciding lines and a timeline of the last minutes.\n"
		 "\n",
	.tail = "exit: 0 a clean end, 1 an abnormal end found (driver_wedge, kernel_oom,\n"
		"      userspace_kill, thermal, power, panic), 2 usage or input error (no such boot,\n"
		"      the journal or log unreadable, libsystemd.so.0 missing), 3 unknown (nothing\n"
		"      decides), 5 writing output failed\n",
};

struct opts {
	bool json;
	const char *boot;
	const char *journal;
	const char *pstore;
	const char *log;
	const char *log_dir;
	double window_s;
};

/* ---- the boot ------------------------------------------------------------------ */

#define MAX_BOOTS 512

static bool hex32(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!isxdigit((unsigned char)s[n]))
			return false;
	return n == 32;
}

/* "-1", "0", "3" or an id (dashes allowed) -> the index in boots, or -1 */
static int pick_boot(const char *spec_, const struct sp_jboot *boots, int n, char *err, size_t errlen)
{
	char id[40];
	size_t k = 0;
	for (const char *p = spec_; *p && k + 1 < sizeof id; p++)
		if (*p != '-' || p == spec_)
			id[k++] = (char)tolower((unsigned char)*p);
	id[k] = 0;
	if (hex32(id)) {
		for (int i = 0; i < n; i++)
			if (strcmp(boots[i].id, id) == 0)
				return i;
		snprintf(err, errlen, "no boot '%s' in the journal", spec_);
		return -1;
	}
	char *end;
	errno = 0;
	long v = strtol(spec_, &end, 10);
	if (end == spec_ || *end || errno) {
		snprintf(err, errlen, "--boot: '%s' is not a boot (an offset like -1, an index like 1, or a 32-digit id)",
			 spec_);
		return -2;
	}
	/* journalctl's numbering: 0 the newest, -N before it, N from the oldest (1) */
	long idx = v <= 0 ? n - 1 + v : v - 1;
	if (idx < 0 || idx >= n) {
		snprintf(err, errlen, "no boot %s: the journal holds %d boot%s", spec_, n, n == 1 ? "" : "s");
		return -1;
	}
	return (int)idx;
}

static int feed_entry(void *ctx, const struct sp_jentry *e)
{
	sp_bootend_feed(ctx, e->t, e->kernel, e->ident, e->msg, e->msglen);
	return 0;
}

/* ---- the run log ------------------------------------------------------------------ */

#define MAX_ROWS 600

struct logctx {
	struct sp_bootend *b;
	double lo, hi;              /* the boot's span, with a margin */
	double since;               /* the timeline's start */
	struct sp_logrow *rows;     /* a ring of the timeline's rows */
	int nrows, head;
	long in_boot;               /* rows inside the boot */
	bool producing;             /* throughput seen since the last start */
};

static int on_row(void *ctx, const struct sp_logrow *r, long lineno)
{
	(void)lineno;
	struct logctx *c = ctx;
	if (!(r->unix_time >= c->lo && r->unix_time <= c->hi))
		return 0;
	c->in_boot++;
	if (r->type == SP_ROW_EVENT) {
		if (strcmp(r->event, SP_EV_START) == 0 || strcmp(r->event, SP_EV_LADDER_TRY) == 0)
			c->producing = false;
		char v[32];
		if (strcmp(r->event, SP_EV_LOAD_GUARD_END) == 0 && sp_detail_get(r->detail, "reason", v, sizeof v) &&
		    strcmp(v, "ready") == 0)
			sp_bootend_ready(c->b, r->unix_time);
	} else {
		/* the job producing after a start is a readiness too: its first rate */
		if (isfinite(r->throughput) && r->throughput > 0 && !c->producing) {
			c->producing = true;
			sp_bootend_ready(c->b, r->unix_time);
		}
		if (isfinite(r->pl1_cap_w))
			sp_bootend_power_cap(c->b, r->unix_time, r->pl1_cap_w);
	}
	if (r->unix_time >= c->since) {
		c->rows[c->head] = *r;
		c->head = (c->head + 1) % MAX_ROWS;
		if (c->nrows < MAX_ROWS)
			c->nrows++;
	}
	return 0;
}

static int logfeed(void *ctx, const char *buf, size_t len)
{
	return sp_logread_feed(ctx, buf, len) < 0;
}

/* the newest sparkops-*.csv in dir last written during the boot */
static int find_log(const char *dir, double lo, double hi, char *out, size_t n)
{
	struct sp_dir *d = malloc(sizeof *d);
	if (!d)
		return -ENOMEM;
	int r = sp_dir_open(d, dir);
	if (r < 0) {
		free(d);
		return r;
	}
	double best = -1;
	const char *name;
	while ((name = sp_dir_next(d))) {
		size_t l = strlen(name);
		if (strncmp(name, "sparkops-", 9) != 0 || l < 13 || strcmp(name + l - 4, ".csv") != 0)
			continue;
		char path[4096];
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
			continue;
		struct stat st;
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		double m = (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
		if (m < lo || m > hi || m <= best)
			continue;
		best = m;
		snprintf(out, n, "%s", path);
	}
	sp_dir_close(d);
	free(d);
	return best >= 0 ? 0 : -ENOENT;
}

/* 0, or -1 with err */
static int read_log(const char *path, struct logctx *c, struct sp_logread *rd, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "'%s': %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "'%s': not a regular file", path);
		return -1;
	}
	sp_logread_init(rd, on_row, c, true);
	int r = sp_feed_fd(fd, logfeed, rd);
	close(fd);
	if (r < 0) {
		snprintf(err, errlen, "'%s': %s", path, strerror(-r));
		return -1;
	}
	if (sp_logread_end(rd) < 0 || rd->failed) {
		snprintf(err, errlen, "'%s': %s", path, rd->err[0] ? rd->err : "not a sparkops log");
		return -1;
	}
	return 0;
}

/* ---- the timeline ---------------------------------------------------------------- */

struct tl_item {
	double t;
	const struct sp_logrow *row;    /* a log row, or */
	const struct sp_be_line *line;  /* a journal line */
};

static int tl_cmp(const void *a, const void *b)
{
	const struct tl_item *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t ? 1 : (x->line != NULL) - (y->line != NULL);
}

static int build_timeline(const struct sp_bootend *b, const struct logctx *c, double since, struct tl_item *out,
			  int max)
{
	int n = 0;
	for (int i = 0; i < b->nkeep && n < max; i++) {
		const struct sp_be_line *l = sp_bootend_kept(b, i);
		if (l->t >= since)
			out[n++] = (struct tl_item){ l->t, NULL, l };
	}
	/* the boot's last entry, when it is not a notable line already */
	if (n < max && b->entries > 0 && b->last.cls == SP_BC_NONE)
		out[n++] = (struct tl_item){ b->last.t, NULL, &b->last };
	for (int i = 0; i < c->nrows && n < max; i++) {
		const struct sp_logrow *r = &c->rows[(c->head - c->nrows + i + MAX_ROWS) % MAX_ROWS];
		out[n++] = (struct tl_item){ r->unix_time, r, NULL };
	}
	qsort(out, (size_t)n, sizeof *out, tl_cmp);
	return n;
}

/* ---- output ------------------------------------------------------------------------ */

static void iso(char *buf, size_t n, double t)
{
	if (t > 0)
		sp_iso_time(buf, n, t);
	else
		snprintf(buf, n, "unknown");
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(round(v * 1000.0) / 1000.0) : json_null();
}

static json_t *jbytes(double v)
{
	return isfinite(v) ? json_integer((json_int_t)v) : json_null();
}

static json_t *line_json(const struct sp_be_line *l)
{
	char t[48];
	iso(t, sizeof t, l->t);
	json_t *o = json_object();
	json_object_set_new(o, "time", json_string(t));
	json_object_set_new(o, "unix_time", jnum(l->t));
	json_object_set_new(o, "source", json_string(l->who));
	json_object_set_new(o, "class", json_string(sp_be_class_name(l->cls)));
	json_object_set_new(o, "line", sp_json_text(l->text));
	return o;
}

static json_t *row_json(const struct sp_logrow *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "time", sp_json_text(r->time_iso));
	json_object_set_new(o, "unix_time", jnum(r->unix_time));
	json_object_set_new(o, "source", json_string("log"));
	if (r->type == SP_ROW_EVENT) {
		json_object_set_new(o, "class", json_string("event"));
		json_object_set_new(o, "event", sp_json_text(r->event));
		json_object_set_new(o, "detail", sp_json_text(r->detail));
		return o;
	}
	json_object_set_new(o, "class", json_string("sample"));
	json_object_set_new(o, "mem_free_bytes", jbytes(r->mem_free));
	json_object_set_new(o, "free_2mib_bytes", jbytes(r->free_2mib));
	json_object_set_new(o, "gpu_temp_c", jnum(r->gpu_temp_c));
	json_object_set_new(o, "soc_temp_c", jnum(r->soc_temp_c));
	json_object_set_new(o, "gpu_power_w", jnum(r->gpu_power_w));
	json_object_set_new(o, "sys_power_w", jnum(r->sys_power_w));
	json_object_set_new(o, "pl1_cap_w", jnum(r->pl1_cap_w));
	json_object_set_new(o, "throughput", jnum(r->throughput));
	json_object_set_new(o, "throughput_unit", r->throughput_unit[0] ? sp_json_text(r->throughput_unit) : json_null());
	return o;
}

struct result {
	const struct sp_jboot *boot;
	int boot_offset;            /* -1: the previous boot */
	const struct sp_end *end;
	const struct sp_bootend *b;
	const struct sp_pstore *ps;
	int ps_err;                 /* -errno reading pstore, 0 */
	bool ps_old;                /* a record older than the boot: not counted */
	const char *log_path;       /* NULL: none */
	const char *log_why;        /* why none */
	const struct logctx *lc;
	double since;
};

static int print_json(const struct result *r)
{
	char t[48];
	json_t *root = json_object();
	json_object_set_new(root, "version", json_string(SPARKOPS_VERSION));
	json_t *boot = json_object();
	json_object_set_new(boot, "id", json_string(r->boot->id));
	json_object_set_new(boot, "offset", json_integer(r->boot_offset));
	iso(t, sizeof t, r->boot->first);
	json_object_set_new(boot, "first_entry_time", json_string(t));
	iso(t, sizeof t, r->boot->last);
	json_object_set_new(boot, "last_entry_time", json_string(t));
	json_object_set_new(boot, "entries", json_integer(r->b->entries));
	json_object_set_new(root, "boot", boot);

	const struct sp_end *e = r->end;
	json_t *end = json_object();
	json_object_set_new(end, "kind", json_string(sp_end_kind_name(e->kind)));
	json_object_set_new(end, "detail", json_string(e->detail));
	iso(t, sizeof t, e->last_t);
	json_object_set_new(end, "last_entry_time", json_string(t));
	json_object_set_new(end, "last_entry_unix", jnum(e->last_t));
	json_object_set_new(end, "killer", e->killer[0] ? sp_json_text(e->killer) : json_null());
	json_t *victim = json_null();
	if (e->victim_pid > 0 || e->victim[0]) {
		victim = json_object();
		json_object_set_new(victim, "pid", e->victim_pid > 0 ? json_integer(e->victim_pid) : json_null());
		json_object_set_new(victim, "name", e->victim[0] ? sp_json_text(e->victim) : json_null());
	}
	json_object_set_new(end, "victim", victim);
	json_t *ev = json_array();
	for (int i = 0; i < e->nevidence; i++)
		json_array_append_new(ev, line_json(&e->evidence[i]));
	json_object_set_new(end, "evidence", ev);
	json_object_set_new(root, "end", end);

	json_t *drv = json_object();
	json_object_set_new(drv, "lines", json_integer(e->drv_lines));
	json_object_set_new(drv, "nvrm_oom_lines", json_integer(r->b->count[SP_BC_NVRM_OOM]));
	json_object_set_new(drv, "xid_lines", json_integer(r->b->count[SP_BC_XID]));
	json_t *xids = json_array();
	for (int i = 0; i < r->b->nxid; i++)
		json_array_append_new(xids, json_integer(r->b->xids[i]));
	json_object_set_new(drv, "xids", xids);
	json_object_set_new(drv, "in_window", json_integer(e->drv_final));
	json_t *ph = json_object();
	json_object_set_new(ph, "startup", json_integer(e->drv_startup));
	json_object_set_new(ph, "load", json_integer(e->drv_load));
	json_object_set_new(ph, "run", json_integer(e->drv_run));
	json_object_set_new(drv, "by_phase", ph);
	json_object_set_new(drv, "phase", e->drv_lines ? json_string(sp_drv_phase_name(e->drv_phase)) : json_null());
	json_object_set_new(drv, "rate_per_min", e->drv_final ? jnum(e->drv_rate_per_min) : json_null());
	iso(t, sizeof t, e->drv_first);
	json_object_set_new(drv, "first_time", e->drv_lines ? json_string(t) : json_null());
	iso(t, sizeof t, e->drv_last);
	json_object_set_new(drv, "last_time", e->drv_lines ? json_string(t) : json_null());
	json_object_set_new(drv, "judgement",
			    json_string(!e->drv_lines ? "none"
					: e->kind == SP_END_DRIVER_WEDGE ? "run_up_to_wedge"
					: e->drv_startup > 0 && e->drv_phase == SP_PH_STARTUP ? "startup_probes"
											    : "not_the_end"));
	json_object_set_new(root, "driver", drv);

	json_t *ps = json_object();
	json_object_set_new(ps, "dir", sp_json_text(r->ps->dir));
	json_object_set_new(ps, "records", r->ps_err ? json_null() : json_integer(r->ps->records));
	json_object_set_new(ps, "unavailable", r->ps_err ? json_string(strerror(-r->ps_err)) : json_null());
	json_object_set_new(ps, "panic", json_boolean(r->ps->panic && !r->ps_old));
	json_object_set_new(ps, "older_than_boot", json_boolean(r->ps_old));
	json_object_set_new(ps, "line", r->ps->line[0] ? sp_json_text(r->ps->line) : json_null());
	json_object_set_new(root, "pstore", ps);

	json_t *lg = json_object();
	json_object_set_new(lg, "path", r->log_path ? sp_json_text(r->log_path) : json_null());
	json_object_set_new(lg, "unavailable", r->log_path ? json_null() : json_string(r->log_why));
	json_object_set_new(lg, "rows_in_boot", r->log_path ? json_integer(r->lc->in_boot) : json_null());
	json_object_set_new(root, "log", lg);

	enum { TLMAX = SP_BE_KEEP + MAX_ROWS + 1 };
	struct tl_item *tl = calloc(TLMAX, sizeof *tl);
	json_t *arr = json_array();
	if (tl) {
		int n = build_timeline(r->b, r->lc, r->since, tl, TLMAX);
		for (int i = 0; i < n; i++)
			json_array_append_new(arr, tl[i].line ? line_json(tl[i].line) : row_json(tl[i].row));
		free(tl);
	}
	json_object_set_new(root, "timeline_window_s", jnum(r->b->window_s));
	json_object_set_new(root, "timeline", arr);
	int rc = sp_json_print(stdout, root);
	json_decref(root);
	return rc;
}

static const char *fmt_or(char *buf, size_t n, double v, const char *unit, int dec)
{
	if (!isfinite(v))
		return "-";
	snprintf(buf, n, "%.*f%s", dec, v, unit);
	return buf;
}

static void print_row(const struct sp_logrow *r)
{
	char hm[16] = "";
	/* hh:mm:ss of the log's own local time */
	if (strlen(r->time_iso) >= 19)
		snprintf(hm, sizeof hm, "%.8s", r->time_iso + 11);
	if (r->type == SP_ROW_EVENT) {
		char d[sizeof r->detail];
		snprintf(d, sizeof d, "%s", r->detail);
		sp_text_clean(d);
		printf("  %s  log      %s %s\n", hm, r->event, d);
		return;
	}
	char a[32], b2[32], c[24], d2[24], e[24], f[40];
	printf("  %s  log      free %s  2MiB+ %s  gpu %s soc %s  power %s  rate %s%s%s\n", hm,
	       isfinite(r->mem_free) ? sp_fmt_gib(a, sizeof a, r->mem_free) : "-",
	       isfinite(r->free_2mib) ? sp_fmt_gib(b2, sizeof b2, r->free_2mib) : "-",
	       fmt_or(c, sizeof c, r->gpu_temp_c, "C", 0), fmt_or(d2, sizeof d2, r->soc_temp_c, "C", 0),
	       fmt_or(e, sizeof e, isfinite(r->sys_power_w) ? r->sys_power_w : r->gpu_power_w, "W", 0),
	       fmt_or(f, sizeof f, r->throughput, "", 2), isfinite(r->throughput) ? " " : "",
	       isfinite(r->throughput) ? r->throughput_unit : "");
}

/* nothing a person would notice changed since the last row shown */
static bool near(double a, double b, double tol)
{
	if (!isfinite(a) || !isfinite(b))
		return isfinite(a) == isfinite(b);
	return fabs(a - b) <= tol;
}

static bool same_row(const struct sp_logrow *a, const struct sp_logrow *b)
{
	return near(a->mem_free, b->mem_free, 0.01 * a->mem_free) && near(a->free_2mib, b->free_2mib, 0.01 * a->mem_free) &&
	       near(a->gpu_temp_c, b->gpu_temp_c, 1.5) && near(a->soc_temp_c, b->soc_temp_c, 1.5) &&
	       near(a->sys_power_w, b->sys_power_w, 5) && near(a->gpu_power_w, b->gpu_power_w, 5) &&
	       near(a->throughput, b->throughput, 0.05 * fabs(a->throughput));
}

static void print_line(const struct sp_be_line *l)
{
	char t[48];
	iso(t, sizeof t, l->t);
	printf("  %.8s  %-8s %s\n", strlen(t) >= 19 ? t + 11 : t, l->who, l->text);
}

static void print_human(const struct result *r)
{
	char t[48], t2[48];
	bool col = sp_color(1);
	const char *bold = col ? "\033[1m" : "", *red = col ? "\033[31m" : "", *off = col ? "\033[0m" : "";
	const struct sp_end *e = r->end;
	iso(t, sizeof t, r->boot->first);
	iso(t2, sizeof t2, e->last_t);
	printf("%ssparkops postmortem%s  boot %d  %s\n", bold, off, r->boot_offset, r->boot->id);
	printf("  %s .. %s  (%ld journal entries)\n", t, t2, r->b->entries);
	printf("\n%send: %s%s%s\n", bold, e->kind == SP_END_CLEAN ? "" : red, sp_end_kind_name(e->kind), off);
	printf("  %s\n", e->detail);
	if (e->killer[0])
		printf("  killer: %s\n", e->killer);
	if (e->victim_pid > 0)
		printf("  victim: %s (pid %d)\n", e->victim[0] ? e->victim : "?", e->victim_pid);
	else if (e->victim[0])
		printf("  victim: %s\n", e->victim);
	printf("  last entry: %s\n", t2);
	if (e->nevidence) {
		printf("\n%sEVIDENCE%s\n", bold, off);
		for (int i = 0; i < e->nevidence; i++) {
			iso(t, sizeof t, e->evidence[i].t);
			printf("  %s  %s: %s\n", t, e->evidence[i].who, e->evidence[i].text);
		}
	}
	printf("\n%sDRIVER%s  ", bold, off);
	if (!e->drv_lines) {
		printf("no NVRM out-of-memory or Xid line in this boot\n");
	} else {
		printf("%ld NVRM line%s (%ld out of memory, %ld Xid", e->drv_lines, e->drv_lines == 1 ? "" : "s",
		       r->b->count[SP_BC_NVRM_OOM], r->b->count[SP_BC_XID]);
		for (int i = 0; i < r->b->nxid; i++)
			printf("%s%d", i ? "," : " ", r->b->xids[i]);
		printf("): %ld at start-up, %ld during a load, %ld during a run\n", e->drv_startup, e->drv_load,
		       e->drv_run);
		if (e->kind == SP_END_DRIVER_WEDGE)
			printf("  the run-up to the wedge: %ld in the last %.0f s, %.1f a minute, during a %s\n",
			       e->drv_final, r->b->window_s, e->drv_rate_per_min, sp_drv_phase_name(e->drv_phase));
		else if (e->drv_phase == SP_PH_STARTUP || e->drv_startup > 0)
			printf("  start-up probes (a server sizing its memory before it was ready): harmless, not the end\n");
		else
			printf("  none near the end: not what ended the boot\n");
	}
	printf("%sPSTORE%s  ", bold, off);
	if (r->ps_err)
		printf("%s: %s\n", r->ps->dir, r->ps_err == -ENOENT ? "none (not mounted)" : strerror(-r->ps_err));
	else if (r->ps->panic || r->ps->oops)
		printf("%d record%s in %s; %s%s: %s\n", r->ps->records, r->ps->records == 1 ? "" : "s", r->ps->dir,
		       r->ps->file, r->ps_old ? " (older than this boot, not counted)" : "", r->ps->line);
	else
		printf("%d record%s in %s, no panic\n", r->ps->records, r->ps->records == 1 ? "" : "s", r->ps->dir);
	printf("%sLOG%s     ", bold, off);
	if (r->log_path)
		printf("%s (%ld rows in this boot)\n", r->log_path, r->lc->in_boot);
	else
		printf("none: %s\n", r->log_why);

	enum { TLMAX = SP_BE_KEEP + MAX_ROWS + 1 };
	struct tl_item *tl = calloc(TLMAX, sizeof *tl);
	if (!tl)
		sp_die(SP_EXIT_IO, "out of memory");
	int n = build_timeline(r->b, r->lc, r->since, tl, TLMAX);
	printf("\n%sTIMELINE%s  the last %.0f s before the last entry%s\n", bold, off, r->b->window_s,
	       r->log_path ? " (a log sample when a reading changed)" : "");
	if (!n)
		printf("  nothing notable\n");
	const struct sp_logrow *shown = NULL;
	for (int i = 0; i < n; i++) {
		if (tl[i].line) {
			/* a run of the same line: once, with its count and its last time */
			int k = i;
			while (k + 1 < n && tl[k + 1].line && strcmp(tl[k + 1].line->text, tl[i].line->text) == 0 &&
			       strcmp(tl[k + 1].line->who, tl[i].line->who) == 0)
				k++;
			print_line(tl[i].line);
			if (k > i) {
				char lt[48];
				iso(lt, sizeof lt, tl[k].line->t);
				printf("  %8s  %-8s (%d more of the same, the last at %.8s)\n", "", "", k - i,
				       strlen(lt) >= 19 ? lt + 11 : lt);
			}
			i = k;
			continue;
		}
		const struct sp_logrow *row = tl[i].row;
		if (!row)
			continue;
		bool last = true;
		for (int k = i + 1; k < n; k++)
			if (tl[k].row && tl[k].row->type == SP_ROW_SAMPLE)
				last = false;
		if (row->type == SP_ROW_SAMPLE && !last && shown && same_row(shown, row))
			continue;
		print_row(row);
		if (row->type == SP_ROW_SAMPLE)
			shown = row;
	}
	free(tl);
}

/* ---- the command --------------------------------------------------------------------- */

/* false: --help was printed (usage errors exit) */
static bool parse_args(int argc, char **argv, struct opts *o)
{
	const struct sp_option opts[] = {
		SP_OPT_GROUP("options:"),
		SP_OPT_FLAG(0, "json", &o->json, "one JSON object (end.kind, end.evidence, the timeline)"),
		SP_OPT_STRING("boot", &o->boot, "ID|-N",
			      "the boot to judge: -1 the previous (default), 0 the newest,\n"
			      "N from the oldest (1), or its 32-digit id"),
		SP_OPT_PATH("journal", &o->journal, "PATH", "a journal file or folder (default: this machine's journal)"),
		SP_OPT_PATH("pstore", &o->pstore, "DIR", "pstore's records (default <sysfs>/fs/pstore)"),
		SP_OPT_PATH("log", &o->log, "FILE", "the sparkops run log to read (default: the newest of the boot)"),
		SP_OPT_PATH("log-dir", &o->log_dir, "DIR",
			    "where to look for sparkops-*.csv run logs (default: here)"),
		SP_OPT_DURATION("window", &o->window_s, "DURATION", 1, 86400, 0,
				"the run-up before the last entry that decides and is shown\n"
				"(default 5m)"),
		SP_OPT_END(),
	};
	int i = sp_opt_parse(&spec, opts, argc, argv);
	if (i < 0)
		return false;
	if (i < argc)
		sp_usage_error("postmortem", "unexpected argument '%s'", argv[i]);
	if (o->log && o->log_dir)
		sp_usage_error("postmortem", "--log and --log-dir: name one");
	return true;
}

/* The boot --boot names among the journal's (*nb of them): its index, -1
 * after an error (said). The running boot has not ended: refused. */
static int choose_boot(struct sp_journal *j, const struct opts *o, struct sp_jboot *boots, int *nb)
{
	char err[512];
	*nb = sp_journal_boots(j, boots, MAX_BOOTS, err, sizeof err);
	if (*nb < 0) {
		sp_error("%s", err);
		return -1;
	}
	if (*nb == 0) {
		sp_error("the journal%s%s%s holds no boot", o->journal ? " '" : "", o->journal ? o->journal : "",
			 o->journal ? "'" : "");
		return -1;
	}
	int bi = pick_boot(o->boot, boots, *nb, err, sizeof err);
	if (bi < 0) {
		if (bi == -2)
			sp_usage_error("postmortem", "%s", err);
		sp_error("%s", err);
		return -1;
	}
	char cur[40];
	if (sp_boot_id_current(cur, sizeof cur) == 0 && strcmp(cur, boots[bi].id) == 0) {
		sp_error("boot %s is the running one: it has not ended (the previous one is --boot -1)", boots[bi].id);
		return -1;
	}
	return bi;
}

/* pstore: a record older than the boot is an earlier crash's (*ps_old);
 * a newer one is fed to the judge. -1 when --pstore names a folder that
 * cannot be read (said). */
static int read_pstore(const struct opts *o, const struct sp_jboot *boot, struct sp_bootend *b, struct sp_pstore *ps,
		       int *ps_err, bool *ps_old)
{
	*ps_err = sp_pstore_read(o->pstore, ps);
	*ps_old = false;
	if (*ps_err == 0 && (ps->panic || ps->oops)) {
		*ps_old = ps->time > 0 && ps->time < boot->first - 60;
		if (!*ps_old)
			sp_bootend_pstore(b, ps->time > 0 ? ps->time : boot->last, ps->panic, ps->oops, ps->file, ps->line);
	}
	if (o->pstore && *ps_err < 0) {
		sp_error("--pstore '%s': %s", o->pstore, strerror(-*ps_err));
		return -1;
	}
	return 0;
}

/* The run log: --log, or the newest sparkops-*.csv written during the boot
 * (its path in logpath); *log_why says why there is none. -1 after an
 * error (said). */
static int attach_log(const struct opts *o, const struct sp_jboot *boot, struct logctx *lc, struct sp_logread *rd,
		      char *logpath, size_t cap, const char **log_path, const char **log_why)
{
	char err[512];
	*log_path = NULL;
	*log_why = "";
	if (o->log) {
		if (read_log(o->log, lc, rd, err, sizeof err) < 0) {
			sp_error("--log %s", err);
			return -1;
		}
		*log_path = o->log;
		return 0;
	}
	const char *dir = o->log_dir ? o->log_dir : ".";
	int r = find_log(dir, boot->first, boot->last + 300, logpath, cap);
	if (r == 0 && read_log(logpath, lc, rd, err, sizeof err) == 0) {
		*log_path = logpath;
	} else if (r == 0) {
		sp_warn("%s", err);
		*log_why = "the boot's run log is unreadable";
	} else if (o->log_dir && r != -ENOENT) {
		sp_error("--log-dir '%s': %s", o->log_dir, strerror(-r));
		return -1;
	} else {
		*log_why = "no sparkops-*.csv written during this boot";
	}
	return 0;
}

int cmd_postmortem(int argc, char **argv)
{
	struct opts o = { .boot = "-1", .window_s = 300 };
	if (!parse_args(argc, argv, &o))
		return 0;

	char err[512];
	struct sp_journal *j;
	if (sp_journal_open(&j, o.journal, err, sizeof err) < 0) {
		sp_error("%s", err);
		return SP_EXIT_USAGE;
	}
	struct sp_jboot *boots = calloc(MAX_BOOTS, sizeof *boots);
	struct sp_bootend *b = calloc(1, sizeof *b);
	struct sp_logrow *rows = calloc(MAX_ROWS, sizeof *rows);
	struct sp_logread *rd = calloc(1, sizeof *rd);
	if (!boots || !b || !rows || !rd)
		sp_die(SP_EXIT_IO, "out of memory");
	int rc = SP_EXIT_USAGE;
	int nb;
	int bi = choose_boot(j, &o, boots, &nb);
	if (bi < 0)
		goto out;
	const struct sp_jboot *boot = &boots[bi];
	sp_bootend_init(b, o.window_s);
	if (sp_journal_each(j, boot->id, feed_entry, b, err, sizeof err) < 0) {
		sp_error("%s", err);
		goto out;
	}
	struct sp_pstore ps;
	int ps_err;
	bool ps_old;
	if (read_pstore(&o, boot, b, &ps, &ps_err, &ps_old) < 0)
		goto out;
	double since = boot->last - o.window_s;
	struct logctx lc = { .b = b, .lo = boot->first - 60, .hi = boot->last + 60, .since = since, .rows = rows };
	char logpath[4096];
	const char *log_path, *log_why;
	if (attach_log(&o, boot, &lc, rd, logpath, sizeof logpath, &log_path, &log_why) < 0)
		goto out;

	struct sp_end e;
	sp_bootend_judge(b, &e);
	struct result res = { boot, bi - (nb - 1), &e, b, &ps, ps_err, ps_old, log_path, log_why, &lc, since };
	if (o.json)
		print_json(&res);
	else
		print_human(&res);
	rc = e.kind == SP_END_CLEAN ? SP_EXIT_OK : e.kind == SP_END_UNKNOWN ? EXIT_UNKNOWN : SP_EXIT_TROUBLE;
out:
	sp_journal_close(j);
	free(boots);
	free(b);
	free(rows);
	free(rd);
	return rc;
}
