// SPDX-License-Identifier: MIT
/* sparkops metrics — one Prometheus exposition to stdout, or into
 * DIR/sparkops.prom (atomically) for node_exporter's textfile collector,
 * again every --interval until SIGINT/SIGTERM. */
#include "cmd/cli.h"
#include "cmd/cmdutil.h"
#include "out/prom.h"
#include "probe/probe.h"
#include "util/fileio.h"
#include "util/msg.h"
#include "util/opt.h"
#include "util/units.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct sp_cmdspec spec = {
	.name = "metrics",
	.usage = "usage: sparkops metrics [--textfile DIR [--interval DURATION]] [--reserve SIZE]\n"
		 "                        [--gpu-timeout DURATION]\n"
		 "\n"
		 "The readings of 'sparkops status' in the Prometheus text format (0.0.4):\n"
		 "pool, budget, cgroup, PSI, thermal zones, hwmon, GB10 power limits, GPUs\n"
		 "(clocks event reasons as labels) and competing processes. Unknown readings\n"
		 "are left out, never written as 0.\n"
		 "\n",
	.tail = "exit: 0 ok (also after SIGINT/SIGTERM), 2 usage error, 5 the output could not be written\n",
};

struct metrics_opts {
	struct sp_read_opts ro;
	const char *dir;      /* --textfile, NULL: stdout */
	double interval;      /* 0: once */
	char path[PATH_MAX];  /* DIR/sparkops.prom */
};

/* 1: parsed, 0: --help was printed */
static int parse_opts(int argc, char **argv, struct metrics_opts *o)
{
	sp_read_opts_init(&o->ro);
	o->dir = NULL;
	o->interval = 0;
	const struct sp_option table[] = {
		SP_OPT_GROUP("options:"),
		SP_OPT_OUT_DIR("textfile", &o->dir, "DIR",
			      "write DIR/sparkops.prom atomically (node_exporter's textfile\n"
			      "collector) instead of printing to stdout"),
		SP_OPT_DURATION("interval", &o->interval, "DURATION", 0.1, 86400, 0,
				"with --textfile: write again every DURATION (e.g. 15s)\n"
				"until SIGINT or SIGTERM"),
		SP_OPT_READ_EXPORT(&o->ro),
		SP_OPT_DURATION("gpu-timeout", &o->ro.gpu_timeout_s, "DURATION", 0, 3600, SP_OPTF_LO_OPEN,
				"longest wait for the NVIDIA driver (default 2s); past it the\n"
				"GPU readings are left out, sparkops_gpu_reading_ok says \"timeout\""),
		SP_OPT_END(),
	};
	int i = sp_opt_parse(&spec, table, argc, argv);
	if (i < 0)
		return 0;
	if (i < argc)
		sp_usage_error("metrics", "unexpected argument '%s'", argv[i]);
	if (o->interval > 0 && !o->dir)
		sp_usage_error("metrics", "--interval needs --textfile DIR");
	if (o->dir && !o->dir[0])
		sp_usage_error("metrics", "--textfile: an empty folder name");
	if (o->dir && snprintf(o->path, sizeof o->path, "%s/sparkops.prom", o->dir) >= (int)sizeof o->path)
		sp_usage_error("metrics", "--textfile: '%s' is too long", o->dir);
	return 1;
}

/* Read the machine and render; the buffer grows only when an exposition outgrows it. */
static size_t collect(struct sp_sample *s, const struct sp_read_opts *ro, char **buf, size_t *cap)
{
	struct sp_prom_info info;
	sp_prom_read(s, ro, &info);
	for (;;) {
		size_t n = sp_prom_render(*buf, *cap, s, &info, NULL);
		if (n < *cap)
			return n;
		char *nb = realloc(*buf, n + 4096);
		if (!nb)
			sp_die(SP_EXIT_IO, "out of memory");
		*buf = nb;
		*cap = n + 4096;
	}
}

/* Write DIR/sparkops.prom, again every --interval; SIGINT/SIGTERM end the
 * loop between two writes, never inside one. */
static int textfile_loop(const struct metrics_opts *o, struct sp_sample *s, char **buf, size_t *cap)
{
	int rc = SP_EXIT_OK;
	sigset_t stop, old;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, &old);
	for (unsigned long round = 0;; round++) {
		double t0 = sp_mono_now();
		size_t n = collect(s, &o->ro, buf, cap);
		char msg[PATH_MAX + 200];
		int e = sp_write_output(o->path, *buf, n, 0644, msg, sizeof msg);
		if (e < 0) {
			char plain[PATH_MAX + 200];
			snprintf(plain, sizeof plain, "'%s': %s", o->path, strerror(-e));
			if (round == 0) {
				/* a refusal (another user's symlink) says more than strerror */
				if (strcmp(msg, plain) != 0)
					sp_error("%s", msg);
				else
					sp_error("'%s': cannot write: %s", o->path, strerror(-e));
				rc = SP_EXIT_IO;
				break;
			}
			sp_warn("'%s': cannot write: %s (trying again in %gs)", o->path, strerror(-e), o->interval);
		}
		if (o->interval <= 0)
			break;
		double wait = o->interval - (sp_mono_now() - t0);
		if (wait < 0.01)
			wait = 0.01;
		struct timespec ts = { (time_t)wait, (long)((wait - floor(wait)) * 1e9) };
		int sig = sigtimedwait(&stop, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM)
			break;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

int cmd_metrics(int argc, char **argv)
{
	static struct metrics_opts o;
	if (!parse_opts(argc, argv, &o))
		return 0;
	sp_kmsg_start("metrics", &o.ro);
	struct sp_sample *s = calloc(1, sizeof *s);
	size_t cap = (size_t)128 * 1024;
	char *buf = malloc(cap);
	if (!s || !buf)
		sp_die(SP_EXIT_IO, "out of memory");
	int rc = SP_EXIT_OK;
	if (o.dir) {
		rc = textfile_loop(&o, s, &buf, &cap);
	} else {
		size_t n = collect(s, &o.ro, &buf, &cap);
		fwrite(buf, 1, n, stdout);
	}
	free(buf);
	free(s);
	return rc;
}
