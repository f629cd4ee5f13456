// SPDX-License-Identifier: MIT
/* The budget a plan is judged against (budget.h): one path for plan and
 * ladder --plan. */
#include "account/budget.h"
#include "probe/poolmodel.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

void sp_budget_less_cohosts(struct sp_plan_budget *b, const struct sp_cohost *c, int n)
{
	b->cohost_bytes = 0;
	for (int i = 0; i < n; i++)
		b->cohost_bytes += sp_cohost_bytes(&c[i], b->pool_total);
	b->bytes = b->cohost_bytes >= b->raw_bytes ? 0 : b->raw_bytes - b->cohost_bytes;
	if (b->after_flush)
		b->after_flush = b->cohost_bytes >= b->after_flush ? 0 : b->after_flush - b->cohost_bytes;
}

int sp_cohosts_size_files(struct sp_cohost *c, int n, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (c[i].kind != SP_COHOST_OLLAMA_FILE)
			continue;
		if (stat(c[i].path, &st) < 0) {
			snprintf(err, errlen, "--cohost: '%s': %s", c[i].path, strerror(errno));
			return -1;
		}
		c[i].bytes = (uint64_t)st.st_size;
	}
	return 0;
}

/* the live budget before the co-hosted servers */
static enum sp_budget_fail live(struct sp_plan_budget *b, const struct sp_sample *s, char *err, size_t errlen)
{
	b->source = "live";
	if (!sp_ok(s->budget.now.why)) {
		snprintf(err, errlen, "%s", sp_why_text(s->budget.now.why));
		return SP_BUDGET_UNREAD;
	}
	if (b->uma) {
		struct sp_pool pm; /* the pool model's budget: status's, the guard's, the ladder's */
		sp_pool_from_sample(&pm, s);
		b->bytes = pm.budget_now.v;
		b->after_flush = sp_ok(pm.budget_after_flush.why) ? pm.budget_after_flush.v : 0;
		b->pool_total = s->mem.why == SP_OK && sp_mi_has(&s->mem, SP_MI_TOTAL) ? s->mem.v[SP_MI_TOTAL] : 0;
		return SP_BUDGET_OK;
	}
	const struct sp_gpu *g = s->ngpu > 0 ? &s->gpus[0] : NULL;
	if (!g || !sp_ok(g->mem_free.why)) {
		snprintf(err, errlen, "%s", g ? sp_why_text(g->mem_free.why) : sp_why_text(s->gpu_status));
		return SP_BUDGET_GPU_UNREAD;
	}
	b->bytes = g->mem_free.v;
	b->pool_total = sp_ok(g->mem_total.why) ? g->mem_total.v : g->mem_free.v;
	b->host_bytes = s->budget.now.v;
	return SP_BUDGET_OK;
}

enum sp_budget_fail sp_plan_budget_make(struct sp_plan_budget *b, const struct sp_sample *s, uint64_t given, int uma,
					struct sp_cohost *c, int n, char *err, size_t errlen)
{
	memset(b, 0, sizeof *b);
	bool detected_uma = s->ngpu == 0 || sp_sample_is_uma(s);
	b->uma = uma >= 0 ? uma != 0 : detected_uma;
	b->uma_source = uma >= 0 ? "--uma" : s->ngpu == 0 ? "no GPU found: system memory" : "detected from the GPU";
	if (given) {
		b->bytes = given;
		b->source = "--budget";
		b->pool_total = given; /* vllm:FRACTION is a share of what was given */
		b->host_bytes = sp_ok(s->budget.now.why) ? s->budget.now.v : 0;
	} else {
		enum sp_budget_fail f = live(b, s, err, errlen);
		if (f != SP_BUDGET_OK)
			return f;
	}
	b->raw_bytes = b->bytes;
	if (sp_cohosts_size_files(c, n, err, errlen) < 0)
		return SP_BUDGET_COHOST_FILE;
	sp_budget_less_cohosts(b, c, n);
	return SP_BUDGET_OK;
}
