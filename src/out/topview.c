// SPDX-License-Identifier: MIT
/* The screen of `sparkops top` as a grid of cells (topview.h). Pure. */
#include "out/topview.h"
#include "probe/poolmodel.h"
#include "probe/container.h"
#include "util/sort.h"
#include "util/text.h"
#include "util/units.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- the grid ---------------------------------------------------------------------- */

static void grid_clear(struct sp_tv_grid *g, int rows, int cols)
{
	g->rows = rows < 0 ? 0 : rows > SP_TV_ROWS_MAX ? SP_TV_ROWS_MAX : rows;
	g->cols = cols < 0 ? 0 : cols > SP_TV_COLS_MAX ? SP_TV_COLS_MAX : cols;
	for (int r = 0; r < g->rows; r++)
		for (int c = 0; c < g->cols; c++) {
			g->c[r][c].g[0] = ' ';
			g->c[r][c].g[1] = 0;
			g->c[r][c].attr = SP_TVA_NONE;
		}
}

/* Put UTF-8 text at (r, col), one glyph a cell, clipped at the right edge;
 * returns the column after it. Bytes that do not form a glyph we drew
 * ourselves cannot come in: text from the machine is cleaned to ASCII first. */
static int put(struct sp_tv_grid *g, int r, int col, int attr, const char *t)
{
	if (r < 0 || r >= g->rows)
		return col;
	const unsigned char *p = (const unsigned char *)t;
	while (*p) {
		int len = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3 : 1;
		for (int i = 1; i < len; i++)
			if ((p[i] & 0xC0) != 0x80)
				len = 1;
		if (col >= 0 && col < g->cols) {
			struct sp_tv_cell *c = &g->c[r][col];
			if (len == 1 && (*p < 0x20 || *p >= 0x7f))
				c->g[0] = '?', c->g[1] = 0;
			else {
				memcpy(c->g, p, (size_t)len);
				c->g[len] = 0;
			}
			c->attr = (unsigned char)attr;
		}
		col++;
		p += len;
	}
	return col;
}

__attribute__((format(printf, 5, 6))) static int putf(struct sp_tv_grid *g, int r, int col, int attr,
						      const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return put(g, r, col, attr, buf);
}

static void fill_attr(struct sp_tv_grid *g, int r, int attr)
{
	if (r < 0 || r >= g->rows)
		return;
	for (int c = 0; c < g->cols; c++)
		g->c[r][c].attr = (unsigned char)attr;
}

size_t sp_tv_line(const struct sp_tv_grid *g, int r, char *buf, size_t n)
{
	size_t len = 0, keep = 0;
	if (n == 0)
		return 0;
	buf[0] = 0;
	if (r < 0 || r >= g->rows)
		return 0;
	for (int c = 0; c < g->cols; c++) {
		size_t l = strlen(g->c[r][c].g);
		if (len + l + 1 > n)
			break;
		memcpy(buf + len, g->c[r][c].g, l);
		len += l;
		if (strcmp(g->c[r][c].g, " ") != 0)
			keep = len;
	}
	buf[keep] = 0;
	return keep;
}

/* ---- history -------------------------------------------------------------------------- */

void sp_top_hist_init(struct sp_top_hist *h)
{
	memset(h, 0, sizeof *h);
}

void sp_top_hist_push(struct sp_top_hist *h, const struct sp_sample *s, const struct sp_spark *k)
{
	float v[SP_TS_N] = { NAN, NAN, NAN, NAN, NAN, NAN };
	if (s->mem.why == SP_OK) {
		v[SP_TS_FREE] = (float)s->mem.v[SP_MI_FREE];
		h->total_bytes = (double)s->mem.v[SP_MI_TOTAL];
	}
	const struct sp_gpu *g = s->gpu_status == SP_OK && s->ngpu > 0 ? &s->gpus[0] : NULL;
	if (g && sp_ok(g->temp_c.why))
		v[SP_TS_TEMP] = (float)g->temp_c.v;
	if (k && k->die_temp_ok)
		v[SP_TS_DIE] = (float)k->die_temp_c;
	if (g && sp_ok(g->power_mw.why)) {
		v[SP_TS_POWER] = (float)((double)g->power_mw.v / 1e3);
		if (sp_ok(g->power_limit_mw.why))
			h->power_ref_w = (double)g->power_limit_mw.v / 1e3;
	}
	if (k && k->sys_power_ok)
		v[SP_TS_SYS_POWER] = (float)k->sys_power_w;
	if (k && k->pl1_cap_ok && h->power_ref_w < k->pl1_cap_w)
		h->power_ref_w = k->pl1_cap_w;
	if (g && sp_ok(g->sm_clock_mhz.why))
		v[SP_TS_CLOCK] = (float)g->sm_clock_mhz.v;
	if (g && sp_ok(g->sm_clock_max_mhz.why))
		h->clock_ref_mhz = (double)g->sm_clock_max_mhz.v;
	for (int i = 0; i < SP_TS_N; i++)
		h->v[i][h->head] = v[i];
	h->head = (h->head + 1) % SP_TOP_HIST;
	if (h->n < SP_TOP_HIST)
		h->n++;
}

