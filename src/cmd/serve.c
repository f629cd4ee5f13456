// SPDX-License-Identifier: MIT
/* sparkops serve — the exposition of `sparkops metrics` over HTTP, in the
 * foreground (for systemd), until SIGINT/SIGTERM. */
#include "cmd/cli.h"
#include "cmd/cmdutil.h"
#include "out/prom.h"
#include "out/serve_http.h"
#include "out/webcfg.h"
#include "probe/harden.h"
#include "probe/probe.h"
#include "util/fileio.h"
#include "util/msg.h"
#include "util/opt.h"
#include "util/units.h"

#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct sp_cmdspec spec = {
	.name = "serve",
	.usage = "usage: sparkops serve [--listen ADDR:PORT [--allow-remote]] [--web-config FILE]\n"
		 "                      [--cache DURATION] [--reserve SIZE]\n"
		 "\n"
		 "Serves the exposition of 'sparkops metrics' at http://ADDR:PORT/metrics for\n"
		 "Prometheus (GET and HEAD; / links to it; anything else is 404, other methods\n"
		 "405). Runs in the foreground until SIGINT or SIGTERM. Each scrape reads fresh\n"
		 "values, reused for --cache so a burst of scrapes costs one reading.\n"
		 "The exposition names processes, pids, cgroups and the GPU: an address other\n"
		 "machines can reach needs --allow-remote, and should have TLS and basic\n"
		 "authentication (--web-config, in the format of node_exporter's web config).\n"
		 "\n",
	.tail = "environment: SPARKOPS_MHD_LIB=PATH loads that libmicrohttpd instead of libmicrohttpd.so.12;\n"
		"      SPARKOPS_NVML_LIB=PATH that NVML library instead of libnvidia-ml.so.1\n"
		"exit: 0 after SIGINT/SIGTERM, 1 libmicrohttpd cannot be loaded (or has no TLS)\n"
		"      or the server cannot start (no memory, no file descriptors), 2 usage error,\n"
		"      a bad --web-config, or the address cannot be used (in use, not on this\n"
		"      machine), 4 the port needs privileges\n",
};

struct collector {
	struct sp_sample s;
	struct sp_read_opts ro;
	bool stack_pending; /* memory is locked: touch the server thread's stack on the first scrape */
};

