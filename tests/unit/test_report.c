// SPDX-License-Identifier: MIT
/* report's pieces: the XML escaper, the streaming log reader (chunking,
 * bad rows, a cut-off tail), the min/max downsampler, reason intervals,
 * time parsing and the training-log matcher. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "out/chart.h"
#include "out/xml.h"
#include "watch/logread.h"
#include "watch/logrow.h"
#include "watch/trainlog.h"

/* cmocka compares floats as float: too coarse for Unix times */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* ---- XML escaping ---------------------------------------------------------------- */

static void xml_specials(void **st)
{
	(void)st;
	char b[256];
	sp_xml_escape(b, sizeof b, "a<b>&\"c'", 100);
	assert_string_equal(b, "a&lt;b&gt;&amp;&quot;c&#39;");
	sp_xml_escape(b, sizeof b, "<script>alert(1)</script>", 100);
	assert_null(strchr(b, '<'));
	sp_xml_escape(b, sizeof b, "tab\there\nnl\x01\x7f", 100);
	assert_string_equal(b, "tab here nl  ");
	sp_xml_escape(b, sizeof b, "]]>", 100);
	assert_string_equal(b, "]]&gt;");
}

static void xml_utf8(void **st)
{
	(void)st;
	char b[64];
	sp_xml_escape(b, sizeof b, "85\xC2\xB0" "C \xE2\x9C\x93", 100); /* degree sign, check mark */
	assert_string_equal(b, "85\xC2\xB0" "C \xE2\x9C\x93");
	sp_xml_escape(b, sizeof b, "bad \xFF\xC0\xAF end", 100); /* invalid, overlong */
	assert_string_equal(b, "bad ??? end");
	sp_xml_escape(b, sizeof b, "\xED\xA0\x80", 100); /* a surrogate */
	assert_string_equal(b, "???");
	/* a sequence cut by maxin is not emitted half */
	sp_xml_escape(b, sizeof b, "ab\xE2\x9C\x93", 4);
	assert_string_equal(b, "ab??");
}

static void xml_truncates_whole(void **st)
{
	(void)st;
	char b[8];
	size_t n = sp_xml_escape(b, sizeof b, "abcd&efgh", 100);
	assert_string_equal(b, "abcd"); /* "&amp;" would not fit: not cut in half */
	assert_int_equal(n, 4);
	char c[6];
	sp_xml_escape(c, sizeof c, "ab\xE2\x9C\x93\xE2\x9C\x93", 100);
	assert_string_equal(c, "ab\xE2\x9C\x93");
	sp_xml_escape(c, 1, "abc", 100);
	assert_string_equal(c, "");
}

/* ---- the reader ------------------------------------------------------------------------ */

struct got {
	int rows;
	double last_t;
	long last_line;
	int stop_after;
};

static int on_row(void *ctx, const struct sp_logrow *r, long lineno)
{
	struct got *g = ctx;
	g->rows++;
	g->last_t = r->unix_time;
	g->last_line = lineno;
	return g->stop_after && g->rows >= g->stop_after;
}

static char *hdr(void)
{
	static char h[1024];
	sp_logrow_header(h, sizeof h);
	return h;
}

static size_t row_at(char *buf, size_t n, double t, double temp)
{
	struct sp_logrow r;
	sp_logrow_clear(&r, SP_ROW_SAMPLE);
	r.unix_time = t;
	sp_iso_time(r.time_iso, sizeof r.time_iso, t);
	r.gpu_temp_c = temp;
	return sp_logrow_format(&r, buf, n);
}

/* a log of n rows from t=1000, 30 s apart */
static char *mklog(int n, size_t *len)
{
	size_t cap = 1024 + (size_t)n * 1024, l = 0;
	char *b = malloc(cap);
	l += (size_t)snprintf(b, cap, "%s", hdr());
	for (int i = 0; i < n; i++)
		l += row_at(b + l, cap - l, 1000 + 30.0 * i, 60 + i);
	*len = l;
	return b;
}

