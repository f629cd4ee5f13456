// SPDX-License-Identifier: MIT
/* SIZE, COUNT and DURATION arguments, and the output formats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <errno.h>

#include "util/units.h"

static void sizes(void **st)
{
	(void)st;
	uint64_t v;
	assert_int_equal(sp_parse_size("123", &v), 0);
	assert_int_equal(v, 123);
	assert_int_equal(sp_parse_size("4G", &v), 0);
	assert_int_equal(v, 4ULL << 30);
	assert_int_equal(sp_parse_size("4GiB", &v), 0);
	assert_int_equal(v, 4ULL << 30);
	assert_int_equal(sp_parse_size("4 gib", &v), 0);
	assert_int_equal(v, 4ULL << 30);
	assert_int_equal(sp_parse_size("4GB", &v), 0);
	assert_int_equal(v, 4000000000ULL);
	assert_int_equal(sp_parse_size("1.5G", &v), 0);
	assert_int_equal(v, 3ULL << 29);
	assert_int_equal(sp_parse_size("512M", &v), 0);
	assert_int_equal(v, 512ULL << 20);
	assert_int_equal(sp_parse_size("-1G", &v), -1);
	assert_int_equal(sp_parse_size("lots", &v), -1);
	assert_int_equal(sp_parse_size("", &v), -1);
	assert_int_equal(sp_parse_size("4X", &v), -1);
	assert_int_equal(sp_parse_size("0x10", &v), -1);
	assert_int_equal(sp_parse_size("inf", &v), -1);
	assert_int_equal(sp_parse_size("nan", &v), -1);
	assert_int_equal(sp_parse_size("99999999999T", &v), -1);
}

static void counts(void **st)
{
	(void)st;
	double d;
	assert_int_equal(sp_parse_count("70e9", &d), 0);
	assert_float_equal(d, 70e9, 1);
	assert_int_equal(sp_parse_count("8B", &d), 0);
	assert_float_equal(d, 8e9, 1);
	assert_int_equal(sp_parse_count("500m", &d), 0);
	assert_float_equal(d, 5e8, 1);
	assert_int_equal(sp_parse_count("x", &d), -1);
	assert_int_equal(sp_parse_count("-5", &d), -1);
}

static void durations(void **st)
{
	(void)st;
	double s;
	assert_int_equal(sp_parse_duration("30", &s), 0);
	assert_float_equal(s, 30, 1e-9);
	assert_int_equal(sp_parse_duration("1.5s", &s), 0);
	assert_float_equal(s, 1.5, 1e-9);
	assert_int_equal(sp_parse_duration("500ms", &s), 0);
	assert_float_equal(s, 0.5, 1e-9);
	assert_int_equal(sp_parse_duration("5m", &s), 0);
	assert_float_equal(s, 300, 1e-9);
	assert_int_equal(sp_parse_duration("2h", &s), 0);
	assert_float_equal(s, 7200, 1e-9);
	assert_int_equal(sp_parse_duration("2 weeks", &s), -1);
	assert_int_equal(sp_parse_duration("-3", &s), -1);
}

static void formats(void **st)
{
	(void)st;
	char b[32];
	assert_string_equal(sp_fmt_gib(b, sizeof b, (double)(119ULL << 30) + (0.7 * (1ULL << 30))), "119.7 GiB");
	assert_string_equal(sp_fmt_bytes(b, sizeof b, 512 * 1024), "512.0 KiB");
	assert_string_equal(sp_fmt_bytes(b, sizeof b, 100), "100 B");
	/* a small figure in the unit that shows it, never "0.0 GiB"; unknown is said */
	assert_string_equal(sp_fmt_gib(b, sizeof b, 13.0 * 1024 * 1024), "13.0 MiB");
	assert_string_equal(sp_fmt_gib(b, sizeof b, 320.0 * 1024), "320.0 KiB");
	assert_string_equal(sp_fmt_gib(b, sizeof b, 0.4 * (1ULL << 30)), "0.4 GiB");
	assert_string_equal(sp_fmt_gib(b, sizeof b, 0), "0.0 GiB");
	assert_string_equal(sp_fmt_gib(b, sizeof b, NAN), "unknown");
	assert_string_equal(sp_fmt_bytes(b, sizeof b, NAN), "unknown");
	assert_string_equal(sp_fmt_duration(b, sizeof b, 3725), "1h02m");
	assert_string_equal(sp_fmt_duration(b, sizeof b, 725), "12m05s");
	assert_string_equal(sp_fmt_duration(b, sizeof b, 42), "42s");
}

