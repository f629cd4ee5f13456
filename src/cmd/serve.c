// SPDX-License-Identifier: MIT
/* sparkops serve — the exposition of `sparkops metrics` over HTTP, in the
 * foreground (for systemd), until SIGINT/SIGTERM. */
#include "cmd/cli.h"
#include "cmd/cmdutil.h"
#include "cmd/status.h"
#include "out/topview.h"
#include "cmd/webload.h"
#include "out/nodes.h"
#include "out/peer.h"
#include "out/prom.h"
#include "probe/link.h"
#include "out/serve_http.h"
#include "out/webcfg.h"
#include "probe/harden.h"
#include "probe/probe.h"
#include "probe/spark.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "util/msg.h"
#include "util/opt.h"
#include "util/units.h"

#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct sp_cmdspec spec = {
	.name = "serve",
	.usage = "usage: sparkops serve [--listen ADDR:PORT [--allow-remote]] [--web-config FILE]\n"
		 "                      [--cache DURATION] [--reserve SIZE] [--peer URL]...\n"
		 "\n"
		 "Serves the exposition of 'sparkops metrics' at http://ADDR:PORT/metrics for\n"
		 "Prometheus (GET and HEAD; / links to it; anything else is 404, other methods\n"
		 "405). Runs in the foreground until SIGINT or SIGTERM. Each scrape reads fresh\n"
		 "values, reused for --cache so a burst of scrapes costs one reading.\n"
		 "The exposition names processes, pids, cgroups and the GPU: an address other\n"
		 "machines can reach needs --allow-remote, and should have TLS and basic\n"
		 "authentication (--web-config, in the format of node_exporter's web config).\n"
		 "\n"
		 "The live page at / polls /api/status (status --json's document) and\n"
		 "/api/history; with --peer, /api/nodes gives every node's document and state\n"
		 "(ok, stale, down) and the page shows the nodes side by side.\n"
		 "\n",
	.tail = "environment: SPARKOPS_MHD_LIB=PATH loads that libmicrohttpd instead of libmicrohttpd.so.12;\n"
		"      SPARKOPS_NVML_LIB=PATH that NVML library instead of libnvidia-ml.so.1\n"
		"exit: 0 after SIGINT/SIGTERM, 1 libmicrohttpd cannot be loaded (or has no TLS)\n"
		"      or the server cannot start (no memory, no file descriptors), 2 usage error,\n"
		"      a bad --web-config, or the address cannot be used (in use, not on this\n"
		"      machine), 4 the port needs privileges\n",
};

#define PEER_ARGS_MAX 16 /* more than SP_NODES_MAX - 1 are named on the page, not polled */
struct peer_list {
	struct sp_peer_url u[PEER_ARGS_MAX];
	int n;
};

struct collector {
	struct sp_sample s;
	struct sp_read_opts ro;
	bool stack_pending; /* memory is locked: touch the server thread's stack on the first scrape */
	/* the live page's (made on its first request: a server only scraped
	 * never holds them): its own sample, read at most once a second, and the
	 * ring of recent samples the page's sparklines draw */
	struct sp_sample *api_s;
	double api_at;
	struct sp_top_hist *hist;
	/* the ConnectX link: two readings, for bytes per second */
	struct sp_links links[2];
	int links_cur;
	/* --peer: the other nodes, polled in threads of their own */
	struct sp_peers *peers;
	const struct peer_list *pl;
};

#define API_MIN_S 1.0 /* the page polls once a second: one reading serves every tab */

static void hist_push(struct collector *col, const struct sp_sample *s)
{
	if (!col->hist) {
		col->hist = calloc(1, sizeof *col->hist);
		if (!col->hist)
			return;
		sp_top_hist_init(col->hist);
	}
	struct sp_spark k;
	sp_spark_derive(s, &k);
	sp_top_hist_push(col->hist, s, &k);
}

/* status --json's document, from a reading at most API_MIN_S old, with the
 * link's bytes per second since the reading before */