double sp_top_hist_get(const struct sp_top_hist *h, enum sp_top_series ser, int age)
{
	if (age < 0 || age >= h->n || ser < 0 || ser >= SP_TS_N)
		return NAN;
	int i = (h->head - 1 - age + 2 * SP_TOP_HIST) % SP_TOP_HIST;
	return h->v[ser][i];
}

/* The scale of a series over the newest `width` points. Fixed where the
 * physics gives one, so a flat line stays flat: free memory from 0 to the
 * pool, temperature from 40 to 100 C, power and clock from 0 to their cap
 * (or the highest point, when higher). */
static void spark_scale(const struct sp_top_hist *h, enum sp_top_series ser, int width, double *lo, double *hi)
{
	double mx = 0;
	for (int a = 0; a < width && a < h->n; a++) {
		double v = sp_top_hist_get(h, ser, a);
		if (!isnan(v) && v > mx)
			mx = v;
	}
	*lo = 0;
	switch (ser) {
	case SP_TS_FREE:
		*hi = h->total_bytes > 0 ? h->total_bytes : mx;
		break;
	case SP_TS_TEMP:
	case SP_TS_DIE:
		*lo = 40;
		*hi = mx > 100 ? mx : 100;
		break;
	case SP_TS_POWER:
	case SP_TS_SYS_POWER:
		*hi = h->power_ref_w > mx ? h->power_ref_w : mx;
		break;
	default:
		*hi = h->clock_ref_mhz > mx ? h->clock_ref_mhz : mx;
		break;
	}
	if (*hi <= *lo)
		*hi = *lo + 1;
}

void sp_top_spark(const struct sp_top_hist *h, enum sp_top_series ser, int width, bool ascii, char *buf, size_t n)
{
	static const char *const blocks[8] = { "\u2581", "\u2582", "\u2583", "\u2584",
					       "\u2585", "\u2586", "\u2587", "\u2588" };
	static const char plain[8] = { '_', '.', '-', '~', '=', '+', '*', '#' };
	double lo, hi;
	spark_scale(h, ser, width, &lo, &hi);
	size_t len = 0;
	if (n == 0)
		return;
	for (int c = 0; c < width; c++) {
		int age = width - 1 - c;
		double v = sp_top_hist_get(h, ser, age);
		char gl[4] = " ";
		if (!isnan(v)) {
			double f = (v - lo) / (hi - lo);
			int lvl = f <= 0 ? 0 : f >= 1 ? 7 : (int)(f * 8);
			if (lvl > 7)
				lvl = 7;
			if (ascii)
				gl[0] = plain[lvl], gl[1] = 0;
			else
				snprintf(gl, sizeof gl, "%s", blocks[lvl]);
		}
		size_t l = strlen(gl);
		if (len + l + 1 > n)
			break;
		memcpy(buf + len, gl, l);
		len += l;
	}
	buf[len] = 0;
}

/* ---- the sections -------------------------------------------------------------------------- */

const char *sp_top_sort_name(enum sp_top_sort k)
{
	static const char *const n[SP_TOP_SORT_N] = { "rss", "gpu", "pid", "kind", "container" };
	return k >= 0 && k < SP_TOP_SORT_N ? n[k] : "rss";
}

static double gib(uint64_t b)
{
	return (double)b / (1024.0 * 1024.0 * 1024.0);
}

static void title(struct sp_tv_grid *g, int r, const struct sp_topview_in *in)
{
	char clock[16] = "--:--:--", host[64];
	time_t t = (time_t)in->now_unix;
	struct tm tm;
	if (in->now_unix > 0 && localtime_r(&t, &tm))
		strftime(clock, sizeof clock, "%H:%M:%S", &tm);
	snprintf(host, sizeof host, "%s", in->host ? in->host : "");
	sp_text_clean(host);
	fill_attr(g, r, SP_TVA_TITLE);
	int c = putf(g, r, 0, SP_TVA_TITLE, " sparkops top  %s  %s  every %gs  #%ld", host, clock, in->interval_s,
		     in->samples);
	if (in->paused)
		c = put(g, r, c, SP_TVA_TITLE, "  PAUSED");
	if (in->s && sp_sample_is_uma(in->s) && c + 24 < g->cols)
		put(g, r, g->cols - 22, SP_TVA_TITLE, "unified memory pool ");
}

