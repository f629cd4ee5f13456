// SPDX-License-Identifier: MIT
/* top's CONTAINER column (out/topview.c): the container, pod or unit of each
 * process where the screen is wide enough, none on a narrow one (the CAP
 * column keeps its place); the sort that groups the list by container. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/topview.h"

#define GIB (1024ULL * 1024 * 1024)

static char *render(int cols, enum sp_top_sort sort)
{
	struct sp_sample *s = calloc(1, sizeof *s);
	struct sp_tv_grid *g = calloc(1, sizeof *g);
	static char buf[65536];
	assert_non_null(s);
	assert_non_null(g);
	s->mem.why = SP_OK;
	s->mem.v[SP_MI_TOTAL] = 120 * GIB;
	s->mem.v[SP_MI_FREE] = 10 * GIB;
	s->mem.have = ~0ULL;
	s->cg.limit.why = s->cg.usage.why = s->cg.file.why = SP_MISSING;
	sp_budget_compute(&s->budget, &s->mem, &s->cg, 4 * GIB);
	s->gpu_status = SP_NO_DRIVER;
	struct sp_proc *p = &s->procs[0];
	p->pid = 5101;
	p->kind = SP_PROC_SERVER;
	p->rss_bytes = 30 * GIB;
	p->gpu_mem.why = SP_MISSING;
	p->has_cap = true;
	p->cap_frac = 0.5;
	snprintf(p->name, sizeof p->name, "vllm");
	p->ct.runtime = SP_CT_CONTAINERD;
	snprintf(p->ct.pod_uid, sizeof p->ct.pod_uid, "0a1b");
	snprintf(p->ct.pod, sizeof p->ct.pod, "sglang-0");
	snprintf(p->ct.ns, sizeof p->ct.ns, "ml");
	p->ct.pod_why = p->ct.ns_why = SP_OK;
	p = &s->procs[1];
	p->pid = 5401;
	p->kind = SP_PROC_SERVER;
	p->rss_bytes = GIB;
	p->gpu_mem.why = SP_MISSING;
	snprintf(p->name, sizeof p->name, "ollama");
	snprintf(p->ct.unit, sizeof p->ct.unit, "ollama.service");
	p = &s->procs[2];
	p->pid = 6001;
	p->kind = SP_PROC_TRAINER;
	p->rss_bytes = 50 * GIB;
	p->gpu_mem.why = SP_MISSING;
	snprintf(p->name, sizeof p->name, "train.py");
	s->nprocs = 3;
	struct sp_spark k;
	memset(&k, 0, sizeof k);
	struct sp_top_hist h;
	sp_top_hist_init(&h);
	sp_top_hist_push(&h, s, &k);
	struct sp_topview_in in = { .s = s, .k = &k, .h = &h, .host = "spark", .interval_s = 1, .samples = 1,
				     .sort = sort };
	sp_topview_render(g, 40, cols, &in);
	size_t len = 0;
	buf[0] = 0;
	for (int r = 0; r < g->rows; r++) {
		char line[SP_TV_COLS_MAX * 4];
		sp_tv_line(g, r, line, sizeof line);
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%s\n", line);
	}
	free(s);
	free(g);
	return buf;
}

static void wide(void **st)
{
	(void)st;
	const char *b = render(140, SP_TOP_SORT_RSS);
	assert_non_null(strstr(b, "NAME           CONTAINER "));
	assert_non_null(strstr(b, "vllm           ml/sglang-0 "));
	assert_non_null(strstr(b, "ollama         ollama.service "));
	assert_non_null(strstr(b, "0.50=60.0 GiB"));
}

static void narrow(void **st)
{
	(void)st;
	const char *b = render(80, SP_TOP_SORT_RSS);
	assert_null(strstr(b, "CONTAINER"));
	assert_null(strstr(b, "ml/sglang-0"));
	assert_non_null(strstr(b, "0.50=60.0 GiB"));
}

static void grouped(void **st)
{
	(void)st;
	const char *b = render(140, SP_TOP_SORT_RSS);
	assert_true(strstr(b, "train.py") < strstr(b, "ml/sglang-0")); /* the largest first */
	b = render(140, SP_TOP_SORT_CONTAINER);
	assert_non_null(strstr(b, "sort: container"));
	const char *pod = strstr(b, "ml/sglang-0"), *unit = strstr(b, "ollama.service"), *host = strstr(b, "train.py");
	assert_non_null(pod);
	assert_non_null(unit);
	assert_non_null(host);
	assert_true(pod < unit && unit < host); /* containers and pods, host units, the rest */
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(wide), cmocka_unit_test(narrow), cmocka_unit_test(grouped) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
