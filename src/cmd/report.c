// SPDX-License-Identifier: MIT
/* sparkops report — a run/watch CSV log back as the end-of-run summary and a
 * chart. One streaming pass over the log with fixed memory (the line buffer,
 * the summary, and the chart's columns: see out/chart.h). */
#include "cmd/cli.h"
#include "cmd/cmdutil.h"
#include "out/chart.h"
#include "out/svg.h"
#include "util/fileio.h"
#include "util/input.h"
#include "util/json.h"
#include "util/msg.h"
#include "util/opt.h"
#include "watch/logread.h"
#include "watch/summary.h"
#include "watch/trainlog.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const struct sp_cmdspec spec = {
	.name = "report",
	.usage = "usage: sparkops report LOG [--json] [--svg FILE] [--html FILE] [--from T] [--to T]\n"
		 "                           [--training-log FILE [--training-regex RE]] [--lenient]\n"
		 "\n"
		 "Reads a CSV log written by 'sparkops run' or 'sparkops watch' (LOG '-' is stdin)\n"
		 "and prints the end-of-run summary; draws the run as a chart: pool use and budget,\n"
		 "temperatures, power, SM clock and throughput on one time axis, with throttle and\n"
		 "slowdown episodes shaded and guard actions and the job's end marked.\n"
		 "\n",
	.tail = "exit: 0 ok, 2 usage error or a bad log (the message names the line), 5 writing\n"
		"      output failed\n",
};

struct report_opts {
	const char *log; /* the operand */
	bool json, lenient;
	const char *svg_path, *html_path, *tlog, *tre;
	const char *from_s, *to_s;
	int width, height;
};

struct ctx {
	struct sp_summary sum;
	struct sp_chart chart;
	bool chart_ready;
	int ncols;
	const char *from_s, *to_s;
	double from, to;
	char err[160]; /* a --from/--to problem found at the first row */
	/* an episode already under way at --from: its start row, held until the
	 * first row inside the window adds it (moved to --from) */
	struct sp_logrow open_episode;
	bool have_open_episode;
};

/* Times in report are the log's wall-clock, whatever the zone of the machine
 * reading it: the summary's clock times (localtime) follow the first row's
 * UTC offset, as the chart's axis does. POSIX TZ counts west: +01:00 is
 * "UTC-01:00". */
static void use_log_zone(long off)
{
	char tz[32];
	long a = off < 0 ? -off : off;
	snprintf(tz, sizeof tz, "UTC%c%02ld:%02ld", off > 0 ? '-' : '+', a / 3600 % 100, a / 60 % 60);
	setenv("TZ", tz, 1);
	tzset();
}

static int resolve_window(struct ctx *x, const struct sp_logrow *first)
{
	long off = 0;
	double ref = first ? first->unix_time : NAN;
	if (first && sp_iso_offset(first->time_iso, &off) == 0)
		use_log_zone(off);
	x->from = x->to = NAN;
	if (x->from_s && sp_parse_when(x->from_s, off, ref, &x->from) < 0) {
		snprintf(x->err, sizeof x->err, "--from: '%.60s' is not a time (ISO-8601, HH:MM or Unix seconds)", x->from_s);
		return -1;
	}
	if (x->to_s && sp_parse_when(x->to_s, off, ref, &x->to) < 0) {
		snprintf(x->err, sizeof x->err, "--to: '%.60s' is not a time (ISO-8601, HH:MM or Unix seconds)", x->to_s);
		return -1;
	}
	if (isfinite(x->from) && isfinite(x->to) && x->to <= x->from) {
		snprintf(x->err, sizeof x->err, "--to must be later than --from");
		return -1;
	}
	if (sp_chart_init(&x->chart, x->ncols, x->from, x->to) < 0) {
		snprintf(x->err, sizeof x->err, "out of memory");
		return -1;
	}
	x->chart_ready = true;
	return 0;
}

