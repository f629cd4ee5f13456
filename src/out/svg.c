// SPDX-License-Identifier: MIT
#include "out/svg.h"
#include "out/xml.h"
#include "util/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ML 70   /* left margin: y tick labels */
#define MR 24
#define MT 58   /* title and shading legend */
#define MB 48   /* time axis labels */
#define PHEAD 24 /* panel header: title and legend */
#define PGAP 10
#define NPANELS 6 /* at most: panels without data fold into one line of text */
#define FONT "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"

int sp_svg_plot_width(int width)
{
	return width - ML - MR;
}

struct geo {
	double x0, x1, ta, tb;
	double top[NPANELS], bot[NPANELS];
	int np;           /* panels drawn */
	int pid[NPANELS]; /* which panel (of panels[]) each drawn slot is */
	long off; /* the log's UTC offset: wall-clock labels as the log wrote them */
};

static double X(const struct geo *g, double t)
{
	return g->x0 + (t - g->ta) / (g->tb - g->ta) * (g->x1 - g->x0);
}

static double clampd(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* ---- panels ------------------------------------------------------------------------------ */

struct line_style {
	enum sp_series s;
	const char *name;
	const char *color;
	const char *dash; /* NULL solid */
};

struct panel {
	const char *id, *title, *unit;
	struct line_style ls[4];
	int nls;
	bool zero_based;
};

static const struct panel panels[NPANELS] = {
	{ "pool", "pool", "GiB",
	  { { SP_S_USED, "used", "#1f77b4", NULL },
	    { SP_S_TOTAL, "total", "#555555", "6 3" },
	    { SP_S_BUDGET, "budget (new job)", "#2ca02c", NULL },
	    { SP_S_CONTIG, "free in 2 MiB+ blocks", "#bcbd22", "2 2" } }, 4, true },
	{ "pressure", "pressure (PSI some, avg10)", "%",
	  { { SP_S_PSI_MEM, "memory", "#1f77b4", NULL },
	    { SP_S_PSI_CPU, "cpu", "#ff7f0e", NULL },
	    { SP_S_PSI_IO, "io", "#2ca02c", NULL } }, 3, true },
	{ "temp", "temperature", "\xC2\xB0" "C",
	  { { SP_S_GPU_TEMP, "GPU", "#d62728", NULL }, { SP_S_SOC_TEMP, "SoC (acpitz)", "#ff7f0e", NULL } }, 2, false },
	{ "power", "power", "W",
	  { { SP_S_GPU_POWER, "GPU", "#9467bd", NULL },
	    { SP_S_SYS_POWER, "system", "#8c564b", NULL },
	    { SP_S_PL1, "PL1", "#e377c2", NULL },
	    { SP_S_PL1_CAP, "PL1 cap", "#e377c2", "6 3" } }, 4, true },
	{ "clock", "SM clock", "MHz", { { SP_S_SM_CLOCK, "GPU 0", "#17becf", NULL } }, 1, true },
	{ "throughput", "throughput", "", { { SP_S_THROUGHPUT, "job", "#1f77b4", NULL } }, 1, true },
};

static double nice_step(double raw)
{
	if (!(raw > 0))
		return 1;
	double p = pow(10, floor(log10(raw)));
	double m = raw / p;
	double k = m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10;
	return k * p;
}

struct yscale {
	double lo, hi, step;
	bool has;
};

static bool series_has(const struct sp_chart *c, enum sp_series s)
{
	for (int i = 0; i < c->ncols; i++)
		if (sp_chart_cell(c, s, i)->flags & SP_CELL_HAS)
			return true;
	return false;
}

static struct yscale y_range(const struct sp_chart *c, const struct panel *p)
{
	struct yscale y = { 0, 1, 0.25, false };
	double lo = INFINITY, hi = -INFINITY;
	for (int k = 0; k < p->nls; k++)
		for (int i = 0; i < c->ncols; i++) {
			const struct sp_cell *x = sp_chart_cell(c, p->ls[k].s, i);
			if (!(x->flags & SP_CELL_HAS))
				continue;
			lo = fmin(lo, x->min);
			hi = fmax(hi, x->max);
		}
	if (!isfinite(lo))
		return y;
	y.has = true;
	if (p->zero_based && lo >= 0)
		lo = 0;
	else
		lo -= (hi - lo) * 0.1 + 1;
	hi += (hi - lo) * 0.08;
	if (hi <= lo)
		hi = lo + 1;
	y.step = nice_step((hi - lo) / 4);
	y.lo = floor(lo / y.step) * y.step;
	y.hi = ceil(hi / y.step) * y.step;
	if (y.hi <= y.lo)
		y.hi = y.lo + y.step;
	return y;
}

static double Y(const struct geo *g, int pi, const struct yscale *y, double v)
{
	return g->bot[pi] - (v - y->lo) / (y->hi - y->lo) * (g->bot[pi] - g->top[pi]);
}

/* ---- series: min/max columns as one path, gaps as new subpaths -------------------------- */

struct pt {
	float x, y;
	bool move;
};

static void emit_path(FILE *f, struct pt *p, int n, const struct line_style *ls)
{
	if (n == 0)
		return;
	fprintf(f, "<path class=\"series\" data-series=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.3\"", ls->name,
		ls->color);
	if (ls->dash)
		fprintf(f, " stroke-dasharray=\"%s\"", ls->dash);
	fputs(" stroke-linejoin=\"round\" d=\"", f);
	for (int i = 0; i < n; i++) {
		/* drop the middle of a flat run: the line looks the same, the file is smaller */
		if (!p[i].move && i > 0 && i + 1 < n && !p[i + 1].move && !p[i - 1].move && fabsf(p[i].y - p[i - 1].y) < 0.05f &&
		    fabsf(p[i].y - p[i + 1].y) < 0.05f)
			continue;
		if (p[i].move) {
			fprintf(f, "%sM%.1f %.1f", i ? " " : "", p[i].x, p[i].y);
			/* a lone column still shows as a dot-sized stroke */
			if (i + 1 == n || p[i + 1].move)
				fprintf(f, "h1");
		} else {
			fprintf(f, " %.1f %.1f", p[i].x, p[i].y);
		}
	}
	fputs("\"/>\n", f);
}

static void draw_series(FILE *f, const struct sp_chart *c, const struct geo *g, int pi, const struct yscale *y,
			const struct line_style *ls, struct pt *buf)
{
	int n = 0;
	bool pen = false;
	double lasty = NAN;
	for (int i = 0; i < c->ncols; i++) {
		const struct sp_cell *x = sp_chart_cell(c, ls->s, i);
		if (!(x->flags & SP_CELL_HAS))
			continue;
		double t = c->t0 + (i + 0.5) * c->w;
		float px = (float)clampd(X(g, t), g->x0, g->x1);
		float ymin = (float)Y(g, pi, y, x->min), ymax = (float)Y(g, pi, y, x->max);
		if (x->flags & SP_CELL_BREAK)
			pen = false;
		float first = ymin, second = ymax;
		if (isfinite(lasty) && fabs(lasty - ymax) < fabs(lasty - ymin)) {
			first = ymax;
			second = ymin;
		}
		buf[n++] = (struct pt){ px, first, !pen };
		if (fabsf(ymin - ymax) >= 0.05f)
			buf[n++] = (struct pt){ px, second, false };
		lasty = buf[n - 1].y;
		pen = true;
	}
	emit_path(f, buf, n, ls);
}

/* ---- time axis ------------------------------------------------------------------------- */

static const double tsteps[] = { 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800,
				 21600, 43200, 86400, 172800, 604800, 1209600, 2419200 };

static void local_tm(const struct geo *g, double t, struct tm *tm)
{
	time_t l = (time_t)floor(t + (double)g->off);
	gmtime_r(&l, tm);
}

static void time_axis(FILE *f, const struct geo *g, const char *tz)
{
	double span = g->tb - g->ta;
	double maxticks = (g->x1 - g->x0) / 95;
	double step = tsteps[sizeof tsteps / sizeof tsteps[0] - 1];
	for (size_t i = 0; i < sizeof tsteps / sizeof tsteps[0]; i++)
		if (span / tsteps[i] <= maxticks) {
			step = tsteps[i];
			break;
		}
	struct tm a, b;
	local_tm(g, g->ta, &a);
	local_tm(g, g->tb, &b);
	bool days = a.tm_yday != b.tm_yday || a.tm_year != b.tm_year;
	double first = ceil((g->ta + (double)g->off) / step) * step - (double)g->off;
	double ybot = g->bot[g->np - 1];
	int prev_yday = -1;
	fprintf(f, "<g id=\"time-axis\" font-size=\"11\" fill=\"#333\" text-anchor=\"middle\">\n");
	for (int k = 0; k < 1000; k++) {
		double t = first + k * step;
		if (t > g->tb + 1e-6)
			break;
		double x = X(g, t);
		struct tm tm;
		local_tm(g, t, &tm);
		char lab[16], date[16];
		strftime(lab, sizeof lab, step < 60 ? "%H:%M:%S" : "%H:%M", &tm);
		for (int p = 0; p < g->np; p++)
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>", x, g->top[p], x,
				g->bot[p]);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>", x, ybot, x, ybot + 4);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>", x, ybot + 16, lab);
		if (days && tm.tm_yday != prev_yday) {
			strftime(date, sizeof date, "%b %d", &tm);
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">%s</text>", x, ybot + 29, date);
		}
		prev_yday = tm.tm_yday;
		fputc('\n', f);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">local time (UTC%s)</text>\n", g->x1, ybot + 42, tz);
	fprintf(f, "</g>\n");
}

