// SPDX-License-Identifier: MIT
/* sparkops watch — the same sampling and log as run, without a child. */
#include "cmd/cli.h"
#include "cmd/cmdutil.h"
#include "cmd/watchloop.h"
#include "util/fileio.h"
#include "util/msg.h"
#include "util/units.h"

#include <stdlib.h>

static const char help[] =
	"usage: sparkops watch [options] [--pid PID] [--duration S] [--count N]\n"
	"\n"
	"Samples memory, pressure, GPU and SoC sensors into a CSV log, with throttle,\n"
	"process and guard events, until interrupted (Ctrl-C: a clean end, exit 0),\n"
	"until --duration has passed, or until the process --pid ends. With --pid, the\n"
	"log's job_rss_bytes is that process's tree and the guard stops that tree.\n"
	"\n"
	"options:\n"
	"      --pid PID           tie the watch to a running job: its memory, its end\n"
	"      --duration S        stop after S seconds\n"
	"      --count N           stop after N samples\n"
	SP_WL_HELP
	SP_COMMON_HELP
	"\n"
	"exit: 0 ok, 2 usage error (or no such --pid), 5 the summary could not be written\n";

int cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		SP_WL_LONGOPTS,
		{ "pid", required_argument, NULL, 'P' },
		{ "duration", required_argument, NULL, 'D' },
		{ "count", required_argument, NULL, 'C' },
		SP_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct sp_wl_opts o;
	sp_wl_opts_init(&o, "watch");
	int c;
	sp_opt_begin();
	while ((c = getopt_long(argc, argv, SP_OPTSTRING, opts, NULL)) != -1) {
		if (sp_common_opt(c, optarg) || sp_wl_opt(&o, c, optarg))
			continue;
		switch (c) {
		case 'P': {
			int64_t v;
			if (sp_parse_i64(optarg, &v) < 0 || v <= 0 || v > 4194304)
				sp_usage_error("watch", "--pid: '%s' is not a process id", optarg);
			o.pid = (pid_t)v;
			break;
		}
		case 'D':
			if (sp_parse_duration(optarg, &o.duration_s) < 0 || !(o.duration_s > 0))
				sp_usage_error("watch", "--duration: '%s' is not a duration (e.g. 90, 10m, 8h)", optarg);
			break;
		case 'C': {
			int64_t v;
			if (sp_parse_i64(optarg, &v) < 0 || v <= 0)
				sp_usage_error("watch", "--count: '%s' is not a number of samples", optarg);
			o.count = (long)v;
			break;
		}
		case 'h':
			return sp_print_help(help);
		default:
			sp_opt_bad("watch", c, argv);
		}
	}
	if (optind < argc)
		sp_usage_error("watch", "unexpected argument '%s' (to run a job: sparkops run -- CMD)", argv[optind]);
	return sp_watchloop(&o);
}