/* The summary covers --from..--to, as the chart does: rows outside are left
 * out of it. An episode under way at --from counts from --from (its start
 * row is held and added, moved to --from, before the first row inside). */
static void summary_add_windowed(struct ctx *x, const struct sp_logrow *r)
{
	const double t = r->unix_time;
	if (isfinite(x->from) && isfinite(t) && t < x->from) {
		if (r->type == SP_ROW_EVENT && strcmp(r->event, SP_EV_EPISODE_START) == 0) {
			x->open_episode = *r;
			x->have_open_episode = true;
		} else if (r->type == SP_ROW_EVENT && strcmp(r->event, SP_EV_EPISODE_END) == 0) {
			x->have_open_episode = false;
		}
		return;
	}
	if (isfinite(x->to) && isfinite(t) && t > x->to)
		return;
	if (x->have_open_episode) {
		x->open_episode.unix_time = x->from;
		sp_summary_add(&x->sum, &x->open_episode);
		x->have_open_episode = false;
	}
	sp_summary_add(&x->sum, r);
}

static int on_row(void *vx, const struct sp_logrow *r, long lineno)
{
	(void)lineno;
	struct ctx *x = vx;
	if (!x->chart_ready && resolve_window(x, r) < 0)
		return 1;
	summary_add_windowed(x, r);
	sp_chart_add_row(&x->chart, r);
	return 0;
}

static void on_train(void *vx, double t, const char *line)
{
	struct ctx *x = vx;
	sp_chart_add_train(&x->chart, t, line);
}

/* read the log (fd) through the streaming reader */
static int feed_log(void *rd, const char *buf, size_t len)
{
	return sp_logread_feed(rd, buf, len) < 0; /* failed or stopped: err says why */
}

static int read_log(int fd, struct sp_logread *rd)
{
	int e = sp_feed_fd(fd, feed_log, rd);
	if (e < 0)
		return e;
	sp_logread_end(rd); /* does nothing once failed or stopped */
	return 0;
}

static int feed_training(void *tl, const char *buf, size_t len)
{
	sp_trainlog_feed(tl, buf, len);
	return 0;
}

static int read_training(const char *path, const char *re, struct ctx *x)
{
	struct sp_trainlog tl;
	char err[256];
	if (sp_trainlog_init(&tl, re, x->chart.tz_offset_s, on_train, x, err, sizeof err) < 0) {
		sp_error("--training-regex: %s", err);
		return SP_EXIT_USAGE;
	}
	const bool in = strcmp(path, "-") == 0;
	int fd = in ? STDIN_FILENO : sp_input_open(path);
	if (fd < 0) {
		sp_error("'%s': %s", path, sp_input_strerror(fd));
		sp_trainlog_release(&tl);
		return SP_EXIT_USAGE;
	}
	if (in)
		path = "stdin";
	int e = sp_feed_fd(fd, feed_training, &tl);
	if (e < 0) {
		sp_error("'%s': %s", path, sp_input_strerror(e));
		if (!in)
			close(fd);
		sp_trainlog_release(&tl);
		return SP_EXIT_USAGE;
	}
	sp_trainlog_end(&tl);
	if (!in)
		close(fd);
	if (tl.matched == 0)
		sp_warn("'%s': no line matched the timestamp regex", path);
	else if (tl.unparsed)
		sp_warn("'%s': %ld matched lines had no readable time in the first group", path, tl.unparsed);
	if (x->chart.train_dropped)
		sp_warn("'%s': %d more marks than the chart shows (%d); narrow --training-regex", path,
			x->chart.train_dropped, SP_CHART_MAX_TRAIN);
	sp_trainlog_release(&tl);
	return 0;
}

/* the log's identity: an output path naming the log itself is refused */
static struct stat log_st;
static bool log_st_ok;

