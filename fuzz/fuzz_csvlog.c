// SPDX-License-Identifier: MIT
/* The run/watch CSV log as report reads it: sp_logrow_parse through the
 * streaming reader (split into two chunks at a point the input chooses), the
 * summary and the chart fed with every row, the SVG drawn; the training-log
 * matcher and the XML escaper over the same bytes. */
#include "fuzz.h"
#include "out/chart.h"
#include "out/svg.h"
#include "out/xml.h"
#include "watch/logread.h"
#include "watch/summary.h"
#include "watch/trainlog.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ctx {
	struct sp_summary sum;
	struct sp_chart chart;
};

static int on_row(void *vx, const struct sp_logrow *r, long lineno)
{
	(void)lineno;
	struct ctx *x = vx;
	sp_summary_add(&x->sum, r);
	sp_chart_add_row(&x->chart, r);
	return 0;
}

static void on_train(void *vx, double t, const char *line)
{
	sp_chart_add_train(&((struct ctx *)vx)->chart, t, line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ctx *x;
	static struct sp_logread *rd;
	static FILE *devnull;
	if (!x) {
		x = malloc(sizeof *x);
		rd = malloc(sizeof *rd);
		devnull = fopen("/dev/null", "w");
		if (!x || !rd || !devnull)
			abort();
	}
	/* exact-size copy: ASan sees any read past the input */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	size_t cut = size ? (size_t)data[0] * 7 % (size + 1) : 0;

	sp_summary_init(&x->sum);
	if (sp_chart_init(&x->chart, 200, NAN, NAN) < 0)
		abort();
	sp_logread_init(rd, on_row, x, size % 2 == 1);
	if (sp_logread_feed(rd, buf, cut) == 0 && sp_logread_feed(rd, buf + cut, size - cut) == 0)
		sp_logread_end(rd);
	if (rd->len > sizeof rd->line)
		abort();
	sp_summary_finish(&x->sum);
	sp_chart_finish(&x->chart);
	if (x->chart.n_iv > SP_CHART_MAX_INTERVALS || x->chart.n_marks > SP_CHART_MAX_MARKS)
		abort();

	struct sp_trainlog tl;
	char err[128];
	if (sp_trainlog_init(&tl, NULL, 0, on_train, x, err, sizeof err) == 0) {
		sp_trainlog_feed(&tl, buf, size);
		sp_trainlog_end(&tl);
		sp_trainlog_release(&tl);
	}
	struct sp_svg_opts so = { 600, 500, "fuzz" };
	sp_svg_write(devnull, &x->chart, &x->sum, &so);
	sp_chart_release(&x->chart);

	/* the escaper: nothing that could open a tag, attribute or entity survives */
	char esc[4096];
	size_t n = sp_xml_escape(esc, sizeof esc, buf, size < 600 ? size : 600);
	if (n >= sizeof esc || strlen(esc) != n)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (esc[i] == '<' || esc[i] == '>' || esc[i] == '"' || esc[i] == '\'' || (unsigned char)esc[i] < 0x20)
			abort();
		if (esc[i] == '&' && strncmp(esc + i, "&amp;", 5) && strncmp(esc + i, "&lt;", 4) &&
		    strncmp(esc + i, "&gt;", 4) && strncmp(esc + i, "&quot;", 6) && strncmp(esc + i, "&#39;", 5))
			abort();
	}
	free(buf);
	return 0;
}
