// SPDX-License-Identifier: MIT
#include "cmd/cli.h"
#include "util/msg.h"
#include "util/paths.h"

#include <stdarg.h>
#include <stdlib.h>

void sp_roots_apply(void)
{
	sp_paths_init(NULL, NULL);
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