/* ---- shading and marks ----------------------------------------------------------------- */

static bool thermal_bit(int b)
{
	return b == 3 || b == 5 || b == 6; /* hw_slowdown, sw/hw thermal */
}

struct lane {
	double end; /* x where the last label ended */
};

static bool lane_take(struct lane *l, double x, size_t chars)
{
	if (x < l->end)
		return false;
	l->end = x + 6.2 * (double)chars + 8;
	return true;
}

static void shade_reasons(FILE *f, const struct sp_chart *c, const struct geo *g, struct lane *lane)
{
	double ytop = g->top[0], ybot = g->bot[g->np - 1];
	fprintf(f, "<g id=\"reasons\">\n");
	for (int b = 0; b < 64; b++) {
		if (!(SP_CHART_THROTTLE_MASK >> b & 1))
			continue;
		const char *name = sp_reason_name(b);
		const char *col = thermal_bit(b) ? "#d62728" : "#ff7f0e";
		/* the power cap is on for most of a GB10 run: a quieter tint */
		const char *op = thermal_bit(b) ? "0.16" : "0.08";
		/* merge what would touch on screen: one rect per visible interval */
		double cs = NAN, ce = NAN, xs = 0, xe = 0;
		for (int i = 0; i <= c->n_iv; i++) {
			const struct sp_interval *v = i < c->n_iv ? &c->iv[i] : NULL;
			double s = 0, e = 0, a = 0, z = 0;
			bool take = false;
			if (v && v->reason == b && v->end >= g->ta && v->start <= g->tb) {
				s = v->start;
				e = v->end;
				a = X(g, fmax(s, g->ta));
				z = X(g, fmin(e, g->tb));
				take = true;
				if (isfinite(cs) && a <= xe + 1) {
					ce = fmax(ce, e);
					xe = fmax(xe, z);
					continue;
				}
			}
			if (!v || take) {
				if (isfinite(cs)) {
					double wpx = fmax(xe - xs, 1);
					fprintf(f,
						"<rect class=\"shade reason\" data-reason=\"%s\" data-start=\"%.3f\" data-end=\"%.3f\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"%s\"><title>%s</title></rect>\n",
						name, cs, ce, xs, ytop, wpx, ybot - ytop, col, op, name);
					if (wpx >= 24 && xs + 2 + 6.2 * (double)strlen(name) <= g->x1 &&
					    lane_take(lane, xs + 2, strlen(name)))
						fprintf(f, "<text class=\"shade-label\" x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">%s</text>\n",
							xs + 2, ytop + 22, col, name);
				}
				if (take) {
					cs = s;
					ce = e;
					xs = a;
					xe = z;
				}
			}
		}
	}
	fprintf(f, "</g>\n");
}

