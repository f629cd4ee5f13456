// SPDX-License-Identifier: MIT
/* The process view across scans (probe/procs.c), on a /proc tree made here:
 * a scan reads the pids it has not seen, a pid whose directory changed (the
 * pid reused), and in rotation one in eight of the known ones; the listed
 * ones are re-read every sample; a first scan of a crowded tree shares its
 * reads among threads and must find what one thread finds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "qemu_skip.h"

#include "probe/probe.h"
#include "util/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MIB (1024ULL * 1024ULL)
static char root[] = "/tmp/sparkops-procview-XXXXXX";
static char procdir[600];
static struct sp_sample S;
static struct sp_read_opts O;

/* /proc/PID/stat as the kernel writes it: start time in field 22, resident
 * pages (4 KiB in this tree: SPARKOPS_PAGE_SIZE) in field 24 */
static void put_proc(int pid, const char *comm, uint64_t rss_mib, uint64_t start)
{
	char d[700], f[800], cmd[900];
	snprintf(d, sizeof d, "%s/%d", procdir, pid);
	mkdir(d, 0755);
	snprintf(f, sizeof f, "%s/stat", d);
	FILE *fp = fopen(f, "w");
	assert_non_null(fp);
	fprintf(fp, "%d (%s) S 1 %d %d 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 %llu 1000000 %llu 18446744073709551615\n",
		pid, comm, pid, pid, (unsigned long long)start, (unsigned long long)(rss_mib * 256));
	fclose(fp);
	snprintf(f, sizeof f, "%s/cmdline", d);
	fp = fopen(f, "w");
	assert_non_null(fp);
	fprintf(fp, "%s%c--flag%c", comm, 0, 0);
	fclose(fp);
	(void)cmd;
}

static void rm_proc(int pid)
{
	char c[800];
	snprintf(c, sizeof c, "rm -rf %s/%d", procdir, pid);
	assert_int_equal(system(c), 0);
}

static int setup(void **st)
{
	(void)st;
	if (!mkdtemp(root))
		return -1;
	snprintf(procdir, sizeof procdir, "%s/proc", root);
	mkdir(procdir, 0755);
	setenv("SPARKOPS_PAGE_SIZE", "4096", 1);
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	char c[700];
	snprintf(c, sizeof c, "rm -rf %s", root);
	return system(c) == 0 ? 0 : -1;
}

static bool listed(int pid, uint64_t *rss)
{
	for (int i = 0; i < S.nprocs; i++)
		if (S.procs[i].pid == pid) {
			if (rss)
				*rss = S.procs[i].rss_bytes;
			return true;
		}
	return false;
}

static void sample(bool scan)
{
	if (scan)
		sp_procs_scan_due();
	sp_procs_read(&S, &O);
}

