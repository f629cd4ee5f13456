// SPDX-License-Identifier: MIT
/* util/input and cmd/cmdutil's sp_feed_fd: a named input never hangs
 * (FIFO refused, folder refused), the text check (64 KiB without a line end,
 * only NULs), and a mapped file cut shorter between the map and the read
 * fails with SP_EINPUT_SHRANK instead of SIGBUS. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmd/cmdutil.h"
#include "util/input.h"

static char dir[64];

static int setup(void **st)
{
	(void)st;
	snprintf(dir, sizeof dir, "/tmp/sp-input-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **st)
{
	(void)st;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

static void write_file(const char *p, const char *data, size_t len)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void opens(void **st)
{
	(void)st;
	char p[128];
	path_of(p, sizeof p, "fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(sp_input_open(p), -SP_EINPUT_FIFO); /* at once: no writer is waited for */
	assert_int_equal(sp_input_open(dir), -EISDIR);
	path_of(p, sizeof p, "loop");
	assert_int_equal(symlink(p, p), 0);
	assert_int_equal(sp_input_open(p), -ELOOP);
	path_of(p, sizeof p, "ok.log");
	write_file(p, "a\n", 2);
	int fd = sp_input_open(p);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	assert_non_null(strstr(sp_input_strerror(-SP_EINPUT_NOTTEXT), "not text"));
}

static void text_check(void **st)
{
	(void)st;
	static char big[SP_TEXT_PROBE + 10];
	memset(big, 'x', sizeof big);
	struct sp_text_check c = { 0 };
	assert_int_equal(sp_text_check_feed(&c, big, SP_TEXT_PROBE - 1), 0);
	assert_int_equal(sp_text_check_feed(&c, big, 1), -SP_EINPUT_NOTTEXT);
	/* a line end in the first 64 KiB: text, whatever follows */
	memset(&c, 0, sizeof c);
	big[SP_TEXT_PROBE - 1] = '\n';
	assert_int_equal(sp_text_check_feed(&c, big, sizeof big), 0);
	assert_int_equal(sp_text_check_end(&c), 0);
	/* a carriage return is a line end too (tqdm's bars) */
	memset(&c, 0, sizeof c);
	memset(big, 'x', sizeof big);
	big[100] = '\r';
	assert_int_equal(sp_text_check_feed(&c, big, sizeof big), 0);
	/* only NULs, short: refused at the end */
	memset(&c, 0, sizeof c);
	char z[100] = { 0 };
	assert_int_equal(sp_text_check_feed(&c, z, sizeof z), 0);
	assert_int_equal(sp_text_check_end(&c), -SP_EINPUT_NOTTEXT);
	/* an empty stream is text (an empty log says so itself) */
	memset(&c, 0, sizeof c);
	assert_int_equal(sp_text_check_end(&c), 0);
}

struct cut {
	int fd;
	int calls;
	unsigned long sum;
};

/* the first window: the file is cut to nothing, then the window is read */
static int feed_cut(void *ctx, const char *buf, size_t len)
{
	struct cut *c = ctx;
	if (c->calls++ == 0)
		assert_int_equal(ftruncate(c->fd, 0), 0);
	for (size_t i = 0; i < len; i += 4096)
		c->sum += (unsigned char)buf[i];
	return 0;
}

static void shrinks_under_the_map(void **st)
{
	(void)st;
	char p[128];
	path_of(p, sizeof p, "big.log");
	size_t n = 3u << 20;
	char *data = malloc(n);
	assert_non_null(data);
	for (size_t i = 0; i < n; i++)
		data[i] = i % 64 == 63 ? '\n' : 'a';
	write_file(p, data, n);
	free(data);
	struct sigaction before, sa;
	assert_int_equal(sigaction(SIGBUS, NULL, &before), 0);
	struct cut c = { open(p, O_RDWR), 0, 0 };
	assert_true(c.fd >= 0);
	assert_int_equal(sp_feed_fd(c.fd, feed_cut, &c), -SP_EINPUT_SHRANK);
	assert_int_equal(c.calls, 1);
	close(c.fd);
	/* the guard is gone afterwards: SIGBUS's handler is what it was */
	assert_int_equal(sigaction(SIGBUS, NULL, &sa), 0);
	assert_true(sa.sa_handler == before.sa_handler);
}

static int feed_count(void *ctx, const char *buf, size_t len)
{
	(void)buf;
	*(size_t *)ctx += len;
	return 0;
}

static void not_text_streams(void **st)
{
	(void)st;
	char p[128];
	size_t got = 0;
	/* a sparse 1 GiB file: refused after the first 64 KiB, not read through */
	path_of(p, sizeof p, "sparse.log");
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1L << 30), 0);
	assert_int_equal(sp_feed_fd(fd, feed_count, &got), -SP_EINPUT_NOTTEXT);
	assert_int_equal(got, 0);
	close(fd);
	/* /dev/zero: the same, at once */
	fd = open("/dev/zero", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(sp_feed_fd(fd, feed_count, &got), -SP_EINPUT_NOTTEXT);
	close(fd);
	/* a text file goes through whole */
	path_of(p, sizeof p, "text.log");
	write_file(p, "a,b\n1,2\n", 8);
	fd = open(p, O_RDONLY);
	assert_int_equal(sp_feed_fd(fd, feed_count, &got), 0);
	assert_int_equal(got, 8);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(opens),
		cmocka_unit_test(text_check),
		cmocka_unit_test(shrinks_under_the_map),
		cmocka_unit_test(not_text_streams),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
