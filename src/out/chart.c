// SPDX-License-Identifier: MIT
#include "out/chart.h"
#include "probe/poolmodel.h"
#include "util/text.h"
#include "util/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sp_chart_init(struct sp_chart *c, int ncols, double from, double to)
{
	memset(c, 0, sizeof *c);
	if (ncols < 16)
		ncols = 16;
	if (ncols > SP_CHART_MAX_COLS)
		ncols = SP_CHART_MAX_COLS;
	c->ncols = ncols;
	c->from = from;
	c->to = to;
	c->t_first = c->t_last = c->t_seen = c->prev_sample_t = c->interval = c->guard_floor = NAN;
	c->cells = calloc((size_t)SP_S_N * (size_t)ncols, sizeof *c->cells);
	if (!c->cells)
		return -1;
	for (int i = 0; i < 64; i++)
		c->open_idx[i] = -1;
	if (isfinite(from)) {
		c->t0 = from;
		c->origin_set = true;
		if (isfinite(to) && to > from) {
			c->w = (to - from) / ncols;
			c->fixed_width = true;
		}
	}
	if (!c->fixed_width)
		c->w = 1.0 / 1024; /* grows by doubling as rows arrive */
	return 0;
}

void sp_chart_release(struct sp_chart *c)
{
	free(c->cells);
	c->cells = NULL;
}

const struct sp_cell *sp_chart_cell(const struct sp_chart *c, enum sp_series s, int col)
{
	return &c->cells[(size_t)s * (size_t)c->ncols + (size_t)col];
}

static struct sp_cell *cell(struct sp_chart *c, int s, int col)
{
	return &c->cells[(size_t)s * (size_t)c->ncols + (size_t)col];
}

int sp_iso_offset(const char *iso, long *offset_s)
{
	size_t n = strlen(iso);
	if (n >= 1 && (iso[n - 1] == 'Z' || iso[n - 1] == 'z')) {
		*offset_s = 0;
		return 0;
	}
	if (n < 6)
		return -1;
	const char *p = iso + n - 6;
	if ((p[0] != '+' && p[0] != '-') || p[3] != ':')
		return -1;
	for (int i = 1; i < 6; i++)
		if (i != 3 && (p[i] < '0' || p[i] > '9'))
			return -1;
	int hh = (p[1] - '0') * 10 + (p[2] - '0'), mm = (p[4] - '0') * 10 + (p[5] - '0');
	if (hh > 23 || mm > 59)
		return -1;
	*offset_s = (p[0] == '-' ? -1 : 1) * (hh * 3600L + mm * 60L);
	return 0;
}

/* Double the column width: columns 2i and 2i+1 become column i (with an odd
 * count the last column has no partner and moves alone). */
static void widen(struct sp_chart *c)
{
	int n = c->ncols, half = (n + 1) / 2;
	const struct sp_cell none = { 0, 0, 0 };
	for (int s = 0; s < SP_S_N; s++) {
		for (int i = 0; i < half; i++) {
			struct sp_cell a = *cell(c, s, 2 * i), b = 2 * i + 1 < n ? *cell(c, s, 2 * i + 1) : none, m;
			if (!(a.flags & SP_CELL_HAS)) {
				m = b;
			} else if (!(b.flags & SP_CELL_HAS)) {
				m = a;
			} else {
				m = a; /* a break inside one column is below a pixel: keep a's */
				m.min = fminf(a.min, b.min);
				m.max = fmaxf(a.max, b.max);
			}
			*cell(c, s, i) = m;
		}
		for (int i = half; i < n; i++)
			memset(cell(c, s, i), 0, sizeof(struct sp_cell));
	}
	c->w *= 2;
}

/* *col: the row's column, found (and the chart widened for it) by the
 * row's first finite value; -1 before that */
static void put(struct sp_chart *c, int s, double t, double v, int *col)
{
	if (!isfinite(v)) {
		c->pending_break[s] = true;
		return;
	}
	if (*col < 0) {
		double fi = floor((t - c->t0) / c->w);
		if (fi < 0)
			fi = 0;
		if (c->fixed_width && fi >= c->ncols)
			fi = c->ncols - 1;
		while (fi >= c->ncols) {
			widen(c);
			fi = floor((t - c->t0) / c->w);
		}
		*col = (int)fi;
	}
	struct sp_cell *x = cell(c, s, *col);
	float f = (float)v;
	if (!(x->flags & SP_CELL_HAS)) {
		x->min = x->max = f;
		x->flags |= SP_CELL_HAS;
		if (c->pending_break[s])
			x->flags |= SP_CELL_BREAK;
	} else {
		x->min = fminf(x->min, f);
		x->max = fmaxf(x->max, f);
	}
	c->pending_break[s] = false;
}

