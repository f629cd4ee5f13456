// SPDX-License-Identifier: MIT
/* The running job's status file (watch/jobstat.c): its text (format, parse,
 * a torn read), the writer and the reader on disk, where it goes, and that
 * SPARKOPS_RUN_DIR seals both the writer and the reader into one root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "watch/jobstat.h"

static void jobstat_text(void **st)
{
	(void)st;
	struct sp_jobstat j, back;
	char buf[2048];
	sp_jobstat_clear(&j);
	j.pid = 4242;
	snprintf(j.mode, sizeof j.mode, "watch");
	snprintf(j.command, sizeof j.command, "a\nb");
	j.started_unix = 1000.5;
	j.updated_unix = 1010.25;
	j.interval_s = 2;
	j.samples = 6;
	j.rate = 3.5;
	snprintf(j.unit, sizeof j.unit, "it/s");
	int n = sp_jobstat_format(&j, buf, sizeof buf);
	assert_true(n > 0);
	assert_non_null(strstr(buf, "version=1\npid=4242\nmode=watch\ncommand=a?b\n"));
	assert_non_null(strstr(buf, "\nrate=3.5\n"));
	assert_non_null(strstr(buf, "\nbaseline=\n")); /* unknown is empty, not 0 */
	assert_int_equal(sp_jobstat_parse(buf, (size_t)n, &back), 0);
	assert_int_equal(back.pid, 4242);
	assert_string_equal(back.mode, "watch");
	assert_true(back.rate == 3.5);
	assert_true(isnan(back.baseline));
	assert_true(back.samples == 6);
	assert_true(sp_jobstat_fresh(&back, 1012));
	assert_false(sp_jobstat_fresh(&back, 1010.25 + 3 * 2 + 11));
	/* refused: no version, a future version, no pid; unknown keys ignored */
	assert_int_equal(sp_jobstat_parse("pid=1\n", 6, &back), -1);
	assert_int_equal(sp_jobstat_parse("version=9\npid=1\n", 16, &back), -1);
	assert_int_equal(sp_jobstat_parse("version=1\n", 10, &back), -1);
	const char *x = "version=1\nnew_key=7\npid=5\nmode=run";
	assert_int_equal(sp_jobstat_parse(x, strlen(x), &back), 0);
	assert_string_equal(back.mode, "run");
	/* too small a buffer says so */
	assert_int_equal(sp_jobstat_format(&j, buf, 20), -1);

	/* a numbered write: seq first, end with the text's sum last */
	j.seq = 7;
	n = sp_jobstat_format(&j, buf, sizeof buf);
	assert_true(n > 0);
	assert_true(strncmp(buf, "seq=7\nversion=1\n", 16) == 0);
	assert_non_null(strstr(buf, "\nend=7/"));
	assert_int_equal(sp_jobstat_parse(buf, (size_t)n, &back), 0);
	assert_true(back.seq == 7);
	/* what follows the end line (an older, longer write's tail before the
	 * cut) is not read */
	char tail[2200];
	snprintf(tail, sizeof tail, "%smode=run\npid=99\n", buf);
	assert_int_equal(sp_jobstat_parse(tail, strlen(tail), &back), 0);
	assert_string_equal(back.mode, "watch");
	assert_int_equal(back.pid, 4242);
	/* a read that met a write: no end, another write's end, or a middle
	 * from another write under matching seq and end lines */
	assert_int_equal(sp_jobstat_parse(buf, (size_t)n / 2, &back), -EAGAIN);
	struct sp_jobstat k = j;
	k.seq = 8;
	char other[2048];
	int m = sp_jobstat_format(&k, other, sizeof other);
	assert_true(m > 0);
	char mixed[4096];
	snprintf(mixed, sizeof mixed, "%.*s%s", (int)(strstr(buf, "\nend=") - buf + 1), buf, strstr(other, "end="));
	assert_int_equal(sp_jobstat_parse(mixed, strlen(mixed), &back), -EAGAIN);
	char *rate = strstr(buf, "rate=3.5");
	assert_non_null(rate);
	rate[5] = '4'; /* one byte of the middle from another write */
	assert_int_equal(sp_jobstat_parse(buf, (size_t)n, &back), -EAGAIN);
	assert_int_equal(sp_jobstat_parse("seq=x\nversion=1\npid=5\nend=1/00000000\n", 38, &back), -EAGAIN);
}

