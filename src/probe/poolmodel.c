// SPDX-License-Identifier: MIT
/* One model of the pool. See poolmodel.h. */
#include "probe/poolmodel.h"

#include <math.h>
#include <string.h>

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

double sp_pool_used_of(double total, double free, double cache)
{
	if (!isfinite(total) || !isfinite(free) || !isfinite(cache))
		return NAN;
	double u = total - free - cache;
	return u > 0 ? u : 0;
}

uint64_t sp_pool_flush_gain(const struct sp_meminfo *m)
{
	uint64_t cache = m->v[SP_MI_BUFFERS] + m->v[SP_MI_CACHED];
	cache = sub0(cache, m->v[SP_MI_SHMEM]);
	cache = sub0(cache, m->v[SP_MI_MAPPED]);
	return cache + m->v[SP_MI_SRECLAIMABLE];
}

uint64_t sp_pool_proc_held(const struct sp_proc *p)
{
	return p->rss_bytes + (sp_ok(p->gpu_mem.why) ? p->gpu_mem.v : 0);
}

uint64_t sp_pool_proc_cap(const struct sp_proc *p, double base)
{
	if (!p->has_cap || !(base > 0) || !(p->cap_frac > 0))
		return 0;
	return (uint64_t)(p->cap_frac * base);
}

static void from_mem(struct sp_pool *p, const struct sp_meminfo *m)
{
	p->why = m->why;
	if (m->why != SP_OK)
		return;
	p->cache_known = sp_mi_has(m, SP_MI_BUFFERS) && sp_mi_has(m, SP_MI_CACHED);
	p->total = m->v[SP_MI_TOTAL];
	p->free = m->v[SP_MI_FREE];
	p->available = m->v[SP_MI_AVAILABLE];
	p->cache = m->v[SP_MI_BUFFERS] + m->v[SP_MI_CACHED];
	p->shmem = m->v[SP_MI_SHMEM] < p->cache ? m->v[SP_MI_SHMEM] : p->cache;
	p->kernel = m->v[SP_MI_SRECLAIMABLE] + m->v[SP_MI_SUNRECLAIM];
	p->used = (uint64_t)sp_pool_used_of((double)p->total, (double)p->free, (double)p->cache);
}

static void from_budget(struct sp_pool *p, const struct sp_budget *b)
{
	p->reclaimable = b->reclaimable;
	p->budget_now = b->now;
	p->budget_after_flush = b->after_flush;
	p->reserve = b->reserve;
	p->cgroup_bound = b->cgroup_bound;
}

void sp_pool_from_sample(struct sp_pool *p, const struct sp_sample *s)
{
	memset(p, 0, sizeof *p);
	from_mem(p, &s->mem);
	from_budget(p, &s->budget);
	for (int i = 0; i < s->nprocs; i++)
		p->procs_held += sp_pool_proc_held(&s->procs[i]);
	p->nprocs = s->nprocs;
}

void sp_pool_from_meminfo(struct sp_pool *p, const struct sp_meminfo *m)
{
	memset(p, 0, sizeof *p);
	from_mem(p, m);
	struct sp_budget b;
	sp_budget_compute(&b, m, NULL, 0);
	from_budget(p, &b);
}

uint64_t sp_pool_evict_gain(const struct sp_pool *p, uint64_t resident)
{
	if (!sp_ok(p->reclaimable.why))
		return resident;
	return resident < p->reclaimable.v ? resident : p->reclaimable.v;
}

struct sp_u64 sp_pool_budget_after_evict(const struct sp_pool *p, uint64_t resident)
{
	struct sp_u64 r = p->budget_now;
	if (!sp_ok(r.why))
		return r;
	r.v += sp_pool_evict_gain(p, resident);
	return r;
}