static void reader_whole_and_bytewise(void **st)
{
	(void)st;
	size_t len;
	char *log = mklog(20, &len);
	struct sp_logread *rd = malloc(sizeof *rd);
	struct got g = { 0 };
	sp_logread_init(rd, on_row, &g, false);
	assert_int_equal(sp_logread_feed(rd, log, len), 0);
	assert_int_equal(sp_logread_end(rd), 0);
	assert_int_equal(g.rows, 20);
	assert_int_equal(rd->rows, 20);
	assert_false(rd->last_row_incomplete);
	assert_int_equal(g.last_line, 21);
	/* one byte at a time gives the same rows */
	struct got g2 = { 0 };
	sp_logread_init(rd, on_row, &g2, false);
	for (size_t i = 0; i < len; i++)
		assert_int_equal(sp_logread_feed(rd, log + i, 1), 0);
	assert_int_equal(sp_logread_end(rd), 0);
	assert_int_equal(g2.rows, 20);
	assert_near(g2.last_t, g.last_t, 1e-9);
	/* the callback can stop the reading */
	struct got g3 = { .stop_after = 5 };
	sp_logread_init(rd, on_row, &g3, false);
	assert_int_equal(sp_logread_feed(rd, log, len), -1);
	assert_true(rd->stopped);
	assert_int_equal(g3.rows, 5);
	free(rd);
	free(log);
}

static void reader_cut_off(void **st)
{
	(void)st;
	size_t len;
	char *log = mklog(10, &len);
	struct sp_logread *rd = malloc(sizeof *rd);
	struct got g = { 0 };
	sp_logread_init(rd, on_row, &g, false);
	/* cut in the middle of the last row */
	assert_int_equal(sp_logread_feed(rd, log, len - 40), 0);
	assert_int_equal(sp_logread_end(rd), 0);
	assert_int_equal(g.rows, 9);
	assert_true(rd->last_row_incomplete);
	/* zero-filled tail after a crash (the file system kept the length) */
	struct got g2 = { 0 };
	sp_logread_init(rd, on_row, &g2, false);
	char zeros[512] = { 0 };
	assert_int_equal(sp_logread_feed(rd, log, len), 0);
	assert_int_equal(sp_logread_feed(rd, zeros, sizeof zeros), 0);
	assert_int_equal(sp_logread_end(rd), 0);
	assert_int_equal(g2.rows, 10);
	assert_true(rd->last_row_incomplete);
	free(rd);
	free(log);
}

static void expect_fail(const char *text, const char *want, bool lenient)
{
	struct sp_logread *rd = malloc(sizeof *rd);
	struct got g = { 0 };
	sp_logread_init(rd, on_row, &g, lenient);
	int a = sp_logread_feed(rd, text, strlen(text));
	int b = sp_logread_end(rd);
	assert_true(a < 0 || b < 0);
	assert_true(rd->failed);
	if (!strstr(rd->err, want))
		fail_msg("error '%s' does not say '%s'", rd->err, want);
	free(rd);
}

static void reader_bad_logs(void **st)
{
	(void)st;
	char buf[8192], row[2048];
	expect_fail("", "not a sparkops log (empty)", false);
	expect_fail("a,b,c\n1,2,3\n", "line 1: not a sparkops log", false);
	expect_fail("a,b,c\n1,2,3\n", "line 1: not a sparkops log", true); /* never lenient about the header */
	expect_fail("time,unix_time", "line 1: not a sparkops log", false);
	/* wrong column count on line 3 */
	row_at(row, sizeof row, 1000, 50);
	snprintf(buf, sizeof buf, "%s%s1,2,3\n", hdr(), row);
	expect_fail(buf, "line 3: expected", false);
	/* not a number */
	size_t l = row_at(row, sizeof row, 1030, 50);
	char *p = strstr(row, ",50,");
	assert_non_null(p);
	memcpy(p, ",hh,", 4);
	(void)l;
	snprintf(buf, sizeof buf, "%s%s", hdr(), row);
	expect_fail(buf, "line 2: field 'gpu_temp_c': 'hh' is not a number", false);
	/* out of order */
	char r1[2048], r2[2048];
	row_at(r1, sizeof r1, 5000, 50);
	row_at(r2, sizeof r2, 4000, 50);
	snprintf(buf, sizeof buf, "%s%s%s", hdr(), r1, r2);
	expect_fail(buf, "line 3: time 4000.000 is earlier than the row before", false);
	/* a line longer than the buffer */
	size_t hl = strlen(hdr());
	char *big = malloc(hl + SP_LOGREAD_LINE_MAX + 10);
	memcpy(big, hdr(), hl);
	memset(big + hl, 'x', SP_LOGREAD_LINE_MAX + 5);
	big[hl + SP_LOGREAD_LINE_MAX + 5] = '\n';
	big[hl + SP_LOGREAD_LINE_MAX + 6] = 0;
	expect_fail(big, "line 2: longer than 4096 bytes", false);
	free(big);
}