/* The pool: one bar (used | shmem | cache | free = budget + reserve), the
 * legend with figures, and the budget as `status` says it. */
static int pool(struct sp_tv_grid *g, int r, const struct sp_topview_in *in)
{
	const struct sp_sample *s = in->s;
	const struct sp_meminfo *m = &s->mem;
	char b1[32], b2[32], b3[32];
	int c = put(g, r, 0, SP_TVA_BOLD, "POOL ");
	if (m->why != SP_OK) {
		putf(g, r, c, SP_TVA_ALERT, "unknown: meminfo %s", sp_why_text(m->why));
		return r + 1;
	}
	struct sp_pool pm;
	sp_pool_from_sample(&pm, s);
	double total = (double)pm.total, fr = (double)pm.free;
	double cache = (double)pm.cache, shmem = (double)pm.shmem, used = (double)pm.used;
	double reserve = (double)s->budget.reserve;
	if (reserve > fr)
		reserve = fr;
	sp_fmt_gib(b1, sizeof b1, total);
	int w = g->cols - c - (int)strlen(b1) - 3;
	if (w > 4 && total > 0) {
		/* segment boundaries in cells, rounded from the running sums so the
		 * bar always spans exactly w cells */
		const double edge[5] = { used, used + shmem, used + cache, total - reserve, total };
		static const int attr[5] = { SP_TVA_USED, SP_TVA_SHMEM, SP_TVA_CACHE, SP_TVA_FREE, SP_TVA_DIM };
		static const char *const uni[5] = { "\u2588", "\u2593", "\u2592", "\u2591", "\u00b7" };
		static const char *const asc[5] = { "#", "%", "=", "-", "." };
		int x = c + 1, seg = 0;
		put(g, r, c, SP_TVA_NONE, in->ascii ? "[" : "\u2595");
		for (int i = 0; i < w; i++) {
			double mid = (i + 0.5) / w * total;
			while (seg < 4 && mid >= edge[seg])
				seg++;
			put(g, r, x + i, attr[seg], in->ascii ? asc[seg] : uni[seg]);
		}
		put(g, r, x + w, SP_TVA_NONE, in->ascii ? "]" : "\u258f");
		putf(g, r, x + w + 2, SP_TVA_BOLD, "%s", b1);
	} else {
		putf(g, r, c, SP_TVA_BOLD, "%s total", b1);
	}
	r++;
	/* the legend, most important first (a narrow screen cuts the tail) */
	c = 2;
	c = putf(g, r, c, SP_TVA_USED, "%s", in->ascii ? "#" : "\u2588");
	c = putf(g, r, c, SP_TVA_NONE, " used %.1f  ", gib((uint64_t)used));
	c = putf(g, r, c, SP_TVA_CACHE, "%s", in->ascii ? "=" : "\u2592");
	c = putf(g, r, c, SP_TVA_NONE, " cache %.1f  ", gib((uint64_t)cache));
	c = putf(g, r, c, SP_TVA_SHMEM, "%s", in->ascii ? "%" : "\u2593");
	c = putf(g, r, c, SP_TVA_NONE, " shmem %.1f  ", gib((uint64_t)shmem));
	c = putf(g, r, c, SP_TVA_FREE, "%s", in->ascii ? "-" : "\u2591");
	c = putf(g, r, c, SP_TVA_NONE, " free %.1f  ", gib((uint64_t)fr));
	c = putf(g, r, c, SP_TVA_DIM, "%s", in->ascii ? "." : "\u00b7");
	putf(g, r, c, SP_TVA_NONE, " reserve %.1f GiB", gib(s->budget.reserve));
	r++;
	/* the budget, in status's words and figures */
	c = put(g, r, 2, SP_TVA_BOLD, "budget ");
	if (sp_ok(s->budget.now.why)) {
		bool low = s->budget.now.v < SP_POOL_LOW_BUDGET;
		c = putf(g, r, c, low ? SP_TVA_ALERT : SP_TVA_GOOD, "now %s",
			 sp_fmt_gib(b1, sizeof b1, (double)s->budget.now.v));
		if (sp_ok(s->budget.after_flush.why))
			c = putf(g, r, c, SP_TVA_NONE, "   after flush %s (+%s)",
				 sp_fmt_gib(b2, sizeof b2, (double)s->budget.after_flush.v),
				 sp_fmt_gib(b3, sizeof b3, (double)s->budget.reclaimable.v));
		if (s->budget.cgroup_bound)
			c = put(g, r, c, SP_TVA_WARN, "  cgroup-bound");
	} else {
		c = put(g, r, c, SP_TVA_ALERT, "unknown");
	}
	/* contiguous free memory (/proc/buddyinfo): what the driver's large
	 * allocations need during a model load; under 1 GiB is a warning */
	if (sp_ok(s->contig.why))
		putf(g, r, c, s->contig.free_2mib < SP_POOL_LOW_CONTIG ? SP_TVA_WARN : SP_TVA_NONE, "   in 2MiB+ blocks %s",
		     sp_fmt_gib(b1, sizeof b1, (double)s->contig.free_2mib));
	else
		putf(g, r, c, SP_TVA_DIM, "   in 2MiB+ blocks: %s", sp_why_key(s->contig.why));
	return r + 1;
}

