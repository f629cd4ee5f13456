// SPDX-License-Identifier: MIT
/* The checks of the options run and watch share (runwatch.h). */
#include "cmd/runwatch.h"
#include "cmd/cli.h"
#include "out/serve_http.h"
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

void sp_runwatch_check(const struct sp_engine_opts *o, const char *cmd)
{
	char why[2400];
	if (sp_csvlog_check(o->log_path, o->summary_path, why, sizeof why) < 0)
		sp_usage_error(cmd, "%s", why);
	/* run --guard-load writes LOG.receipts.jsonl beside the log */
	char rc[1100];
	if (o->guard_load && o->log_path && snprintf(rc, sizeof rc, "%s.receipts.jsonl", o->log_path) < (int)sizeof rc &&
	    sp_out_distinct("--summary", o->summary_path, "the load guard's receipts", rc, why, sizeof why) < 0)
		sp_usage_error(cmd, "%s", why);
}
