// SPDX-License-Identifier: MIT
/* sparkops run [options] -- CMD [ARGS...] — run a long job and watch it. */
#include "cmd/cli.h"
#include "cmd/runwatch.h"
#include "engine/engine.h"
#include "util/msg.h"
#include "util/opt.h"

#include <regex.h>
#include <stdio.h>
#include <string.h>

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
	.tail = "exit: the job's exit status (128+N when it was killed by signal N; with --ladder\n"
		"      the last try's), 127 when CMD was not found, 126 when it could not be run,\n"
		"      2 usage error\n",
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

/* --ready RE: compiled here (any number of groups; it only has to match a line) */
static const char *opt_ready(void *target, const char *value)
{
	static char why[160];
	struct progress_re *p = target;
	if (p->have)
		regfree(&p->re);
	p->have = false;
	int e = regcomp(&p->re, value, REG_EXTENDED | REG_NOSUB);
	if (e != 0) {
		char m[128];
		regerror(e, &p->re, m, sizeof m);
		snprintf(why, sizeof why, "is not a POSIX extended regex: %s", m);
		return why;
	}
	p->have = true;
	return NULL;
}

/* a flag of the job's, as --ladder-*-flag names it: "-x" or "--name", no '=' */
static void ladder_flag_check(const char *opt, const char *flag)
{
	if (flag && (flag[0] != '-' || !flag[1] || strcmp(flag, "--") == 0 || strchr(flag, '=') || strchr(flag, ' ')))
		sp_usage_error("run", "--%s '%s' is not a flag of the command (e.g. --max_seq_length, without '=' or a value)",
			       opt, flag);
}

/* --ladder and its flags: what makes no sense is a usage error */
static void ladder_check(const struct sp_engine_opts *o)
{
	const struct sp_retry_cfg *c = &o->ladder;
	bool any = c->seq_flag || c->batch_flag || c->accum_flag || c->max_tries != SP_RETRY_DEFAULT_MAX_TRIES;
	if (!c->on) {
		if (any)
			sp_usage_error("run", "--ladder-seq-flag, --ladder-batch-flag, --ladder-accum-flag and "
					      "--ladder-max-tries go with --ladder");
		return;
	}
	if (!c->seq_flag && !c->batch_flag)
		sp_usage_error("run", "--ladder needs --ladder-seq-flag or --ladder-batch-flag (the command's flags "
				      "that rung 2 halves)");
	if (c->accum_flag && !c->batch_flag)
		sp_usage_error("run", "--ladder-accum-flag goes with --ladder-batch-flag (it is doubled as the batch halves)");
	ladder_flag_check("ladder-seq-flag", c->seq_flag);
	ladder_flag_check("ladder-batch-flag", c->batch_flag);
	ladder_flag_check("ladder-accum-flag", c->accum_flag);
	const char *f[3] = { c->seq_flag, c->batch_flag, c->accum_flag };
	for (int i = 0; i < 3; i++)
		for (int k = i + 1; k < 3; k++)
			if (f[i] && f[k] && strcmp(f[i], f[k]) == 0)
				sp_usage_error("run", "--ladder: '%s' is named for two rungs", f[i]);
	/* a flag the command does not have: its rung is skipped (said now, and when it comes) */
	const char *what[3] = { "the sequence-length rung", "the micro-batch rung", "the micro-batch rung" };
	for (int i = 0; i < 3; i++) {
		long v;
		int at = f[i] ? sp_retry_flag_find(o->argv, f[i], &v) : 0;
		if (at == -1 && i < 2)
			sp_note("ladder: %s is not in the command: %s will be skipped", f[i], what[i]);
		else if (at == -1)
			sp_note("ladder: %s is not in the command: '%s 2' is added on the micro-batch rung", f[i], f[i]);
		else if (at == -2)
			sp_note("ladder: %s has no whole-number value in the command: %s will be skipped", f[i],
				what[i]);
	}
}