/* runs in the server's thread, one call at a time */
static size_t fill(char *buf, size_t cap, void *ctx)
{
	struct collector *col = ctx;
	if (col->stack_pending) {
		col->stack_pending = false;
		sp_harden_stack(); /* the thread that samples; the main one only waits */
	}
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

static const char *opt_request_timeout(void *target, const char *arg)
{
	double d;
	if (sp_parse_duration(arg, &d) < 0 || d < 0.1 || d > 3600)
		return "is not a duration from 100ms to 1h";
	*(double *)target = d;
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

struct serve_cli {
	bool allow_remote;
	const char *web_config;
};

/* 1: parsed, 0: --help was printed */
static int parse_opts(int argc, char **argv, struct sp_serve_opts *so, struct sp_read_opts *ro, struct serve_cli *cli)
{
	sp_serve_opts_init(so);
	sp_read_opts_init(ro);
	int max_conns = (int)so->max_conns, per_ip = (int)so->per_ip;
	double timeout = so->timeout_s;
	const struct sp_option table[] = {
		SP_OPT_GROUP("options:"),
		SP_OPT_CALLBACK("listen", &so->listen, "ADDR:PORT", opt_listen,
				"address to listen on (default 127.0.0.1:9851; [::1]:9851\n"
				"for IPv6; port 0 picks one); not a loopback address, such as\n"
				"0.0.0.0:9851 (every interface), needs --allow-remote"),
		SP_OPT_FLAG(0, "allow-remote", &cli->allow_remote,
			    "let --listen take an address other machines can reach: they\n"
			    "can then read process names, pids, cgroups and the GPU"),
		SP_OPT_PATH("web-config", &cli->web_config, "FILE",
			    "TLS and basic authentication, the format of node_exporter's\n"
			    "web.config.file: tls_server_config {cert_file, key_file},\n"
			    "basic_auth_users {USER: BCRYPT-HASH}; other keys are refused"),
		SP_OPT_CALLBACK("cache", &so->cache_s, "DURATION", opt_cache,
				"reuse a reading for this long (default 1s; 0 reads every scrape)"),
		SP_OPT_INT("max-connections", &max_conns, "N", 1, 10000,
			   "connections held at once (default 128); more wait in the\n"
			   "kernel's queue"),
		SP_OPT_INT("per-ip", &per_ip, "N", 1, 10000,
			   "connections served at once from one address (default 32);\n"
			   "the next as many are answered 503 with Retry-After: 1, more\n"
			   "are closed at once"),
		SP_OPT_DURATION("timeout", &timeout, "DURATION", 1, 3600, 0,
				"close a connection idle this long (default 10s)"),
		SP_OPT_CALLBACK("request-timeout", &so->request_timeout_s, "DURATION", opt_request_timeout,
				"a request's line and headers must all arrive within this of\n"
				"the connection opening or the previous answer, however\n"
				"slowly they trickle (default 5s)"),
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
	struct sockaddr_storage ss;
	socklen_t sl;
	if (!cli->allow_remote && sp_serve_parse_addr(so->listen, &ss, &sl) == 0 && !sp_serve_addr_is_loopback(&ss))
		sp_usage_error("serve",
			       "--listen '%s' is reachable from other machines: give --allow-remote to serve them "
			       "(and --web-config for TLS and authentication)",
			       so->listen);
	return 1;
}

/* ---- --web-config ----------------------------------------------------------------- */

#define WEBCFG_MAX ((size_t)64 * 1024) /* the config file */
#define PEM_MAX ((size_t)256 * 1024)   /* a certificate chain or a key */

struct web {
	struct sp_webcfg cfg;
	struct sp_serve_user users[SP_WEBCFG_MAX_USERS];
	char *cert, *key; /* PEM texts */
};

/* a path in the config is relative to the config file's folder (as node_exporter) */
static void resolve(char *out, size_t cap, const char *cfg_path, const char *p)
{
	if (p[0] == '/') {
		snprintf(out, cap, "%s", p);
		return;
	}
	char dir[SP_WEBCFG_PATH_MAX];
	snprintf(dir, sizeof dir, "%s", cfg_path);
	snprintf(out, cap, "%s/%s", dirname(dir), p);
}

/* a whole file into a new buffer, or exit 2 with why */
static char *read_whole(const char *what, const char *path, size_t max)
{
	char *buf = malloc(max + 1);
	if (!buf)
		sp_die(SP_EXIT_TROUBLE, "out of memory");
	size_t len = 0;
	int trunc = 0;
	int e = sp_read_file_t(path, buf, max + 1, &len, &trunc);
	if (e < 0)
		sp_die(SP_EXIT_USAGE, "--web-config: %s '%s': %s", what, path, strerror(-e));
	if (trunc || len >= max)
		sp_die(SP_EXIT_USAGE, "--web-config: %s '%s' is over %zu KiB", what, path, max / 1024);
	return buf;
}

/* Read --web-config and what it names into w and so; exits 2 on a bad one. */
static void web_load(const char *path, struct web *w, struct sp_serve_opts *so)
{
	char *text = read_whole("file", path, WEBCFG_MAX);
	char err[256];
	int rc = sp_webcfg_parse(text, strlen(text), &w->cfg, err, sizeof err);
	free(text);
	if (rc < 0)
		sp_die(SP_EXIT_USAGE, "--web-config '%s': %s", path, err);
	if (w->cfg.cert_file[0]) {
		char p[2 * SP_WEBCFG_PATH_MAX + 2];
		resolve(p, sizeof p, path, w->cfg.cert_file);
		w->cert = read_whole("cert_file", p, PEM_MAX);
		resolve(p, sizeof p, path, w->cfg.key_file);
		w->key = read_whole("key_file", p, PEM_MAX);
		if (!strstr(w->cert, "-----BEGIN CERTIFICATE-----"))
			sp_die(SP_EXIT_USAGE, "--web-config: cert_file '%s' holds no PEM certificate", w->cfg.cert_file);
		if (!strstr(w->key, "PRIVATE KEY-----"))
			sp_die(SP_EXIT_USAGE, "--web-config: key_file '%s' holds no PEM private key", w->cfg.key_file);
		so->tls_cert_pem = w->cert;
		so->tls_key_pem = w->key;
	}
	for (unsigned i = 0; i < w->cfg.n_users; i++) {
		w->users[i].name = w->cfg.user[i];
		w->users[i].hash = w->cfg.hash[i];
	}
	so->users = w->users;
	so->n_users = w->cfg.n_users;
}

static void web_free(struct web *w)
{
	free(w->cert);
	if (w->key) {
		explicit_bzero(w->key, strlen(w->key));
		free(w->key);
	}
}

/* the server did not start: say why, and the exit code */
static int start_failed(const struct sp_serve_opts *so, int err)
{
	if (err == -EACCES || err == -EPERM) {
		sp_error("'%s': cannot listen: %s (ports under 1024 need privileges)", so->listen, sp_serve_strerror(err));
		return SP_EXIT_NOPERM;
	}
	if (err == -ELIBACC || err == -ELIBBAD || err == -EPROTONOSUPPORT) {
		sp_error("cannot serve: %s", sp_serve_strerror(err));
		return SP_EXIT_TROUBLE;
	}
	if (err == -EKEYREJECTED) {
		sp_error("cannot serve: %s", sp_serve_strerror(err));
		return SP_EXIT_USAGE;
	}
	sp_error("'%s': cannot listen: %s", so->listen, sp_serve_strerror(err));
	/* the address is the user's to change; out of memory or of file
	 * descriptors is the machine's trouble */
	bool address = err == -EADDRINUSE || err == -EADDRNOTAVAIL || err == -EINVAL || err == -EAFNOSUPPORT;
	return address ? SP_EXIT_USAGE : SP_EXIT_TROUBLE;
}

/* serve until SIGINT/SIGTERM */
static int serve(const struct sp_serve_opts *so, struct collector *col, bool remote)
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
	if (remote && !so->tls_cert_pem && !so->n_users)
		sp_warn("'%s' is open to other machines without TLS or authentication: anyone who can reach it "
			"reads process names, pids, cgroups and the GPU (see --web-config)",
			sp_serve_address(srv));
	sp_note("serving %s://%s/metrics", sp_serve_scheme(srv), sp_serve_address(srv));
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
	struct serve_cli cli = { 0 };
	if (!parse_opts(argc, argv, &so, &ro, &cli))
		return 0;
	sp_kmsg_start("serve", &ro);
	struct web *w = calloc(1, sizeof *w);
	struct collector *col = calloc(1, sizeof *col);
	if (!w || !col)
		sp_die(SP_EXIT_IO, "out of memory");
	if (cli.web_config)
		web_load(cli.web_config, w, &so);
	/* a watcher of memory pressure must not be paged out by it (and, as
	 * root, not be the OOM killer's first choice) */
	char hw[256] = "";
	unsigned hd = sp_harden_process(SP_HARDEN_MLOCK | SP_HARDEN_OOM, hw, sizeof hw);
	col->stack_pending = (hd & SP_HARDEN_MLOCK) != 0;
	if (hw[0])
		sp_note("%s", hw);
	col->ro = ro;
	struct sockaddr_storage ss;
	socklen_t sl;
	bool remote = sp_serve_parse_addr(so.listen, &ss, &sl) == 0 && !sp_serve_addr_is_loopback(&ss);
	int rc = serve(&so, col, remote);
	free(col);
	web_free(w);
	free(w);
	return rc;
}
