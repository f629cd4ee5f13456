// SPDX-License-Identifier: MIT
/* util/fileio's one door (struct sp_out): the folder walk with and without
 * openat2, links trusted only when the caller's or root's, the folder held
 * while its path is swapped, hard links refused, a stream that never blocks
 * (records buffered, then dropped and counted), one file in two roles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/fileio.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/test_wdoor.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	sp_out_walk_only(false);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void p(char *out, size_t n, const char *rel)
{
	snprintf(out, n, "%s/%s", dir, rel);
}

static void slurp(const char *path, char *buf, size_t cap)
{
	size_t len = 0;
	assert_int_equal(sp_read_file(path, buf, cap, &len), 0);
}

/* our own link as a folder on the way is followed, with openat2 and with
 * the walk; the file lands in the link's target */
static void own_link_parent(void **st)
{
	(void)st;
	char real[128], link[128], out[160], buf[64], msg[512];
	for (int walk = 0; walk < 2; walk++) {
		sp_out_walk_only(walk);
		snprintf(real, sizeof real, "%s/real%d", dir, walk);
		snprintf(link, sizeof link, "%s/link%d", dir, walk);
		assert_int_equal(mkdir(real, 0700), 0);
		assert_int_equal(symlink(real, link), 0);
		snprintf(out, sizeof out, "%s/x.txt", link);
		assert_int_equal(sp_write_output(out, "hello", 5, 0644, msg, sizeof msg), 0);
		snprintf(out, sizeof out, "%s/x.txt", real);
		slurp(out, buf, sizeof buf);
		assert_string_equal(buf, "hello");
	}
}

/* another user's link, at the end or as a folder on the way: refused,
 * with either resolver (as root only: the link must be someone else's) */
static void foreign_link_refused(void **st)
{
	(void)st;
	if (geteuid() != 0)
		skip();
	char victim[128], pub[128], lk[160], out[200], buf[64], msg[512];
	p(victim, sizeof victim, "victim");
	assert_int_equal(sp_write_output(victim, "precious", 8, 0600, NULL, 0), 0);
	p(pub, sizeof pub, "pub");
	assert_int_equal(mkdir(pub, 01777), 0);
	assert_int_equal(chmod(pub, 01777), 0);
	for (int walk = 0; walk < 2; walk++) {
		sp_out_walk_only(walk);
		snprintf(lk, sizeof lk, "%s/end%d", pub, walk);
		assert_int_equal(symlink(victim, lk), 0);
		assert_int_equal(lchown(lk, 65534, 65534), 0);
		assert_int_equal(sp_write_output(lk, "x", 1, 0644, msg, sizeof msg), -EPERM);
		assert_non_null(strstr(msg, "symbolic link owned by"));
		snprintf(lk, sizeof lk, "%s/dir%d", pub, walk);
		assert_int_equal(symlink(dir, lk), 0);
		assert_int_equal(lchown(lk, 65534, 65534), 0);
		snprintf(out, sizeof out, "%s/victim", lk);
		assert_int_equal(sp_write_output(out, "x", 1, 0644, msg, sizeof msg), -EPERM);
		slurp(victim, buf, sizeof buf);
		assert_string_equal(buf, "precious");
	}
}

/* the folder is held: swapped for a link after resolving, the file still
 * lands in the folder that was resolved */
static void swapped_parent_held(void **st)
{
	(void)st;
	char d[128], d2[128], elsewhere[128], out[160], buf[64], msg[512];
	p(d, sizeof d, "d");
	p(d2, sizeof d2, "d.old");
	p(elsewhere, sizeof elsewhere, "elsewhere");
	assert_int_equal(mkdir(d, 0700), 0);
	assert_int_equal(mkdir(elsewhere, 0700), 0);
	snprintf(out, sizeof out, "%s/run.json", d);
	struct sp_out *o = malloc(sizeof *o);
	assert_non_null(o);
	assert_int_equal(sp_out_resolve(o, out, msg, sizeof msg), 0);
	assert_int_equal(rename(d, d2), 0);
	assert_int_equal(symlink(elsewhere, d), 0);
	assert_int_equal(sp_out_replace(o, "{}", 2, 0644, 1, false, msg, sizeof msg), 0);
	sp_out_close(o, 0);
	free(o);
	snprintf(out, sizeof out, "%s/run.json", d2);
	slurp(out, buf, sizeof buf);
	assert_string_equal(buf, "{}");
	snprintf(out, sizeof out, "%s/run.json", elsewhere);
	assert_int_equal(access(out, F_OK), -1);
}

/* a regular file with two names: ours in a private folder is fine; in a
 * folder others may write it is refused, and not truncated */