static int write_out(const char *path, const char *data, size_t len)
{
	struct stat st;
	if (log_st_ok && stat(path, &st) == 0 && st.st_dev == log_st.st_dev && st.st_ino == log_st.st_ino) {
		sp_error("'%s' is the log itself: not overwriting it", path);
		return SP_EXIT_USAGE;
	}
	char msg[PATH_MAX + 200];
	int rc = sp_write_output(path, data, len, 0644, msg, sizeof msg);
	if (rc < 0) {
		sp_error("%s", msg);
		return SP_EXIT_IO;
	}
	return 0;
}

static json_t *report_json(const struct ctx *x, const struct sp_logread *rd, const char *log, const char *svg,
			   const char *html, long train_marks)
{
	json_t *o = sp_summary_json(&x->sum);
	json_object_set_new(o, "log", sp_json_text(log));
	json_object_set_new(o, "rows", json_integer(rd->rows));
	json_object_set_new(o, "first_bad_line", rd->first_bad_line ? json_integer(rd->first_bad_line) : json_null());
	json_t *w = json_object();
	json_object_set_new(w, "from", isfinite(x->from) ? json_real(x->from) : json_null());
	json_object_set_new(w, "to", isfinite(x->to) ? json_real(x->to) : json_null());
	json_object_set_new(w, "rows", json_integer(x->chart.rows_in_window));
	json_object_set_new(o, "window", w);
	json_t *iv = json_array();
	for (int i = 0; i < x->chart.n_iv; i++) {
		const struct sp_interval *v = &x->chart.iv[i];
		json_t *e = json_object();
		json_object_set_new(e, "reason", json_string(sp_reason_name(v->reason)));
		json_object_set_new(e, "start", json_real(round(v->start * 1000) / 1000));
		json_object_set_new(e, "end", isfinite(v->end) ? json_real(round(v->end * 1000) / 1000) : json_null());
		json_array_append_new(iv, e);
	}
	json_object_set_new(o, "throttle_intervals", iv);
	json_t *ch = json_object();
	json_object_set_new(ch, "svg", svg ? sp_json_text(svg) : json_null());
	json_object_set_new(ch, "html", html ? sp_json_text(html) : json_null());
	json_object_set_new(ch, "columns", json_integer(x->chart.ncols));
	json_object_set_new(ch, "column_seconds", json_real(x->chart.w));
	json_object_set_new(ch, "training_marks", train_marks >= 0 ? json_integer(train_marks) : json_null());
	json_object_set_new(o, "chart", ch);
	return o;
}

/* ---- parse ------------------------------------------------------------------------ */