static const char *fmt_u64(char *buf, size_t n, struct sp_u64 f, double scale, int dec, const char *unit)
{
	if (!sp_ok(f.why))
		snprintf(buf, n, "%s", f.why == SP_NOT_SUPPORTED ? "N/A" : sp_why_key(f.why));
	else
		snprintf(buf, n, "%.*f%s", dec, (double)f.v / scale, unit);
	return buf;
}

static int gpu_one(struct sp_tv_grid *g, int r, const struct sp_gpu *x, bool stale, double age, bool ascii)
{
	char t[32], p[32], ck[32], cm[32], u[32], b1[32], b2[32], name[96];
	int base = stale ? SP_TVA_DIM : SP_TVA_NONE;
	snprintf(name, sizeof name, "%s", x->name);
	sp_text_clean(name);
	int c = putf(g, r, 0, SP_TVA_BOLD, "GPU%u ", x->index);
	c = putf(g, r, c, base, "%-12.12s ", name);
	bool hot = sp_ok(x->temp_c.why) && x->temp_c.v >= 85;
	c = putf(g, r, c, hot && !stale ? SP_TVA_ALERT : base, "%s", fmt_u64(t, sizeof t, x->temp_c, 1, 0, " C"));
	c = putf(g, r, c, base, "  %s  SM %s/%s", fmt_u64(p, sizeof p, x->power_mw, 1e3, 1, " W"),
		 fmt_u64(ck, sizeof ck, x->sm_clock_mhz, 1, 0, ""), fmt_u64(cm, sizeof cm, x->sm_clock_max_mhz, 1, 0, " MHz"));
	if (sp_ok(x->sm_clock_mhz.why) && sp_ok(x->sm_clock_max_mhz.why) && x->sm_clock_max_mhz.v > 0) {
		/* the clock against its max, 8 cells */
		double f = (double)x->sm_clock_mhz.v / (double)x->sm_clock_max_mhz.v;
		int fill = (int)lround(f * 8);
		c = put(g, r, c, base, " ");
		for (int i = 0; i < 8; i++)
			c = put(g, r, c, i < fill ? (stale ? SP_TVA_DIM : SP_TVA_SPARK) : SP_TVA_DIM,
				i < fill ? (ascii ? "#" : "\u2588") : (ascii ? "." : "\u2591"));
	}
	c = putf(g, r, c, base, "  util %s", fmt_u64(u, sizeof u, x->util_gpu_pct, 1, 0, "%"));
	if (stale)
		putf(g, r, c, SP_TVA_ALERT, "  STALE %.0fs", age);
	r++;
	/* the clock-event reasons lit, by name; time throttled */
	c = put(g, r, 2, SP_TVA_NONE, "");
	if (sp_ok(x->reasons.why)) {
		int lit = 0;
		for (int bit = 0; bit < 64; bit++) {
			if (!(x->reasons.v >> bit & 1))
				continue;
			const char *rn = sp_reason_name(bit);
			uint64_t m = 1ULL << bit;
			int a = stale ? SP_TVA_DIM
				: (m & (SP_REASON_SW_THERMAL | SP_REASON_HW_THERMAL | SP_REASON_HW_SLOWDOWN)) ? SP_TVA_ALERT
				: (m & (SP_REASON_SW_POWER_CAP | SP_REASON_HW_POWER_BRAKE)) ? SP_TVA_WARN
													   : base;
			c = putf(g, r, c, a, "%s%s", lit++ ? " " : "", rn ? rn : "unknown_reason");
		}
		if (!lit)
			c = put(g, r, c, SP_TVA_DIM, "no clock-event reason");
	} else {
		c = putf(g, r, c, SP_TVA_DIM, "reasons %s", sp_why_key(x->reasons.why));
	}
	if (sp_ok(x->viol_power_ns.why) || sp_ok(x->viol_thermal_ns.why))
		putf(g, r, c, base, "   throttled: power %s thermal %s",
		     sp_ok(x->viol_power_ns.why) ? sp_fmt_duration(b1, sizeof b1, (double)x->viol_power_ns.v / 1e9) : "N/A",
		     sp_ok(x->viol_thermal_ns.why) ? sp_fmt_duration(b2, sizeof b2, (double)x->viol_thermal_ns.v / 1e9) : "N/A");
	return r + 1;
}