static void add_sample(struct sp_chart *c, const struct sp_logrow *r)
{
	double t = r->unix_time;
	/* a hole in the sampling (the machine slept, watch was restarted) is a gap */
	if (isfinite(c->prev_sample_t)) {
		double dt = t - c->prev_sample_t;
		if (dt > 0 && (isnan(c->interval) || dt < c->interval))
			c->interval = dt;
		if (isfinite(c->interval) && dt > 4 * c->interval && dt > 2.0)
			for (int s = 0; s < SP_S_N; s++)
				c->pending_break[s] = true;
	}
	c->prev_sample_t = t;
	double gib = (double)SP_GiB;
	int col = -1;
	/* the pool model's used (status's, top's, the summary's): page cache apart */
	put(c, SP_S_USED, t, sp_pool_used_of(r->mem_total, r->mem_free, r->page_cache) / gib, &col);
	put(c, SP_S_TOTAL, t, r->mem_total / gib, &col);
	put(c, SP_S_BUDGET, t, r->budget_now / gib, &col);
	put(c, SP_S_GPU_TEMP, t, r->gpu_temp_c, &col);
	put(c, SP_S_SOC_TEMP, t, r->soc_temp_c, &col);
	put(c, SP_S_GPU_POWER, t, r->gpu_power_w, &col);
	put(c, SP_S_SYS_POWER, t, r->sys_power_w, &col);
	put(c, SP_S_PL1, t, r->pl1_w, &col);
	put(c, SP_S_PL1_CAP, t, r->pl1_cap_w, &col);
	put(c, SP_S_SM_CLOCK, t, r->gpu_sm_clock_mhz, &col);
	put(c, SP_S_THROUGHPUT, t, r->throughput, &col);
	put(c, SP_S_CONTIG, t, r->free_2mib / gib, &col);
	put(c, SP_S_PSI_MEM, t, r->psi_mem_some, &col);
	put(c, SP_S_PSI_CPU, t, r->psi_cpu_some, &col);
	put(c, SP_S_PSI_IO, t, r->psi_io_some, &col);
	if (isfinite(r->throughput) && r->throughput_unit[0])
		sp_text_copy(c->throughput_unit, sizeof c->throughput_unit, r->throughput_unit);
}

/* ---- reason intervals ---------------------------------------------------------- */

static void compact(struct sp_chart *c)
{
	int last[64];
	for (int i = 0; i < 64; i++)
		last[i] = -1;
	int n = 0;
	for (int i = 0; i < c->n_iv; i++) {
		struct sp_interval v = c->iv[i];
		int l = last[v.reason];
		if (l >= 0 && isfinite(c->iv[l].end) && v.start - c->iv[l].end <= c->iv_merge_gap) {
			c->iv[l].end = v.end;
			continue;
		}
		c->iv[n] = v;
		last[v.reason] = n++;
	}
	c->n_iv = n;
	for (int b = 0; b < 64; b++)
		c->open_idx[b] = (c->reason_state >> b & 1) ? last[b] : -1;
}

static void reason_on(struct sp_chart *c, int b, double t)
{
	if (c->reason_state >> b & 1)
		return;
	c->reason_state |= 1ULL << b;
	/* rejoin the reason's previous interval when the gap is below the merge gap */
	for (int i = c->n_iv - 1; i >= 0; i--) {
		if (c->iv[i].reason != b)
			continue;
		if (isfinite(c->iv[i].end) && t - c->iv[i].end <= c->iv_merge_gap && c->iv_merge_gap > 0) {
			c->iv[i].end = NAN;
			c->open_idx[b] = i;
			return;
		}
		break;
	}
	while (c->n_iv >= SP_CHART_MAX_INTERVALS) {
		double span = isfinite(c->t_first) ? c->t_last - c->t_first : 0;
		double g = span / c->ncols;
		c->iv_merge_gap = c->iv_merge_gap > 0 ? c->iv_merge_gap * 2 : (g > 1 ? g : 1);
		compact(c);
	}
	c->iv[c->n_iv] = (struct sp_interval){ t, NAN, b };
	c->open_idx[b] = c->n_iv++;
}

static void reason_off(struct sp_chart *c, int b, double t)
{
	if (!(c->reason_state >> b & 1))
		return;
	c->reason_state &= ~(1ULL << b);
	int i = c->open_idx[b];
	if (i >= 0 && i < c->n_iv)
		c->iv[i].end = t;
	c->open_idx[b] = -1;
}

static void reasons_from_mask(struct sp_chart *c, uint64_t mask, double t)
{
	mask &= SP_CHART_THROTTLE_MASK;
	for (int b = 0; b < 64; b++) {
		if (!(SP_CHART_THROTTLE_MASK >> b & 1))
			continue;
		if (mask >> b & 1)
			reason_on(c, b, t);
		else
			reason_off(c, b, t);
	}
}

static int reason_bit(const char *name)
{
	char w[48];
	if (sscanf(name, "%47s", w) != 1)
		return -1;
	for (int b = 0; b < 64; b++) {
		const char *n = sp_reason_name(b);
		if (n && strcmp(n, w) == 0)
			return b;
	}
	return -1;
}

/* ---- marks ------------------------------------------------------------------------- */

