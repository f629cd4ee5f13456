// SPDX-License-Identifier: MIT
/* The budget a plan is judged against (account/budget.h), the one path of
 * plan and ladder --plan, on scripted samples: --budget or the live pool
 * model's budget, less every co-host (a file's size, a share of the pool),
 * the discrete GPU's free memory, and why it cannot be made. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "account/budget.h"
#include "probe/poolmodel.h"

#define GiB (1ULL << 30)

static void mi_set(struct sp_meminfo *m, enum sp_mi k, uint64_t v)
{
	m->v[k] = v;
	m->have |= 1ull << k;
}

/* a unified pool: 120 GiB, 30 free, 40 page cache; no GPU read */
static void pool(struct sp_sample *s)
{
	memset(s, 0, sizeof *s);
	struct sp_meminfo *m = &s->mem;
	m->why = SP_OK;
	mi_set(m, SP_MI_TOTAL, 120 * GiB);
	mi_set(m, SP_MI_FREE, 30 * GiB);
	mi_set(m, SP_MI_AVAILABLE, 70 * GiB);
	mi_set(m, SP_MI_BUFFERS, 0);
	mi_set(m, SP_MI_CACHED, 40 * GiB);
	mi_set(m, SP_MI_SHMEM, 0);
	mi_set(m, SP_MI_MAPPED, 0);
	mi_set(m, SP_MI_SRECLAIMABLE, 0);
	mi_set(m, SP_MI_SUNRECLAIM, 0);
	sp_budget_compute(&s->budget, m, NULL, 4 * GiB);
}

static struct sp_sample S;
static char err[600];

static void given_less_a_file(void **st)
{
	(void)st;
	pool(&S);
	char path[] = "/tmp/sp-test-budget-XXXXXX.gguf";
	int fd = mkstemps(path, 5);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(20 * GiB)), 0);
	close(fd);
	struct sp_cohost c[2];
	char spec[600];
	snprintf(spec, sizeof spec, "ollama:%s", path);
	assert_int_equal(sp_cohost_parse(spec, strlen(spec), &c[0], err, sizeof err), 0);
	assert_int_equal(sp_cohost_parse("vllm:0.25", 9, &c[1], err, sizeof err), 0);
	struct sp_plan_budget b;
	assert_int_equal(sp_plan_budget_make(&b, &S, 80 * GiB, -1, c, 2, err, sizeof err), SP_BUDGET_OK);
	unlink(path);
	assert_string_equal(b.source, "--budget");
	assert_true(b.raw_bytes == 80 * GiB);
	assert_true(c[0].bytes == 20 * GiB); /* the file's size */
	assert_true(b.cohost_bytes == 40 * GiB); /* and a quarter of what --budget gives */
	assert_true(b.bytes == 40 * GiB);
	assert_true(b.uma);
	assert_string_equal(b.uma_source, "no GPU found: system memory");
	/* the file gone: said, never a co-host of 0 bytes */
	assert_int_equal(sp_plan_budget_make(&b, &S, 80 * GiB, -1, c, 1, err, sizeof err), SP_BUDGET_COHOST_FILE);
	assert_non_null(strstr(err, path));
}

static void live_pool(void **st)
{
	(void)st;
	pool(&S);
	struct sp_pool pm;
	sp_pool_from_sample(&pm, &S);
	struct sp_cohost c;
	assert_int_equal(sp_cohost_parse("ollama:12GiB", 12, &c, err, sizeof err), 0);
	struct sp_plan_budget b;
	assert_int_equal(sp_plan_budget_make(&b, &S, 0, -1, &c, 1, err, sizeof err), SP_BUDGET_OK);
	assert_string_equal(b.source, "live");
	/* the pool model's budget, the same as status's */
	assert_true(b.raw_bytes == pm.budget_now.v);
	assert_true(b.raw_bytes == 26 * GiB);
	assert_true(b.bytes == 14 * GiB);
	assert_true(b.after_flush == pm.budget_after_flush.v - 12 * GiB);
	assert_true(b.pool_total == 120 * GiB);
	/* the budget unreadable */
	S.budget.now.why = SP_MISSING;
	assert_int_equal(sp_plan_budget_make(&b, &S, 0, -1, &c, 1, err, sizeof err), SP_BUDGET_UNREAD);
	/* --budget needs no reading */
	assert_int_equal(sp_plan_budget_make(&b, &S, 8 * GiB, -1, NULL, 0, err, sizeof err), SP_BUDGET_OK);
	assert_true(b.bytes == 8 * GiB && b.host_bytes == 0);
}

static void discrete(void **st)
{
	(void)st;
	pool(&S);
	struct sp_plan_budget b;
	/* --uma no without a GPU read: why */
	assert_int_equal(sp_plan_budget_make(&b, &S, 0, 0, NULL, 0, err, sizeof err), SP_BUDGET_GPU_UNREAD);
	S.ngpu = 1;
	S.gpus[0].mem_free = (struct sp_u64){ 20 * GiB, SP_OK };
	S.gpus[0].mem_total = (struct sp_u64){ 24 * GiB, SP_OK };
	assert_int_equal(sp_plan_budget_make(&b, &S, 0, 0, NULL, 0, err, sizeof err), SP_BUDGET_OK);
	assert_false(b.uma);
	assert_string_equal(b.uma_source, "--uma");
	assert_true(b.bytes == 20 * GiB && b.pool_total == 24 * GiB && b.host_bytes == 26 * GiB);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(given_less_a_file),
		cmocka_unit_test(live_pool),
		cmocka_unit_test(discrete),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