static int gpus(struct sp_tv_grid *g, int r, int max_rows, const struct sp_topview_in *in)
{
	const struct sp_sample *s = in->s;
	char detail[160];
	snprintf(detail, sizeof detail, "%s", s->gpu_detail);
	sp_text_clean(detail);
	if (in->gpu_stale) {
		if (!in->gpu_last || in->gpu_last_n == 0) {
			int c = put(g, r, 0, SP_TVA_BOLD, "GPU  ");
			c = put(g, r, c, SP_TVA_ALERT, "STALE: the driver is not answering");
			if (detail[0])
				putf(g, r, c, SP_TVA_DIM, " (%s)", detail);
			return r + 1;
		}
		int end = r + max_rows;
		for (int i = 0; i < in->gpu_last_n && r + 2 <= end; i++)
			r = gpu_one(g, r, &in->gpu_last[i], true, in->gpu_stale_s, in->ascii);
		return r;
	}
	if (s->gpu_status != SP_OK || s->ngpu == 0) {
		int c = put(g, r, 0, SP_TVA_BOLD, "GPU  ");
		c = putf(g, r, c, s->gpu_status == SP_GPU_LOST ? SP_TVA_ALERT : SP_TVA_DIM, "%s",
			 sp_why_text(s->gpu_status == SP_OK ? SP_NO_GPU : s->gpu_status));
		if (detail[0])
			putf(g, r, c, SP_TVA_DIM, " (%s)", detail);
		return r + 1;
	}
	int end = r + max_rows;
	for (int i = 0; i < s->ngpu && r + 2 <= end; i++)
		r = gpu_one(g, r, &s->gpus[i], false, 0, in->ascii);
	return r;
}

static int spark_row(struct sp_tv_grid *g, int r, const struct sp_topview_in *in)
{
	const struct sp_spark *k = in->k;
	if (!k || !k->present)
		return r;
	int c = put(g, r, 0, SP_TVA_BOLD, "GB10 ");
	if (k->die_temp_ok)
		c = putf(g, r, c, k->die_temp_c >= 85 ? SP_TVA_ALERT : SP_TVA_NONE, "die %.1f C  ", k->die_temp_c);
	if (k->sys_power_ok)
		c = putf(g, r, c, SP_TVA_NONE, "system %.1f W  ", k->sys_power_w);
	if (k->pl1_ok && k->pl1_cap_ok)
		c = putf(g, r, c, k->at_pl1_cap ? SP_TVA_WARN : SP_TVA_NONE, "PL1 %.1f/%.0f W %.0f%%%s  ", k->pl1_w,
			 k->pl1_cap_w, k->pl1_pct, k->at_pl1_cap ? " at cap" : "");
	if (k->usb_pd_safety)
		putf(g, r, c, SP_TVA_ALERT, "USB-PD SAFETY MODE: PL1 cap %.0f W", k->pl1_cap_w);
	return r + 1;
}

static int history(struct sp_tv_grid *g, int r, int max_rows, const struct sp_topview_in *in)
{
	static const char *const label[SP_TS_N] = { "free ", "temp ", "power", "clock", "die  ", "sys W" };
	static const char *const unit[SP_TS_N] = { "", "C", "W", "MHz", "C", "W" };
	const struct sp_top_hist *h = in->h;
	int w = g->cols - 6 - 12;
	if (!h || w < 4)
		return r;
	char line[SP_TV_COLS_MAX * 3 + 1], val[32];
	for (int i = 0, shown = 0; i < SP_TS_N && shown < max_rows; i++) {
		/* GB10's own sensors get a row only when they have a point on screen */
		if (i >= SP_TS_DIE) {
			bool any = false;
			for (int a = 0; a < w && a < h->n && !any; a++)
				any = !isnan(sp_top_hist_get(h, (enum sp_top_series)i, a));
			if (!any)
				continue;
		}
		shown++;
		double v = sp_top_hist_get(h, (enum sp_top_series)i, 0);
		if (isnan(v))
			snprintf(val, sizeof val, "-");
		else if (i == SP_TS_FREE)
			sp_fmt_gib(val, sizeof val, v);
		else
			snprintf(val, sizeof val, "%.*f %s", i == SP_TS_POWER || i == SP_TS_SYS_POWER ? 1 : 0, v,
				 unit[i]);
		sp_top_spark(h, (enum sp_top_series)i, w, in->ascii, line, sizeof line);
		put(g, r, 0, SP_TVA_BOLD, label[i]);
		put(g, r, 6, SP_TVA_SPARK, line);
		putf(g, r, 6 + w + 1, SP_TVA_NONE, "%s", val);
		r++;
	}
	return r;
}