static void reader_lenient(void **st)
{
	(void)st;
	char buf[16384], r[2048];
	size_t l = (size_t)snprintf(buf, sizeof buf, "%s", hdr());
	l += row_at(buf + l, sizeof buf - l, 1000, 50);
	l += (size_t)snprintf(buf + l, sizeof buf - l, "garbage,1\n\n");
	l += row_at(buf + l, sizeof buf - l, 1030, 51);
	row_at(r, sizeof r, 10, 1); /* out of order */
	l += (size_t)snprintf(buf + l, sizeof buf - l, "%s", r);
	l += row_at(buf + l, sizeof buf - l, 1060, 52);
	struct sp_logread *rd = malloc(sizeof *rd);
	struct got g = { 0 };
	sp_logread_init(rd, on_row, &g, true);
	assert_int_equal(sp_logread_feed(rd, buf, l), 0);
	assert_int_equal(sp_logread_end(rd), 0);
	assert_int_equal(g.rows, 3);
	assert_int_equal(rd->rows_skipped, 2); /* the blank line is not a bad row */
	assert_int_equal(rd->first_bad_line, 3);
	free(rd);
}

/* the reader's fast number path gives exactly what strtod gives */
static void numbers_like_strtod(void **st)
{
	(void)st;
	static const char *nums[] = { "0", "-0", "1", "98.6", "0.1", "0.3", "139.60", "128526065664", "1795939200.123",
				      "2.3700", "-4.25", "999999999999999", "0.000000000000001", "123456789.12345",
				      "1e5", "1234567890123456789", "00012.50" };
	char line[4096], err[128];
	struct sp_logrow r;
	for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
		snprintf(line, sizeof line, "%s", hdr());
		/* a sample row with gpu_power_w (column 19) set to the text */
		char row[2048];
		row_at(row, sizeof row, 1000, 50);
		char *f = row;
		for (int c = 0; c < 18; c++)
			f = strchr(f, ',') + 1;
		char *e = strchr(f, ',');
		char out[2100];
		snprintf(out, sizeof out, "%.*s%s%s", (int)(f - row), row, nums[i], e);
		assert_int_equal(sp_logrow_parse(out, strlen(out), &r, err, sizeof err), 0);
		double want = strtod(nums[i], NULL);
		if (memcmp(&r.gpu_power_w, &want, sizeof want) != 0)
			fail_msg("'%s' parsed as %.17g, strtod says %.17g", nums[i], r.gpu_power_w, want);
	}
	/* and what is not a number is still refused */
	static const char *bad[] = { ".5x", "--1", "1.2.3", "nan", "inf", "1,5" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char row[2048], out[2100];
		row_at(row, sizeof row, 1000, 50);
		char *f = row;
		for (int c = 0; c < 18; c++)
			f = strchr(f, ',') + 1;
		snprintf(out, sizeof out, "%.*s\"%s\"%s", (int)(f - row), row, bad[i], strchr(f, ','));
		if (sp_logrow_parse(out, strlen(out), &r, err, sizeof err) == 0)
			fail_msg("'%s' was taken for a number (%g)", bad[i], r.gpu_power_w);
	}
}

/* ---- the chart --------------------------------------------------------------------------- */