static void bounded(void **st)
{
	(void)st;
	long l = 77;
	assert_int_equal(sp_parse_long_range("5", 1, 10, &l), 0);
	assert_int_equal(l, 5);
	assert_int_equal(sp_parse_long_range(" 10\n", 1, 10, &l), 0);
	assert_int_equal(l, 10);
	assert_int_equal(sp_parse_long_range("-3", -5, 0, &l), 0);
	assert_int_equal(l, -3);
	assert_int_equal(sp_parse_long_range("+1", 1, 1, &l), 0);
	assert_int_equal(l, 1);
	l = 77;
	assert_int_equal(sp_parse_long_range("0", 1, 10, &l), -ERANGE);
	assert_int_equal(sp_parse_long_range("11", 1, 10, &l), -ERANGE);
	assert_int_equal(sp_parse_long_range("99999999999999999999999", 0, 10, &l), -ERANGE);
	assert_int_equal(sp_parse_long_range("", 0, 10, &l), -EINVAL);
	assert_int_equal(sp_parse_long_range("  ", 0, 10, &l), -EINVAL);
	assert_int_equal(sp_parse_long_range("5x", 0, 10, &l), -EINVAL);
	assert_int_equal(sp_parse_long_range("1.5", 0, 10, &l), -EINVAL);
	assert_int_equal(sp_parse_long_range("x5", 0, 10, &l), -EINVAL);
	assert_int_equal(sp_parse_long_range("\v5", 0, 10, &l), -EINVAL);
	assert_int_equal(sp_parse_long_range(NULL, 0, 10, &l), -EINVAL);
	assert_int_equal(l, 77); /* untouched on failure */

	double d = 7;
	assert_int_equal(sp_parse_double_range("1.5", 0, 10, &d), 0);
	assert_true(d == 1.5);
	assert_int_equal(sp_parse_double_range("2e3", 0, 1e4, &d), 0);
	assert_true(d == 2000);
	assert_int_equal(sp_parse_double_range(".5", 0, 1, &d), 0);
	assert_true(d == 0.5);
	assert_int_equal(sp_parse_double_range("-0.25 ", -1, 0, &d), 0);
	assert_true(d == -0.25);
	assert_int_equal(sp_parse_double_range("100", 0, 100, &d), 0);
	d = 7;
	assert_int_equal(sp_parse_double_range("100.01", 0, 100, &d), -ERANGE);
	assert_int_equal(sp_parse_double_range("-1", 0, 100, &d), -ERANGE);
	assert_int_equal(sp_parse_double_range("1e400", 0, 1e300, &d), -ERANGE);
	assert_int_equal(sp_parse_double_range("nan", -1e9, 1e9, &d), -EINVAL);
	assert_int_equal(sp_parse_double_range("inf", -1e9, 1e9, &d), -EINVAL);
	assert_int_equal(sp_parse_double_range("0x10", 0, 100, &d), -EINVAL);
	assert_int_equal(sp_parse_double_range("5%", 0, 100, &d), -EINVAL);
	assert_int_equal(sp_parse_double_range(".", 0, 100, &d), -EINVAL);
	assert_int_equal(sp_parse_double_range("", 0, 100, &d), -EINVAL);
	assert_true(d == 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sizes),
		cmocka_unit_test(counts),
		cmocka_unit_test(durations),
		cmocka_unit_test(formats),
		cmocka_unit_test(bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
