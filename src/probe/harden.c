// SPDX-License-Identifier: MIT
#include "probe/harden.h"
#include "util/dirscan.h"
#include "util/fileio.h"
#include "util/pagesize.h"
#include "util/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif

#if defined(__SANITIZE_ADDRESS__)
#define SP_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SP_UNDER_ASAN 1
#endif
#endif

/* Touch the stack a sampling loop will use, so it is resident (and, with
 * mlockall, locked) before memory gets tight. noinline: the frame must be
 * real. SP_HARDEN_STACK_BYTES covers a sample and its exposition with room
 * to spare (test_noalloc measures the deepest one); every page touched here
 * stays resident for the life of the process, so it is not made bigger. */
__attribute__((noinline)) void sp_harden_stack(void)
{
#ifdef SP_UNDER_ASAN
	return; /* ASan's frames are bigger and its stack is not locked */
#else
	volatile char pad[SP_HARDEN_STACK_BYTES];
	size_t step = (size_t)sp_page_size();
	for (size_t i = 0; i < sizeof pad; i += step)
		pad[i] = 0;
	pad[sizeof pad - 1] = 0;
#endif
}

__attribute__((unused)) static void fmt_limit(char *buf, size_t n, rlim_t v)
{
	if (v == RLIM_INFINITY)
		snprintf(buf, n, "unlimited");
	else if (v >= (1u << 20))
		snprintf(buf, n, "%llu MiB", (unsigned long long)(v >> 20));
	else
		snprintf(buf, n, "%llu KiB", (unsigned long long)(v >> 10));
}

#ifndef SP_UNDER_ASAN
static bool lock_current_only; /* locked without MCL_FUTURE: sp_harden_relock() locks again */
static bool locked;
#endif

void sp_harden_relock(void)
{
#ifndef SP_UNDER_ASAN
	if (locked && lock_current_only && mlockall(MCL_CURRENT | MCL_ONFAULT) < 0 && errno == EINVAL)
		(void)mlockall(MCL_CURRENT); /* over the limit: what was locked stays locked */
#endif
}

static int lock_memory(char *warn, size_t cap)
{
#ifdef SP_UNDER_ASAN
	/* ASan reserves terabytes of shadow: locking it would fail or take the box */
	(void)warn;
	(void)cap;
	return -ENOTSUP;
#else
	/* an unprivileged process may raise its soft limit up to the hard one */
	struct rlimit rl;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_MEMLOCK, &rl);
	}
	/* Under a finite RLIMIT_MEMLOCK (not root, no CAP_IPC_LOCK) MCL_FUTURE
	 * counts every later mapping against the limit, a thread's stack
	 * included: a process near it can no longer start a thread (EAGAIN).
	 * There what exists is locked now and again by sp_harden_relock() once
	 * the threads are up; the sampling path allocates nothing after that. */
	bool bounded = geteuid() != 0 && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
	int future = bounded ? 0 : MCL_FUTURE;
	lock_current_only = bounded;
	int r = mlockall(MCL_CURRENT | future | MCL_ONFAULT);
	if (r < 0 && errno == EINVAL) /* a kernel without MCL_ONFAULT */
		r = mlockall(MCL_CURRENT | future);
	if (r == 0) {
		locked = true;
		return 0;
	}
	int err = errno;
	if (warn && cap) {
		char lim[32] = "unknown";
		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
			fmt_limit(lim, sizeof lim, rl.rlim_cur);
		snprintf(warn, cap,
			 "cannot lock sparkops in memory (%s, RLIMIT_MEMLOCK is %s): under memory pressure its "
			 "pages can be reclaimed and sampling may stall; raise 'ulimit -l' or run as root",
			 strerror(err), lim);
	}
	return -err;
#endif
}

static int lower_own_oom_score(void)
{
	if (geteuid() != 0 || sp_paths_is_fixture())
		return -EPERM;
	char path[600];
	if (sp_proc_path(path, sizeof path, "self/oom_score_adj") < 0)
		return -ENAMETOOLONG;
	int fd = sp_open_proc(path, O_WRONLY);
	if (fd < 0)
		return fd;
	static const char v[] = "-900";
	ssize_t w = sp_write_full(fd, v, sizeof v - 1);
	int err = w < 0 ? -errno : 0;
	close(fd);
	return err;
}

unsigned sp_harden_process(unsigned flags, char *warn, size_t warn_cap)
{
	unsigned done = 0;
	if (warn && warn_cap)
		warn[0] = 0;
	mallopt(M_ARENA_MAX, 1);
	if ((flags & SP_HARDEN_MLOCK) && lock_memory(warn, warn_cap) == 0)
		done |= SP_HARDEN_MLOCK;
	if ((flags & SP_HARDEN_STACK) && (done & SP_HARDEN_MLOCK)) {
		sp_harden_stack();
		done |= SP_HARDEN_STACK;
	}
	if ((flags & SP_HARDEN_OOM) && lower_own_oom_score() == 0)
		done |= SP_HARDEN_OOM;
	return done;
}

void sp_close_fds_from(int lowfd)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, 0) == 0)
		return;
#endif
	/* an older kernel: list the open ones (the real /proc: this is about us,
	 * not a machine being inspected) */
	struct sp_dir d;
	if (sp_dir_open(&d, "/proc/self/fd") < 0) {
		for (int fd = lowfd; fd < 4096; fd++)
			close(fd);
		return;
	}
	const char *name;
	while ((name = sp_dir_next(&d))) {
		int64_t fd;
		if (sp_parse_i64(name, &fd) == 0 && fd >= lowfd && fd != d.fd && fd <= INT32_MAX)
			close((int)fd);
	}
	sp_dir_close(&d);
}