static json_t *local_doc(struct collector *col)
{
	if (!col->api_s) {
		col->api_s = calloc(1, sizeof *col->api_s);
		if (!col->api_s)
			return NULL;
	}
	double now = sp_mono_now();
	if (col->api_at == 0 || now - col->api_at >= API_MIN_S || now < col->api_at) {
		sp_sample_read(col->api_s, &col->ro);
		col->api_at = now;
		hist_push(col, col->api_s);
		int prev = col->links_cur;
		col->links_cur = !prev;
		sp_links_read(&col->links[col->links_cur], col->links[prev].t > 0 ? &col->links[prev] : NULL);
	}
	json_t *d = sp_status_document(col->api_s, (col->ro.what & SP_READ_PROCS) != 0);
	if (d)
		json_object_set_new(d, "links", sp_links_json(&col->links[col->links_cur]));
	return d;
}

/* /api/status */
static size_t api_status(char *buf, size_t cap, void *ctx)
{
	json_t *d = local_doc(ctx);
	if (!d)
		return 0;
	size_t n = json_dumpb(d, buf, cap, JSON_COMPACT);
	json_decref(d);
	return n;
}

/* /api/nodes: this node, then each peer's last good document with its state */
static size_t api_nodes(char *buf, size_t cap, void *ctx)
{
	struct collector *col = ctx;
	json_t *o = json_object(), *a = json_array(), *more = json_array();
	json_t *self = json_object();
	json_t *d = local_doc(col);
	json_object_set_new(self, "url", json_null());
	json_object_set_new(self, "self", json_true());
	json_t *host = d ? json_object_get(d, "host") : NULL;
	json_object_set_new(self, "name", host ? json_incref(host) : json_null());
	json_object_set_new(self, "state", json_string(d ? "ok" : "down"));
	json_object_set_new(self, "age_s", json_real(0));
	json_object_set_new(self, "error", json_null());
	json_object_set_new(self, "status", d ? d : json_null());
	json_array_append_new(a, self);
	int n = sp_peers_n(col->peers);
	for (int i = 0; i < n; i++) {
		struct sp_peer_view v;
		sp_peers_view(col->peers, i, &v);
		json_t *e = json_object();
		json_object_set_new(e, "url", sp_json_text(v.url));
		json_object_set_new(e, "self", json_false());
		json_t *h = v.doc ? json_object_get(v.doc, "host") : NULL;
		json_object_set_new(e, "name", json_is_string(h) ? sp_json_text(json_string_value(h)) : json_null());
		json_object_set_new(e, "state", json_string(v.state));
		json_object_set_new(e, "age_s", isnan(v.age_s) ? json_null() : json_real(round(v.age_s * 10) / 10));
		json_object_set_new(e, "error", v.error[0] ? sp_json_text(v.error) : json_null());
		/* the last good reading, whatever the state: the page shows it as current only when ok */
		json_object_set_new(e, "status", v.doc ? v.doc : json_null());
		json_array_append_new(a, e);
	}
	for (int i = n; col->pl && i < col->pl->n; i++)
		json_array_append_new(more, sp_json_text(col->pl->u[i].url));
	json_object_set_new(o, "max_nodes", json_integer(SP_NODES_MAX));
	json_object_set_new(o, "nodes", a);
	json_object_set_new(o, "not_shown", more);
	json_object_set_new(o, "note", json_array_size(more) ? json_string(SP_NODES_MORE_NOTE) : json_null());
	size_t len = json_dumpb(o, buf, cap, JSON_COMPACT);
	json_decref(o);
	return len;
}

/* /api/history: the ring, oldest first, null for an unknown point */
static size_t api_history(char *buf, size_t cap, void *ctx)
{
	struct collector *col = ctx;
	static const char *const key[SP_TS_N] = { "free", "temp", "power", "clock", "die", "sys_power" };
	json_t *o = json_object();
	const struct sp_top_hist *h = col->hist;
	int n = h ? h->n : 0;
	json_object_set_new(o, "samples", json_integer(n));
	json_object_set_new(o, "total_bytes", h && h->total_bytes > 0 ? json_real(h->total_bytes) : json_null());
	json_object_set_new(o, "power_ref_w", h && h->power_ref_w > 0 ? json_real(h->power_ref_w) : json_null());
	json_object_set_new(o, "clock_ref_mhz", h && h->clock_ref_mhz > 0 ? json_real(h->clock_ref_mhz) : json_null());
	for (int ser = 0; ser < SP_TS_N; ser++) {
		json_t *a = json_array();
		for (int age = n - 1; age >= 0; age--) {
			double v = sp_top_hist_get(h, (enum sp_top_series)ser, age);
			json_array_append_new(a, isnan(v) ? json_null() : json_real(v));
		}
		json_object_set_new(o, key[ser], a);
	}
	size_t len = json_dumpb(o, buf, cap, JSON_COMPACT);
	json_decref(o);
	return len;
}

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
	if (col->hist) /* the page was opened: scrapes add to its history too */
		hist_push(col, &col->s);
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

