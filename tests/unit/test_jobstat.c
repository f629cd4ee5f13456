// SPDX-License-Identifier: MIT
/* The running job's status file (watch/jobstat.c): where it goes, and that
 * SPARKOPS_RUN_DIR seals both the writer and the reader into one root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "watch/jobstat.h"

/* SPARKOPS_RUN_DIR seals the folder: the files go to <root>/run, and only
 * that folder is read (not $XDG_RUNTIME_DIR/sparkops, not /run/sparkops,
 * where a watch running on this machine writes its own) */
static void jobstat_sealed_root(void **st)
{
	(void)st;
	char xdg[] = "/tmp/sp-jobstat-xdg-XXXXXX", top[] = "/tmp/sp-jobstat-root-XXXXXX";
	assert_non_null(mkdtemp(xdg));
	assert_non_null(mkdtemp(top));
	char root[300], path[400], why[300], got[300];
	snprintf(root, sizeof root, "%s/r", top); /* made when missing */
	unsetenv("SPARKOPS_RUN_DIR");
	setenv("XDG_RUNTIME_DIR", xdg, 1);
	struct sp_jobstat j, found[SP_JOBSTAT_MAX];
	sp_jobstat_clear(&j);
	j.pid = (int)getpid();
	snprintf(j.mode, sizeof j.mode, "watch");
	j.interval_s = 1;
	j.updated_unix = 5000;
	struct sp_jobstat_file other;
	assert_int_equal(sp_jobstat_open(&other, getpid()), 0); /* "another watch", outside the root */
	assert_int_equal(sp_jobstat_write(&other, &j), 0);
	/* unsealed, /run/sparkops is read too: a watch on this machine may show */
	assert_true(sp_jobstat_find(found, SP_JOBSTAT_MAX, 5001) >= 1);

	setenv("SPARKOPS_RUN_DIR", root, 1);
	assert_int_equal(sp_jobstat_dir(got, sizeof got, false, why, sizeof why), -1); /* not made yet */
	assert_int_equal(sp_jobstat_find(found, SP_JOBSTAT_MAX, 5001), 0);
	struct sp_jobstat_file f;
	assert_int_equal(sp_jobstat_open(&f, getpid()), 0);
	assert_int_equal(sp_jobstat_dir(got, sizeof got, false, why, sizeof why), 0);
	snprintf(path, sizeof path, "%s/run", root);
	assert_string_equal(got, path);
	j.samples = 7;
	assert_int_equal(sp_jobstat_write(&f, &j), 0);
	snprintf(path, sizeof path, "%s/run/%d", root, (int)getpid());
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sp_jobstat_find(found, SP_JOBSTAT_MAX, 5001), 1);
	assert_true(found[0].samples == 7);
	/* a relative root is no root: the XDG folder again */
	setenv("SPARKOPS_RUN_DIR", "relative", 1);
	int m = sp_jobstat_find(found, SP_JOBSTAT_MAX, 5001), ours = 0;
	for (int i = 0; i < m; i++)
		ours += found[i].pid == (int)getpid() && found[i].samples == 0;
	assert_int_equal(ours, 1);

	setenv("SPARKOPS_RUN_DIR", root, 1);
	sp_jobstat_close(&f);
	unsetenv("SPARKOPS_RUN_DIR");
	sp_jobstat_close(&other);
	snprintf(path, sizeof path, "%s/run", root);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(root), 0);
	assert_int_equal(rmdir(top), 0);
	snprintf(path, sizeof path, "%s/sparkops", xdg);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(xdg), 0);
	unsetenv("XDG_RUNTIME_DIR");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jobstat_sealed_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
