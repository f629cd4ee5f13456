/* SPDX-License-Identifier: MIT */
/* The report chart: one self-contained SVG (no scripts, no external fonts,
 * files or links) with five panels on one time axis, throttle and slowdown
 * shading, and marks. Elements carry data- attributes (unix times) so tests
 * and tools can check where things were drawn. */
#ifndef SP_SVG_H
#define SP_SVG_H
#include "out/chart.h"
#include "watch/summary.h"

#include <stdio.h>

#define SP_SVG_DEFAULT_WIDTH 1200
#define SP_SVG_DEFAULT_HEIGHT 920
#define SP_SVG_MIN_WIDTH 400
#define SP_SVG_MAX_WIDTH 4000
#define SP_SVG_MIN_HEIGHT 400
#define SP_SVG_MAX_HEIGHT 4000

struct sp_svg_opts {
	int width, height;
	const char *title; /* the log's name; escaped */
};

/* Pixels of the time axis for a chart this wide: the downsampler's column count. */
int sp_svg_plot_width(int width);
void sp_svg_write(FILE *f, const struct sp_chart *c, const struct sp_summary *s, const struct sp_svg_opts *o);
/* A page holding the SVG and the summary (summary_text: sp_summary_print's lines). */
void sp_html_write(FILE *f, const char *svg, const char *summary_text, const char *title);
#endif
