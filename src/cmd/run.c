// SPDX-License-Identifier: MIT
/* sparkops run [options] -- CMD [ARGS...] — run a long job and watch it. */
#include "cmd/cli.h"
#include "cmd/cmdutil.h"
#include "cmd/watchloop.h"
#include "util/msg.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
	"usage: sparkops run [options] [--] CMD [ARGS...]\n"
	"\n"
	"Runs CMD (its argv as given, no shell) with its output passed through unchanged,\n"
	"and meanwhile samples memory, pressure, GPU and SoC sensors into a CSV log;\n"
	"records throttle events, parses the job's throughput from its output (tqdm,\n"
	"Hugging Face Trainer, or --progress-regex), says why it slowed down, can guard\n"
	"the memory pool, and prints a summary at the end. Signals (INT, TERM, HUP) sent\n"
	"to sparkops are passed to the job.\n"
	"\n"
	"options:\n"
	SP_WL_HELP
	"      --progress-regex RE POSIX extended regex whose one capture group is the rate\n"
	SP_COMMON_HELP
	"\n"
	"exit: the job's exit status (128+N when it was killed by signal N), 127 when CMD\n"
	"      was not found, 126 when it could not be run, 2 usage error\n";

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		SP_WL_LONGOPTS,
		{ "progress-regex", required_argument, NULL, 'p' },
		SP_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct sp_wl_opts o;
	sp_wl_opts_init(&o, "run");
	regex_t re;
	bool have_re = false;
	int c;
	sp_opt_begin();
	/* '+': stop at the job's name, so its own options stay its own */
	while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		if (sp_common_opt(c, optarg) || sp_wl_opt(&o, c, optarg))
			continue;
		switch (c) {
		case 'p': {
			if (have_re)
				regfree(&re);
			int e = regcomp(&re, optarg, REG_EXTENDED);
			if (e != 0) {
				char m[128];
				regerror(e, &re, m, sizeof m);
				sp_usage_error("run", "--progress-regex: '%s': %s", optarg, m);
			}
			if (re.re_nsub != 1) {
				regfree(&re);
				sp_usage_error("run", "--progress-regex: '%s' needs exactly one capture group (the rate)", optarg);
			}
			have_re = true;
			break;
		}
		case 'h':
			if (have_re)
				regfree(&re);
			return sp_print_help(help);
		default:
			sp_opt_bad("run", c, argv);
		}
	}
	if (optind >= argc) {
		if (have_re)
			regfree(&re);
		sp_usage_error("run", "no command to run (sparkops run [options] -- CMD [ARGS...])");
	}
	o.argv = argv + optind;
	o.progress_re = have_re ? &re : NULL;
	int rc = sp_watchloop(&o);
	if (have_re)
		regfree(&re);
	return rc;
}
