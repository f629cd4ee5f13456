/* SPDX-License-Identifier: MIT */
/* One model of the pool, pure: every command that says "used", "page
 * cache", "reclaimable", "budget" or what a process holds reads it from
 * here (status, top, ladder, plan, the guard, the run summary), so they
 * cannot count the pool three ways. It lives in probe/ (rank 1) because the
 * readers sit in three rank-2 folders (watch/, ladder/, account/) and above.
 *
 *   total = used + page cache + free
 *   used  = total - free - page cache: processes (anon, GPU allocations on
 *           unified memory) and the kernel (slab)
 *   page cache = Buffers + Cached, shmem included (tmpfs, shared memory: a
 *           flush keeps it)
 *   reclaimable = what a flush gives back: clean unmapped file pages
 *           (page cache - shmem - mapped) + reclaimable slab (sp_budget_compute)
 *   budget now = MemFree - reserve; after flush = now + reclaimable
 *
 * What a process holds is its RSS plus the GPU memory NVML gives for it;
 * a server's cap (vLLM --gpu-memory-utilization, SGLang --mem-fraction-static)
 * is what it may take, never counted as held. */
#ifndef SP_POOLMODEL_H
#define SP_POOLMODEL_H
#include "probe/sample.h"

/* The thresholds beside the model, once: every command that judges the pool
 * (status's verdict, top's colours, the ladder's rung 1, the load guard's
 * default floor) reads them here, never a copy. */
#define SP_POOL_LOW_BUDGET (1ULL << 30) /* a budget under this is trouble (status, top) */
#define SP_POOL_LOW_CONTIG (1ULL << 30) /* free in 2 MiB blocks under this: the driver's large allocations can fail */
#define SP_POOL_SMALL_CAP 0.5           /* a server cap at or under this fraction is judged fine, and advised */
/* pressure stall (PSI avg10, percent of the last 10 s): memory's "full" at
 * or over this is trouble (status) and alarm (top); a resource's "some" at
 * or over SOME_WARN is a warning (top), over SOME_ONLY_WARN for a resource
 * that has no "full" line (cpu) */
#define SP_POOL_PSI_FULL_TROUBLE 10.0
#define SP_POOL_PSI_SOME_WARN 10.0
#define SP_POOL_PSI_SOME_ONLY_WARN 25.0

struct sp_pool {
	enum sp_why why;       /* meminfo's: SP_OK or why not */
	bool cache_known;      /* Buffers and Cached were read */
	uint64_t total, free, available;
	uint64_t cache;        /* page cache: Buffers + Cached, shmem included */
	uint64_t shmem;        /* of the cache: a flush keeps it */
	uint64_t kernel;       /* slab: SReclaimable + SUnreclaim */
	uint64_t used;         /* total - free - cache: processes and the kernel */
	uint64_t procs_held;   /* the listed processes: RSS + NVML GPU memory */
	int nprocs;
	struct sp_u64 reclaimable;                 /* a flush gives back (the budget's) */
	struct sp_u64 budget_now, budget_after_flush;
	uint64_t reserve;
	bool cgroup_bound;
};

/* used = total - free - cache, never below 0; NAN when any of them is
 * unknown (never total - free passed off as used). The summary reads a log
 * row with it, the model a sample. */
double sp_pool_used_of(double total, double free, double cache);
/* What `sync; echo 3 > drop_caches` gives back, from meminfo alone:
 * Buffers + Cached - Shmem - Mapped (never below 0) + SReclaimable. */
uint64_t sp_pool_flush_gain(const struct sp_meminfo *m);
/* What a process holds: RSS plus its NVML GPU memory where known. */
uint64_t sp_pool_proc_held(const struct sp_proc *p);
/* What a server's cap lets it take (cap x base, see sp_cap_base_bytes); 0
 * without a cap or a base. Not memory held. */
uint64_t sp_pool_proc_cap(const struct sp_proc *p, double base);
/* The model of a sample (pure: reads s->mem, s->budget, s->procs). */
void sp_pool_from_sample(struct sp_pool *p, const struct sp_sample *s);
/* The model from meminfo alone (the guard's cheap look): no processes, the
 * budget with reserve 0 and no cgroup. */
void sp_pool_from_meminfo(struct sp_pool *p, const struct sp_meminfo *m);
/* What evicting files with `resident` bytes in the page cache gives back:
 * at most what a flush would (mapped and shmem pages stay). */
uint64_t sp_pool_evict_gain(const struct sp_pool *p, uint64_t resident);
/* The budget after that eviction (now + the gain); unknown when now is. */
struct sp_u64 sp_pool_budget_after_evict(const struct sp_pool *p, uint64_t resident);
#endif