static void jobstat_files(void **st)
{
	(void)st;
	char dir[] = "/tmp/sp-jobstat-XXXXXX";
	assert_non_null(mkdtemp(dir));
	setenv("SPARKOPS_RUN_DIR", dir, 1); /* sealed: a watch running here is not seen */
	struct sp_jobstat_file f;
	assert_int_equal(sp_jobstat_open(&f, getpid()), 0);
	struct sp_jobstat j, found[SP_JOBSTAT_MAX];
	sp_jobstat_clear(&j);
	j.pid = (int)getpid();
	snprintf(j.mode, sizeof j.mode, "run");
	j.interval_s = 1;
	j.updated_unix = 5000;
	assert_int_equal(sp_jobstat_write(&f, &j), 0);
	assert_int_equal(sp_jobstat_find(found, SP_JOBSTAT_MAX, 5001), 1);
	assert_int_equal(found[0].pid, (int)getpid());
	assert_true(found[0].seq == 1);
	/* later writes go in place: the same file, no temporary left */
	char path[400];
	snprintf(path, sizeof path, "%s/run/%d", dir, (int)getpid());
	struct stat s0, s1;
	assert_int_equal(stat(path, &s0), 0);
	assert_int_equal(s0.st_mode & 0777, 0644);
	snprintf(j.command, sizeof j.command, "a long command line that the next write drops");
	assert_int_equal(sp_jobstat_write(&f, &j), 0);
	j.command[0] = 0;
	j.samples = 12;
	assert_int_equal(sp_jobstat_write(&f, &j), 0);
	assert_int_equal(stat(path, &s1), 0);
	assert_true(s0.st_ino == s1.st_ino);
	assert_int_equal(sp_jobstat_find(found, SP_JOBSTAT_MAX, 5001), 1);
	assert_true(found[0].seq == 3 && found[0].samples == 12);
	assert_string_equal(found[0].command, "");
	char fbuf[3000];
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	size_t flen = fread(fbuf, 1, sizeof fbuf - 1, fp);
	fclose(fp);
	fbuf[flen] = 0;
	assert_int_equal(flen, strstr(fbuf, "\nend=") - fbuf + 1 + strlen(strstr(fbuf, "\nend=") + 1)); /* cut to length */
	assert_null(strstr(fbuf, "long command"));
	/* unlinked under the writer (a cleaner of /tmp): made anew by the
	 * first write after SP_JOBSTAT_RECHECK_S (looked at that often, not
	 * every sample); the clock moved on by hand */
	assert_int_equal(unlink(path), 0);
	j.samples = 13;
	assert_int_equal(sp_jobstat_write(&f, &j), 0);
	assert_int_equal(sp_jobstat_find(found, SP_JOBSTAT_MAX, 5001), 0);
	f.checked -= SP_JOBSTAT_RECHECK_S;
	assert_int_equal(sp_jobstat_write(&f, &j), 0);
	assert_int_equal(sp_jobstat_find(found, SP_JOBSTAT_MAX, 5001), 1);
	assert_true(found[0].samples == 13);
	/* stale: not shown */
	assert_int_equal(sp_jobstat_find(found, SP_JOBSTAT_MAX, 6000), 0);
	sp_jobstat_close(&f);
	assert_int_equal(sp_jobstat_find(found, SP_JOBSTAT_MAX, 5001), 0);
	char sub[300];
	snprintf(sub, sizeof sub, "%s/run", dir);
	assert_int_equal(rmdir(sub), 0);
	assert_int_equal(rmdir(dir), 0);
	unsetenv("SPARKOPS_RUN_DIR");
}

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
		cmocka_unit_test(jobstat_text),
		cmocka_unit_test(jobstat_files),
		cmocka_unit_test(jobstat_sealed_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
