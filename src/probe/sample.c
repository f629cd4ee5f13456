// SPDX-License-Identifier: MIT
/* One snapshot: every probe once, then the budget derived from it. */
#include "probe/pool.h"
#include "probe/poolmodel.h"
#include "probe/container.h"
#include "probe/probe.h"
#include "util/clock.h"
#include "util/paths.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct {
	const char *key, *text;
} whys[SP_WHY_N] = {
	[SP_OK] = { "ok", "ok" },
	[SP_MISSING] = { "missing", "not present on this machine" },
	[SP_NOACCESS] = { "permission_denied", "permission denied" },
	[SP_MALFORMED] = { "malformed", "could not be parsed" },
	[SP_NOT_SUPPORTED] = { "not_supported", "not supported by the driver" },
	[SP_NO_DRIVER] = { "no_driver", "no NVIDIA driver" },
	[SP_NO_PERMISSION] = { "no_permission", "the driver refused (no permission)" },
	[SP_GPU_LOST] = { "gpu_lost", "the GPU is lost (fell off the bus)" },
	[SP_TIMEOUT] = { "timeout", "the driver did not answer in time" },
	[SP_DRIVER_ERROR] = { "driver_error", "the driver returned an error" },
	[SP_IMPLAUSIBLE] = { "implausible", "an implausible value was rejected" },
	[SP_NO_GPU] = { "no_gpu", "no GPU" },
};

const char *sp_why_key(enum sp_why w)
{
	return (unsigned)w < SP_WHY_N ? whys[w].key : "unknown";
}

const char *sp_why_text(enum sp_why w)
{
	return (unsigned)w < SP_WHY_N ? whys[w].text : "unknown";
}

enum sp_why sp_why_from_errno(int neg_errno)
{
	switch (-neg_errno) {
	case 0: return SP_OK;
	case ENOENT:
	case ENOTDIR:
	case ENODEV:
	case ENXIO: return SP_MISSING;
	case EACCES:
	case EPERM: return SP_NOACCESS;
	case EINVAL: return SP_MALFORMED;
	case EOPNOTSUPP: return SP_NOT_SUPPORTED;
	default: return SP_MISSING;
	}
}

static const char *const reason_names[] = {
	"gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "sync_boost",
	"sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "display_clock_setting",
};

const char *sp_reason_name(int bit)
{
	return bit >= 0 && bit < (int)(sizeof reason_names / sizeof reason_names[0]) ? reason_names[bit] : NULL;
}

void sp_read_opts_init(struct sp_read_opts *o)
{
	o->what = SP_READ_ALL;
	o->reserve = SP_DEFAULT_RESERVE;
	o->proc_min_rss = SP_DEFAULT_PROC_MIN_RSS;
	o->gpu_timeout_s = SP_DEFAULT_GPU_TIMEOUT;
	o->proc_scan_min_s = SP_DEFAULT_PROC_SCAN_MIN_S;
	o->proc_scan_cost_x = SP_DEFAULT_PROC_SCAN_COST_X;
	o->kmsg_path = NULL;
}

