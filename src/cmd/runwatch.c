// SPDX-License-Identifier: MIT
/* The checks of the options run and watch share (runwatch.h). */
#include "cmd/runwatch.h"
#include "cmd/cli.h"
#include "cmd/webload.h"
#include "out/serve_http.h"
#include "probe/kmsg.h"
#include "util/msg.h"
#include "watch/sampler.h"

#include <unistd.h>

const char *sp_opt_guard_flush(void *opts, const char *unused)
{
	struct sp_engine_opts *o = opts;
	(void)unused;
	o->guard_flush_asked = true;
	o->guard.can_flush = geteuid() == 0;
	return NULL;
}

const char *sp_opt_metrics_listen(void *addr, const char *value)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	if (sp_serve_parse_addr(value, &ss, &sl) < 0)
		return "is not ADDR:PORT (e.g. 127.0.0.1:9852)";
	*(const char **)addr = value;
	return NULL;
}

/* --metrics-listen follows serve's rules: loopback unless --allow-remote,
 * and --web-config for TLS and authentication */
static void metrics_check(struct sp_engine_opts *o, const char *cmd)
{
	if (!o->metrics_listen) {
		if (o->metrics_allow_remote)
			sp_usage_error(cmd, "--allow-remote goes with --metrics-listen");
		if (o->metrics_web_config)
			sp_usage_error(cmd, "--web-config goes with --metrics-listen");
		return;
	}
	struct sockaddr_storage ss;
	socklen_t sl;
	bool remote = sp_serve_parse_addr(o->metrics_listen, &ss, &sl) == 0 && !sp_serve_addr_is_loopback(&ss);
	if (remote && !o->metrics_allow_remote)
		sp_usage_error(cmd,
			       "--metrics-listen '%s' is reachable from other machines: give --allow-remote to serve "
			       "them (and --web-config for TLS and authentication)",
			       o->metrics_listen);
	static struct sp_web web;
	static struct sp_serve_opts so;
	if (o->metrics_web_config) {
		sp_serve_opts_init(&so);
		sp_web_load(o->metrics_web_config, &web, &so);
		o->metrics_web = &so;
	}
	if (remote && (!o->metrics_web || !o->metrics_web->tls_cert_pem || !o->metrics_web->n_users))
		sp_warn("--metrics-listen '%s' is open to other machines without %s: anyone who can reach it "
			"reads the job's and the machine's processes",
			o->metrics_listen,
			!o->metrics_web ? "TLS or authentication" : !o->metrics_web->tls_cert_pem ? "TLS" : "authentication");
}

void sp_runwatch_check(struct sp_engine_opts *o, const char *cmd)
{
	char why[2400];
	if (sp_csvlog_check(o->log_path, o->summary_path, why, sizeof why) < 0)
		sp_usage_error(cmd, "%s", why);
	/* run --guard-load writes LOG.receipts.jsonl beside the log */
	char rc[1100];
	if (o->guard_load && o->log_path && snprintf(rc, sizeof rc, "%s.receipts.jsonl", o->log_path) < (int)sizeof rc &&
	    sp_out_distinct("--summary", o->summary_path, "the load guard's receipts", rc, why, sizeof why) < 0)
		sp_usage_error(cmd, "%s", why);
	metrics_check(o, cmd);
	/* --kmsg FILE: readable now, as the exporters ask */
	if (o->kmsg_path) {
		struct sp_kmsg k;
		sp_kmsg_open(&k, o->kmsg_path);
		if (k.why != SP_OK)
			sp_usage_error(cmd, "--kmsg '%s': %s", o->kmsg_path, sp_why_text(k.why));
		sp_kmsg_close(&k);
	}
}