/* An episode's label goes in the top row; when an earlier label holds that
 * spot it takes the row below (shared with the throttle labels, so neither
 * covers the other), then a third; when all are taken the label is left to
 * the tooltip. */
static void shade_episodes(FILE *f, const struct sp_summary *s, const struct geo *g, struct lane *row2)
{
	double ytop = g->top[0], ybot = g->bot[g->np - 1];
	struct lane lane = { -1e9 }, row3 = { -1e9 };
	fprintf(f, "<g id=\"episodes\">\n");
	for (int i = 0; i < s->n_episodes; i++) {
		const struct sp_episode *e = &s->episodes[i];
		double end = isfinite(e->end) ? e->end : s->t_last;
		if (end < g->ta || e->start > g->tb)
			continue;
		double a = X(g, fmax(e->start, g->ta)), z = X(g, fmin(end, g->tb));
		char lab[96], cause[80];
		sp_xml_escape(cause, sizeof cause, e->cause, sizeof e->cause);
		if (isfinite(e->drop_pct))
			snprintf(lab, sizeof lab, "slowdown: %s -%.0f%%", cause, e->drop_pct);
		else
			snprintf(lab, sizeof lab, "slowdown: %s", cause);
		char ev[400];
		sp_xml_escape(ev, sizeof ev, e->evidence, sizeof e->evidence);
		fprintf(f,
			"<rect class=\"shade episode\" data-cause=\"%s\" data-start=\"%.3f\" data-end=\"%.3f\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"url(#hatch)\" stroke=\"#7b3fa0\" stroke-opacity=\"0.5\"><title>%s%s%s</title></rect>\n",
			cause, e->start, end, a, ytop, fmax(z - a, 1), ybot - ytop, lab, ev[0] ? ": " : "", ev);
		size_t chars = strlen(lab);
		double ly = NAN;
		if (lane_take(&lane, a + 2, chars))
			ly = ytop + 11;
		else if (lane_take(row2, a + 2, chars))
			ly = ytop + 22;
		else if (lane_take(&row3, a + 2, chars))
			ly = ytop + 33;
		if (isfinite(ly))
			fprintf(f, "<text class=\"shade-label\" x=\"%.1f\" y=\"%.1f\" font-size=\"10\" font-weight=\"bold\" fill=\"#5b2c80\">%s</text>\n",
				a + 2, ly, lab);
	}
	fprintf(f, "</g>\n");
}

static const char *mark_class(enum sp_mark_kind k)
{
	switch (k) {
	case SP_MARK_GUARD: return "guard";
	case SP_MARK_EXIT: return "exit";
	case SP_MARK_PROCESS: return "process";
	case SP_MARK_GPU: return "gpu";
	case SP_MARK_TRAIN: return "train";
	}
	return "mark";
}

static const char *mark_color(enum sp_mark_kind k)
{
	switch (k) {
	case SP_MARK_GUARD: return "#c00000";
	case SP_MARK_EXIT: return "#000000";
	case SP_MARK_PROCESS: return "#0b6e4f";
	case SP_MARK_GPU: return "#c00000";
	case SP_MARK_TRAIN: return "#777777";
	}
	return "#000";
}

/* Vertical lines through all panels; labels run up along the line, in the
 * first panel (run events) or the last (training log), when there is room. */
static void draw_marks(FILE *f, const struct sp_mark *m, int n, const struct geo *g, bool train)
{
	double ytop = g->top[0], ybot = g->bot[g->np - 1];
	double last_x[NPANELS];
	for (int p = 0; p < NPANELS; p++)
		last_x[p] = -1e9;
	/* a label may run on through the next panel: it sits on its own line */
	size_t maxchars = (size_t)((g->bot[g->np > 1 ? 1 : 0] - g->top[0] - 8) / 5.6);
	if (maxchars > SP_CHART_LABEL)
		maxchars = SP_CHART_LABEL;
	fprintf(f, "<g id=\"%s\">\n", train ? "training-marks" : "marks");
	for (int i = 0; i < n; i++) {
		if (m[i].t < g->ta || m[i].t > g->tb)
			continue;
		double x = X(g, m[i].t);
		char full[SP_CHART_LABEL * 6 + 8], shown[SP_CHART_LABEL * 6 + 8];
		sp_xml_escape(full, sizeof full, m[i].label, sizeof m[i].label);
		sp_xml_escape(shown, sizeof shown, m[i].label, maxchars);
		fprintf(f, "<g class=\"mark %s\" data-t=\"%.3f\"><title>%s</title>", mark_class(m[i].kind), m[i].t, full);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\"%s/>", x, ytop, x,
			ybot, mark_color(m[i].kind), train ? "0.8" : "1.4", train ? " stroke-dasharray=\"3 3\"" : "");
		/* run events label in the top panels, training lines in the bottom ones;
		 * a mark too close to the last label in one panel tries the next */
		for (int k = 0; k < 3 && k < g->np; k++) {
			int pi = train ? g->np - 1 - k : k;
			if (x - last_x[pi] < 12)
				continue;
			/* run events hang from the top of a panel, training lines stand
			 * on the bottom of one (reading upwards along the line) */
			double ty = train ? g->bot[pi] - 4 : g->top[pi] + 4;
			fprintf(f,
				"<text x=\"%.1f\" y=\"%.1f\" transform=\"rotate(-90 %.1f %.1f)\" text-anchor=\"%s\" font-size=\"10\" fill=\"%s\">%s</text>",
				x - 3, ty, x - 3, ty, train ? "start" : "end", mark_color(m[i].kind), shown);
			last_x[pi] = x;
			break;
		}
		fputs("</g>\n", f);
	}
	fprintf(f, "</g>\n");
}

