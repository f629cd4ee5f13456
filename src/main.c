// SPDX-License-Identifier: MIT
/* sparkops: the subcommand table and the dispatcher (git style). */
#include "cmd/cli.h"
#include "probe/probe.h"
#include "util/msg.h"
#include "util/opt.h"
#include "util/paths.h"

#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const struct sp_cmd sp_commands[] = {
	{ "status", cmd_status, "the real memory headroom, GPU state and competing processes" },
	{ "plan", cmd_plan, "will this model, method, batch and packing fit (load-time spike included)" },
	{ "ladder", cmd_ladder, "an out-of-memory failure: the next rung of the OOM ladder, and rung 1 done" },
	{ "evict", cmd_evict, "drop the page cache of your files without root (as root: flush + compact)" },
	{ "run", cmd_run, "run a long job: pass-through, a CSV log, why it slowed down, a pool guard" },
	{ "watch", cmd_watch, "the same sampling and log without a child (or tied to --pid)" },
	{ "report", cmd_report, "a run/watch log as a summary and a chart (SVG or HTML)" },
	{ "metrics", cmd_metrics, "the same readings in the Prometheus text format (stdout or a textfile)" },
	{ "serve", cmd_serve, "serve the readings at http://127.0.0.1:9851/metrics for Prometheus" },
	{ "postmortem", cmd_postmortem, "how did the last boot end: a driver wedge, an OOM kill, heat, power, a panic" },
	{ "top", cmd_top, "the live view: pool, budget, GPU, sensors, history, processes, a running job" },
	{ NULL, NULL, NULL },
};

static const char usage_head[] =
	"usage: sparkops [--procfs DIR] [--sysfs DIR] COMMAND [OPTIONS]\n"
	"       sparkops --version | --help\n"
	"\n"
	"Memory, planning and thermal truth for unified-memory machines (DGX Spark / GB10).\n"
	"\n"
	"commands:\n";

static const char usage_tail[] =
	"\n"
	"Run 'sparkops COMMAND --help' for a command's options, 'man sparkops' for all.\n"
	"exit codes: 0 ok, 1 the answer is no / trouble, 2 usage or input error,\n"
	"            4 not permitted, 5 writing output failed\n";

static void main_help(FILE *f)
{
	fputs(usage_head, f);
	for (const struct sp_cmd *c = sp_commands; c->name; c++)
		fprintf(f, "   %-10s %s\n", c->name, c->summary);
	fputs(usage_tail, f);
}

int main(int argc, char **argv)
{
	/* a closed stdout (`sparkops status | head -1`) ends with EPIPE, not a signal */
	signal(SIGPIPE, SIG_IGN);
	/* one malloc arena: a thread's first malloc (the GPU reader's, a scan
	 * worker's, serve's) otherwise maps a 64 MiB heap of its own and faults
	 * in its pages, for a few small blocks */
	mallopt(M_ARENA_MAX, 1);
	sp_roots_apply();

	static bool version;
	static const struct sp_option opts[] = {
		SP_OPT_FLAG('V', "version", &version, "the version"),
		SP_OPT_END(),
	};
	static const struct sp_cmdspec spec = { .stop_at_operand = true, .print_help = main_help };
	int i = sp_opt_parse(&spec, opts, argc, argv);
	if (i < 0)
		return sp_finish_stdout();
	if (version) {
		printf("sparkops %s\n", SPARKOPS_VERSION);
		return sp_finish_stdout();
	}
	if (i >= argc) {
		main_help(stderr);
		return SP_EXIT_USAGE;
	}
	const char *name = argv[i];
	if (strcmp(name, "help") == 0) {
		if (i + 1 < argc) {
			char *hv[] = { argv[i + 1], (char *)"--help", NULL };
			for (const struct sp_cmd *c = sp_commands; c->name; c++)
				if (strcmp(c->name, argv[i + 1]) == 0)
					return c->fn(2, hv);
		}
		main_help(stdout);
		return sp_finish_stdout();
	}
	for (const struct sp_cmd *c = sp_commands; c->name; c++) {
		if (strcmp(c->name, name) == 0) {
			int rc = c->fn(argc - i, argv + i);
			int wedged = sp_nvml_release();
			int out = sp_finish_stdout();
			/* an NVML call that never returns: leave without running the
			 * library's destructors (they may wait on the same lock) */
			if (wedged)
				_exit(rc ? rc : out);
			return rc ? rc : out;
		}
	}
	sp_error("'%s' is not a sparkops command", name);
	sp_note("see '%s --help'", sp_progname);
	return SP_EXIT_USAGE;
}
