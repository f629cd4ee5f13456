// SPDX-License-Identifier: MIT
/* sparkops watch — the same sampling and log as run, without a child. */
#include "cmd/cli.h"
#include "cmd/runwatch.h"
#include "engine/engine.h"
#include "util/fileio.h"
#include "util/input.h"
#include "util/msg.h"
#include "util/opt.h"

#include <stdint.h>

static const struct sp_cmdspec spec = {
	.name = "watch",
	.usage = "usage: sparkops watch [options] [--pid PID] [--duration S] [--count N]\n"
		 "\n"
		 "Samples memory, pressure, GPU and SoC sensors into a CSV log, with throttle,\n"
		 "process and guard events, until interrupted (Ctrl-C: a clean end, exit 0),\n"
		 "until --duration has passed, or until the process --pid ends. With --pid, the\n"
		 "log's job_rss_bytes is that process's tree and the guard stops that tree.\n"
		 "\n",
	.tail = "exit: 0 ok, 2 usage error (or no such --pid), 5 the summary could not be written\n",
	.help_col = SP_RUNWATCH_HELP_COL,
};

static const char *opt_pid(void *target, const char *value)
{
	int64_t v;
	if (sp_parse_i64(value, &v) < 0 || v <= 0 || v > 4194304)
		return "is not a process id";
	*(pid_t *)target = (pid_t)v;
	return NULL;
}

static const char *opt_count(void *target, const char *value)
{
	int64_t v;
	if (sp_parse_i64(value, &v) < 0 || v <= 0)
		return "is not a number of samples";
	*(long *)target = (long)v;
	return NULL;
}

int cmd_watch(int argc, char **argv)
{
	struct sp_engine_opts o;
	sp_engine_opts_init(&o);
	const struct sp_option opts[] = {
		SP_OPT_GROUP("options:"),
		SP_OPT_CALLBACK("pid", &o.pid, "PID", opt_pid, "tie the watch to a running job: its memory, its end"),
		SP_OPT_DURATION("duration", &o.duration_s, "S", 0, 0, SP_OPTF_LO_OPEN, "stop after S seconds"),
		SP_OPT_CALLBACK("count", &o.count, "N", opt_count, "stop after N samples"),
		SP_OPT_IN_PATH("follow", &o.follow_path, "FILE",
			    "read the job's log FILE as tail -F does (from its end,\n"
			    "through rotation and truncation): its tqdm bars and\n"
			    "Trainer dicts are the throughput"),
		SP_OPT_RUNWATCH(&o),
		SP_OPT_END(),
	};
	int i = sp_opt_parse(&spec, opts, argc, argv);
	if (i < 0)
		return 0;
	if (i < argc)
		sp_usage_error("watch", "unexpected argument '%s' (to run a job: sparkops run -- CMD)", argv[i]);
	sp_runwatch_check(&o, "watch");
	if (o.follow_path) {
		/* a FIFO, a device, a folder or a file that is not text: said now, not tailed forever */
		int e = sp_input_check_follow(o.follow_path);
		if (e < 0) {
			sp_error("--follow '%s': %s", o.follow_path, sp_input_strerror(e));
			return SP_EXIT_USAGE;
		}
	}
	return sp_engine_run(&o);
}
