// SPDX-License-Identifier: MIT
#include "cmd/cmdutil.h"
#include "cmd/cli.h"
#include "out/prom.h"
#include "probe/probe.h"
#include "util/units.h"

#include <getopt.h>
#include <limits.h>

void sp_opt_begin(void)
{
	optind = 1;
	opterr = 0;
}

void sp_opt_bad(const char *cmd, int c, char **argv)
{
	const char *arg = argv[optind - 1];
	if (c == ':')
		sp_usage_error(cmd, "option '%s' needs a value", arg);
	if (optopt > 0 && optopt < 128)
		sp_usage_error(cmd, "unknown option '-%c'", optopt);
	sp_usage_error(cmd, "unknown option '%s'", arg);
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

json_t *sp_json_text(const char *txt)
{
	json_t *j = json_string(txt);
	if (j)
		return j;
	char buf[PATH_MAX];
	size_t i = 0;
	for (; txt[i] && i + 1 < sizeof buf; i++)
		buf[i] = (unsigned char)txt[i] >= 0x20 && (unsigned char)txt[i] < 0x7f ? txt[i] : '?';
	buf[i] = 0;
	return json_string(buf);
}

void sp_prom_read(struct sp_sample *s, const struct sp_read_opts *ro, struct sp_prom_info *info)
{
	double t0 = sp_mono_now();
	sp_sample_read(s, ro);
	*info = (struct sp_prom_info){ SPARKOPS_VERSION, sp_mono_now() - t0, !(ro->what & SP_READ_PROCS) };
}