double sp_gpu_timeout_for_interval(double gpu_timeout_s, double interval_s)
{
	double half = interval_s / 2.0;
	if (!(half > 0)) /* NaN, 0 or negative: no interval to keep */
		return gpu_timeout_s;
	return half < gpu_timeout_s ? half : gpu_timeout_s;
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void sp_budget_compute(struct sp_budget *b, const struct sp_meminfo *m,
		       const struct sp_cgroup *cg, uint64_t reserve)
{
	memset(b, 0, sizeof *b);
	b->reserve = reserve;
	if (m->why != SP_OK) {
		b->now.why = b->reclaimable.why = b->after_flush.why = m->why;
		return;
	}
	/* What `sync; echo 3 > drop_caches` gives back: clean, unmapped file
	 * pages (Buffers + Cached minus Shmem, which is not dropped, minus what
	 * is mapped by running processes) and reclaimable slab. Dirty pages are
	 * written by the sync first, then dropped. */
	uint64_t reclaim = sp_pool_flush_gain(m);
	bool reclaim_known = sp_mi_has(m, SP_MI_BUFFERS) && sp_mi_has(m, SP_MI_CACHED);

	uint64_t now = sub0(m->v[SP_MI_FREE], reserve);
	uint64_t after = sub0(m->v[SP_MI_FREE] + reclaim, reserve);

	/* a cgroup limit tighter than the machine: its headroom is the budget */
	if (cg && cg->limit.why == SP_OK && cg->usage.why == SP_OK && cg->limit.v < m->v[SP_MI_TOTAL]) {
		uint64_t head = sub0(cg->limit.v, cg->usage.v);
		uint64_t cg_now = head; /* the OS reserve lives outside the cgroup */
		uint64_t cg_after = cg_now + (cg->file.why == SP_OK ? cg->file.v : 0);
		if (cg_after > cg->limit.v)
			cg_after = cg->limit.v;
		if (cg_now < now) {
			now = cg_now;
			b->cgroup_bound = true;
		}
		if (cg_after < after)
			after = cg_after;
		if (b->cgroup_bound && cg->file.why == SP_OK)
			reclaim = cg->file.v;
	}
	b->now.v = now;
	b->reclaimable.v = reclaim;
	b->after_flush.v = after < now ? now : after;
	b->reclaimable.v = b->after_flush.v - now;
	b->now.why = b->reclaimable.why = b->after_flush.why = SP_OK;
	if (!reclaim_known && !b->cgroup_bound) {
		/* without Buffers/Cached we cannot say what a flush gives back */
		b->reclaimable.v = b->after_flush.v = 0;
		b->reclaimable.why = b->after_flush.why = SP_MALFORMED;
	}
}

enum sp_why sp_sample_gpu_state(const struct sp_sample *s)
{
	if (s->gpu_status != SP_OK || s->ngpu <= 0)
		return s->gpu_status;
	const struct sp_gpu *g = &s->gpus[0];
	const enum sp_why w[] = { g->temp_c.why, g->power_mw.why, g->sm_clock_mhz.why, g->util_gpu_pct.why,
				  g->reasons.why };
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
		if (w[i] != w[0])
			return SP_OK;
	return w[0] == SP_GPU_LOST || w[0] == SP_TIMEOUT || w[0] == SP_DRIVER_ERROR ? w[0] : SP_OK;
}

bool sp_sample_is_uma(const struct sp_sample *s)
{
	for (int i = 0; i < s->ngpu; i++)
		if (s->gpus[i].integrated)
			return true;
	return false;
}

double sp_cap_base_bytes(const struct sp_sample *s, const char **what)
{
	if (what)
		*what = "pool";
	if (!sp_sample_is_uma(s))
		for (int i = 0; i < s->ngpu; i++)
			if (sp_ok(s->gpus[i].mem_total.why) && s->gpus[i].mem_total.v > 0) {
				if (what)
					*what = "GPU memory";
				return (double)s->gpus[i].mem_total.v;
			}
	if (s->mem.why == SP_OK && sp_mi_has(&s->mem, SP_MI_TOTAL))
		return (double)s->mem.v[SP_MI_TOTAL];
	return 0;
}

static unsigned implausible(const struct sp_u64 *f)
{
	return f->why == SP_IMPLAUSIBLE;
}

unsigned sp_sample_count_warnings(const struct sp_sample *s)
{
	unsigned n = 0;
	for (int i = 0; i < s->nzones; i++)
		n += s->zones[i].temp_mc.why == SP_IMPLAUSIBLE;
	for (int i = 0; i < s->nhw; i++)
		n += s->hw[i].value.why == SP_IMPLAUSIBLE;
	for (int i = 0; i < s->ngpu; i++) {
		const struct sp_gpu *g = &s->gpus[i];
		const struct sp_u64 *all[] = { &g->temp_c, &g->power_mw, &g->power_limit_mw, &g->sm_clock_mhz,
					       &g->sm_clock_max_mhz, &g->util_gpu_pct, &g->util_mem_pct,
					       &g->reasons, &g->viol_power_ns, &g->viol_thermal_ns,
					       &g->energy_mj, &g->mem_total, &g->mem_free, &g->mem_used };
		for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
			n += implausible(all[k]);
		if (sp_ok(g->reasons.why) && (g->reasons.v & ~SP_REASON_KNOWN_MASK))
			n++;
	}
	return n;
}

static uint64_t warnings_total;

/* /proc/buddyinfo is the one file a sample needs that takes a lock the page
 * allocator needs: mm/vmstat.c's frag_show walks the node's zones with
 * walk_zones_in_node(.., nolock=false, ..), spin_lock_irqsave(&zone->lock)
 * around each zone's print of its ~11 nr_free counters (which
 * frag_show_print reads with data_race: the lock buys nothing it needs).
 * Bounded (no free-list walk) but taken against every allocation and free
 * of the zone, with interrupts off, during the model loads we watch. So a
 * process reads it at most every SP_BUDDYINFO_PERIOD_S (the first sample
 * reads it, so a one-shot status has it fresh) and its samples in between
 * show that reading; a new root (--procfs) reads at once. */
#define SP_BUDDYINFO_PERIOD_S 10.0
static pthread_mutex_t contig_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool valid;
	double at;
	char root[512];
	struct sp_contig c;
} contig_kept;