int cmd_run(int argc, char **argv)
{
	struct sp_engine_opts o;
	sp_engine_opts_init(&o);
	struct progress_re pre = { .have = false }, ready = { .have = false };
	const struct sp_option opts[] = {
		SP_OPT_GROUP("options:"),
		SP_OPT_RUNWATCH(&o),
		SP_OPT_CALLBACK("progress-regex", &pre, "RE", opt_progress_regex,
				"POSIX extended regex whose one capture group is the rate"),
		SP_OPT_GROUP("load guard (from launch until the job is ready):"),
		SP_OPT_FLAG(0, "guard-load", &o.guard_load,
			    "each second, MemFree or 2 MiB blocks under a floor ->\n"
			    "flush + compact (root) or evict the job's files; receipts\n"
			    "in LOG.receipts.jsonl"),
		SP_OPT_SIZE_POS("guard-floor", &o.load_floor, "SIZE",
				"load guard: MemFree floor (default 8GiB, at most 1/8 of memory)"),
		SP_OPT_SIZE_POS("guard-contig-floor", &o.load_contig_floor, "SIZE",
				"load guard: floor of memory free in 2 MiB blocks\n"
				"(default 1GiB, at most 1/64 of memory)"),
		SP_OPT_CALLBACK("ready", &ready, "REGEX", opt_ready,
				"load guard: the job is ready when a line of its output\n"
				"matches (default: vLLM, SGLang, llama.cpp, Ollama lines;\n"
				"another job's first progress update)"),
		SP_OPT_DURATION("guard-deadline", &o.load_deadline_s, "DURATION", 0, 0, SP_OPTF_LO_OPEN,
				"load guard: stop acting after DURATION (default 45m)"),
		SP_OPT_IN_PATH("guard-stop-file", &o.load_stop_file, "PATH",
			    "load guard: stop acting once PATH exists"),
		SP_OPT_GROUP("automatic retry of an out-of-memory failure (the ladder's rungs 1 and 2):"),
		SP_OPT_FLAG(0, "ladder", &o.ladder.on,
			    "when the job ends in an OOM, run it again: after a\n"
			    "flush (root) or eviction (--guard-load), then with\n"
			    "the sequence length halved, then the micro-batch\n"
			    "halved and the accumulation doubled; stops at rung 3"),
		SP_OPT_STRING("ladder-seq-flag", &o.ladder.seq_flag, "FLAG",
			      "CMD's flag of the sequence/packing length to halve\n"
			      "(e.g. --max_seq_length; not under 128)"),
		SP_OPT_STRING("ladder-batch-flag", &o.ladder.batch_flag, "FLAG",
			      "CMD's flag of the micro-batch to halve\n"
			      "(e.g. --per_device_train_batch_size)"),
		SP_OPT_STRING("ladder-accum-flag", &o.ladder.accum_flag, "FLAG",
			      "CMD's flag of the gradient accumulation to double with\n"
			      "the batch (added as FLAG 2 when CMD lacks it)"),
		SP_OPT_INT("ladder-max-tries", &o.ladder.max_tries, "N", 1, SP_RETRY_MAX_TRIES,
			   "at most N tries in all, the first included (default 5)"),
		SP_OPT_END(),
	};
	int i = sp_opt_parse(&spec, opts, argc, argv);
	if (i < 0 || i >= argc) {
		if (pre.have)
			regfree(&pre.re);
		if (ready.have)
			regfree(&ready.re);
		if (i < 0)
			return 0;
		sp_usage_error("run", "no command to run (sparkops run [options] -- CMD [ARGS...])");
	}
	sp_runwatch_check(&o, "run");
	o.argv = argv + i;
	o.progress_re = pre.have ? &pre.re : NULL;
	o.ready_re = ready.have ? &ready.re : NULL;
	bool load_opt = o.load_floor || o.load_contig_floor || o.ready_re || o.load_stop_file ||
			o.load_deadline_s != SP_LG_DEFAULT_DEADLINE_S;
	if (load_opt && !o.guard_load)
		sp_usage_error("run", "--guard-floor, --guard-contig-floor, --ready, --guard-deadline and "
				      "--guard-stop-file go with --guard-load");
	ladder_check(&o);
	int rc = sp_engine_run(&o);
	if (pre.have)
		regfree(&pre.re);
	if (ready.have)
		regfree(&ready.re);
	return rc;
}
