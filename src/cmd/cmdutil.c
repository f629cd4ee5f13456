// SPDX-License-Identifier: MIT
#include "cmd/cmdutil.h"
#include "cmd/cli.h"
#include "out/prom.h"
#include "probe/kmsg.h"
#include "probe/probe.h"
#include "util/input.h"
#include "util/paths.h"
#include "util/units.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

const char *sp_opt_no_processes(void *ro, const char *unused)
{
	(void)unused;
	((struct sp_read_opts *)ro)->what &= ~(unsigned)SP_READ_PROCS;
	return NULL;
}

static struct sp_kmsg kmsg = { .fd = -1 };
static bool kmsg_live;

void sp_kmsg_start(const char *cmd, const struct sp_read_opts *ro)
{
	if (ro->kmsg_path) {
		sp_kmsg_open(&kmsg, ro->kmsg_path);
		if (kmsg.why != SP_OK)
			sp_usage_error(cmd, "--kmsg '%s': %s", ro->kmsg_path, sp_why_text(kmsg.why));
	} else {
		/* the live log, opened at the first exposition (after the server's
		 * socket and libraries); without permission (not root,
		 * dmesg_restrict) the family is left out */
		kmsg_live = !sp_paths_is_fixture();
	}
}

/* how long an exposition keeps the platform fingerprint (sp_prom_read) */
#define SP_PLATFORM_REREAD_S 60.0

void sp_prom_read(struct sp_sample *s, const struct sp_read_opts *ro, struct sp_prom_info *info)
{
	double t0 = sp_mono_now();
	sp_sample_read(s, ro);
	/* one exposition at a time (metrics' loop, serve's one fill thread).
	 * The fingerprint's files (/proc/version, the os and DGX releases, DMI:
	 * seven opens, half of a fresh scrape's system calls) do not change
	 * while a server runs: they are read again every SP_PLATFORM_REREAD_S,
	 * or at once when NVML's driver or CUDA version changes */
	static struct sp_platform platform;
	static double platform_at;
	static bool platform_valid;
	static char gpu_driver[sizeof s->gpu_driver];
	static enum sp_why gpu_driver_why, cuda_driver_why;
	static int cuda_driver;
	if (!platform_valid || t0 - platform_at >= SP_PLATFORM_REREAD_S || t0 < platform_at ||
	    s->gpu_driver_why != gpu_driver_why || s->cuda_driver_why != cuda_driver_why ||
	    s->cuda_driver != cuda_driver || strcmp(s->gpu_driver, gpu_driver) != 0) {
		sp_platform_read(&platform, s);
		platform_at = t0;
		platform_valid = true;
		gpu_driver_why = s->gpu_driver_why;
		cuda_driver_why = s->cuda_driver_why;
		cuda_driver = s->cuda_driver;
		snprintf(gpu_driver, sizeof gpu_driver, "%s", s->gpu_driver);
	}
	sp_prom_set_platform(&platform);
	if (kmsg_live) {
		kmsg_live = false;
		sp_kmsg_open(&kmsg, NULL);
	}
	if (kmsg.why == SP_OK && kmsg.fd >= 0) {
		sp_kmsg_poll(&kmsg);
		sp_prom_set_driver_errors(kmsg.count);
	}
	*info = (struct sp_prom_info){ SPARKOPS_VERSION, sp_mono_now() - t0, !(ro->what & SP_READ_PROCS) };
}

/* A regular file is mapped a window at a time instead of read: the parsers
 * see the page cache itself, without the kernel's copy into a buffer (half
 * the CPU time of `report` on a 250 MB log). The window is unmapped before
 * the next one, so resident memory stays one window (4 MiB) above a read.
 * The size is checked again before each window: a file cut shorter while it
 * is read ends early, as a read would see it. A file cut shorter while a
 * window is being parsed (logrotate's copytruncate) would raise SIGBUS on
 * the pages past its new end: a handler bound to the window jumps back out
 * and the read fails with SP_EINPUT_SHRANK, never a crash.
 *
 * Every stream goes through the text check (util/input.h) first: 64 KiB
 * without a line end, or only NUL bytes, is refused at once. */
#define FEED_WINDOW (4u << 20)

typedef int (*feed_fn)(void *ctx, const char *buf, size_t len);

static __thread sigjmp_buf *bus_jump;
static __thread const char *bus_lo, *bus_hi;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	const char *a = si->si_addr;
	if (bus_jump && a >= bus_lo && a < bus_hi)
		siglongjmp(*bus_jump, 1);
	/* not our window: the default action when the instruction runs again */
	signal(sig, SIG_DFL);
}

/* one mapped window through the text check and feed: 0 (with *stop), or -errno */
static int feed_window(const char *m, size_t n, feed_fn feed, void *ctx, struct sp_text_check *tc, int *stop)
{
	sigjmp_buf jb;
	if (sigsetjmp(jb, 1)) {
		bus_jump = NULL;
		return -SP_EINPUT_SHRANK;
	}
	bus_lo = m;
	bus_hi = m + n;
	bus_jump = &jb;
	int e = sp_text_check_feed(tc, m, n);
	if (!e)
		*stop = feed(ctx, m, n);
	bus_jump = NULL;
	return e;
}

static int feed_mapped(int fd, off_t size, feed_fn feed, void *ctx, struct sp_text_check *tc)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_bus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &old) < 0)
		return 1; /* no guard: read instead of mapping */
	off_t off = 0;
	int rc = 1; /* read on from off: what was appended since, or what could not be mapped */
	while (off < size) {
		struct stat st;
		if (fstat(fd, &st) < 0) {
			rc = -errno;
			break;
		}
		if (st.st_size < size)
			size = st.st_size;
		if (off >= size)
			break;
		size_t n = size - off < (off_t)FEED_WINDOW ? (size_t)(size - off) : FEED_WINDOW;
		void *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, off);
		if (m == MAP_FAILED)
			break; /* not mappable after all: read from here */
		int stop = 0;
		int e = feed_window(m, n, feed, ctx, tc, &stop);
		munmap(m, n);
		off += (off_t)n;
		if (e < 0 || stop) {
			rc = e < 0 ? e : 0;
			break;
		}
	}
	sigaction(SIGBUS, &old, NULL);
	if (rc == 1 && lseek(fd, off, SEEK_SET) < 0)
		return -errno;
	return rc;
}

int sp_feed_fd(int fd, feed_fn feed, void *ctx)
{
	static char buf[1 << 16];
	struct sp_text_check tc = { 0 };
	struct stat st;
	off_t at = lseek(fd, 0, SEEK_CUR);
	if (at == 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		int r = feed_mapped(fd, st.st_size, feed, ctx, &tc);
		if (r <= 0)
			return r;
		/* fed up to the file position: read on from there */
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return sp_text_check_end(&tc);
		int e = sp_text_check_feed(&tc, buf, (size_t)n);
		if (e < 0)
			return e;
		if (feed(ctx, buf, (size_t)n))
			return 0;
	}
}