/* a resource's pressure colour: the pool model's PSI thresholds (status's too) */
static enum sp_tv_attr psi_attr(const struct sp_psi *p)
{
	if (p->full.ok)
		return p->full.avg10 >= SP_POOL_PSI_FULL_TROUBLE ? SP_TVA_ALERT
		       : p->some.avg10 >= SP_POOL_PSI_SOME_WARN  ? SP_TVA_WARN
								 : SP_TVA_NONE;
	return p->some.avg10 >= SP_POOL_PSI_SOME_ONLY_WARN ? SP_TVA_WARN : SP_TVA_NONE;
}

static int pressure(struct sp_tv_grid *g, int r, const struct sp_topview_in *in)
{
	int c = put(g, r, 0, SP_TVA_BOLD, "PSI  ");
	for (int i = 0; i < SP_PSI_N; i++) {
		const struct sp_psi *p = &in->s->psi[i];
		const char *n = sp_psi_res_name((enum sp_psi_res)i);
		if (p->why != SP_OK)
			c = putf(g, r, c, SP_TVA_DIM, "%s %s  ", n, sp_why_key(p->why));
		else if (p->full.ok)
			c = putf(g, r, c, psi_attr(p), "%s %.1f/%.1f%%  ", n, p->some.avg10, p->full.avg10);
		else
			c = putf(g, r, c, psi_attr(p), "%s %.1f%%  ", n, p->some.avg10);
	}
	put(g, r, c, SP_TVA_DIM, "(avg10 some/full)");
	return r + 1;
}

static int jobs(struct sp_tv_grid *g, int r, int max_rows, const struct sp_topview_in *in)
{
	char cmd[200], b1[32];
	for (int i = 0; i < in->njobs && i < max_rows; i++) {
		const struct sp_jobstat *j = &in->jobs[i];
		int c = put(g, r, 0, SP_TVA_BOLD, "JOB  ");
		snprintf(cmd, sizeof cmd, "%s", j->command[0] ? j->command : j->job_pid > 0 ? "(--pid)" : "(the machine)");
		sp_text_clean(cmd);
		c = putf(g, r, c, SP_TVA_NONE, "%s %d  %.40s  ", j->mode, j->pid, cmd);
		if (!isnan(j->rate)) {
			c = putf(g, r, c, SP_TVA_NONE, "%.3g %s", j->rate, j->unit);
			if (!isnan(j->baseline) && j->baseline > 0)
				c = putf(g, r, c, SP_TVA_DIM, " (base %.3g, %+.0f%%)", j->baseline,
					 (j->rate / j->baseline - 1) * 100);
			c = put(g, r, c, SP_TVA_NONE, "  ");
		}
		if (strcmp(j->cause, "none") != 0)
			c = putf(g, r, c, SP_TVA_ALERT, "slowdown: %s  ", j->cause);
		bool guard_acted = strcmp(j->guard, "ok") != 0 && strcmp(j->guard, "off") != 0;
		c = putf(g, r, c, guard_acted ? SP_TVA_ALERT : SP_TVA_NONE, "guard: %s",
			 j->guard);
		if (!isnan(j->job_rss_bytes))
			putf(g, r, c, SP_TVA_NONE, "  rss %s", sp_fmt_bytes(b1, sizeof b1, j->job_rss_bytes));
		r++;
	}
	return r;
}

static int cmp_rss(const void *a, const void *b)
{
	const struct sp_proc *x = *(const struct sp_proc *const *)a, *y = *(const struct sp_proc *const *)b;
	return x->rss_bytes < y->rss_bytes ? 1 : x->rss_bytes > y->rss_bytes ? -1 : x->pid - y->pid;
}
static int cmp_gpu(const void *a, const void *b)
{
	const struct sp_proc *x = *(const struct sp_proc *const *)a, *y = *(const struct sp_proc *const *)b;
	bool kx = sp_ok(x->gpu_mem.why), ky = sp_ok(y->gpu_mem.why);
	if (kx != ky)
		return kx ? -1 : 1;
	if (kx && x->gpu_mem.v != y->gpu_mem.v)
		return x->gpu_mem.v < y->gpu_mem.v ? 1 : -1;
	return cmp_rss(a, b);
}
static int cmp_pid(const void *a, const void *b)
{
	const struct sp_proc *x = *(const struct sp_proc *const *)a, *y = *(const struct sp_proc *const *)b;
	return x->pid - y->pid;
}
static int cmp_kind(const void *a, const void *b)
{
	const struct sp_proc *x = *(const struct sp_proc *const *)a, *y = *(const struct sp_proc *const *)b;
	return x->kind != y->kind ? (int)x->kind - (int)y->kind : cmp_rss(a, b);
}

