// SPDX-License-Identifier: MIT
/* The live status line. See statusline.h. */
#include "out/statusline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define REDRAW "\r\033[K"

/* the line's text, no redraw prefix, into line (256 bytes); its length */
static size_t status_text(char line[256], const struct sp_status_in *in)
{
	const size_t line_cap = 256;
	size_t n = 0;
#define ADD(...)                                                                          \
	do {                                                                              \
		int k_ = snprintf(line + n, line_cap - n, __VA_ARGS__);                   \
		if (k_ > 0)                                                               \
			n = n + (size_t)k_ < line_cap ? n + (size_t)k_ : line_cap - 1;    \
	} while (0)
	long s = isfinite(in->elapsed_s) && in->elapsed_s > 0 ? (long)in->elapsed_s : 0;
	if (s >= 3600)
		ADD("sparkops %ldh%02ldm%02lds", s / 3600, s / 60 % 60, s % 60);
	else
		ADD("sparkops %ldm%02lds", s / 60, s % 60);
	if (isfinite(in->pool_free) || isfinite(in->budget)) {
		ADD(" | pool free ");
		if (isfinite(in->pool_free))
			ADD("%.1f", in->pool_free / 1073741824.0);
		else
			ADD("?");
		ADD(" / budget ");
		if (isfinite(in->budget))
			ADD("%.1f GiB", in->budget / 1073741824.0);
		else
			ADD("? GiB");
	}
	if (isfinite(in->gpu_temp_c) || isfinite(in->gpu_power_w)) {
		ADD(" | GPU");
		if (isfinite(in->gpu_temp_c))
			ADD(" %.0f\xc2\xb0" "C", in->gpu_temp_c);
		if (isfinite(in->gpu_power_w))
			ADD(" %.0f W", in->gpu_power_w);
	}
	if (isfinite(in->rate))
		ADD(" | %.3g %s", in->rate, in->unit && in->unit[0] ? in->unit : "");
	else
		ADD(" | no throughput yet");
	if (in->cause && in->cause[0])
		ADD(" | slowdown: %s", in->cause);
#undef ADD
	return n;
}

size_t sp_statusline(char *buf, size_t cap, const struct sp_status_in *in)
{
	char line[256];
	size_t n = status_text(line, in);
	/* cut to the terminal's width, on a UTF-8 character boundary */
	size_t w = in->width > 1 ? (size_t)in->width - 1 : 79;
	size_t cols = 0, cut = n;
	for (size_t i = 0; i < n; i++) {
		if (((unsigned char)line[i] & 0xc0) == 0x80)
			continue;
		if (cols == w) {
			cut = i;
			break;
		}
		cols++;
	}
	int k = snprintf(buf, cap, REDRAW "%.*s", (int)cut, line);
	if (k < 0)
		return 0;
	return (size_t)k < cap ? (size_t)k : cap - 1;
}

size_t sp_statusline_title(char *buf, size_t cap, const struct sp_status_in *in)
{
	char line[256];
	size_t n = status_text(line, in);
	/* a title ends at BEL or ESC: no control byte from the job's unit gets in */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = '?';
	int k = snprintf(buf, cap, "\033]2;%.*s\007", (int)n, line);
	if (k < 0)
		return 0;
	return (size_t)k < cap ? (size_t)k : cap - 1;
}