/* ---- the whole picture ------------------------------------------------------------------ */

static void fmt_tick(char *b, size_t n, double v, double step)
{
	int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	if (dec > 6)
		dec = 6;
	if (step < 1 && fabs(step * pow(10, dec) - round(step * pow(10, dec))) > 1e-6)
		dec++;
	snprintf(b, n, "%.*f", dec, v);
}

static void legend_item(FILE *f, double *x, double y, const char *color, const char *dash, const char *name)
{
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s%s%s/>", *x, y - 4,
		*x + 16, y - 4, color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", *x + 20, y);
	sp_xml_fputs(f, name);
	fputs("</text>", f);
	*x += 20 + 6.3 * (double)strlen(name) + 14;
}

/* The guard's floor is free memory; on the pool panel (used, the page cache
 * apart) it is the line used must stay under: total - floor. Used over it is
 * free memory plus the page cache under the floor: about where the guard
 * stops a job (nothing reclaimable left). Dashed, across the plot. */
static void guard_floor_line(FILE *f, const struct sp_chart *c, const struct geo *g, int pi, const struct yscale *y)
{
	if (!isfinite(c->guard_floor) || !y->has)
		return;
	double total = -INFINITY;
	for (int i = 0; i < c->ncols; i++) {
		const struct sp_cell *x = sp_chart_cell(c, SP_S_TOTAL, i);
		if (x->flags & SP_CELL_HAS)
			total = fmax(total, x->max);
	}
	double v = total - c->guard_floor / (double)SP_GiB;
	if (!isfinite(v) || v < y->lo || v > y->hi)
		return;
	double yy = Y(g, pi, y, v);
	char fl[32];
	sp_fmt_gib(fl, sizeof fl, c->guard_floor);
	fprintf(f,
		"<g class=\"guard-floor\" data-floor-bytes=\"%.0f\" data-value=\"%.3f\"><title>guard floor: the guard warns when free memory falls under %s, and stops the job when free memory and the reclaimable page cache together stay under it</title>"
		"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c00000\" stroke-width=\"1\" stroke-dasharray=\"5 4\"/></g>\n",
		c->guard_floor, v, fl, g->x0, yy, g->x1, yy);
}