static void add_mark(struct sp_chart *c, double t, enum sp_mark_kind k, const char *label)
{
	if (c->n_marks >= SP_CHART_MAX_MARKS) {
		c->marks_dropped++;
		return;
	}
	struct sp_mark *m = &c->marks[c->n_marks++];
	m->t = t;
	m->kind = k;
	snprintf(m->label, sizeof m->label, "%s", label);
}

static bool in_window(const struct sp_chart *c, double t)
{
	return (isnan(c->from) || t >= c->from) && (isnan(c->to) || t <= c->to);
}

static void add_event(struct sp_chart *c, const struct sp_logrow *r, bool in)
{
	double t = r->unix_time;
	const char *e = r->event;
	if (strcmp(e, SP_EV_REASON_ON) == 0 || strcmp(e, SP_EV_REASON_OFF) == 0) {
		int b = reason_bit(r->detail);
		if (b >= 0 && (SP_CHART_THROTTLE_MASK >> b & 1)) {
			if (e[7] == 'o' && e[8] == 'n')
				reason_on(c, b, t);
			else
				reason_off(c, b, t);
		}
		return;
	}
	if (!in)
		return;
	char label[SP_CHART_LABEL], v[64];
	if (strncmp(e, "guard_", 6) == 0) {
		uint64_t fl;
		/* floor_bytes=N (what the engine writes) or floor=2GiB (older logs) */
		bool have = sp_detail_get(r->detail, "floor_bytes", v, sizeof v) ||
			    sp_detail_get(r->detail, "floor", v, sizeof v);
		if (have && sp_parse_size(v, &fl) == 0 && fl > 0)
			c->guard_floor = (double)fl;
		snprintf(label, sizeof label, "guard %s", e + 6);
		add_mark(c, t, SP_MARK_GUARD, label);
	} else if (strcmp(e, SP_EV_EXIT) == 0) {
		char by[24] = "exit";
		sp_detail_get(r->detail, "ended_by", by, sizeof by);
		if (sp_detail_get(r->detail, "signal", v, sizeof v))
			snprintf(label, sizeof label, "end: %s (signal %s)", by, v);
		else if (sp_detail_get(r->detail, "exit_code", v, sizeof v))
			snprintf(label, sizeof label, "end: %s (code %s)", by, v);
		else
			snprintf(label, sizeof label, "end: %s", by);
		add_mark(c, t, SP_MARK_EXIT, label);
	} else if (strcmp(e, SP_EV_PROCESS) == 0) {
		char name[48] = "?";
		sp_detail_get(r->detail, "name", name, sizeof name);
		snprintf(label, sizeof label, "+ %s", name);
		add_mark(c, t, SP_MARK_PROCESS, label);
	} else if (strcmp(e, SP_EV_GPU_LOST) == 0) {
		snprintf(label, sizeof label, "GPU unavailable %.60s", r->detail);
		add_mark(c, t, SP_MARK_GPU, label);
	}
}

void sp_chart_add_row(struct sp_chart *c, const struct sp_logrow *r)
{
	double t = r->unix_time;
	if (!isfinite(t))
		return;
	if (!c->tz_set) {
		c->tz_set = true;
		if (sp_iso_offset(r->time_iso, &c->tz_offset_s) < 0)
			c->tz_offset_s = 0;
		long o = c->tz_offset_s < 0 ? -c->tz_offset_s : c->tz_offset_s;
		snprintf(c->tz, sizeof c->tz, "%c%02ld:%02ld", c->tz_offset_s < 0 ? '-' : '+', o / 3600 % 100,
			 o / 60 % 60);
	}
	if (isnan(c->t_seen) || t > c->t_seen)
		c->t_seen = t;
	bool in = in_window(c, t);
	if (in) {
		if (!c->origin_set) {
			c->t0 = t;
			c->origin_set = true;
		}
		if (isnan(c->t_first))
			c->t_first = t;
		if (isnan(c->t_last) || t > c->t_last)
			c->t_last = t;
		c->rows_in_window++;
	}
	if (r->type == SP_ROW_EVENT) {
		add_event(c, r, in);
		return;
	}
	if (r->gpu_reasons_ok)
		reasons_from_mask(c, r->gpu_reasons, t);
	if (in && t >= c->t0)
		add_sample(c, r);
}

void sp_chart_finish(struct sp_chart *c)
{
	/* a reason still on at the end lasted to the log's last row */
	for (int i = 0; i < c->n_iv; i++)
		if (isnan(c->iv[i].end))
			c->iv[i].end = c->t_seen;
}

void sp_chart_add_train(struct sp_chart *c, double t, const char *label)
{
	if (!in_window(c, t))
		return;
	if (c->n_train >= SP_CHART_MAX_TRAIN) {
		c->train_dropped++;
		return;
	}
	struct sp_mark *m = &c->train[c->n_train++];
	m->t = t;
	m->kind = SP_MARK_TRAIN;
	snprintf(m->label, sizeof m->label, "%s", label);
}
