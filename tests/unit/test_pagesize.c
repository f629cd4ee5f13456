// SPDX-License-Identifier: MIT
/* The page size: from the system, overridable on fixtures, and the RSS sums
 * that multiply page counts by it, on 4 KiB and 64 KiB pages (aarch64
 * kernels ship either). */
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

#include "util/pagesize.h"
#include "util/paths.h"
#include "watch/child.h"

static void from_the_system(void **st)
{
	(void)st;
	sp_page_size_set(0);
	sp_paths_init(NULL, NULL);
	assert_int_equal(sp_page_size(), (uint64_t)sysconf(_SC_PAGESIZE));
	/* the environment is not trusted on the live machine */
	setenv("SPARKOPS_PAGE_SIZE", "65536", 1);
	assert_int_equal(sp_page_size(), (uint64_t)sysconf(_SC_PAGESIZE));
	unsetenv("SPARKOPS_PAGE_SIZE");
}

static void env_on_fixtures(void **st)
{
	(void)st;
	sp_page_size_set(0);
	sp_paths_init("/nonexistent/fixture/proc", NULL);
	uint64_t sys = (uint64_t)sysconf(_SC_PAGESIZE);
	setenv("SPARKOPS_PAGE_SIZE", "65536", 1);
	assert_int_equal(sp_page_size(), 65536);
	setenv("SPARKOPS_PAGE_SIZE", "16384", 1);
	assert_int_equal(sp_page_size(), 16384);
	const char *bad[] = { "3000", "64k", "0", "-4096", "4294967296", "" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		setenv("SPARKOPS_PAGE_SIZE", bad[i], 1);
		assert_int_equal(sp_page_size(), sys);
	}
	unsetenv("SPARKOPS_PAGE_SIZE");
	sp_paths_init(NULL, NULL);
}

static void setter(void **st)
{
	(void)st;
	sp_page_size_set(65536);
	assert_int_equal(sp_page_size(), 65536);
	sp_page_size_set(0);
	assert_int_equal(sp_page_size(), (uint64_t)sysconf(_SC_PAGESIZE));
}

/* a /proc with PID/stat files: rss (field 24) in pages */
static void put_stat(const char *root, int pid, int ppid, unsigned long rss_pages)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%d", root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/%d/stat", root, pid);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%d (py thon) S %d %d %d 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 100 1000000 %lu "
		   "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n",
		pid, ppid, pid, pid, rss_pages);
	fclose(f);
}

static void tree_rss(void **st)
{
	(void)st;
	char root[] = "/tmp/sp-pagesize-XXXXXX";
	assert_non_null(mkdtemp(root));
	put_stat(root, 100, 1, 1000);   /* the watched process */
	put_stat(root, 101, 100, 250);  /* its child */
	put_stat(root, 102, 101, 6);    /* a grandchild */
	put_stat(root, 200, 1, 99999);  /* someone else's */
	static struct sp_tree t;
	const uint64_t sizes[] = { 4096, 65536 };
	for (size_t i = 0; i < 2; i++) {
		sp_page_size_set(sizes[i]);
		assert_int_equal(sp_tree_scan(&t, root, 100, true, 0), 0);
		assert_int_equal(t.n, 3);
		assert_int_equal(t.rss_bytes, 1256 * sizes[i]);
		sp_tree_refresh(&t, root);
		assert_int_equal(t.rss_bytes, 1256 * sizes[i]);
	}
	sp_page_size_set(0);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(from_the_system),
		cmocka_unit_test(env_on_fixtures),
		cmocka_unit_test(setter),
		cmocka_unit_test(tree_rss),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
