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
#include "util/units.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char help[] =
	"usage: sparkops metrics [--textfile DIR [--interval DURATION]] [--reserve SIZE]\n"
	"\n"
	"The readings of 'sparkops status' in the Prometheus text format (0.0.4):\n"
	"pool, budget, cgroup, PSI, thermal zones, hwmon, GB10 power limits, GPUs\n"
	"(clocks event reasons as labels) and competing processes. Unknown readings\n"
	"are left out, never written as 0.\n"
	"\n"
	"options:\n"
	"      --textfile DIR   write DIR/sparkops.prom atomically (node_exporter's textfile\n"
	"                       collector) instead of printing to stdout\n"
	"      --interval DURATION  with --textfile: write again every DURATION (e.g. 15s)\n"
	"                       until SIGINT or SIGTERM\n"
	"      --reserve SIZE   memory kept back for the OS and driver (default 4GiB)\n"
	"      --min-rss SIZE   also export unrecognised processes above SIZE (default 2GiB)\n"
	"      --no-processes   skip the scan of /proc for servers and trainers (the costliest\n"
	"                       reading on a busy machine; the process series are left out)\n"
	SP_COMMON_HELP
	"\n"
	"exit: 0 ok (also after SIGINT/SIGTERM), 2 usage error, 5 the output could not be written\n";

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

int cmd_metrics(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "textfile", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'i' },
		SP_READ_LONGOPTS,
		SP_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct sp_read_opts ro;
	sp_read_opts_init(&ro);
	const char *dir = NULL;
	double interval = 0;
	int c;
	sp_opt_begin();
	while ((c = getopt_long(argc, argv, SP_OPTSTRING, opts, NULL)) != -1) {
		if (sp_common_opt(c, optarg) || sp_read_opt("metrics", c, optarg, &ro))
			continue;
		switch (c) {
		case 't':
			dir = optarg;
			break;
		case 'i':
			if (sp_parse_duration(optarg, &interval) < 0 || interval < 0.1 || interval > 86400)
				sp_usage_error("metrics", "--interval: '%s' is not a duration between 0.1s and 1d", optarg);
			break;
		case 'h':
			return sp_print_help(help);
		default:
			sp_opt_bad("metrics", c, argv);
		}
	}
	if (optind < argc)
		sp_usage_error("metrics", "unexpected argument '%s'", argv[optind]);
	if (interval > 0 && !dir)
		sp_usage_error("metrics", "--interval needs --textfile DIR");
	if (dir && !dir[0])
		sp_usage_error("metrics", "--textfile: an empty folder name");

	char path[PATH_MAX];
	if (dir && snprintf(path, sizeof path, "%s/sparkops.prom", dir) >= (int)sizeof path)
		sp_usage_error("metrics", "--textfile: '%s' is too long", dir);

	struct sp_sample *s = calloc(1, sizeof *s);
	size_t cap = (size_t)128 * 1024;
	char *buf = malloc(cap);
	if (!s || !buf)
		sp_die(SP_EXIT_IO, "out of memory");

	int rc = SP_EXIT_OK;
	if (!dir) {
		size_t n = collect(s, &ro, &buf, &cap);
		fwrite(buf, 1, n, stdout);
		goto out;
	}

	/* SIGINT/SIGTERM end the loop between two writes, never inside one */
	sigset_t stop, old;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, &old);
	for (unsigned long round = 0;; round++) {
		double t0 = sp_mono_now();
		size_t n = collect(s, &ro, &buf, &cap);
		char msg[PATH_MAX + 200];
		int e = sp_write_output(path, buf, n, 0644, msg, sizeof msg);
		if (e < 0) {
			char plain[PATH_MAX + 200];
			snprintf(plain, sizeof plain, "'%s': %s", path, strerror(-e));
			if (round == 0) {
				/* a refusal (another user's symlink) says more than strerror */
				if (strcmp(msg, plain) != 0)
					sp_error("%s", msg);
				else
					sp_error("'%s': cannot write: %s", path, strerror(-e));
				rc = SP_EXIT_IO;
				break;
			}
			sp_warn("'%s': cannot write: %s (trying again in %gs)", path, strerror(-e), interval);
		}
		if (interval <= 0)
			break;
		double wait = interval - (sp_mono_now() - t0);
		if (wait < 0.01)
			wait = 0.01;
		struct timespec ts = { (time_t)wait, (long)((wait - floor(wait)) * 1e9) };
		int sig = sigtimedwait(&stop, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM)
			break;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
out:
	free(buf);
	free(s);
	return rc;
}
