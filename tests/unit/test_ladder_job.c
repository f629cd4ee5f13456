// SPDX-License-Identifier: MIT
/* One job's ladder state from load to save (ladder/state.c): the file kept
 * under the one root (SPARKOPS_RUN_DIR), read back, started over on
 * --reset and when corrupt (said), the job named from the log's path. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ladder/ladder.h"

static char root[] = "/tmp/sp-test-ladder-job-XXXXXX";
static struct sp_ladder_job J;

static void kept(void **st)
{
	(void)st;
	sp_ladder_job_open(&J, "alpha", NULL, false);
	assert_string_equal(J.warn, "");
	assert_true(J.have_path);
	assert_non_null(strstr(J.path, root));
	assert_non_null(strstr(J.path, "/ladder-alpha.state"));
	assert_int_equal(J.st.tried, 0);
	J.st.tried = 1u << 1 | 1u << 2;
	J.st.proposed = 3;
	assert_int_equal(sp_ladder_job_save(&J), 0);
	assert_int_equal(J.lock_fd, -1);
	sp_ladder_job_open(&J, "alpha", NULL, false);
	assert_int_equal(J.st.tried, 1u << 1 | 1u << 2);
	assert_int_equal(J.st.proposed, 3);
	assert_true(J.st.updated > 0);
	assert_int_equal(sp_ladder_job_save(&J), 0);
	/* --reset: started over, the file still the job's */
	sp_ladder_job_open(&J, "alpha", NULL, true);
	assert_int_equal(J.st.tried, 0);
	assert_true(J.have_path);
	assert_int_equal(sp_ladder_job_save(&J), 0);
}

static void corrupt(void **st)
{
	(void)st;
	sp_ladder_job_open(&J, "beta", NULL, false);
	assert_int_equal(sp_ladder_job_save(&J), 0);
	FILE *f = fopen(J.path, "w");
	assert_non_null(f);
	fputs("garbage garbage\n", f);
	fclose(f);
	sp_ladder_job_open(&J, "beta", NULL, false);
	assert_non_null(strstr(J.warn, "not a ladder state file"));
	assert_int_equal(J.st.tried, 0);
	assert_int_equal(sp_ladder_job_save(&J), 0);
	assert_string_equal(J.warn, "");
}

static void named_from_the_log(void **st)
{
	(void)st;
	char log[600];
	snprintf(log, sizeof log, "%s/train.log", root);
	FILE *f = fopen(log, "w");
	assert_non_null(f);
	fclose(f);
	sp_ladder_job_open(&J, NULL, log, false);
	assert_non_null(strstr(J.job, "train.log"));
	assert_int_equal(sp_ladder_job_save(&J), 0);
	unlink(log);
}

static int setup(void **st)
{
	(void)st;
	if (!mkdtemp(root))
		return -1;
	return setenv("SPARKOPS_RUN_DIR", root, 1);
}

static int teardown(void **st)
{
	(void)st;
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kept),
		cmocka_unit_test(corrupt),
		cmocka_unit_test(named_from_the_log),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
