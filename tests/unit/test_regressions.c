// SPDX-License-Identifier: MIT
/* Bugs found by fuzzing (fuzz/regressions/<harness>/ holds the raw inputs,
 * replayed by make check); here each one is named and its right answer
 * asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/units.h"

/* fuzz_units, fuzz/regressions/units/size-above-2p63-clamped: sizes between
 * 2^63 and 2^64 bytes came back as exactly 2^63 (llround overflowed long
 * long). They are now exact, and 2^64 and above are refused. */
static void size_above_2p63(void **st)
{
	(void)st;
	uint64_t v = 0;
	assert_int_equal(sp_parse_size("11111111111111111111", &v), 0);
	assert_true(v == 11111111111111110656ULL); /* the nearest double */
	assert_int_equal(sp_parse_size("1e19", &v), 0);
	assert_true(v == 10000000000000000000ULL);
	assert_int_equal(sp_parse_size("10000000T", &v), 0);
	assert_true(v == 10000000ULL * 1099511627776ULL);
	assert_int_equal(sp_parse_size("9223372036854775807", &v), 0);
	assert_true(v == 9223372036854775808ULL); /* 2^63 - 1 is not a double: its nearest is 2^63 */
	assert_int_equal(sp_parse_size("18446744073709551615", &v), -1); /* rounds to 2^64 */
	assert_int_equal(sp_parse_size("16777216T", &v), -1);            /* exactly 2^64 */
	assert_int_equal(sp_parse_size("16777215T", &v), 0);
	assert_true(v == 16777215ULL * 1099511627776ULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(size_above_2p63),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
