// SPDX-License-Identifier: MIT
/* The message hook (util/msg.h, sp_msg_before): called with the context it
 * was set with, before the message is written, once per message and from
 * any thread; cleared, it is not called. run/watch clear their live status
 * line through it, with the engine's state as the context. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/msg.h"
#include "qemu_skip.h"

struct seen {
	int calls;
	void *ctx;
	off_t stderr_size; /* the size of stderr's file when the hook ran */
};
static struct seen seen;

static void hook(void *ctx)
{
	struct stat st;
	seen.calls++;
	seen.ctx = ctx;
	seen.stderr_size = fstat(STDERR_FILENO, &st) == 0 ? st.st_size : -1;
}

/* stderr into a fresh temporary file for the test; the old one in *saved */
static void stderr_to_file(int *saved)
{
	char path[] = "/tmp/sparkops-msg-hook-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	*saved = dup(STDERR_FILENO);
	assert_true(*saved >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
}

static off_t stderr_back(int saved)
{
	struct stat st;
	off_t n = fstat(STDERR_FILENO, &st) == 0 ? st.st_size : -1;
	dup2(saved, STDERR_FILENO);
	close(saved);
	return n;
}

static void called_with_its_context_before_the_message(void **st)
{
	(void)st;
	int state = 42, saved;
	memset(&seen, 0, sizeof seen);
	stderr_to_file(&saved);
	sp_msg_before(hook, &state);
	sp_warn("a warning %d", 1);
	sp_msg_before(NULL, NULL);
	off_t written = stderr_back(saved);
	assert_int_equal(seen.calls, 1);
	assert_ptr_equal(seen.ctx, &state);
	assert_int_equal(seen.stderr_size, 0); /* nothing of the message yet */
	assert_true(written > 0);
}

static void once_per_message_and_not_when_cleared(void **st)
{
	(void)st;
	int a = 1, b = 2, saved;
	memset(&seen, 0, sizeof seen);
	stderr_to_file(&saved);
	sp_msg_before(hook, &a);
	sp_note("one");
	(void)sp_error("two");
	assert_int_equal(seen.calls, 2);
	assert_ptr_equal(seen.ctx, &a);
	sp_msg_before(hook, &b); /* a new context replaces the old */
	sp_warn("three");
	assert_int_equal(seen.calls, 3);
	assert_ptr_equal(seen.ctx, &b);
	sp_msg_before(NULL, NULL);
	sp_warn("four");
	stderr_back(saved);
	assert_int_equal(seen.calls, 3);
}

static void *warn_thread(void *arg)
{
	(void)arg;
	sp_warn("from another thread");
	return NULL;
}

static void from_another_thread(void **st)
{
	(void)st;
	SKIP_UNDER_QEMU(QEMU_THREADS);
	int state = 7, saved;
	memset(&seen, 0, sizeof seen);
	stderr_to_file(&saved);
	sp_msg_before(hook, &state);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, warn_thread, NULL), 0);
	pthread_join(t, NULL);
	sp_msg_before(NULL, NULL);
	stderr_back(saved);
	assert_int_equal(seen.calls, 1);
	assert_ptr_equal(seen.ctx, &state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(called_with_its_context_before_the_message),
		cmocka_unit_test(once_per_message_and_not_when_cleared),
		cmocka_unit_test(from_another_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