static void draw_panel(FILE *f, const struct sp_chart *c, const struct geo *g, int pi, struct pt *buf)
{
	const struct panel *p = &panels[g->pid[pi]];
	struct yscale y = y_range(c, p);
	double top = g->top[pi], bot = g->bot[pi];
	fprintf(f, "<g id=\"panel-%s\" class=\"panel\" data-y-min=\"%g\" data-y-max=\"%g\">\n", p->id, y.lo, y.hi);
	char title[64];
	if (p->ls[0].s == SP_S_THROUGHPUT && c->throughput_unit[0]) {
		char u[48];
		sp_xml_escape(u, sizeof u, c->throughput_unit, sizeof c->throughput_unit);
		snprintf(title, sizeof title, "%s (%s)", p->title, u);
	} else if (p->unit[0]) {
		snprintf(title, sizeof title, "%s (%s)", p->title, p->unit);
	} else {
		snprintf(title, sizeof title, "%s", p->title);
	}
	fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" font-weight=\"bold\">%s</text>\n", ML, top - 8, title);
	double lx = ML + 7.5 * (double)strlen(title) + 18;
	fprintf(f, "<g font-size=\"11\" fill=\"#333\">");
	for (int k = 0; k < p->nls; k++)
		if (p->ls[k].s != SP_S_CONTIG || series_has(c, SP_S_CONTIG)) /* a format 1 log has none */
			legend_item(f, &lx, top - 8, p->ls[k].color, p->ls[k].dash, p->ls[k].name);
	char floor_name[64] = "";
	if (p->ls[0].s == SP_S_USED && isfinite(c->guard_floor)) {
		char fl[32];
		sp_fmt_gib(fl, sizeof fl, c->guard_floor);
		snprintf(floor_name, sizeof floor_name, "guard floor (%s free)", fl);
		legend_item(f, &lx, top - 8, "#c00000", "5 4", floor_name);
	}
	fprintf(f, "</g>\n");
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#999\"/>\n", g->x0, top,
		g->x1 - g->x0, bot - top);
	if (!y.has) {
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" fill=\"#888\">no data</text>\n</g>\n",
			(g->x0 + g->x1) / 2, (top + bot) / 2 + 4);
		return;
	}
	fprintf(f, "<g font-size=\"10\" fill=\"#333\" text-anchor=\"end\">");
	for (int k = 0; k < 100; k++) {
		double v = y.lo + k * y.step;
		if (v > y.hi + y.step * 1e-6)
			break;
		double yy = Y(g, pi, &y, v);
		char b[32];
		fmt_tick(b, sizeof b, v, y.step);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>", g->x0, yy, g->x1, yy);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>", g->x0 - 5, yy + 3.5, b);
	}
	fprintf(f, "</g>\n");
	for (int k = 0; k < p->nls; k++)
		draw_series(f, c, g, pi, &y, &p->ls[k], buf);
	if (floor_name[0])
		guard_floor_line(f, c, g, pi, &y);
	fprintf(f, "</g>\n");
}