/* 1: parsed, 0: --help was printed */
static int parse_opts(int argc, char **argv, struct report_opts *o)
{
	*o = (struct report_opts){ .width = SP_SVG_DEFAULT_WIDTH, .height = SP_SVG_DEFAULT_HEIGHT };
	const struct sp_option table[] = {
		SP_OPT_GROUP("options:"),
		SP_OPT_FLAG(0, "json", &o->json, "the summary as one JSON object"),
		SP_OPT_OUT_PATH("svg", &o->svg_path, "FILE", "write the chart as a self-contained SVG"),
		SP_OPT_OUT_PATH("html", &o->html_path, "FILE", "write one HTML page with the summary table and the chart"),
		SP_OPT_INT("width", &o->width, "N", SP_SVG_MIN_WIDTH, SP_SVG_MAX_WIDTH, "chart width in pixels (default 1200)"),
		SP_OPT_INT("height", &o->height, "N", SP_SVG_MIN_HEIGHT, SP_SVG_MAX_HEIGHT,
			   "chart height in pixels (default 920)"),
		SP_OPT_STRING("from", &o->from_s, "T",
			      "chart and summarise only from T: 2026-11-29T09:40[:SS][+01:00],\n"
			      "09:40 (the log's first day), or Unix seconds; times without\n"
			      "an offset are in the log's own UTC offset"),
		SP_OPT_STRING("to", &o->to_s, "T", "chart and summarise only up to T (same forms)"),
		SP_OPT_IN_PATH("training-log", &o->tlog, "FILE", "mark the timestamped lines of a training log (- for stdin)"),
		SP_OPT_STRING("training-regex", &o->tre, "RE",
			      "POSIX extended regex; its first group is the timestamp\n"
			      "(default: 'YYYY-MM-DD HH:MM:SS[,.mmm]' anywhere in the line)"),
		SP_OPT_FLAG(0, "lenient", &o->lenient, "skip bad rows (and count them) instead of failing"),
		SP_OPT_END(),
	};
	int i = sp_opt_parse(&spec, table, argc, argv);
	if (i < 0)
		return 0;
	if (i >= argc)
		sp_usage_error("report", "which log? (sparkops report LOG)");
	if (i + 1 < argc)
		sp_usage_error("report", "one log at a time ('%s' is extra)", argv[i + 1]);
	if (o->tre && !o->tlog)
		sp_usage_error("report", "--training-regex needs --training-log");
	o->log = argv[i];
	if (o->tlog && strcmp(o->tlog, "-") == 0 && strcmp(o->log, "-") == 0)
		sp_usage_error("report", "stdin cannot be both the log and the training log ('-' twice)");
	/* the log read is an input too: no chart may replace it (the options
	 * among themselves are checked by the option table) */
	char why[2400];
	const char *outs[2][2] = { { "--svg", o->svg_path }, { "--html", o->html_path } };
	for (int k = 0; k < 2 && strcmp(o->log, "-") != 0; k++)
		if (sp_out_distinct(outs[k][0], outs[k][1], "the log", o->log, why, sizeof why) < 0)
			sp_usage_error("report", "%s '%s' is the log itself: not overwriting it", outs[k][0], outs[k][1]);
	return 1;
}

/* ---- compute ---------------------------------------------------------------------- */

/* the log through the reader into the summary and the chart; 0, or the exit code */
static int load_log(const struct report_opts *o, struct ctx *x, struct sp_logread *rd)
{
	const char *log = o->log;
	int fd = strcmp(log, "-") == 0 ? STDIN_FILENO : sp_input_open(log);
	if (fd < 0) {
		sp_error("'%s': %s", log, sp_input_strerror(fd));
		return SP_EXIT_USAGE;
	}
	log_st_ok = fstat(fd, &log_st) == 0 && S_ISREG(log_st.st_mode);
	int e = read_log(fd, rd);
	if (fd != STDIN_FILENO)
		close(fd);
	if (e < 0) {
		sp_error("'%s': %s", log, sp_input_strerror(e));
		return SP_EXIT_USAGE;
	}
	if (rd->stopped && x->err[0]) {
		sp_error("%s", x->err);
		sp_note("see '%s report --help'", sp_progname);
		return SP_EXIT_USAGE;
	}
	if (rd->failed) {
		sp_error("'%s': %s", log, rd->err);
		if (!o->lenient && rd->header_seen)
			sp_note("--lenient skips bad rows and counts them");
		return SP_EXIT_USAGE;
	}
	if (!x->chart_ready && resolve_window(x, NULL) < 0) {
		/* no rows: HH:MM has no day to refer to */
		sp_error("%s", x->err);
		return SP_EXIT_USAGE;
	}
	return 0;
}

/* the summary and the chart finished, and what the reading skipped said */
static void finish_log(const char *log, struct ctx *x, const struct sp_logread *rd)
{
	x->sum.last_row_incomplete = rd->last_row_incomplete;
	x->sum.rows_skipped = rd->rows_skipped;
	sp_summary_finish(&x->sum);
	sp_chart_finish(&x->chart);
	if (rd->last_row_incomplete)
		sp_warn("'%s': the last row was cut off (the log ends mid-line); reporting the rows before it", log);
	if (rd->rows_skipped)
		sp_warn("'%s': %ld bad rows skipped (the first at line %ld)", log, rd->rows_skipped, rd->first_bad_line);
	if ((isfinite(x->from) || isfinite(x->to)) && x->chart.rows_in_window == 0)
		sp_warn("'%s': no rows between --from and --to", log);
}