static void contig_read(struct sp_contig *c, double now)
{
	pthread_mutex_lock(&contig_lock);
	const char *root = sp_procfs();
	if (!contig_kept.valid || now - contig_kept.at >= SP_BUDDYINFO_PERIOD_S || now < contig_kept.at ||
	    strcmp(contig_kept.root, root) != 0) {
		sp_buddyinfo_read(&contig_kept.c);
		contig_kept.at = now;
		contig_kept.valid = true;
		snprintf(contig_kept.root, sizeof contig_kept.root, "%s", root);
	}
	*c = contig_kept.c;
	pthread_mutex_unlock(&contig_lock);
}

void sp_sample_read(struct sp_sample *s, const struct sp_read_opts *o)
{
	s->mono = sp_mono_now();
	s->wall = sp_wall_now();
	/* SPARKOPS_NO_GPU_THREAD, honoured on fixture roots only: no GPU thread,
	 * the GPU reads as having no driver. For emulators whose threads hang
	 * (qemu-user 7.2; scripts/check-arm64.sh). */
	unsigned gpu = o->what & SP_READ_GPU;
	if (gpu && sp_paths_is_fixture() && getenv("SPARKOPS_NO_GPU_THREAD"))
		gpu = 0;
	/* the GPU thread starts first and works while the files are read */
	if (gpu)
		sp_gpu_read_async();
	if (o->what & SP_READ_MEM) {
		sp_meminfo_read(&s->mem);
		contig_read(&s->contig, s->mono);
	} else {
		s->contig.why = SP_MISSING;
	}
	if (o->what & SP_READ_CGROUP)
		sp_cgroup_read(&s->cg);
	if (o->what & SP_READ_PSI)
		sp_psi_read(s->psi);
	if (o->what & SP_READ_THERMAL)
		sp_thermal_read(s);
	if (o->what & SP_READ_HWMON)
		sp_hwmon_read(s);
	if (o->what & SP_READ_PROCS)
		sp_procs_read(s, o);
	else
		s->nprocs = 0;
	s->gpu_driver[0] = 0;
	s->gpu_driver_why = s->cuda_driver_why = SP_MISSING;
	if (gpu) {
		sp_gpu_poll(s, s->mono + o->gpu_timeout_s);
	} else if (o->what & SP_READ_GPU) {
		s->gpu_status = SP_NO_DRIVER;
		s->ngpu = 0;
		snprintf(s->gpu_detail, sizeof s->gpu_detail, "not read (SPARKOPS_NO_GPU_THREAD)");
		s->gpu_driver_why = s->cuda_driver_why = SP_NO_DRIVER;
	} else {
		s->gpu_status = SP_MISSING;
		s->ngpu = 0;
	}
	if (o->what & SP_READ_PROCS)
		sp_containers_read(s); /* after the GPU: it sums its processes' GPU memory */
	else
		s->ncontainers = s->containers_dropped = 0;
	sp_budget_compute(&s->budget, &s->mem, (o->what & SP_READ_CGROUP) ? &s->cg : NULL, o->reserve);
	s->warnings = sp_sample_count_warnings(s);
	warnings_total += s->warnings;
	s->warnings_total = warnings_total;
}
