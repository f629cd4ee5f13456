// SPDX-License-Identifier: MIT
/* SIZE, COUNT and DURATION arguments, and the output formats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

/* sp_fmt_fixed writes what printf's %.*f writes: every decimals 0..7 over
 * log-row-like values (bytes, watts, percents, unix times), values a hair
 * from a half, halves themselves (ties: printf's), negatives, -0, huge and
 * non-finite values, and a buffer too small */
/* the digits every hand-made number is built from: what %llu writes */
static void digits_are_printf(void **st)
{
	(void)st;
	uint64_t vs[] = { 0, 1, 9, 10, 99, 100, 4294967295u, 4294967296u, 18446744073709551615u };
	for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
		char want[32], got[32];
		snprintf(want, sizeof want, "%llu", (unsigned long long)vs[i]);
		size_t n = sp_u64_digits(got, vs[i]);
		got[n] = 0;
		assert_int_equal(n, strlen(want));
		assert_string_equal(got, want);
	}
}

static void fixed_is_printf(void **st)
{
	(void)st;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int differ = 0, n = 0;
	char a[64], b[64];
	static const double special[] = { 0.0, -0.0, 0.5, 1.5, 2.5, -0.5, 0.125, 0.375, 1.0005, 2.675, 0.045,
					  -0.04, -0.0004, 999999.9995, 1e12, 1e15, 3.9e15, -4e15, 1e300, 1764405612.3455,
					  128526065664.0, 6657199104.0, 98.6, 0.1, 0.7 };
	for (int d = 0; d <= 7; d++) {
		for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
			int la = sp_fmt_fixed(a, sizeof a, d, special[i]);
			int lb = snprintf(b, sizeof b, "%.*f", d, special[i]);
			differ += la != lb || strcmp(a, b) != 0;
			n++;
		}
		for (int i = 0; i < 20000; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			double mant = (double)(x >> 11) / 9007199254740992.0; /* [0, 1) */
			double v = mant * pow(10.0, (double)(int)(x % 15) - 3.0);
			if (x & 1)
				v = -v;
			if ((x >> 5) % 7 == 0) /* a hair from a half at this precision */
				v = (floor(v * pow(10.0, d)) + 0.5) / pow(10.0, d) + ((x >> 9) % 3 - 1.0) * 1e-13;
			int la = sp_fmt_fixed(a, sizeof a, d, v);
			int lb = snprintf(b, sizeof b, "%.*f", d, v);
			differ += la != lb || strcmp(a, b) != 0;
			n++;
		}
	}
	assert_int_equal(differ, 0);
	assert_true(n > 100000);
	assert_string_equal((sp_fmt_fixed(a, sizeof a, 1, NAN), a), "nan");
	assert_string_equal((sp_fmt_fixed(a, sizeof a, 1, -INFINITY), a), "-inf");
	char small[5];
	assert_int_equal(sp_fmt_fixed(small, sizeof small, 3, 12.345), 6); /* the whole length, as snprintf */
	assert_string_equal(small, "12.3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sizes),
		cmocka_unit_test(counts),
		cmocka_unit_test(durations),
		cmocka_unit_test(formats),
		cmocka_unit_test(bounded),
		cmocka_unit_test(fixed_is_printf), cmocka_unit_test(digits_are_printf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