/* ---- render ----------------------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* the chart as SVG text (malloc'd, *len bytes) */
static char *render_svg(const struct report_opts *o, const struct ctx *x, size_t *len)
{
	char *svg = NULL;
	*len = 0;
	FILE *m = open_memstream(&svg, len);
	if (!m)
		sp_die(SP_EXIT_TROUBLE, "out of memory");
	struct sp_svg_opts so = { o->width, o->height, base_name(o->log) };
	sp_svg_write(m, &x->chart, &x->sum, &so);
	if (fclose(m) != 0 || !svg) {
		free(svg);
		sp_die(SP_EXIT_TROUBLE, "out of memory");
	}
	return svg;
}

/* one page: the summary table and the chart */
static int write_html(const char *path, const char *log, const struct ctx *x, const char *svg)
{
	char *st = NULL, *page = NULL;
	size_t st_len = 0, page_len = 0;
	FILE *sm = open_memstream(&st, &st_len);
	if (sm) {
		sp_summary_print(sm, &x->sum);
		fclose(sm);
	}
	FILE *pm = open_memstream(&page, &page_len);
	if (pm) {
		sp_html_write(pm, svg, st ? st : "", base_name(log));
		fclose(pm);
	}
	int rc = page ? write_out(path, page, page_len) : SP_EXIT_TROUBLE;
	free(st);
	free(page);
	return rc;
}

static int write_charts(const struct report_opts *o, const struct ctx *x)
{
	if (!o->svg_path && !o->html_path)
		return 0;
	size_t svg_len;
	char *svg = render_svg(o, x, &svg_len);
	int rc = 0;
	if (o->svg_path)
		rc = write_out(o->svg_path, svg, svg_len);
	/* a failed --svg (a full disk) does not cost the --html page */
	if ((rc == 0 || rc == SP_EXIT_IO) && o->html_path) {
		int hr = write_html(o->html_path, o->log, x, svg);
		if (!rc)
			rc = hr;
	}
	free(svg);
	return rc;
}

static void print_report(const struct report_opts *o, const struct ctx *x, const struct sp_logread *rd,
			 long train_marks)
{
	if (o->json) {
		json_t *j = report_json(x, rd, o->log, o->svg_path, o->html_path, train_marks);
		sp_json_print(stdout, j);
		json_decref(j);
	} else {
		sp_summary_print(stdout, &x->sum);
	}
}

/* ---- the command -------------------------------------------------------------------- */

static int report(const struct report_opts *o, struct ctx *x, struct sp_logread *rd)
{
	int rc = load_log(o, x, rd);
	if (rc)
		return rc;
	finish_log(o->log, x, rd);
	long train_marks = -1;
	if (o->tlog) {
		rc = read_training(o->tlog, o->tre, x);
		if (rc)
			return rc;
		train_marks = x->chart.n_train;
	}
	rc = write_charts(o, x);
	if (rc)
		return rc;
	print_report(o, x, rd, train_marks);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o;
	if (!parse_opts(argc, argv, &o))
		return 0;
	struct ctx *x = calloc(1, sizeof *x);
	struct sp_logread *rd = malloc(sizeof *rd);
	if (!x || !rd)
		sp_die(SP_EXIT_TROUBLE, "out of memory");
	sp_summary_init(&x->sum);
	x->ncols = sp_svg_plot_width(o.width);
	x->from_s = o.from_s;
	x->to_s = o.to_s;
	x->from = x->to = NAN;
	sp_logread_init(rd, on_row, x, o.lenient);
	int rc = report(&o, x, rd);
	sp_chart_release(&x->chart);
	free(rd);
	free(x);
	return rc;
}