static void view_across_scans(void **st)
{
	(void)st;
	rm_proc(0); /* nothing there: a clean tree */
	for (int pid = 100; pid < 140; pid++)
		put_proc(pid, "sleep", 1, 1000 + (uint64_t)pid);
	put_proc(200, "bigjob", 900, 5000);
	sp_paths_init(procdir, "/nonexistent-sys");
	sp_read_opts_init(&O);
	O.proc_min_rss = 100 * MIB;
	uint64_t rss = 0;
	sample(false);
	assert_int_equal(S.procs_seen, 41);
	assert_true(listed(200, &rss));
	assert_int_equal(rss, 900 * MIB);
	assert_false(listed(120, NULL));

	/* a listed process's RSS is current at every sample, scan or not */
	put_proc(200, "bigjob", 1200, 5000);
	sample(false);
	assert_true(listed(200, &rss));
	assert_int_equal(rss, 1200 * MIB);

	/* a new heavy process shows at the next scan, not before */
	put_proc(300, "newjob", 500, 6000);
	sample(false);
	assert_false(listed(300, NULL));
	sample(true);
	assert_true(listed(300, NULL));
	assert_int_equal(S.procs_seen, 42);

	/* a listed one that ended is gone at the next sample */
	rm_proc(300);
	sample(false);
	assert_false(listed(300, NULL));

	/* a pid reused (its directory made anew) by a heavy process: the
	 * next scan reads it, whatever the rotation */
	put_proc(9110, "reused", 700, 7000); /* made while 110's exists: another inode */
	rm_proc(110);
	char a[700], b[700];
	snprintf(a, sizeof a, "%s/9110", procdir);
	snprintf(b, sizeof b, "%s/110", procdir);
	assert_int_equal(rename(a, b), 0);
	sample(true);
	assert_true(listed(110, &rss));
	assert_int_equal(rss, 700 * MIB);

	/* a known light process that grew in place (same directory): seen
	 * within eight scans (the rotation), never missed for good */
	put_proc(125, "sleep", 800, 1000 + 125);
	int scans = 0;
	while (!listed(125, NULL) && scans < 8) {
		sample(true);
		scans++;
	}
	assert_true(listed(125, NULL));

	/* a listed process whose pid now names another (its start time
	 * differs) is dropped at the next sample, until a scan reads it */
	put_proc(200, "other", 10, 9999);
	sample(false);
	assert_false(listed(200, NULL));

	/* the period: a quick scan of a small tree waits the shortest one,
	 * 5 s for the monitors, what top asks (2 s) for top (the cost factor
	 * made 1 here, so that a slow build's scan cannot lift it over) */
	assert_true(O.proc_scan_min_s == SP_DEFAULT_PROC_SCAN_MIN_S);
	assert_true(O.proc_scan_cost_x == SP_DEFAULT_PROC_SCAN_COST_X);
	O.proc_scan_cost_x = 1;
	sample(true);
	assert_true(sp_procs_period() == SP_DEFAULT_PROC_SCAN_MIN_S);
	O.proc_scan_min_s = SP_TOP_PROC_SCAN_MIN_S;
	sample(true);
	assert_true(sp_procs_period() == SP_TOP_PROC_SCAN_MIN_S);
	O.proc_scan_min_s = 0; /* unset: the default, never a scan every sample */
	sample(true);
	assert_true(sp_procs_period() == SP_DEFAULT_PROC_SCAN_MIN_S);
	O.proc_scan_min_s = SP_DEFAULT_PROC_SCAN_MIN_S;
	/* the period is the factor times the scan's CPU time, at most 60 s: a
	 * factor no scan's cost can keep under it reaches the cap; 0 (unset)
	 * is the monitors' default, not a scan every sample */
	O.proc_scan_cost_x = 1e12;
	sample(true);
	assert_true(sp_procs_period() == 60.0);
	O.proc_scan_cost_x = 0;
	sample(true);
	assert_true(sp_procs_period() >= SP_DEFAULT_PROC_SCAN_MIN_S);
	O.proc_scan_cost_x = SP_DEFAULT_PROC_SCAN_COST_X;
}

/* A first scan of a crowded tree (past the point where it shares its reads
 * among threads) lists exactly what the same scan on one thread lists. */
static void crowded_first_scan(void **st)
{
	SKIP_UNDER_QEMU(QEMU_THREADS); /* its scan starts threads, which qemu-user 7.2 hangs */
	(void)st;
	char c[700];
	snprintf(c, sizeof c, "rm -rf %s/*", procdir);
	assert_int_equal(system(c), 0);
	for (int pid = 1000; pid < 2300; pid++)
		put_proc(pid, pid % 97 == 0 ? "python3" : "sleep", pid % 50 == 0 ? 300 + (uint64_t)pid / 100 : 1,
			 (uint64_t)pid);
	sp_paths_init(procdir, "/nonexistent-sys"); /* the same root: a scan, not a fresh one */
	sp_paths_init("/nonexistent-proc", "/nonexistent-sys");
	sp_read_opts_init(&O);
	O.proc_min_rss = 100 * MIB;
	sp_procs_read(&S, &O); /* another root: the view starts afresh there */
	sp_paths_init(procdir, "/nonexistent-sys");
	sp_procs_read(&S, &O); /* a fresh scan: all 1,300 read, on several threads where the CPUs allow */
	assert_int_equal(S.procs_seen, 1300);
	int heavy = 0, py = 0;
	for (int pid = 1000; pid < 2300; pid++) {
		bool want_heavy = pid % 50 == 0;
		bool want_py = pid % 97 == 0; /* an interpreter is listed whatever its size */
		heavy += want_heavy;
		py += want_py && !want_heavy;
		if (want_heavy)
			assert_true(listed(pid, NULL));
	}
	int n = S.nprocs;
	assert_true(n >= heavy && n <= heavy + py);
	/* and the next (rotating) scan keeps every one of them */
	sample(true);
	for (int pid = 1000; pid < 2300; pid += 50)
		assert_true(listed(pid, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(view_across_scans),
		cmocka_unit_test(crowded_first_scan),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
