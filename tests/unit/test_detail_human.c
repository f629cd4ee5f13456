// SPDX-License-Identifier: MIT
/* A log detail for people: byte counts in the unit that shows them, the rest
 * as it was (watch/summary.h sp_detail_human). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "watch/summary.h"

static void bytes_for_people(void **st)
{
	(void)st;
	char b[256];
	assert_string_equal(sp_detail_human(b, sizeof b, "free_bytes=21474836480 floor_bytes=8589934592"),
			    "free=20.0 GiB floor=8.0 GiB");
	assert_string_equal(sp_detail_human(b, sizeof b, "flush:freed_bytes=23877292032"), "flush:freed=22.2 GiB");
	assert_string_equal(sp_detail_human(b, sizeof b, "flush:freed_bytes=13631488"), "flush:freed=13.0 MiB");
	/* not a number, or not a _bytes key: left as it was */
	assert_string_equal(sp_detail_human(b, sizeof b, "--max_seq_length:2048->1024 x_bytes=abc"),
			    "--max_seq_length:2048->1024 x_bytes=abc");
	assert_string_equal(sp_detail_human(b, sizeof b, ""), "");
	/* a small buffer is cut, never overrun */
	char s[8];
	sp_detail_human(s, sizeof s, "free_bytes=21474836480");
	assert_int_equal(strlen(s), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(bytes_for_people) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
