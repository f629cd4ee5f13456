// SPDX-License-Identifier: MIT
#include "cmd/cli.h"
#include "util/msg.h"
#include "util/paths.h"

#include <stdarg.h>
#include <stdlib.h>

static const char *opt_procfs, *opt_sysfs;

void sp_roots_apply(void)
{
	sp_paths_init(opt_procfs, opt_sysfs);
}

int sp_common_opt(int c, const char *arg)
{
	switch (c) {
	case SP_OPT_PROCFS:
		opt_procfs = arg;
		sp_roots_apply();
		return 1;
	case SP_OPT_SYSFS:
		opt_sysfs = arg;
		sp_roots_apply();
		return 1;
	default:
		return 0;
	}
}

void sp_usage_error(const char *cmd, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	sp_error("%s", msg);
	sp_note("see '%s %s%s--help'", sp_progname, cmd ? cmd : "", cmd ? " " : "");
	exit(SP_EXIT_USAGE);
}

int sp_print_help(const char *text)
{
	fputs(text, stdout);
	return sp_finish_stdout();
}