static int cmp_container(const void *a, const void *b)
{
	const struct sp_proc *x = *(const struct sp_proc *const *)a, *y = *(const struct sp_proc *const *)b;
	int rx = x->ct.runtime != SP_CT_NONE ? 0 : x->ct.unit[0] ? 1 : 2;
	int ry = y->ct.runtime != SP_CT_NONE ? 0 : y->ct.unit[0] ? 1 : 2;
	if (rx != ry)
		return rx - ry;
	char lx[80], ly[80];
	int c = strcmp(sp_container_label(&x->ct, lx, sizeof lx), sp_container_label(&y->ct, ly, sizeof ly));
	return c ? c : cmp_rss(a, b);
}

static const char *kind_short(enum sp_proc_kind k)
{
	return k == SP_PROC_SERVER ? "server" : k == SP_PROC_TRAINER ? "trainer" : k == SP_PROC_GPU ? "gpu" : "other";
}

/* top's process list has a CONTAINER column from this width on */
#define SP_TV_CT_COLS 110

static int procs(struct sp_tv_grid *g, int r, int end, const struct sp_topview_in *in)
{
	const struct sp_sample *s = in->s;
	char b1[32], b2[32], b3[32], cap[40], name[40], cmd[200];
	int c = put(g, r, 0, SP_TVA_BOLD, "PROCESSES");
	putf(g, r, c, SP_TVA_DIM, " competing for the pool  sort: %s (s)", sp_top_sort_name(in->sort));
	r++;
	if (r >= end)
		return r;
	if (s->nprocs == 0) {
		put(g, r, 2, SP_TVA_DIM, "none recognised");
		return r + 1;
	}
	/* the CONTAINER column where it fits beside the CAP column and some of the command */
	bool ctcol = g->cols >= SP_TV_CT_COLS;
	putf(g, r, 0, SP_TVA_DIM, "%7s %-7s %-14s %-*s%s%9s %9s  %-16s %s", "PID", "KIND", "NAME", ctcol ? 16 : 0,
	     ctcol ? "CONTAINER" : "", ctcol ? " " : "", "RSS", "GPU MEM", "CAP", "COMMAND");
	r++;
	const struct sp_proc *order[SP_MAX_PROCS];
	int n = s->nprocs < SP_MAX_PROCS ? s->nprocs : SP_MAX_PROCS;
	for (int i = 0; i < n; i++)
		order[i] = &s->procs[i];
	static int (*const cmp[SP_TOP_SORT_N])(const void *, const void *) = { cmp_rss, cmp_gpu, cmp_pid, cmp_kind,
									    cmp_container };
	sp_sort(order, (size_t)n, sizeof(const struct sp_proc *), cmp[in->sort >= 0 && in->sort < SP_TOP_SORT_N ? in->sort : 0]);
	for (int i = 0; i < n && r < end; i++, r++) {
		const struct sp_proc *p = order[i];
		cap[0] = 0;
		if (p->has_cap && sp_cap_base_bytes(s, NULL) > 0)
			snprintf(cap, sizeof cap, "%.2f=%s%s", p->cap_frac,
				 sp_fmt_gib(b3, sizeof b3, p->cap_frac * sp_cap_base_bytes(s, NULL)),
				 p->cap_default ? " dflt" : "");
		snprintf(name, sizeof name, "%s", p->name);
		snprintf(cmd, sizeof cmd, "%s", p->cmdline);
		sp_text_clean(name);
		sp_text_clean(cmd);
		char ct[40];
		sp_container_label(&p->ct, ct, sizeof ct);
		sp_text_clean(ct);
		c = putf(g, r, 0, p->kind == SP_PROC_SERVER || p->kind == SP_PROC_TRAINER ? SP_TVA_NONE : SP_TVA_DIM,
			 "%7d %-7s %-14.14s %-*.*s%s%9s %9s  ", p->pid, kind_short(p->kind), name, ctcol ? 16 : 0,
			 ctcol ? 16 : 0, ct, ctcol ? " " : "",
			 sp_fmt_bytes(b1, sizeof b1, (double)p->rss_bytes),
			 sp_ok(p->gpu_mem.why) ? sp_fmt_bytes(b2, sizeof b2, (double)p->gpu_mem.v) : "-");
		c = putf(g, r, c, p->cap_default ? SP_TVA_WARN : SP_TVA_NONE, "%-16s ", cap);
		put(g, r, c, SP_TVA_DIM, cmd);
	}
	return r;
}