static void shading_legend(FILE *f, double x, double y)
{
	fprintf(f, "<g font-size=\"11\" fill=\"#333\">");
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"#d62728\" fill-opacity=\"0.25\"/>", x, y - 9);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">thermal throttle</text>", x + 18, y);
	x += 130;
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"#ff7f0e\" fill-opacity=\"0.25\"/>", x, y - 9);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">power cap</text>", x + 18, y);
	x += 90;
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"url(#hatch)\" stroke=\"#7b3fa0\"/>", x, y - 9);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">slowdown episode</text>", x + 18, y);
	x += 135;
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c00000\" stroke-width=\"1.4\"/>", x + 5, y - 10, x + 5, y + 1);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">guard</text>", x + 12, y);
	x += 60;
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-width=\"1.4\"/>", x + 5, y - 10, x + 5, y + 1);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">job end</text>", x + 12, y);
	x += 70;
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#777\" stroke-dasharray=\"3 3\"/>", x + 5, y - 10, x + 5, y + 1);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">training log</text>", x + 12, y);
	fprintf(f, "</g>\n");
}

void sp_svg_write(FILE *f, const struct sp_chart *c, const struct sp_summary *s, const struct sp_svg_opts *o)
{
	int W = o->width, H = o->height;
	struct geo g;
	g.x0 = ML;
	g.x1 = ML + sp_svg_plot_width(W);
	g.ta = isfinite(c->from) ? c->from : c->t_first;
	g.tb = isfinite(c->to) ? c->to : c->t_last;
	if (!isfinite(g.ta))
		g.ta = isfinite(s->t_first) ? s->t_first : 0;
	if (!isfinite(g.tb) || g.tb <= g.ta)
		g.tb = g.ta + 60;
	g.off = c->tz_offset_s;
	/* a panel with no reading in the window is not drawn empty: it is named
	 * in one line under the title. The pool panel always stays (it carries
	 * the time axis of an empty log). */
	char gpu_out[96] = "", other_out[96] = "";
	g.np = 0;
	for (int p = 0; p < NPANELS; p++) {
		bool has = p == 0;
		for (int k = 0; k < panels[p].nls && !has; k++)
			has = series_has(c, panels[p].ls[k].s);
		if (has || c->rows_in_window == 0) {
			g.pid[g.np++] = p;
			continue;
		}
		bool gpu = strcmp(panels[p].id, "temp") == 0 || strcmp(panels[p].id, "power") == 0 ||
			   strcmp(panels[p].id, "clock") == 0;
		char *acc = gpu ? gpu_out : other_out;
		size_t l = strlen(acc);
		snprintf(acc + l, 96 - l, "%s%s", l ? ", " : "", gpu ? panels[p].title : panels[p].id);
	}
	double ph = (double)(H - MT - MB) / g.np - PHEAD - PGAP;
	double y = MT;
	for (int p = 0; p < g.np; p++) {
		g.top[p] = y + PHEAD;
		g.bot[p] = g.top[p] + ph;
		y = g.bot[p] + PGAP;
	}

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"%s\">\n",
		W, H, W, H, FONT);
	fprintf(f, "<title>sparkops report: ");
	sp_xml_fputs(f, o->title ? o->title : "log");
	fprintf(f, "</title>\n");
	fprintf(f,
		"<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
		"<rect width=\"6\" height=\"6\" fill=\"#7b3fa0\" fill-opacity=\"0.06\"/>"
		"<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#7b3fa0\" stroke-opacity=\"0.35\" stroke-width=\"2\"/></pattern></defs>\n");
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, H);

	/* title: the log, its span and how it ended */
	struct tm a;
	local_tm(&g, g.ta, &a);
	char when[48], dur[32];
	strftime(when, sizeof when, "%Y-%m-%d %H:%M", &a);
	sp_fmt_duration(dur, sizeof dur, g.tb - g.ta);
	bool known = isfinite(c->t_first) || isfinite(c->from); /* is there a time axis at all */
	fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"15\" font-weight=\"bold\">sparkops report: ", ML);
	sp_xml_fputs(f, o->title ? o->title : "log");
	fprintf(f, "</text>\n<text x=\"%d\" y=\"38\" font-size=\"11\" fill=\"#333\">", ML);
	if (known)
		fprintf(f, "from %s (UTC%s), %s shown", when, c->tz[0] ? c->tz : "+00:00", dur);
	if (c->rows_in_window == 0)
		fprintf(f, "%sno rows %s", known ? "; " : "", isfinite(c->from) || isfinite(c->to) ? "in this window" : "in the log");
	if (s->ended)
		fprintf(f, "; ended by %s", s->ended_by);
	if (s->ended && s->exit_code >= 0)
		fprintf(f, " (exit code %d)", s->exit_code);
	if (s->last_row_incomplete)
		fprintf(f, "; the last row was cut off");
	if (s->rows_skipped)
		fprintf(f, "; %ld bad rows skipped", s->rows_skipped);
	if (c->train_dropped)
		fprintf(f, "; %d more training-log marks not shown", c->train_dropped);
	if (c->marks_dropped)
		fprintf(f, "; %d more run events not marked (the first %d are)", c->marks_dropped, SP_CHART_MAX_MARKS);
	if (s->episodes_dropped)
		fprintf(f, "; %d more slowdown episodes not shaded (the first %d are)", s->episodes_dropped,
			SP_SUM_MAX_EPISODES);
	fprintf(f, "</text>\n");
	if (gpu_out[0] || other_out[0]) {
		fprintf(f, "<text id=\"panels-left-out\" x=\"%d\" y=\"52\" font-size=\"11\" fill=\"#666\">", ML);
		if (gpu_out[0])
			fprintf(f, "no GPU readings in this log: %s panel%s left out", gpu_out, strchr(gpu_out, ',') ? "s" : "");
		if (other_out[0])
			fprintf(f, "%sno %s readings in this log: panel%s left out", gpu_out[0] ? "; " : "", other_out,
				strchr(other_out, ',') ? "s" : "");
		fprintf(f, "</text>\n");
	}
	shading_legend(f, g.x1 - 590, 20);

	fprintf(f, "<g id=\"plot\" data-t0=\"%.3f\" data-t1=\"%.3f\" data-x0=\"%.1f\" data-x1=\"%.1f\" data-columns=\"%d\" data-column-seconds=\"%.6g\">\n",
		g.ta, g.tb, g.x0, g.x1, c->ncols, c->w);
	struct lane lane = { -1e9 };
	shade_reasons(f, c, &g, &lane);
	shade_episodes(f, s, &g, &lane);
	struct pt *buf = malloc(sizeof *buf * (size_t)(2 * c->ncols + 2));
	if (buf) {
		for (int p = 0; p < g.np; p++)
			draw_panel(f, c, &g, p, buf);
		free(buf);
	}
	if (known)
		time_axis(f, &g, c->tz[0] ? c->tz : "+00:00");
	draw_marks(f, c->marks, c->n_marks, &g, false);
	draw_marks(f, c->train, c->n_train, &g, true);
	fprintf(f, "</g>\n</svg>\n");
}