static void sample_row(struct sp_logrow *r, double t, double temp)
{
	sp_logrow_clear(r, SP_ROW_SAMPLE);
	r->unix_time = t;
	snprintf(r->time_iso, sizeof r->time_iso, "2026-11-29T09:00:00.000+01:00");
	r->gpu_temp_c = temp;
}

static void chart_keeps_spikes(void **st)
{
	(void)st;
	struct sp_chart *c = malloc(sizeof *c);
	assert_int_equal(sp_chart_init(c, 100, NAN, NAN), 0);
	struct sp_logrow r;
	/* a week at 1 s would be slow here; 200,000 rows at 1 s show the same thing */
	for (int i = 0; i < 200000; i++) {
		sample_row(&r, 1e9 + i, i == 123457 ? 99.0 : 70.0 + (i % 2));
		sp_chart_add_row(c, &r);
	}
	sp_chart_finish(c);
	assert_int_equal(c->tz_offset_s, 3600);
	/* the columns cover the run; at least half of them are used */
	assert_true(c->w * c->ncols >= 200000 - 1);
	assert_true(c->w * c->ncols / 2 < 200000);
	int spike_cols = 0, used = 0;
	float lo = 1000;
	for (int i = 0; i < c->ncols; i++) {
		const struct sp_cell *x = sp_chart_cell(c, SP_S_GPU_TEMP, i);
		if (!(x->flags & SP_CELL_HAS))
			continue;
		used++;
		lo = fminf(lo, x->min);
		if (x->max == 99.0f)
			spike_cols++;
	}
	assert_int_equal(spike_cols, 1); /* the one-second spike survived */
	assert_near(lo, 70.0, 1e-6);
	assert_true(used >= c->ncols / 2);
	sp_chart_release(c);
	free(c);
}

/* an odd number of columns (an odd --width): widening must not drop the last one */
static void chart_odd_columns(void **st)
{
	(void)st;
	struct sp_chart *c = malloc(sizeof *c);
	struct sp_logrow r;
	for (int spike = 0; spike < 300; spike++) {
		assert_int_equal(sp_chart_init(c, 17, NAN, NAN), 0);
		for (int i = 0; i < 300; i++) {
			sample_row(&r, 1e9 + i, i == spike ? 99.0 : 70.0);
			sp_chart_add_row(c, &r);
		}
		int spike_cols = 0;
		for (int i = 0; i < c->ncols; i++)
			spike_cols += sp_chart_cell(c, SP_S_GPU_TEMP, i)->max == 99.0f;
		if (spike_cols != 1)
			fail_msg("the spike at row %d is in %d columns", spike, spike_cols);
		sp_chart_release(c);
	}
	free(c);
}

static void chart_gaps(void **st)
{
	(void)st;
	struct sp_chart *c = malloc(sizeof *c);
	assert_int_equal(sp_chart_init(c, 100, 0, 1000), 0);
	assert_true(c->fixed_width);
	struct sp_logrow r;
	for (int t = 0; t < 1000; t += 10) {
		sample_row(&r, t, (t >= 400 && t < 500) ? NAN : 60);
		sp_chart_add_row(c, &r);
	}
	/* the unknown readings are a gap: no values there, a break after */
	int breaks = 0;
	for (int i = 0; i < c->ncols; i++) {
		const struct sp_cell *x = sp_chart_cell(c, SP_S_GPU_TEMP, i);
		if (i >= 40 && i < 50)
			assert_false(x->flags & SP_CELL_HAS);
		if (x->flags & SP_CELL_BREAK) {
			breaks++;
			assert_int_equal(i, 50);
		}
	}
	assert_int_equal(breaks, 1);
	/* a series never seen is empty, not zero */
	for (int i = 0; i < c->ncols; i++)
		assert_false(sp_chart_cell(c, SP_S_SM_CLOCK, i)->flags & SP_CELL_HAS);
	sp_chart_release(c);
	free(c);
}

