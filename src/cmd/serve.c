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
#include "util/opt.h"
#include "util/units.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct sp_cmdspec spec = {
	.name = "serve",
	.usage = "usage: sparkops serve [--listen ADDR:PORT] [--cache DURATION] [--reserve SIZE]\n"
		 "\n"
		 "Serves the exposition of 'sparkops metrics' at http://ADDR:PORT/metrics for\n"
		 "Prometheus (GET and HEAD; / links to it; anything else is 404, other methods\n"
		 "405). Runs in the foreground until SIGINT or SIGTERM. Each scrape reads fresh\n"
		 "values, reused for --cache so a burst of scrapes costs one reading.\n"
		 "\n",
	.tail = "environment: SPARKOPS_MHD_LIB=PATH loads that libmicrohttpd instead of libmicrohttpd.so.12;\n"
		"      SPARKOPS_NVML_LIB=PATH that NVML library instead of libnvidia-ml.so.1\n"
		"exit: 0 after SIGINT/SIGTERM, 1 libmicrohttpd cannot be loaded or the server\n"
		"      cannot start (no memory, no file descriptors), 2 usage error or the address\n"
		"      cannot be used (in use, not on this machine), 4 the port needs privileges\n",
};

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

/* ---- options ------------------------------------------------------------------ */

static const char *opt_listen(void *target, const char *arg)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	if (sp_serve_parse_addr(arg, &ss, &sl) < 0)
		return "is not ADDR:PORT (e.g. 127.0.0.1:9851, [::1]:9851)";
	*(const char **)target = arg;
	return NULL;
}

static const char *opt_cache(void *target, const char *arg)
{
	double d;
	if (sp_parse_duration(arg, &d) < 0 || d < 0 || d > 3600)
		return "is not a duration up to 1h";
	*(double *)target = d;
	return NULL;
}

/* 1: parsed, 0: --help was printed */
static int parse_opts(int argc, char **argv, struct sp_serve_opts *so, struct sp_read_opts *ro)
{
	sp_serve_opts_init(so);
	sp_read_opts_init(ro);
	int max_conns = (int)so->max_conns, per_ip = (int)so->per_ip;
	double timeout = so->timeout_s;
	const struct sp_option table[] = {
		SP_OPT_GROUP("options:"),
		SP_OPT_CALLBACK("listen", &so->listen, "ADDR:PORT", opt_listen,
				"address to listen on (default 127.0.0.1:9851; [::1]:9851\n"
				"for IPv6; 0.0.0.0:9851 for every interface; port 0 picks one)"),
		SP_OPT_CALLBACK("cache", &so->cache_s, "DURATION", opt_cache,
				"reuse a reading for this long (default 1s; 0 reads every scrape)"),
		SP_OPT_INT("max-connections", &max_conns, "N", 1, 10000, "connections at once (default 64)"),
		SP_OPT_INT("per-ip", &per_ip, "N", 1, 10000, "connections at once from one address (default 8)"),
		SP_OPT_DURATION("timeout", &timeout, "DURATION", 1, 3600, 0,
				"close idle or slow connections after this (default 10s)"),
		SP_OPT_READ_EXPORT(ro),
		SP_OPT_END(),
	};
	int i = sp_opt_parse(&spec, table, argc, argv);
	if (i < 0)
		return 0;
	if (i < argc)
		sp_usage_error("serve", "unexpected argument '%s'", argv[i]);
	so->max_conns = (unsigned)max_conns;
	so->per_ip = (unsigned)per_ip;
	so->timeout_s = (unsigned)timeout;
	return 1;
}

/* the server did not start: say why, and the exit code */
static int start_failed(const struct sp_serve_opts *so, int err)
{
	if (err == -EACCES || err == -EPERM) {
		sp_error("'%s': cannot listen: %s (ports under 1024 need privileges)", so->listen, sp_serve_strerror(err));
		return SP_EXIT_NOPERM;
	}
	if (err == -ELIBACC || err == -ELIBBAD) {
		sp_error("cannot serve: %s", sp_serve_strerror(err));
		return SP_EXIT_TROUBLE;
	}
	sp_error("'%s': cannot listen: %s", so->listen, sp_serve_strerror(err));
	/* the address is the user's to change; out of memory or of file
	 * descriptors is the machine's trouble */
	bool address = err == -EADDRINUSE || err == -EADDRNOTAVAIL || err == -EINVAL || err == -EAFNOSUPPORT;
	return address ? SP_EXIT_USAGE : SP_EXIT_TROUBLE;
}

/* serve until SIGINT/SIGTERM */
static int serve(const struct sp_serve_opts *so, struct collector *col)
{
	/* blocked before the server thread starts, then waited for here */
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, NULL);

	int err = 0;
	struct sp_server *srv = sp_serve_start(so, fill, col, &err);
	if (!srv)
		return start_failed(so, err);
	sp_note("serving http://%s/metrics", sp_serve_address(srv));
	int sig = 0;
	while (sigwait(&stop, &sig) != 0 || (sig != SIGINT && sig != SIGTERM))
		;
	sp_serve_stop(srv);
	return SP_EXIT_OK;
}

int cmd_serve(int argc, char **argv)
{
	struct sp_serve_opts so;
	struct sp_read_opts ro;
	if (!parse_opts(argc, argv, &so, &ro))
		return 0;
	struct collector *col = calloc(1, sizeof *col);
	if (!col)
		sp_die(SP_EXIT_IO, "out of memory");
	col->ro = ro;
	int rc = serve(&so, col);
	free(col);
	return rc;
}