static const char *opt_peer(void *target, const char *arg)
{
	static char why[240];
	struct peer_list *pl = target;
	if (pl->n >= PEER_ARGS_MAX)
		return "is one too many (at most 16; past three peers the page points to Prometheus)";
	if (sp_peer_url_parse(arg, &pl->u[pl->n], why, sizeof why) < 0)
		return why;
	for (int i = 0; i < pl->n; i++)
		if (strcmp(pl->u[i].url, pl->u[pl->n].url) == 0)
			return "is named twice";
	pl->n++;
	return NULL;
}

struct serve_cli {
	bool allow_remote;
	const char *web_config;
	struct peer_list peers;
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
		SP_OPT_IN_PATH("web-config", &cli->web_config, "FILE",
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
		SP_OPT_CALLBACK("peer", &cli->peers, "URL", opt_peer,
				"another node's serve, http://HOST[:PORT] (repeatable; up to\n"
				"three, four nodes in all): its /api/status is read once a\n"
				"second behind a 2s deadline, and /api/nodes and the page show\n"
				"the nodes side by side; more are named on the page, not read"),
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
	sp_harden_relock(); /* the server's threads: locked too where the first lock could not cover them */
	if (remote && !so->tls_cert_pem && !so->n_users)
		sp_warn("'%s' is open to other machines without TLS or authentication: anyone who can reach it "
			"reads process names, pids, cgroups and the GPU (see --web-config)",
			sp_serve_address(srv));
	sp_note("serving %s://%s/metrics", sp_serve_scheme(srv), sp_serve_address(srv));
	sp_note("the live page: %s://%s/", sp_serve_scheme(srv), sp_serve_address(srv));
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
	struct sp_web *w = calloc(1, sizeof *w);
	struct collector *col = calloc(1, sizeof *col);
	if (!w || !col)
		sp_die(SP_EXIT_IO, "out of memory");
	if (cli.web_config)
		sp_web_load(cli.web_config, w, &so);
	/* a watcher of memory pressure must not be paged out by it (and, as
	 * root, not be the OOM killer's first choice) */
	char hw[256] = "";
	unsigned hd = sp_harden_process(SP_HARDEN_MLOCK | SP_HARDEN_OOM, hw, sizeof hw);
	col->stack_pending = (hd & SP_HARDEN_MLOCK) != 0;
	if (hw[0])
		sp_note("%s", hw);
	col->ro = ro;
	so.api_status = api_status;
	so.api_history = api_history;
	so.api_nodes = api_nodes;
	so.api_ctx = col;
	col->pl = &cli.peers;
	if (cli.peers.n) {
		int np = cli.peers.n;
		if (np > SP_NODES_MAX - 1) {
			sp_warn("%d of the --peer nodes are not read: %s", np - (SP_NODES_MAX - 1), SP_NODES_MORE_NOTE);
			np = SP_NODES_MAX - 1;
		}
		col->peers = sp_peers_start(cli.peers.u, np, SP_PEER_INTERVAL_S, SP_PEER_TIMEOUT_S, SP_PEER_IDLE_S);
		if (!col->peers)
			sp_die(SP_EXIT_TROUBLE, "cannot start the threads that read the peers");
	}
	struct sockaddr_storage ss;
	socklen_t sl;
	bool remote = sp_serve_parse_addr(so.listen, &ss, &sl) == 0 && !sp_serve_addr_is_loopback(&ss);
	int rc = serve(&so, col, remote);
	sp_peers_stop(col->peers);
	free(col->api_s);
	free(col->hist);
	free(col);
	sp_web_free(w);
	free(w);
	return rc;
}