static void chart_reasons(void **st)
{
	(void)st;
	struct sp_chart *c = malloc(sizeof *c);
	assert_int_equal(sp_chart_init(c, 200, NAN, NAN), 0);
	struct sp_logrow r;
	for (int t = 0; t <= 100; t += 10) {
		sample_row(&r, t, 60);
		r.gpu_reasons_ok = true;
		r.gpu_reasons = (t >= 30 && t < 60) ? 0x24 : 0x1; /* gpu_idle is not shaded */
		sp_chart_add_row(c, &r);
	}
	/* an event-only reason (the column unknown) */
	sp_logrow_event(&r, 100, SP_EV_REASON_ON, "hw_slowdown");
	sp_chart_add_row(c, &r);
	sp_logrow_event(&r, 100, SP_EV_REASON_ON, "sw_thermal_slowdown"); /* a repeat of a closed one */
	sp_chart_add_row(c, &r);
	sp_logrow_event(&r, 105, SP_EV_GUARD_TERM, "free=0.9GiB");
	sp_chart_add_row(c, &r);
	sample_row(&r, 110, 60); /* reasons unknown: nothing changes */
	sp_chart_add_row(c, &r);
	sp_chart_finish(c);
	int thermal = 0, power = 0, hw = 0;
	for (int i = 0; i < c->n_iv; i++) {
		const struct sp_interval *v = &c->iv[i];
		if (v->reason == 5) {
			if (thermal++ == 0) {
				assert_near(v->start, 30, 1e-9);
				assert_near(v->end, 60, 1e-9);
			}
		}
		if (v->reason == 2) {
			power++;
			assert_near(v->start, 30, 1e-9);
		}
		if (v->reason == 3) {
			hw++;
			assert_near(v->end, 110, 1e-9); /* still open: closed at the last row */
		}
		assert_int_not_equal(v->reason, 0);
	}
	assert_int_equal(thermal, 2);
	assert_int_equal(power, 1);
	assert_int_equal(hw, 1);
	assert_int_equal(c->n_marks, 1);
	assert_int_equal(c->marks[0].kind, SP_MARK_GUARD);
	sp_chart_release(c);
	free(c);
}

static void chart_window(void **st)
{
	(void)st;
	struct sp_chart *c = malloc(sizeof *c);
	assert_int_equal(sp_chart_init(c, 100, 100, 200), 0);
	struct sp_logrow r;
	for (int t = 0; t <= 400; t += 10) {
		sample_row(&r, t, t == 150 ? 90 : 60);
		r.gpu_reasons_ok = true;
		r.gpu_reasons = (t >= 50 && t < 120) || t >= 300 ? 0x20 : 0;
		sp_chart_add_row(c, &r);
		if (t == 250) {
			sp_logrow_event(&r, t, SP_EV_GUARD_WARN, "");
			sp_chart_add_row(c, &r); /* outside the window: not marked */
		}
	}
	sp_chart_finish(c);
	assert_int_equal(c->rows_in_window, 11);
	assert_near(c->t_first, 100, 1e-9);
	assert_near(c->t_last, 200, 1e-9);
	assert_int_equal(c->n_marks, 0);
	/* reasons are followed outside the window too: the one on at 50 is
	 * clipped when drawn; the one on at 300 lasts to the last row */
	assert_int_equal(c->n_iv, 2);
	assert_near(c->iv[0].start, 50, 1e-9);
	assert_near(c->iv[0].end, 120, 1e-9);
	assert_near(c->iv[1].start, 300, 1e-9);
	assert_near(c->iv[1].end, 400, 1e-9);
	/* the spike at 150 is in column 50 of 100 over [100, 200] */
	assert_near(sp_chart_cell(c, SP_S_GPU_TEMP, 50)->max, 90, 1e-6);
	assert_false(sp_chart_cell(c, SP_S_GPU_TEMP, 49)->max == 90.0f);
	sp_chart_release(c);
	free(c);
}

