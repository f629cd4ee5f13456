// SPDX-License-Identifier: MIT
/* sparkops serve — the exposition of `sparkops metrics` over HTTP, in the
 * foreground (for systemd), until SIGINT/SIGTERM. */
#include "cmd/cli.h"
#include "cmd/cmdutil.h"
#include "out/prom.h"
#include "out/serve_http.h"
#include "probe/probe.h"
#include "util/fileio.h"
#include "util/msg.h"
#include "util/units.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char help[] =
	"usage: sparkops serve [--listen ADDR:PORT] [--cache DURATION] [--reserve SIZE]\n"
	"\n"
	"Serves the exposition of 'sparkops metrics' at http://ADDR:PORT/metrics for\n"
	"Prometheus (GET and HEAD; / links to it; anything else is 404, other methods\n"
	"405). Runs in the foreground until SIGINT or SIGTERM. Each scrape reads fresh\n"
	"values, reused for --cache so a burst of scrapes costs one reading.\n"
	"\n"
	"options:\n"
	"      --listen ADDR:PORT  address to listen on (default 127.0.0.1:9851; [::1]:9851\n"
	"                       for IPv6; 0.0.0.0:9851 for every interface; port 0 picks one)\n"
	"      --cache DURATION reuse a reading for this long (default 1s; 0 reads every scrape)\n"
	"      --max-connections N  connections at once (default 64)\n"
	"      --per-ip N       connections at once from one address (default 8)\n"
	"      --timeout DURATION  close idle or slow connections after this (default 10s)\n"
	"      --reserve SIZE   memory kept back for the OS and driver (default 4GiB)\n"
	"      --min-rss SIZE   also export unrecognised processes above SIZE (default 2GiB)\n"
	"      --no-processes   skip the scan of /proc for servers and trainers (the costliest\n"
	"                       reading on a busy machine; the process series are left out)\n"
	SP_COMMON_HELP
	"\n"
	"exit: 0 after SIGINT/SIGTERM, 1 libmicrohttpd cannot be loaded or the server\n"
	"      cannot start (no memory, no file descriptors), 2 usage error or the address\n"
	"      cannot be used (in use, not on this machine), 4 the port needs privileges\n";

struct collector {
	struct sp_sample s;
	struct sp_read_opts ro;
};

/* runs in the server's thread, one call at a time */
static size_t fill(char *buf, size_t cap, void *ctx)
{
	struct collector *col = ctx;
	struct sp_prom_info info;
	sp_prom_read(&col->s, &col->ro, &info);
	return sp_prom_render(buf, cap, &col->s, &info, NULL);
}

static unsigned parse_count(const char *opt, const char *v, unsigned lo, unsigned hi)
{
	uint64_t n;
	if (sp_parse_u64(v, &n) < 0 || n < lo || n > hi)
		sp_usage_error("serve", "%s: '%s' is not a number from %u to %u", opt, v, lo, hi);
	return (unsigned)n;
}

int cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "cache", required_argument, NULL, 'c' },
		{ "max-connections", required_argument, NULL, 'n' },
		{ "per-ip", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		SP_READ_LONGOPTS,
		SP_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct sp_serve_opts so;
	sp_serve_opts_init(&so);
	struct collector *col = calloc(1, sizeof *col);
	if (!col)
		sp_die(SP_EXIT_IO, "out of memory");
	sp_read_opts_init(&col->ro);
	double d;
	int c;
	sp_opt_begin();
	while ((c = getopt_long(argc, argv, SP_OPTSTRING, opts, NULL)) != -1) {
		if (sp_common_opt(c, optarg) || sp_read_opt("serve", c, optarg, &col->ro))
			continue;
		switch (c) {
		case 'l': {
			struct sockaddr_storage ss;
			socklen_t sl;
			if (sp_serve_parse_addr(optarg, &ss, &sl) < 0)
				sp_usage_error("serve", "--listen: '%s' is not ADDR:PORT (e.g. 127.0.0.1:9851, [::1]:9851)",
					       optarg);
			so.listen = optarg;
			break;
		}
		case 'c':
			if (sp_parse_duration(optarg, &d) < 0 || d < 0 || d > 3600)
				sp_usage_error("serve", "--cache: '%s' is not a duration up to 1h", optarg);
			so.cache_s = d;
			break;
		case 'n':
			so.max_conns = parse_count("--max-connections", optarg, 1, 10000);
			break;
		case 'p':
			so.per_ip = parse_count("--per-ip", optarg, 1, 10000);
			break;
		case 't':
			if (sp_parse_duration(optarg, &d) < 0 || d < 1 || d > 3600)
				sp_usage_error("serve", "--timeout: '%s' is not a duration from 1s to 1h", optarg);
			so.timeout_s = (unsigned)d;
			break;
		case 'h':
			free(col);
			return sp_print_help(help);
		default:
			sp_opt_bad("serve", c, argv);
		}
	}
	if (optind < argc)
		sp_usage_error("serve", "unexpected argument '%s'", argv[optind]);

	/* blocked before the server thread starts, then waited for here */
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, NULL);

	int err = 0;
	struct sp_server *srv = sp_serve_start(&so, fill, col, &err);
	if (!srv) {
		free(col);
		if (err == -EACCES || err == -EPERM) {
			sp_error("'%s': cannot listen: %s (ports under 1024 need privileges)", so.listen,
				 sp_serve_strerror(err));
			return SP_EXIT_NOPERM;
		}
		if (err == -ELIBACC || err == -ELIBBAD) {
			sp_error("cannot serve: %s", sp_serve_strerror(err));
			return SP_EXIT_TROUBLE;
		}
		sp_error("'%s': cannot listen: %s", so.listen, sp_serve_strerror(err));
		/* the address is the user's to change; out of memory or of file
		 * descriptors is the machine's trouble */
		bool address = err == -EADDRINUSE || err == -EADDRNOTAVAIL || err == -EINVAL || err == -EAFNOSUPPORT;
		return address ? SP_EXIT_USAGE : SP_EXIT_TROUBLE;
	}
	sp_note("serving http://%s/metrics", sp_serve_address(srv));
	int sig = 0;
	while (sigwait(&stop, &sig) != 0 || (sig != SIGINT && sig != SIGTERM))
		;
	sp_serve_stop(srv);
	free(col);
	return SP_EXIT_OK;
}
