// SPDX-License-Identifier: MIT
/* sparkops run [options] -- CMD [ARGS...] — run a long job and watch it. */
#include "cmd/cli.h"
#include "cmd/runwatch.h"
#include "engine/engine.h"
#include "util/opt.h"

#include <regex.h>
#include <stdio.h>

static const struct sp_cmdspec spec = {
	.name = "run",
	.usage = "usage: sparkops run [options] [--] CMD [ARGS...]\n"
		 "\n"
		 "Runs CMD (its argv as given, no shell) with its output passed through unchanged,\n"
		 "and meanwhile samples memory, pressure, GPU and SoC sensors into a CSV log;\n"
		 "records throttle events, parses the job's throughput from its output (tqdm,\n"
		 "Hugging Face Trainer, or --progress-regex), says why it slowed down, can guard\n"
		 "the memory pool, and prints a summary at the end. Signals (INT, TERM, HUP) sent\n"
		 "to sparkops are passed to the job.\n"
		 "\n",
	.tail = "exit: the job's exit status (128+N when it was killed by signal N), 127 when CMD\n"
		"      was not found, 126 when it could not be run, 2 usage error\n",
	.stop_at_operand = true, /* the job's own options stay the job's */
	.help_col = SP_RUNWATCH_HELP_COL,
};

/* --progress-regex RE: compiled here, one capture group (the rate) */
struct progress_re {
	regex_t re;
	bool have;
};

static const char *opt_progress_regex(void *target, const char *value)
{
	static char why[160];
	struct progress_re *p = target;
	if (p->have)
		regfree(&p->re);
	p->have = false;
	int e = regcomp(&p->re, value, REG_EXTENDED);
	if (e != 0) {
		char m[128];
		regerror(e, &p->re, m, sizeof m);
		snprintf(why, sizeof why, "is not a POSIX extended regex: %s", m);
		return why;
	}
	if (p->re.re_nsub != 1) {
		regfree(&p->re);
		return "needs exactly one capture group (the rate)";
	}
	p->have = true;
	return NULL;
}

int cmd_run(int argc, char **argv)
{
	struct sp_engine_opts o;
	sp_engine_opts_init(&o);
	struct progress_re pre = { .have = false };
	const struct sp_option opts[] = {
		SP_OPT_GROUP("options:"),
		SP_OPT_RUNWATCH(&o),
		SP_OPT_CALLBACK("progress-regex", &pre, "RE", opt_progress_regex,
				"POSIX extended regex whose one capture group is the rate"),
		SP_OPT_END(),
	};
	int i = sp_opt_parse(&spec, opts, argc, argv);
	if (i < 0 || i >= argc) {
		if (pre.have)
			regfree(&pre.re);
		if (i < 0)
			return 0;
		sp_usage_error("run", "no command to run (sparkops run [options] -- CMD [ARGS...])");
	}
	sp_runwatch_check(&o, "run");
	o.argv = argv + i;
	o.progress_re = pre.have ? &pre.re : NULL;
	int rc = sp_engine_run(&o);
	if (pre.have)
		regfree(&pre.re);
	return rc;
}