/* ---- HTML: the same SVG and the summary, one file, no scripts ---------------------------- */

void sp_html_write(FILE *f, const char *svg, const char *summary_text, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>sparkops report: ", f);
	sp_xml_fputs(f, title ? title : "log");
	fputs("</title>\n<style>\nbody{font-family:" FONT ";margin:1.5em;color:#222}\n"
	      "table{border-collapse:collapse;margin-bottom:1.5em}th,td{text-align:left;padding:2px 14px 2px 0;"
	      "vertical-align:top}th{font-weight:600;white-space:nowrap}\nsvg{max-width:100%;height:auto}\n</style>\n"
	      "</head>\n<body>\n<h1>sparkops report: ",
	      f);
	sp_xml_fputs(f, title ? title : "log");
	fputs("</h1>\n<table class=\"summary\">\n", f);
	/* the summary's "  key   value" lines become rows */
	const char *p = summary_text;
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		char line[1024];
		if (l >= sizeof line)
			l = sizeof line - 1;
		memcpy(line, p, l);
		line[l] = 0;
		p = nl ? nl + 1 : NULL;
		char *k = line;
		while (*k == ' ')
			k++;
		if (!*k || strcmp(k, "summary:") == 0)
			continue;
		/* the key ends at two spaces, or at the value column (16) when it
		 * fills it ("  peak pool use 114.0 GiB") */
		char *sep = strstr(k, "  ");
		if (!sep && l > 16 && line[15] == ' ' && k < line + 15)
			sep = line + 15;
		fputs("<tr><th>", f);
		if (sep) {
			*sep = 0;
			char *v = sep + 1;
			while (*v == ' ')
				v++;
			sp_xml_fputs(f, k);
			fputs("</th><td>", f);
			sp_xml_fputs(f, v);
		} else {
			fputs("</th><td>", f);
			sp_xml_fputs(f, k);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	/* inline SVG: drop the XML declaration, HTML does not want it there */
	if (strncmp(svg, "<?xml", 5) == 0) {
		const char *e = strstr(svg, "?>");
		if (e)
			svg = e + 2;
		while (*svg == '\n')
			svg++;
	}
	fputs(svg, f);
	fputs("</body>\n</html>\n", f);
}
