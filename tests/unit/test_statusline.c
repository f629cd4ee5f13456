// SPDX-License-Identifier: MIT
/* The live status line of run/watch: its fields, the unknowns, the width. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "out/statusline.h"

static void full_line(void **st)
{
	(void)st;
	char b[512];
	struct sp_status_in in = { .elapsed_s = 83.7, .pool_free = 40.25 * 1073741824.0, .budget = 110.0 * 1073741824.0,
				   .gpu_temp_c = 71.2, .gpu_power_w = 45.4, .rate = 3.25, .unit = "it/s",
				   .cause = "thermal", .width = 200 };
	size_t n = sp_statusline(b, sizeof b, &in);
	assert_int_equal(n, strlen(b));
	assert_string_equal(b, "\r\033[Ksparkops 1m23s | pool free 40.2 / budget 110.0 GiB | GPU 71\xc2\xb0" "C 45 W"
			       " | 3.25 it/s | slowdown: thermal");
	assert_null(strchr(b, '\n'));
}

/* the same text as the terminal's title: OSC 2, no control byte inside */
static void as_title(void **st)
{
	(void)st;
	char b[512];
	struct sp_status_in in = { .elapsed_s = 83.7, .pool_free = 40.25 * 1073741824.0, .budget = 110.0 * 1073741824.0,
				   .gpu_temp_c = NAN, .gpu_power_w = NAN, .rate = 3.25, .unit = "it\007/s\033",
				   .cause = NULL, .width = 20 };
	size_t n = sp_statusline_title(b, sizeof b, &in);
	assert_int_equal(n, strlen(b));
	assert_string_equal(b, "\033]2;sparkops 1m23s | pool free 40.2 / budget 110.0 GiB | 3.25 it?/s?\007");
	/* the title is not cut to the terminal's width, and never holds a line end */
	assert_null(strchr(b, '\n'));
	assert_null(strchr(b, '\r'));
}

static void unknowns(void **st)
{
	(void)st;
	char b[512];
	struct sp_status_in in = { .elapsed_s = 3725, .pool_free = NAN, .budget = NAN, .gpu_temp_c = NAN,
				   .gpu_power_w = NAN, .rate = NAN, .unit = "", .cause = NULL, .width = 0 };
	sp_statusline(b, sizeof b, &in);
	assert_string_equal(b, "\r\033[Ksparkops 1h02m05s | no throughput yet");
}

static void width_cut(void **st)
{
	(void)st;
	char b[512];
	struct sp_status_in in = { .elapsed_s = 5, .pool_free = NAN, .budget = NAN, .gpu_temp_c = 60,
				   .gpu_power_w = NAN, .rate = 1, .unit = "it/s", .width = 20 };
	sp_statusline(b, sizeof b, &in);
	/* 19 columns after the redraw prefix; the degree sign is one column */
	assert_string_equal(b, "\r\033[Ksparkops 0m05s | GP");
	in.width = 25;
	sp_statusline(b, sizeof b, &in);
	assert_string_equal(b, "\r\033[Ksparkops 0m05s | GPU 60\xc2\xb0");
	/* a small buffer: cut, terminated */
	char s[8];
	size_t n = sp_statusline(s, sizeof s, &in);
	assert_int_equal(n, 7);
	assert_int_equal(s[7], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_line), cmocka_unit_test(as_title),
		cmocka_unit_test(unknowns),
		cmocka_unit_test(width_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