static void hard_links(void **st)
{
	(void)st;
	char a[128], b[128], pub[128], c[160], buf[64], msg[512];
	p(a, sizeof a, "a");
	p(b, sizeof b, "b");
	assert_int_equal(sp_write_output(a, "keep", 4, 0644, NULL, 0), 0);
	assert_int_equal(link(a, b), 0);
	struct sp_out *o = malloc(sizeof *o);
	assert_non_null(o);
	assert_int_equal(sp_out_open(o, b, SP_OUT_APPEND, 0644, msg, sizeof msg), 0);
	sp_out_close(o, 0);
	p(pub, sizeof pub, "open");
	assert_int_equal(mkdir(pub, 0777), 0);
	assert_int_equal(chmod(pub, 0777), 0);
	snprintf(c, sizeof c, "%s/c", pub);
	assert_int_equal(link(a, c), 0);
	assert_int_equal(sp_out_open(o, c, SP_OUT_TRUNC, 0644, msg, sizeof msg), -EMLINK);
	assert_non_null(strstr(msg, "hard link"));
	free(o);
	slurp(a, buf, sizeof buf);
	assert_string_equal(buf, "keep");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* a FIFO whose reader does not read: writes never wait; records are
 * buffered, then dropped and counted; what arrives is whole records in
 * order once the reader reads */
static void stream_never_blocks(void **st)
{
	(void)st;
	char f[128], msg[512];
	p(f, sizeof f, "fifo");
	assert_int_equal(mkfifo(f, 0600), 0);
	int rd = open(f, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	struct sp_out *o = malloc(sizeof *o);
	assert_non_null(o);
	assert_int_equal(sp_out_open(o, f, SP_OUT_TRUNC, 0644, msg, sizeof msg), 0);
	assert_true(o->stream);
	char rec[100];
	memset(rec, 'r', sizeof rec - 1);
	rec[sizeof rec - 1] = '\n';
	double t0 = now_s();
	long ok = 0, dropped = 0;
	for (int i = 0; i < 5000; i++) {
		int e = sp_out_write(o, rec, sizeof rec);
		if (e == 0)
			ok++;
		else if (e == -EAGAIN)
			dropped++;
		else
			fail();
	}
	assert_true(now_s() - t0 < 2.0); /* never waited on the reader */
	assert_true(dropped > 0);
	assert_int_equal(sp_out_dropped(o), dropped);
	/* the reader reads: the buffer goes on at the next write and at close */
	char *got = malloc(1 << 20);
	assert_non_null(got);
	size_t have = 0;
	for (int round = 0; round < 200; round++) {
		ssize_t r;
		while ((r = read(rd, got + have, (1 << 20) - have)) > 0)
			have += (size_t)r;
		if (round == 0)
			(void)sp_out_write(o, rec, sizeof rec), ok++;
		if (round == 1)
			sp_out_close(o, 1.0);
		if (round > 1 && r == 0)
			break;
		usleep(2000);
	}
	close(rd);
	assert_int_equal(have % sizeof rec, 0);
	assert_int_equal((long)(have / sizeof rec), ok);
	for (size_t i = 0; i < have; i++)
		assert_int_equal(got[i], rec[i % sizeof rec]);
	free(got);
	free(o);
}

/* a folder is never written */
static void refusals(void **st)
{
	(void)st;
	char msg[512];
	struct sp_out *o = malloc(sizeof *o);
	assert_non_null(o);
	assert_int_equal(sp_out_open(o, dir, SP_OUT_TRUNC, 0644, msg, sizeof msg), -EISDIR);
	/* block devices: tests/cli (mknod only in a private mount namespace) */
	free(o);
}

static void distinct(void **st)
{
	(void)st;
	char a[128], b[160], msg[512];
	p(a, sizeof a, "same");
	snprintf(b, sizeof b, "%s/./same", dir);
	assert_int_equal(sp_out_distinct("--svg", a, "--html", b, msg, sizeof msg), -1);
	assert_non_null(strstr(msg, "same file"));
	assert_int_equal(sp_out_distinct("--svg", "-", "--html", "-", msg, sizeof msg), -1);
	assert_int_equal(sp_out_distinct("--svg", "-", "--html", a, msg, sizeof msg), 0);
	assert_int_equal(sp_out_distinct("--svg", "/dev/null", "--html", "/dev/null", msg, sizeof msg), 0);
	assert_int_equal(sp_out_distinct("--svg", NULL, "--html", a, msg, sizeof msg), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(own_link_parent, setup, teardown),
		cmocka_unit_test_setup_teardown(foreign_link_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(swapped_parent_held, setup, teardown),
		cmocka_unit_test_setup_teardown(hard_links, setup, teardown),
		cmocka_unit_test_setup_teardown(stream_never_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(distinct, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
