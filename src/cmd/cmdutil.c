// SPDX-License-Identifier: MIT
#include "cmd/cmdutil.h"
#include "cmd/cli.h"
#include "out/prom.h"
#include "probe/probe.h"
#include "util/units.h"

#include <errno.h>
#include <getopt.h>
#include <unistd.h>
#include <limits.h>
#include <string.h>

void sp_opt_begin(void)
{
	/* 0, not 1: glibc re-reads the option string (and its permuting
	 * mode) only then; the top level parsed with "+" before us */
	optind = 0;
	opterr = 0;
}

void sp_opt_bad(const char *cmd, int c, char **argv)
{
	const char *arg = argv[optind - 1];
	if (c == ':')
		sp_usage_error(cmd, "option '%s' needs a value", arg);
	if (strncmp(arg, "--", 2) == 0) {
		/* "--json=1": getopt_long names a known option in optopt */
		const char *eq = strchr(arg, '=');
		int name_len = eq ? (int)(eq - arg) : (int)strlen(arg);
		if (eq && optopt)
			sp_usage_error(cmd, "option '%.*s' takes no value", name_len, arg);
		sp_usage_error(cmd, "unknown option '%.*s'", name_len, arg);
	}
	sp_usage_error(cmd, "unknown option '-%c'", optopt > 0 && optopt < 128 ? optopt : '?');
}

int sp_read_opt(const char *cmd, int c, const char *arg, struct sp_read_opts *ro)
{
	switch (c) {
	case SP_OPT_RESERVE:
		if (sp_parse_size(arg, &ro->reserve) < 0)
			sp_usage_error(cmd, "--reserve: '%s' is not a size (e.g. 4GiB, 512M)", arg);
		return 1;
	case SP_OPT_MIN_RSS:
		if (sp_parse_size(arg, &ro->proc_min_rss) < 0)
			sp_usage_error(cmd, "--min-rss: '%s' is not a size", arg);
		return 1;
	case SP_OPT_NO_PROCESSES:
		ro->what &= ~(unsigned)SP_READ_PROCS;
		return 1;
	default:
		return 0;
	}
}

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