static void chart_reasons_bounded(void **st)
{
	(void)st;
	struct sp_chart *c = malloc(sizeof *c);
	assert_int_equal(sp_chart_init(c, 500, NAN, NAN), 0);
	struct sp_logrow r;
	/* a reason flapping every second for a day */
	for (int t = 0; t < 86400; t++) {
		sample_row(&r, t, 60);
		r.gpu_reasons_ok = true;
		r.gpu_reasons = (t % 2) ? 0x20 : 0;
		sp_chart_add_row(c, &r);
	}
	sp_chart_finish(c);
	assert_true(c->n_iv <= SP_CHART_MAX_INTERVALS);
	assert_true(c->n_iv >= 1); /* on every other second is on, at any pixel size */
	/* merged intervals still cover the day */
	assert_near(c->iv[0].start, 1, 1e-9);
	assert_true(c->iv[c->n_iv - 1].end >= 86398);
	sp_chart_release(c);
	free(c);
}

/* ---- times ------------------------------------------------------------------------------------------ */

static void when_forms(void **st)
{
	(void)st;
	double t;
	assert_int_equal(sp_parse_when("1795939200", 0, NAN, &t), 0);
	assert_near(t, 1795939200, 1e-9);
	assert_int_equal(sp_parse_when("2026-11-29T08:00:00Z", 3600, NAN, &t), 0);
	assert_near(t, 1795939200, 1e-9);
	assert_int_equal(sp_parse_when("2026-11-29T09:00:00+01:00", 0, NAN, &t), 0);
	assert_near(t, 1795939200, 1e-9);
	assert_int_equal(sp_parse_when("2026-11-29 09:00", 3600, NAN, &t), 0); /* the log's offset */
	assert_near(t, 1795939200, 1e-9);
	assert_int_equal(sp_parse_when("2026-11-29 09:00:01,250", 3600, NAN, &t), 0);
	assert_near(t, 1795939201.25, 1e-6);
	assert_int_equal(sp_parse_when("2026-11-29T02:30:00-0530", 0, NAN, &t), 0);
	assert_near(t, 1795939200, 1e-9);
	assert_int_equal(sp_parse_when("11/29/2026 09:00:00", 3600, NAN, &t), 0);
	assert_near(t, 1795939200, 1e-9);
	/* HH:MM on the log's first day, in its offset: 23:30 local of a log that
	 * starts at 23:10 local (22:10 UTC) */
	double start = 1795939200 + 14 * 3600 + 600; /* 22:10 UTC = 23:10 +01:00 */
	assert_int_equal(sp_parse_when("23:30", 3600, start, &t), 0);
	assert_near(t, start + 1200, 1e-9);
	assert_int_equal(sp_parse_when("09:40", 3600, NAN, &t), -1); /* no day to refer to */
	assert_int_equal(sp_parse_when("yesterday", 0, 0, &t), -1);
	assert_int_equal(sp_parse_when("2026-13-01", 0, 0, &t), -1);
	assert_int_equal(sp_parse_when("25:00", 0, 0, &t), -1);
	assert_int_equal(sp_parse_when("2026-11-29T09:00:00+01:00junk", 0, 0, &t), -1);
	assert_int_equal(sp_parse_when("", 0, 0, &t), -1);
	/* days a month does not have are not the next month's */
	assert_int_equal(sp_parse_when("2026-02-31", 0, 0, &t), -1);
	assert_int_equal(sp_parse_when("2026-04-31T10:00", 0, 0, &t), -1);
	assert_int_equal(sp_parse_when("2025-02-29", 0, 0, &t), -1);
	assert_int_equal(sp_parse_when("2024-02-29", 0, 0, &t), 0); /* a leap year */
	assert_int_equal(sp_parse_when("2000-02-29", 0, 0, &t), 0);
	assert_int_equal(sp_parse_when("02/30/2026 10:00:00", 0, 0, &t), -1);
	/* Unix seconds past year 9999 are a typo, not a time (a chart axis at
	 * 1e20 s has no room for a minute) */
	assert_int_equal(sp_parse_when("99999999999999999999", 0, 0, &t), -1);
	assert_int_equal(sp_parse_when("253402300800", 0, 0, &t), -1);
	assert_int_equal(sp_parse_when("253402300799", 0, 0, &t), 0);
}

struct marks {
	int n;
	double t[8];
	char line[8][200];
};

static void on_train(void *ctx, double t, const char *line)
{
	struct marks *m = ctx;
	if (m->n < 8) {
		m->t[m->n] = t;
		snprintf(m->line[m->n], sizeof m->line[0], "%s", line);
	}
	m->n++;
}

