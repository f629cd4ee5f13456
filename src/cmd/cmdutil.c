// SPDX-License-Identifier: MIT
#include "cmd/cmdutil.h"
#include "cmd/cli.h"
#include "out/prom.h"
#include "probe/probe.h"
#include "util/units.h"

#include <errno.h>
#include <unistd.h>
#include <limits.h>
#include <string.h>

const char *sp_opt_no_processes(void *ro, const char *unused)
{
	(void)unused;
	((struct sp_read_opts *)ro)->what &= ~(unsigned)SP_READ_PROCS;
	return NULL;
}

void sp_prom_read(struct sp_sample *s, const struct sp_read_opts *ro, struct sp_prom_info *info)
{
	double t0 = sp_mono_now();
	sp_sample_read(s, ro);
	*info = (struct sp_prom_info){ SPARKOPS_VERSION, sp_mono_now() - t0, !(ro->what & SP_READ_PROCS) };
}

int sp_feed_fd(int fd, int (*feed)(void *ctx, const char *buf, size_t len), void *ctx)
{
	static char buf[1 << 16];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0 || feed(ctx, buf, (size_t)n))
			return 0;
	}
}