static void footer(struct sp_tv_grid *g, int r, const struct sp_topview_in *in)
{
	if (in->message && in->message[0]) {
		char m[300];
		snprintf(m, sizeof m, "%s", in->message);
		sp_text_clean(m);
		fill_attr(g, r, in->message_alert ? SP_TVA_ALERT : SP_TVA_TITLE);
		putf(g, r, 0, in->message_alert ? SP_TVA_ALERT : SP_TVA_TITLE, " %s", m);
		return;
	}
	int c = 0;
	static const char *const keys[][2] = {
		{ "q", "quit" }, { "s", "sort" }, { "p", "pause" }, { "f", "flush cache" }, { "h", "help" },
	};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		c = putf(g, r, c, SP_TVA_TITLE, " %s", keys[i][0]);
		c = putf(g, r, c, SP_TVA_NONE, " %s ", keys[i][1]);
	}
}

static void help(struct sp_tv_grid *g, int r, int end)
{
	static const char *const lines[] = {
		"sparkops top: the live view of a unified-memory machine",
		"",
		"  q          quit (the terminal is restored)",
		"  s          cycle the process sort: rss, gpu, pid, kind, container",
		"  p          pause / resume sampling",
		"  f          flush the page cache (root; asks y/n; shows what it freed)",
		"  h ?        this help; any key closes it",
		"",
		"POOL bar: used | shmem | page cache | free (budget, then the reserve)",
		"budget now = MemFree - reserve; after flush adds what a flush gives back",
		"STALE: the NVIDIA driver stopped answering; the last readings, dimmed",
		"PROCESSES: scanned every 2 s, up to 60 s when a scan is costly",
		"history: one column per sample; free 0..pool, temp 40..100 C,",
		"         power and clock 0..their cap",
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0] && r < end; i++, r++)
		put(g, r, 2, i == 0 ? SP_TVA_BOLD : SP_TVA_NONE, lines[i]);
}

void sp_topview_render(struct sp_tv_grid *g, int rows, int cols, const struct sp_topview_in *in)
{
	grid_clear(g, rows, cols);
	if (g->rows < SP_TV_MIN_ROWS || g->cols < SP_TV_MIN_COLS) {
		if (g->rows > 0)
			putf(g, 0, 0, SP_TVA_ALERT, "terminal too small (%dx%d); top needs %dx%d", cols, rows, SP_TV_MIN_COLS,
			     SP_TV_MIN_ROWS);
		if (g->rows > 1)
			put(g, 1, 0, SP_TVA_NONE, "q quits");
		return;
	}
	int last = g->rows - 1; /* the keys */
	title(g, 0, in);
	footer(g, last, in);
	if (in->help) {
		help(g, 2, last);
		return;
	}
	if (!in->s) {
		put(g, 2, 2, SP_TVA_DIM, "reading the machine...");
		return;
	}
	int r = 1;
	for (int i = 0; i < in->n_node_lines && r < last - 10; i++, r++)
		put(g, r, 0, i == 0 ? SP_TVA_BOLD : in->node_alert && in->node_alert[i] ? SP_TVA_ALERT : SP_TVA_NONE,
		    in->node_lines[i]);
	r = pool(g, r, in);
	/* what the rest needs at least: GB10 1, history 4, PSI 1, processes 2 */
	int spare = last - r - 8 - (in->njobs > 0 ? 1 : 0);
	int gpu_rows = spare > 2 ? spare - 1 : 2;
	if (gpu_rows > 2 * SP_MAX_GPUS)
		gpu_rows = 2 * SP_MAX_GPUS;
	r = gpus(g, r, gpu_rows, in);
	r = spark_row(g, r, in);
	/* a short screen keeps the first sparklines (free memory, temperature),
	 * never at the cost of the processes competing for the pool: below the
	 * sparklines stay PSI, a job row, and the process title, its column
	 * header and SP_TV_MIN_PROC_ROWS rows */
	r = history(g, r, last - r - 1 - (in->njobs > 0 ? 1 : 0) - 2 - SP_TV_MIN_PROC_ROWS, in);
	r = pressure(g, r, in);
	r = jobs(g, r, last - r - 2 > 0 ? last - r - 2 : 0, in);
	if (r < last)
		procs(g, r, last, in);
}