static void training_log(void **st)
{
	(void)st;
	struct sp_trainlog *tl = malloc(sizeof *tl);
	struct marks m = { 0 };
	char err[128];
	assert_int_equal(sp_trainlog_init(tl, NULL, 3600, on_train, &m, err, sizeof err), 0);
	const char *text = "2026-11-29 09:00:00,500 - INFO - step 10 loss 1.2\n"
			   "no time on this line\n"
			   "[INFO|trainer.py:2134] 2026-11-29 09:10:00,000 >> Saving model checkpoint\n"
			   "11/29/2026 09:20:00 - INFO - accelerate - eval\n"
			   "  2026-11-29T08:30:00Z <b>done</b>  ";
	/* fed in two pieces split mid-line */
	sp_trainlog_feed(tl, text, 30);
	sp_trainlog_feed(tl, text + 30, strlen(text) - 30);
	sp_trainlog_end(tl);
	assert_int_equal(m.n, 4);
	assert_near(m.t[0], 1795939200.5, 1e-6);
	assert_near(m.t[1], 1795939800, 1e-6);
	assert_near(m.t[2], 1795940400, 1e-6);
	assert_near(m.t[3], 1795941000, 1e-6);
	assert_string_equal(m.line[0], "INFO - step 10 loss 1.2"); /* the time is where the mark is */
	assert_string_equal(m.line[1], "INFO|trainer.py:2134]  >> Saving model checkpoint");
	assert_string_equal(m.line[3], "<b>done</b>"); /* trimmed; escaped later */
	assert_int_equal(tl->lines, 5);
	sp_trainlog_release(tl);

	/* a user regex: only the checkpoint lines */
	struct marks m2 = { 0 };
	assert_int_equal(sp_trainlog_init(tl, "^\\[([0-9:. -]+)\\] checkpoint", 0, on_train, &m2, err, sizeof err), 0);
	const char *t2 = "[2026-11-29 08:00:00] checkpoint saved\n[2026-11-29 08:01:00] step\n";
	sp_trainlog_feed(tl, t2, strlen(t2));
	sp_trainlog_end(tl);
	assert_int_equal(m2.n, 1);
	sp_trainlog_release(tl);

	/* a tqdm redraw in a log with Windows line ends: the text after the
	 * last '\r' is what was shown, the CRLF's '\r' aside */
	struct marks m3 = { 0 };
	assert_int_equal(sp_trainlog_init(tl, NULL, 0, on_train, &m3, err, sizeof err), 0);
	const char *t3 = "2026-11-29 08:00:00 old\r2026-11-29 08:00:05 shown\r\n";
	sp_trainlog_feed(tl, t3, strlen(t3));
	sp_trainlog_end(tl);
	assert_int_equal(m3.n, 1);
	assert_near(m3.t[0], 1795939205, 1e-6);
	assert_string_equal(m3.line[0], "shown");
	sp_trainlog_release(tl);

	assert_int_equal(sp_trainlog_init(tl, "no group", 0, on_train, &m2, err, sizeof err), -1);
	assert_non_null(strstr(err, "capture group"));
	assert_int_equal(sp_trainlog_init(tl, "(unclosed", 0, on_train, &m2, err, sizeof err), -1);
	free(tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(xml_specials),
		cmocka_unit_test(xml_utf8),
		cmocka_unit_test(xml_truncates_whole),
		cmocka_unit_test(reader_whole_and_bytewise),
		cmocka_unit_test(reader_cut_off),
		cmocka_unit_test(reader_bad_logs),
		cmocka_unit_test(reader_lenient),
		cmocka_unit_test(numbers_like_strtod),
		cmocka_unit_test(chart_keeps_spikes),
		cmocka_unit_test(chart_odd_columns),
		cmocka_unit_test(chart_gaps),
		cmocka_unit_test(chart_reasons),
		cmocka_unit_test(chart_window),
		cmocka_unit_test(chart_reasons_bounded),
		cmocka_unit_test(when_forms),
		cmocka_unit_test(training_log),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
