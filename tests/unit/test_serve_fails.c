// SPDX-License-Identifier: MIT
/* out/serve_http: the wait after wrong passwords, per address (1, 2, 4 ... 60 s). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "out/serve_http.h"

static void waits(void **st)
{
	(void)st;
	for (unsigned n = 0; n <= SP_SERVE_FAIL_FREE; n++)
		assert_true(sp_serve_fail_wait(n) == 0);
	assert_true(sp_serve_fail_wait(SP_SERVE_FAIL_FREE + 1) == 1);
	assert_true(sp_serve_fail_wait(SP_SERVE_FAIL_FREE + 2) == 2);
	assert_true(sp_serve_fail_wait(SP_SERVE_FAIL_FREE + 3) == 4);
	assert_true(sp_serve_fail_wait(SP_SERVE_FAIL_FREE + 6) == 32);
	assert_true(sp_serve_fail_wait(SP_SERVE_FAIL_FREE + 7) == 60);
	assert_true(sp_serve_fail_wait(1000000) == 60);
	assert_true(sp_serve_fail_wait(~0u) == 60);
	/* the table of addresses is bounded */
	assert_true(SP_SERVE_FAIL_SLOTS > 0 && SP_SERVE_FAIL_SLOTS <= 4096);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(waits) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
