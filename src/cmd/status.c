// SPDX-License-Identifier: MIT
/* sparkops status — the real headroom, in one screen or one JSON object. */
#include "cmd/cli.h"
#include "cmd/status.h"
#include "out/nodes.h"
#include "cmd/cmdutil.h"
#include "out/sample_json.h"
#include "probe/platform.h"
#include "probe/container.h"
#include "probe/unexplained.h"
#include "probe/pool.h"
#include "probe/poolmodel.h"
#include "probe/spark.h"
#include "probe/probe.h"
#include "probe/sysctl.h"
#include "util/fileio.h"
#include "util/json.h"
#include "util/msg.h"
#include "util/opt.h"
#include "util/paths.h"
#include "util/units.h"
#include "util/text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct sp_cmdspec spec = {
	.name = "status",
	.usage = "usage: sparkops status [--json] [--reserve SIZE] [--min-rss SIZE] [--no-processes]\n"
		 "                       [--gpu-timeout DURATION] [--procfs DIR] [--sysfs DIR]\n"
		 "\n"
		 "One snapshot of the memory pool, the budget a new job can count on, pressure,\n"
		 "thermal and power sensors, the GPU through NVML, and the memory-heavy processes\n"
		 "(inference servers and trainers) competing for the pool, with the container,\n"
		 "pod or systemd unit each runs in; what each container holds; and the part of\n"
		 "the pool that no process, shmem, kernel structure or GPU reading explains.\n"
		 "\n",
	.tail = "environment: SPARKOPS_NVML_LIB=PATH loads that NVML library instead of libnvidia-ml.so.1\n"
		"exit: 0 ok, 1 trouble (budget under 1 GiB, memory pressure, GPU lost, driver not\n"
		"      answering, USB-PD safety mode), 2 usage error or /proc/meminfo unreadable\n",
};

/* ---- the verdict ----------------------------------------------------------- */

/* The thresholds are the pool model's (probe/poolmodel.h), shared with top.
 * Under SP_POOL_LOW_CONTIG free in 2 MiB blocks the GPU driver's large
 * allocations start to fail (NV_ERR_NO_MEMORY) while MemFree still looks fine. */
static bool contig_low(const struct sp_sample *s)
{
	return s->contig.why == SP_OK && s->contig.free_2mib < SP_POOL_LOW_CONTIG;
}

struct verdict {
	bool trouble;
	char line[512];
};

static void vappend(char *buf, size_t n, const char *sep, const char *txt)
{
	size_t l = strlen(buf);
	snprintf(buf + l, n - l, "%s%s", l ? sep : "", txt);
}

static void judge(const struct sp_sample *s, const struct sp_spark *k, struct verdict *v)
{
	char g1[32], g2[32], g3[32], t[200];
	v->trouble = false;
	v->line[0] = 0;
	if (!sp_ok(s->budget.now.why)) {
		snprintf(v->line, sizeof v->line, "the pool cannot be read (/proc/meminfo %s)",
			 sp_why_text(s->mem.why));
		v->trouble = true;
		return;
	}
	if (sp_ok(s->budget.after_flush.why))
		snprintf(t, sizeof t, "%s for a new job now, %s after a cache flush",
			 sp_fmt_gib(g1, sizeof g1, (double)s->budget.now.v),
			 sp_fmt_gib(g2, sizeof g2, (double)s->budget.after_flush.v));
	else
		snprintf(t, sizeof t, "%s for a new job now", sp_fmt_gib(g1, sizeof g1, (double)s->budget.now.v));
	vappend(v->line, sizeof v->line, "; ", t);
	if (s->budget.now.v < SP_POOL_LOW_BUDGET) {
		/* say which quantity is low: MemFree itself, or what is left of it
		 * once the reserve (or the cgroup's limit) is counted */
		v->trouble = true;
		double mfree = s->mem.why == SP_OK ? (double)s->mem.v[SP_MI_FREE] : NAN;
		if (s->budget.cgroup_bound)
			snprintf(t, sizeof t, "TROUBLE: the budget (cgroup headroom) is %s, under 1 GiB: a new allocation in "
				 "this cgroup fails", sp_fmt_gib(g1, sizeof g1, (double)s->budget.now.v));
		else if (isfinite(mfree) && mfree < (double)SP_POOL_LOW_BUDGET)
			snprintf(t, sizeof t, "TROUBLE: MemFree is %s, under 1 GiB: a new allocation can wedge the machine",
				 sp_fmt_gib(g1, sizeof g1, mfree));
		else
			snprintf(t, sizeof t, "TROUBLE: the budget (MemFree %s - reserve %s) is %s, under 1 GiB",
				 sp_fmt_gib(g1, sizeof g1, mfree), sp_fmt_gib(g2, sizeof g2, (double)s->budget.reserve),
				 sp_fmt_gib(g3, sizeof g3, (double)s->budget.now.v));
		vappend(v->line, sizeof v->line, "; ", t);
	}
	const struct sp_psi *pm = &s->psi[SP_PSI_MEMORY];
	if (pm->why == SP_OK && pm->full.ok && pm->full.avg10 >= SP_POOL_PSI_FULL_TROUBLE) {
		v->trouble = true;
		snprintf(t, sizeof t, "TROUBLE: memory pressure (PSI full %.1f%%)", pm->full.avg10);
		vappend(v->line, sizeof v->line, "; ", t);
	}
	if (k->usb_pd_safety) {
		v->trouble = true;
		snprintf(t, sizeof t,
			 "TROUBLE: PL1 capped at %.0f W, far below the platform's %.0f W (USB-PD safety mode: wrong "
			 "or weak power adapter, or a stuck low-power state)",
			 k->pl1_cap_w, SP_SPARK_STOCK_CAP_W);
		vappend(v->line, sizeof v->line, "; ", t);
	}
	if (s->gpu_status == SP_TIMEOUT) {
		v->trouble = true;
		vappend(v->line, sizeof v->line, "; ", "TROUBLE: the NVIDIA driver did not answer in time");
	}
	for (int i = 0; i < s->ngpu; i++) {
		const struct sp_gpu *g = &s->gpus[i];
		if (g->temp_c.why == SP_GPU_LOST) {
			v->trouble = true;
			snprintf(t, sizeof t, "TROUBLE: GPU %u is lost", g->index);
			vappend(v->line, sizeof v->line, "; ", t);
			continue;
		}
		if (sp_ok(g->reasons.why) &&
		    (g->reasons.v & (SP_REASON_SW_THERMAL | SP_REASON_HW_THERMAL | SP_REASON_HW_SLOWDOWN))) {
			snprintf(t, sizeof t, "GPU %u thermal slowdown active", g->index);
			vappend(v->line, sizeof v->line, "; ", t);
		} else if (sp_ok(g->reasons.why) && (g->reasons.v & SP_REASON_SW_POWER_CAP)) {
			snprintf(t, sizeof t, "GPU %u power capped", g->index);
			vappend(v->line, sizeof v->line, "; ", t);
		}
	}
	/* one diagnosis: under USB-PD safety mode PL1 sits at its 20 W cap
	 * because of the adapter, not the platform's sustained limit */
	if (k->at_pl1_cap && !k->usb_pd_safety)
		vappend(v->line, sizeof v->line, "; ", "PL1 at its cap (the platform's sustained power limit)");
	if (contig_low(s)) {
		snprintf(t, sizeof t, "only %s free in blocks of 2 MiB or more: a model load may fail (flush + compact)",
			 sp_fmt_bytes(g1, sizeof g1, (double)s->contig.free_2mib));
		vappend(v->line, sizeof v->line, "; ", t);
	}
}

/* a known-bad kernel, driver or firmware version: named in the verdict */
static void judge_platform(const struct sp_platform *pf, struct verdict *v)
{
	for (int w = 0; w < pf->nwarn; w++) {
		char t[96];
		snprintf(t, sizeof t, "known-bad %s %s (see the warning)", sp_pfield_name(pf->warn[w]->field),
			 pf->warn[w]->version);
		vappend(v->line, sizeof v->line, "; ", t);
	}
}

static void judge_watermarks(const struct sp_watermarks *w, struct verdict *v)
{
	if (w->raised)
		vappend(v->line, sizeof v->line, "; ",
			"vm.min_free_kbytes raised far above the kernel's default: it lowers MemFree and "
			"MemAvailable (what vLLM's start-up check reads)");
}

/* ---- JSON ----------------------------------------------------------------- */

static json_t *claims_json(const struct sp_sample *s)
{
	json_t *o = json_object();
	json_t *a = json_array();
	for (int i = 0; i < s->ngpu; i++) {
		const struct sp_gpu *g = &s->gpus[i];
		json_t *c = json_object();
		json_object_set_new(c, "gpu", json_integer(g->index));
		json_object_set_new(c, "status", json_string(sp_why_key(g->mem_total.why)));
		json_object_set_new(c, "nvidia_smi_memory_used",
				    sp_ok(g->mem_used.why) ? json_integer((json_int_t)g->mem_used.v)
							    : json_string(g->mem_total.why == SP_NOT_SUPPORTED
										  ? "[N/A]"
										  : sp_why_key(g->mem_total.why)));
		json_array_append_new(a, c);
	}
	json_object_set_new(o, "nvml_memory", a);
	/* cudaMemGetInfo on a UMA part counts what the allocator can get without
	 * reclaiming page cache: about MemFree. */
	if (sp_sample_is_uma(s) && s->mem.why == SP_OK)
		json_object_set_new(o, "cuda_free_estimate_bytes", json_integer((json_int_t)s->mem.v[SP_MI_FREE]));
	else
		json_object_set_new(o, "cuda_free_estimate_bytes", json_null());
	if (s->mem.why == SP_OK && sp_mi_has(&s->mem, SP_MI_AVAILABLE))
		json_object_set_new(o, "free_available_bytes", json_integer((json_int_t)s->mem.v[SP_MI_AVAILABLE]));
	else
		json_object_set_new(o, "free_available_bytes", json_null());
	return o;
}

static void put_i64w(json_t *o, json_t *un, const char *key, struct sp_i64 f)
{
	json_object_set_new(o, key, sp_ok(f.why) ? json_integer((json_int_t)f.v) : json_null());
	if (!sp_ok(f.why))
		json_object_set_new(un, key, json_string(sp_why_key(f.why)));
}

static void put_u64w(json_t *o, json_t *un, const char *key, struct sp_u64 f)
{
	json_object_set_new(o, key, sp_ok(f.why) ? json_integer((json_int_t)f.v) : json_null());
	if (!sp_ok(f.why))
		json_object_set_new(un, key, json_string(sp_why_key(f.why)));
}

static json_t *watermarks_json(const struct sp_watermarks *w)
{
	json_t *o = json_object(), *un = json_object();
	put_i64w(o, un, "min_free_kbytes", w->min_free_kbytes);
	put_i64w(o, un, "watermark_boost_factor", w->boost_factor);
	put_i64w(o, un, "watermark_scale_factor", w->scale_factor);
	put_u64w(o, un, "low_watermarks_bytes", w->low_bytes);
	put_u64w(o, un, "reserved_from_available_bytes", w->reserve_bytes);
	put_u64w(o, un, "kernel_default_min_free_kbytes", w->default_kbytes);
	put_u64w(o, un, "thp_min_free_kbytes", w->thp_kbytes);
	json_object_set_new(o, "min_free_kbytes_raised", json_boolean(w->raised));
	json_object_set_new(o, "unavailable", un);
	return o;
}

/* every field a string or null; null ones say why in unavailable; where
 * each came from in sources; the known-bad versions it matches */
static json_t *platform_json(const struct sp_platform *p)
{
	json_t *o = json_object(), *un = json_object(), *src = json_object(), *bad = json_array();
	for (int i = 0; i < SP_PF_N; i++) {
		const struct sp_ptext *t = &p->f[i];
		const char *name = sp_pfield_name((enum sp_pfield)i);
		json_object_set_new(o, name, t->why == SP_OK ? sp_json_text(t->v) : json_null());
		if (t->why != SP_OK)
			json_object_set_new(un, name, json_string(sp_why_key(t->why)));
		else if (t->src)
			json_object_set_new(src, name, json_string(t->src));
	}
	for (int i = 0; i < p->nwarn; i++) {
		json_t *w = json_object();
		json_object_set_new(w, "field", json_string(sp_pfield_name(p->warn[i]->field)));
		json_object_set_new(w, "version", json_string(p->warn[i]->version));
		json_object_set_new(w, "warning", json_string(p->warn[i]->warning));
		json_object_set_new(w, "source", json_string(p->warn[i]->source));
		json_array_append_new(bad, w);
	}
	json_object_set_new(o, "sources", src);
	json_object_set_new(o, "unavailable", un);
	json_object_set_new(o, "known_bad", bad);
	return o;
}

/* ---- containers and the memory nobody holds ------------------------------------------ */

/* what the pool gives a container on this machine: its processes' RSS and GPU memory */
static uint64_t ct_share(const struct sp_ctmem *m)
{
	return m->rss_bytes + (sp_ok(m->gpu_mem.why) ? m->gpu_mem.v : 0);
}

static json_t *containers_json(const struct sp_sample *s)
{
	json_t *a = json_array();
	for (int i = 0; i < s->ncontainers; i++) {
		const struct sp_ctmem *m = &s->containers[i];
		json_t *o = sp_json_container(&m->ct), *un = json_object();
		json_object_set_new(o, "processes", json_integer(m->nprocs));
		put_u64w(o, un, "memory_current_bytes", m->current);
		put_u64w(o, un, "memory_peak_bytes", m->peak);
		json_object_set_new(o, "memory_limit_bytes", sp_ok(m->limit.why) ? json_integer((json_int_t)m->limit.v)
									    : json_null());
		if (!sp_ok(m->limit.why))
			json_object_set_new(un, "memory_limit_bytes",
					    json_string(m->unlimited ? "unlimited" : sp_why_key(m->limit.why)));
		put_u64w(o, un, "page_cache_bytes", m->file);
		json_object_set_new(o, "rss_bytes", json_integer((json_int_t)m->rss_bytes));
		put_u64w(o, un, "gpu_memory_bytes", m->gpu_mem);
		json_object_set_new(o, "pool_share_bytes", json_integer((json_int_t)ct_share(m)));
		/* on unified memory the GPU's allocations come from the pool, outside the cgroup's charge */
		json_object_set_new(o, "limit_bounds_gpu", sp_sample_is_uma(s) ? json_false() : json_null());
		json_object_set_new(o, "memory_unavailable", un);
		json_array_append_new(a, o);
	}
	return a;
}

struct nobody {
	struct sp_unexplained u;
	struct sp_devshm shm;
	bool shm_read;
};

static void nobody_compute(const struct sp_sample *s, bool procs_scanned, struct nobody *n)
{
	n->shm_read = sp_unexplained_judge(s, procs_scanned, &n->u, &n->shm);
}

static json_t *nobody_json(const struct nobody *n)
{
	const struct sp_unexplained *u = &n->u;
	json_t *o = json_object(), *un = json_object();
	put_u64w(o, un, "used_bytes", u->used);
	put_u64w(o, un, "anonymous_bytes", u->anon);
	bool ok = sp_ok(u->unexplained.why);
	json_object_set_new(o, "shmem_bytes", ok ? json_integer((json_int_t)u->shmem) : json_null());
	json_object_set_new(o, "shmem_orphaned_bytes", ok ? json_integer((json_int_t)u->shmem_orphan) : json_null());
	json_object_set_new(o, "kernel_bytes", ok ? json_integer((json_int_t)u->kernel) : json_null());
	json_t *km = json_array();
	static const char *const kn[] = { "Slab", "PageTables", "KernelStack", "VmallocUsed" };
	for (unsigned i = 0; i < 4; i++)
		if (u->kernel_missing >> i & 1)
			json_array_append_new(km, json_string(kn[i]));
	json_object_set_new(o, "kernel_not_in_meminfo", km);
	json_object_set_new(o, "gpu_in_pool", json_boolean(u->gpu_in_pool));
	json_object_set_new(o, "gpu_bytes", json_integer((json_int_t)u->gpu));
	json_object_set_new(o, "gpu_processes_unknown", json_integer(u->gpu_unknown));
	json_object_set_new(o, "gpu_overlaps_processes", json_boolean(u->gpu_overlap));
	put_u64w(o, un, "unexplained_bytes", u->unexplained);
	json_object_set_new(o, "threshold_bytes", json_integer((json_int_t)SP_UNEXPLAINED_SHOW));
	json_object_set_new(o, "over_threshold", json_boolean(ok && u->unexplained.v >= SP_UNEXPLAINED_SHOW));
	json_object_set_new(o, "mlocked_bytes", json_integer((json_int_t)u->mlocked));
	json_object_set_new(o, "hugetlb_bytes", json_integer((json_int_t)u->hugetlb));
	json_object_set_new(o, "hugetlb_free_bytes", json_integer((json_int_t)u->hugetlb_free));
	json_object_set_new(o, "driver_held_processes", json_integer(u->driver_pids));
	json_object_set_new(o, "driver_held_bytes", json_integer((json_int_t)u->driver_bytes));
	json_t *d = json_object();
	if (!n->shm_read) {
		json_object_set_new(d, "status", json_string("not_scanned"));
	} else {
		json_object_set_new(d, "status", json_string(sp_why_key(n->shm.why)));
		json_object_set_new(d, "holders_known", json_boolean(n->shm.holders_known));
		json_object_set_new(d, "files_total", json_integer(n->shm.nfiles));
		json_t *fa = json_array();
		for (int i = 0; i < n->shm.n; i++) {
			const struct sp_shmfile *f = &n->shm.f[i];
			json_t *fo = json_object();
			json_object_set_new(fo, "name", sp_json_text(f->name));
			json_object_set_new(fo, "size_bytes", json_integer((json_int_t)f->size));
			json_object_set_new(fo, "resident_bytes", json_integer((json_int_t)f->resident));
			json_object_set_new(fo, "owner_uid", json_integer((json_int_t)f->uid));
			json_object_set_new(fo, "holder_pid", f->holder ? json_integer(f->holder) : json_null());
			json_array_append_new(fa, fo);
		}
		json_object_set_new(d, "files", fa);
	}
	json_object_set_new(o, "devshm", d);
	json_object_set_new(o, "unavailable", un);
	return o;
}

static json_t *status_json(const struct sp_sample *s, const struct sp_watermarks *wm, const struct sp_spark *k,
			   const struct sp_platform *pf, const struct verdict *v, bool procs_scanned,
			   const struct nobody *nb)
{
	json_t *root = json_object();
	json_object_set_new(root, "version", json_string(SPARKOPS_VERSION));
	char host[256] = "";
	if (sp_hostname_read(host, sizeof host) < 0 && gethostname(host, sizeof host - 1) != 0)
		host[0] = 0;
	json_object_set_new(root, "host", host[0] ? sp_json_text(host) : json_null());
	json_object_set_new(root, "time_unix", json_real(round(s->wall * 1000.0) / 1000.0));
	json_t *pool = sp_json_pool(s);
	json_object_set_new(pool, "unexplained_bytes",
			    sp_ok(nb->u.unexplained.why) ? json_integer((json_int_t)nb->u.unexplained.v) : json_null());
	json_object_set_new(root, "pool", pool);
	json_object_set_new(root, "unexplained", nobody_json(nb));
	json_object_set_new(root, "watermarks", watermarks_json(wm));
	json_object_set_new(root, "budget", sp_json_budget(s));
	json_object_set_new(root, "cgroup", sp_json_cgroup(s));
	json_object_set_new(root, "psi", sp_json_psi(s));
	json_object_set_new(root, "gpu_status", json_string(sp_why_key(s->gpu_status)));
	json_object_set_new(root, "gpu_status_detail", s->gpu_detail[0] ? sp_json_text(s->gpu_detail) : json_null());
	json_object_set_new(root, "gpus", sp_json_gpus(s));
	json_object_set_new(root, "claims", claims_json(s));
	json_object_set_new(root, "thermal_zones", sp_json_thermal(s));
	json_object_set_new(root, "hwmon", sp_json_hwmon(s));
	json_object_set_new(root, "spark", sp_json_spark(s));
	json_object_set_new(root, "platform", platform_json(pf));
	/* the ConnectX link: one reading (serve and top give bytes per second) */
	struct sp_links lk;
	sp_links_read(&lk, NULL);
	json_object_set_new(root, "links", sp_links_json(&lk));
	/* not looked at is not "none": null */
	json_object_set_new(root, "processes", procs_scanned ? sp_json_procs(s) : json_null());
	json_object_set_new(root, "containers", procs_scanned ? containers_json(s) : json_null());
	json_object_set_new(root, "warnings", json_integer((json_int_t)s->warnings));
	json_object_set_new(root, "trouble", json_boolean(v->trouble));
	json_object_set_new(root, "verdict", json_string(v->line));
	(void)k;
	return root;
}

static int print_json(const struct sp_sample *s, const struct sp_watermarks *wm, const struct sp_spark *k,
		      const struct sp_platform *pf, const struct verdict *v, bool procs_scanned,
		      const struct nobody *nb)
{
	json_t *root = status_json(s, wm, k, pf, v, procs_scanned, nb);
	int r = sp_json_print(stdout, root);
	json_decref(root);
	return r;
}

/* Everything status says of one sample, judged: one path for the command
 * and for serve's /api/status */
struct judged {
	struct sp_spark k;
	struct verdict v;
	struct sp_watermarks wm;
	struct sp_platform pf;
	struct nobody nb;
};

static void judge_all(const struct sp_sample *s, bool procs_scanned, struct judged *j)
{
	sp_spark_derive(s, &j->k);
	judge(s, &j->k, &j->v);
	sp_watermarks_read(&j->wm, s->mem.why == SP_OK ? s->mem.v[SP_MI_TOTAL] : 0);
	if (s->mem.why == SP_OK)
		judge_watermarks(&j->wm, &j->v);
	sp_platform_read(&j->pf, s);
	judge_platform(&j->pf, &j->v);
	nobody_compute(s, procs_scanned, &j->nb);
}

json_t *sp_status_document(const struct sp_sample *s, bool procs_scanned)
{
	struct judged *j = malloc(sizeof *j);
	if (!j)
		return NULL;
	judge_all(s, procs_scanned, j);
	json_t *d = status_json(s, &j->wm, &j->k, &j->pf, &j->v, procs_scanned, &j->nb);
	free(j);
	return d;
}

/* ---- human output ------------------------------------------------------------ */

struct style {
	const char *bold, *dim, *red, *yellow, *off;
};

static void print_mem_row(const char *label, const struct sp_meminfo *m, enum sp_mi k, const char *note)
{
	char b[32];
	if (m->why == SP_OK && sp_mi_has(m, k))
		printf("  %-13s %10s   %s\n", label, sp_fmt_gib(b, sizeof b, (double)m->v[k]), note);
	else
		printf("  %-13s %10s   %s\n", label, "unknown", "not in /proc/meminfo");
}

static const char *u64_or(char *buf, size_t n, struct sp_u64 f, int decimals, const char *unit, double scale)
{
	if (!sp_ok(f.why)) {
		snprintf(buf, n, "%s", f.why == SP_NOT_SUPPORTED ? "N/A" : sp_why_key(f.why));
		return buf;
	}
	snprintf(buf, n, "%.*f%s", decimals, (double)f.v / scale, unit);
	return buf;
}

static void print_header(const struct sp_sample *s, const struct style *st)
{
	char host[64] = "";
	if (sp_hostname_read(host, sizeof host) < 0)
		gethostname(host, sizeof host - 1);
	sp_text_clean(host);
	printf("%ssparkops status%s  %s%s\n", st->bold, st->off, host,
	       sp_sample_is_uma(s) ? "  (unified memory: CPU and GPU share one pool)" : "");
}

static void print_contig(const struct sp_sample *s, const struct style *st)
{
	char b1[32], b2[32];
	const struct sp_contig *c = &s->contig;
	if (c->why != SP_OK) {
		printf("  %-13s %10s   /proc/buddyinfo %s\n", "in 2MiB+", "unknown", sp_why_text(c->why));
		return;
	}
	printf("  %s%-13s %10s   free in blocks of 2 MiB or more (largest %s)%s\n", contig_low(s) ? st->yellow : "",
	       "in 2MiB+", sp_fmt_bytes(b1, sizeof b1, (double)c->free_2mib),
	       c->largest_order >= 0 ? sp_fmt_bytes(b2, sizeof b2, (double)c->largest) : "none", st->off);
	if (contig_low(s))
		printf("  %swarning: little contiguous memory: the GPU driver's large allocations can fail "
		       "(NV_ERR_NO_MEMORY) and wedge the machine; flush and compact before a model load%s\n",
		       st->yellow, st->off);
}

static void print_watermarks(const struct sp_watermarks *w, const struct style *st)
{
	char b1[32], b2[32];
	printf("\n%sWATERMARKS%s", st->bold, st->off);
	if (sp_ok(w->min_free_kbytes.why))
		printf("  vm.min_free_kbytes %lld", (long long)w->min_free_kbytes.v);
	else
		printf("  vm.min_free_kbytes %s", sp_why_key(w->min_free_kbytes.why));
	if (sp_ok(w->boost_factor.why))
		printf(", watermark_boost_factor %lld", (long long)w->boost_factor.v);
	if (sp_ok(w->scale_factor.why))
		printf(", watermark_scale_factor %lld", (long long)w->scale_factor.v);
	printf("\n");
	if (sp_ok(w->reserve_bytes.why))
		printf("  %-13s %10s   kept out of MemAvailable for the zones' watermarks (low watermarks %s)\n",
		       "reserved", sp_fmt_gib(b1, sizeof b1, (double)w->reserve_bytes.v),
		       sp_fmt_gib(b2, sizeof b2, (double)w->low_bytes.v));
	else
		printf("  %-13s %10s   /proc/zoneinfo %s\n", "reserved", "unknown", sp_why_text(w->zi.why));
	if (sp_ok(w->default_kbytes.why)) {
		printf("  %-13s %10llu   kB: the kernel's min_free_kbytes for this memory", "default",
		       (unsigned long long)w->default_kbytes.v);
		if (sp_ok(w->thp_kbytes.why))
			printf(" (%llu kB with transparent huge pages)", (unsigned long long)w->thp_kbytes.v);
		printf("\n");
	}
	if (w->raised)
		printf("  %swarning: vm.min_free_kbytes is far above the kernel's default: every kB of it comes out of "
		       "MemFree and MemAvailable, which vLLM's start-up check reads (see cudaMemGetInfo above); "
		       "the load guard (run --guard-load) keeps memory free without it%s\n",
		       st->yellow, st->off);
}

static void print_pool(const struct sp_sample *s, const struct style *st)
{
	char b1[32], b2[32], b4[32];
	const struct sp_meminfo *m = &s->mem;
	printf("\n%sPOOL%s", st->bold, st->off);
	if (m->why == SP_OK)
		printf("  %s total\n", sp_fmt_gib(b1, sizeof b1, (double)m->v[SP_MI_TOTAL]));
	else
		printf("  unknown: /proc/meminfo %s\n", sp_why_text(m->why));
	if (m->why == SP_OK) {
		print_mem_row("free", m, SP_MI_FREE, "MemFree: usable now without reclaim");
		print_mem_row("available", m, SP_MI_AVAILABLE, "MemAvailable: counts cache the kernel may drop");
		struct sp_pool pm;
		sp_pool_from_sample(&pm, s);
		if (pm.cache_known)
			printf("  %-13s %10s   total - free - page cache: processes and the kernel (slab %s)\n", "used",
			       sp_fmt_gib(b1, sizeof b1, (double)pm.used), sp_fmt_gib(b2, sizeof b2, (double)pm.kernel));
		else
			printf("  %-13s %10s   the page cache is unknown, so is what processes use\n", "used", "unknown");
		print_contig(s, st);
		if (sp_mi_has(m, SP_MI_BUFFERS) && sp_mi_has(m, SP_MI_CACHED))
			printf("  %-13s %10s   Buffers+Cached (%s of it shmem)\n", "page cache",
			       sp_fmt_gib(b4, sizeof b4, (double)(m->v[SP_MI_BUFFERS] + m->v[SP_MI_CACHED])),
			       sp_fmt_gib(b1, sizeof b1, (double)m->v[SP_MI_SHMEM]));
		else
			printf("  %-13s %10s   Buffers/Cached missing or garbled in /proc/meminfo\n", "page cache", "unknown");
		if (sp_mi_has(m, SP_MI_SWAP_TOTAL) && m->v[SP_MI_SWAP_TOTAL] > 0)
			printf("  %-13s %10s   of %s swap used\n", "swap",
			       sp_fmt_gib(b1, sizeof b1, (double)(m->v[SP_MI_SWAP_TOTAL] - m->v[SP_MI_SWAP_FREE])),
			       sp_fmt_gib(b2, sizeof b2, (double)m->v[SP_MI_SWAP_TOTAL]));
		else
			printf("  %-13s %10s\n", "swap", "none");
	}
	if (s->cg.version) {
		char cgpath[sizeof s->cg.path];
		snprintf(cgpath, sizeof cgpath, "%s", s->cg.path);
		sp_text_clean(cgpath);
		if (sp_ok(s->cg.limit.why))
			printf("  %-13s %10s   cgroup v%d limit on %s (%s used)\n", "cgroup",
			       sp_fmt_gib(b1, sizeof b1, (double)s->cg.limit.v), s->cg.version, cgpath,
			       sp_ok(s->cg.usage.why) ? sp_fmt_gib(b2, sizeof b2, (double)s->cg.usage.v) : "?");
		else
			printf("  %-13s %10s   cgroup v%d %s\n", "cgroup", "no limit", s->cg.version, cgpath);
		if (sp_ok(s->cg.oom_kill.why) && s->cg.oom_kill.v > 0)
			printf("  %s%-13s %10llu   processes killed by the cgroup OOM killer%s\n", st->red, "oom kills",
			       (unsigned long long)s->cg.oom_kill.v, st->off);
	}

}

static void print_budget(const struct sp_sample *s, const struct style *st)
{
	char b1[32], b2[32], b3[32];
	printf("\n%sBUDGET%s  what a new job can count on (reserve %s for the OS and driver)\n", st->bold, st->off,
	       sp_fmt_gib(b1, sizeof b1, (double)s->budget.reserve));
	if (sp_ok(s->budget.now.why)) {
		printf("  %-13s %s%10s%s   %s\n", "now", st->bold, sp_fmt_gib(b1, sizeof b1, (double)s->budget.now.v),
		       st->off, s->budget.cgroup_bound ? "cgroup headroom (tighter than the machine)" : "MemFree - reserve");
		if (sp_ok(s->budget.after_flush.why))
			printf("  %-13s %10s   + %s a flush gives back (sync; echo 3 > /proc/sys/vm/drop_caches, root)\n",
			       "after flush", sp_fmt_gib(b2, sizeof b2, (double)s->budget.after_flush.v),
			       sp_fmt_gib(b3, sizeof b3, (double)s->budget.reclaimable.v));
		else
			printf("  %-13s %10s   page cache size not readable\n", "after flush", "unknown");
	} else {
		printf("  unknown\n");
	}

}

static void print_claims(const struct sp_sample *s, const struct style *st)
{
	char b1[32], b2[32], b3[32];
	const struct sp_meminfo *m = &s->mem;
	bool uma = sp_sample_is_uma(s);
	/* what the usual tools would have said */
	if (s->ngpu > 0 || m->why == SP_OK) {
		printf("\n%sWHAT OTHER TOOLS CLAIM%s\n", st->bold, st->off);
		for (int i = 0; i < s->ngpu; i++) {
			const struct sp_gpu *g = &s->gpus[i];
			if (sp_ok(g->mem_total.why))
				printf("  %-26s %s used of %s (%s free)\n", "nvidia-smi memory",
				       sp_fmt_gib(b1, sizeof b1, (double)g->mem_used.v),
				       sp_fmt_gib(b2, sizeof b2, (double)g->mem_total.v),
				       sp_fmt_gib(b3, sizeof b3, (double)g->mem_free.v));
			else
				printf("  %-26s %s%s%s (NVML: %s)\n", "nvidia-smi memory", st->yellow,
				       g->mem_total.why == SP_NOT_SUPPORTED ? "Not Supported / [N/A]" : "unavailable",
				       st->off, sp_why_text(g->mem_total.why));
		}
		if (uma && m->why == SP_OK)
			printf("  %-26s ~%s (excludes page cache; vLLM 0.24 and older check it at start-up, newer "
			       "vLLM reads MemAvailable on an integrated GPU)\n",
			       "cudaMemGetInfo free", sp_fmt_gib(b1, sizeof b1, (double)m->v[SP_MI_FREE]));
		if (m->why == SP_OK && sp_mi_has(m, SP_MI_AVAILABLE))
			printf("  %-26s %s (counts droppable cache, no reserve)\n", "free -g available",
			       sp_fmt_gib(b1, sizeof b1, (double)m->v[SP_MI_AVAILABLE]));
	}

}

static void print_gpus(const struct sp_sample *s, const struct style *st)
{
	char b1[32], b2[32];
	printf("\n%sGPU%s", st->bold, st->off);
	if (s->gpu_status != SP_OK) {
		printf("  %s", sp_why_text(s->gpu_status));
		if (s->gpu_detail[0])
			printf(" (%s)", s->gpu_detail);
		printf("\n");
	} else {
		printf("\n");
	}
	for (int i = 0; i < s->ngpu; i++) {
		const struct sp_gpu *g = &s->gpus[i];
		printf("  %u  %s%s\n", g->index, g->name, g->integrated ? "  (integrated, shares the pool)" : "");
		char t[32], p[32], pl[32], c[32], cm[32], u[32];
		/* units only beside a value: "temp N/A", never "N/A C" */
		printf("     temp %s  power %s (limit %s)  SM %s of %s  util %s\n",
		       u64_or(t, sizeof t, g->temp_c, 0, " C", 1), u64_or(p, sizeof p, g->power_mw, 1, " W", 1e3),
		       u64_or(pl, sizeof pl, g->power_limit_mw, 0, " W", 1e3),
		       u64_or(c, sizeof c, g->sm_clock_mhz, 0, " MHz", 1),
		       u64_or(cm, sizeof cm, g->sm_clock_max_mhz, 0, " MHz", 1),
		       u64_or(u, sizeof u, g->util_gpu_pct, 0, "%", 1));
		if (sp_ok(g->reasons.why)) {
			printf("     clocks event reasons: ");
			int n = 0;
			for (int bit = 0; bit < 64; bit++) {
				if (!(g->reasons.v >> bit & 1))
					continue;
				const char *rn = sp_reason_name(bit);
				bool hot = (1ULL << bit) & (SP_REASON_SW_THERMAL | SP_REASON_HW_THERMAL |
							    SP_REASON_HW_SLOWDOWN | SP_REASON_SW_POWER_CAP |
							    SP_REASON_HW_POWER_BRAKE);
				printf("%s%s%s%s", n++ ? ", " : "", hot ? st->yellow : "", rn ? rn : "unknown", hot ? st->off : "");
			}
			printf("%s\n", n ? "" : "none");
		} else {
			printf("     clocks event reasons: %s\n", sp_why_text(g->reasons.why));
		}
		if (sp_ok(g->viol_power_ns.why) || sp_ok(g->viol_thermal_ns.why))
			printf("     time throttled: power cap %s, thermal %s\n",
			       sp_ok(g->viol_power_ns.why) ? sp_fmt_duration(b1, sizeof b1, (double)g->viol_power_ns.v / 1e9) : "N/A",
			       sp_ok(g->viol_thermal_ns.why) ? sp_fmt_duration(b2, sizeof b2, (double)g->viol_thermal_ns.v / 1e9) : "N/A");
	}
	if (s->warnings)
		printf("  %swarnings: %u implausible reading%s rejected or unknown reason bits%s\n", st->yellow,
		       s->warnings, s->warnings == 1 ? "" : "s", st->off);

}

static void print_sensors(const struct sp_sample *s, const struct style *st, const struct sp_spark *k)
{
	if (k->present || s->nzones > 0) {
		printf("\n%sSENSORS%s\n", st->bold, st->off);
		if (k->die_temp_ok)
			printf("  %-13s %6.1f C   hottest acpitz zone (tracks the GPU die)\n", "die", k->die_temp_c);
		if (k->sys_power_ok)
			printf("  %-13s %6.1f W   spbm sys_total\n", "system power", k->sys_power_w);
		if (k->soc_power_ok)
			printf("  %-13s %6.1f W   spbm soc_pkg\n", "SoC power", k->soc_power_w);
		if (k->pl1_ok && k->pl1_cap_ok)
			printf("  %-13s %6.1f W   of a %.0f W cap (%.0f%%)%s\n", "PL1 average", k->pl1_w, k->pl1_cap_w, k->pl1_pct,
			       k->usb_pd_safety ? ": held there by USB-PD safety mode"
			       : k->at_pl1_cap ? ": at the sustained limit"
					       : "");
		if (k->usb_pd_safety)
			printf("  %s%sPL1 CAP IS %.0f W: USB-PD safety mode (wrong or weak adapter; 20 W and 30 W are the "
			       "values seen) or a low-power state that only unplugging AC clears; the SoC may draw %.0f W "
			       "of its %.0f W rating, so a load runs far below its normal speed%s\n",
			       st->bold, st->red, k->pl1_cap_w, k->pl1_cap_w, SP_SPARK_STOCK_CAP_W, st->off);
		int shown = 0;
		for (int i = 0; i < s->nzones && shown < 8; i++) {
			const struct sp_zone *z = &s->zones[i];
			if (!shown)
				printf("  %-13s", "zones");
			if (sp_ok(z->temp_mc.why))
				printf(" %s %.0fC", z->type, (double)z->temp_mc.v / 1e3);
			else
				printf(" %s (%s)", z->type, sp_why_key(z->temp_mc.why));
			shown++;
		}
		if (shown)
			printf("%s\n", s->nzones > shown ? " ..." : "");
	}

}

static void print_pressure(const struct sp_sample *s, const struct style *st)
{
	printf("\n%sPRESSURE%s (PSI avg10, some/full)", st->bold, st->off);
	for (int r = 0; r < SP_PSI_N; r++) {
		const struct sp_psi *p = &s->psi[r];
		if (p->why != SP_OK)
			printf("  %s %s", sp_psi_res_name((enum sp_psi_res)r), sp_why_key(p->why));
		else if (p->full.ok)
			printf("  %s %.1f/%.1f%%", sp_psi_res_name((enum sp_psi_res)r), p->some.avg10, p->full.avg10);
		else
			printf("  %s %.1f%%", sp_psi_res_name((enum sp_psi_res)r), p->some.avg10);
	}
	printf("\n");

}

static void print_procs(const struct sp_sample *s, const struct style *st, bool procs_scanned)
{
	char b1[32], b2[32], b3[32];
	printf("\n%sPROCESSES%s competing for the pool", st->bold, st->off);
	if (!procs_scanned) {
		printf(": not scanned (--no-processes)\n");
	} else if (s->nprocs == 0) {
		printf(": none recognised\n");
	} else {
		printf("\n  %7s  %-16s %-14s %-20s %10s %10s  %s\n", "PID", "KIND", "NAME", "CONTAINER", "RSS", "GPU MEM",
		       "CAP");
		for (int i = 0; i < s->nprocs; i++) {
			const struct sp_proc *p = &s->procs[i];
			char cap[96] = "";
			const char *of = "pool";
			double base = sp_cap_base_bytes(s, &of);
			if (p->has_cap && base > 0)
				snprintf(cap, sizeof cap, "%.2f = %s of the %s (%s)", p->cap_frac,
					 sp_fmt_gib(b3, sizeof b3, p->cap_frac * base), of,
					 p->cap_default ? "default: not capped on its command line" : p->cap_flag);
			char ct[21];
			sp_container_label(&p->ct, ct, sizeof ct);
			sp_text_clean(ct);
			printf("  %7d  %-16s %-14s %-20s %10s %10s  %s\n", p->pid, sp_proc_kind_name(p->kind), p->name, ct,
			       sp_fmt_bytes(b1, sizeof b1, (double)p->rss_bytes),
			       sp_ok(p->gpu_mem.why) ? sp_fmt_bytes(b2, sizeof b2, (double)p->gpu_mem.v) : "-", cap);
		}
	}
}

static void print_platform(const struct sp_platform *p, const struct style *st)
{
	static const char *const label[SP_PF_N] = { "kernel", "driver", "CUDA", "DGX OS", "OS", "BIOS", "board", "product" };
	printf("\n%sPLATFORM%s\n", st->bold, st->off);
	for (int i = 0; i < SP_PF_N; i++) {
		const struct sp_ptext *t = &p->f[i];
		if (t->why == SP_OK)
			printf("  %-13s %s%s%s%s\n", label[i], t->v, t->src ? "  (" : "", t->src ? t->src : "", t->src ? ")" : "");
		else
			printf("  %-13s %sunknown%s (%s)\n", label[i], st->dim, st->off, sp_why_text(t->why));
	}
	for (int i = 0; i < p->nwarn; i++)
		printf("  %swarning: %s (%s)%s\n", st->yellow, p->warn[i]->warning, p->warn[i]->source, st->off);
}

static void print_containers(const struct sp_sample *s, const struct style *st)
{
	char b[7][32];
	if (s->ncontainers == 0)
		return;
	printf("\n%sCONTAINERS%s what each holds (its cgroup; RSS and GPU memory of its listed processes)\n", st->bold,
	       st->off);
	printf("  %-10s %-24s %9s %9s %9s %9s %9s %9s %9s\n", "RUNTIME", "CONTAINER", "MEMORY", "PEAK", "LIMIT",
	       "CACHE", "RSS", "GPU MEM", "SHARE");
	for (int i = 0; i < s->ncontainers; i++) {
		const struct sp_ctmem *m = &s->containers[i];
		char name[25];
		sp_container_label(&m->ct, name, sizeof name);
		sp_text_clean(name);
#define CT_FMT(n, f) (sp_ok((f).why) ? sp_fmt_gib(b[n], sizeof b[n], (double)(f).v) : "-")
		printf("  %-10s %-24s %9s %9s %9s %9s %9s %9s %9s\n", sp_ct_runtime_name(m->ct.runtime), name,
		       CT_FMT(0, m->current), CT_FMT(1, m->peak),
		       m->unlimited ? "none" : CT_FMT(2, m->limit), CT_FMT(3, m->file),
		       sp_fmt_gib(b[4], sizeof b[4], (double)m->rss_bytes), CT_FMT(5, m->gpu_mem),
		       sp_fmt_gib(b[6], sizeof b[6], (double)ct_share(m)));
#undef CT_FMT
	}
	if (s->containers_dropped)
		printf("  ... and %d more containers not listed\n", s->containers_dropped);
	if (sp_sample_is_uma(s))
		printf("  %snote: on unified memory a container's memory limit does not bound the GPU's allocations "
		       "(cudaMalloc is not charged to its cgroup): its real share of the pool is SHARE, its processes' "
		       "RSS + GPU memory, whatever LIMIT says%s\n",
		       st->yellow, st->off);
}

static void print_nobody(const struct sp_sample *s, const struct nobody *n, const struct style *st)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
	const struct sp_unexplained *u = &n->u;
	if (!sp_ok(u->unexplained.why) || u->unexplained.v < SP_UNEXPLAINED_SHOW)
		return;
	printf("  %s%-13s %10s%s   in use, held by no process, shmem, kernel or GPU reading\n", st->yellow,
	       "unexplained", sp_fmt_gib(b1, sizeof b1, (double)u->unexplained.v), st->off);
	printf("  %13s %10s   = used %s - processes' anonymous %s - shmem in use %s - kernel %s - GPU %s\n", "", "",
	       sp_fmt_gib(b1, sizeof b1, (double)u->used.v), sp_fmt_gib(b2, sizeof b2, (double)u->anon.v),
	       sp_fmt_gib(b3, sizeof b3, (double)(u->shmem - u->shmem_orphan)),
	       sp_fmt_gib(b4, sizeof b4, (double)u->kernel), sp_fmt_gib(b5, sizeof b5, (double)u->gpu));
	printf("  likely causes, in the order to check:\n");
	/* 1: shmem, /dev/shm files nobody maps */
	printf("    1. shmem %s in use", sp_fmt_gib(b1, sizeof b1, (double)u->shmem));
	if (!n->shm_read || n->shm.why != SP_OK)
		printf("; /dev/shm %s\n", n->shm_read ? sp_why_text(n->shm.why) : "not scanned (--no-processes)");
	else if (!n->shm.holders_known)
		printf("; /dev/shm holds %d file%s: some processes' maps could not be read (run as root to name the "
		       "orphans)\n", n->shm.nfiles, n->shm.nfiles == 1 ? "" : "s");
	else
		printf("; /dev/shm: %d file%s no process maps or holds open, %s%s\n", n->shm.norphans,
		       n->shm.norphans == 1 ? "" : "s", sp_fmt_bytes(b2, sizeof b2, (double)n->shm.orphan_resident),
		       n->shm.norphans ? " (once their job is gone: sudo sparkops evict --shm NAME...):" : "");
	for (int i = 0, shown = 0; i < n->shm.n && shown < 5 && n->shm.holders_known; i++) {
		const struct sp_shmfile *f = &n->shm.f[i];
		if (f->holder)
			continue;
		printf("         %-32s %10s  uid %u\n", f->name, sp_fmt_bytes(b2, sizeof b2, (double)f->resident),
		       f->uid);
		shown++;
	}
	/* 2: pinned pages */
	printf("    2. mlocked %s; hugetlb %s reserved (%s of it free)\n", sp_fmt_bytes(b1, sizeof b1, (double)u->mlocked),
	       sp_fmt_bytes(b2, sizeof b2, (double)u->hugetlb), sp_fmt_bytes(b3, sizeof b3, (double)u->hugetlb_free));
	/* 3: the driver */
	if (!u->gpu_in_pool && s->ngpu > 0)
		printf("    3. not the GPU: its memory is its own here (a discrete GPU), outside this figure\n");
	else if (!u->gpu_in_pool)
		printf("    3. the GPU driver: no NVML reading (%s): on unified memory its allocations, and any it kept "
		       "after a failed job, are inside this figure\n",
		       sp_why_text(s->gpu_status));
	else if (u->driver_pids)
		printf("    3. the GPU driver: NVML lists %d process%s /proc does not show, holding %s (left after a "
		       "failed job, or another PID namespace)\n",
		       u->driver_pids, u->driver_pids == 1 ? "" : "es", sp_fmt_gib(b6, sizeof b6, (double)u->driver_bytes));
	else if (u->gpu_unknown)
		printf("    3. the GPU driver: NVML gave no GPU memory for %d listed process%s: their GPU allocations, "
		       "and any the driver kept after a failed job, are inside this figure\n",
		       u->gpu_unknown, u->gpu_unknown == 1 ? "" : "es");
	else
		printf("    3. the GPU driver: memory it kept after a failed job (NVML's process list accounts for %s)\n",
		       sp_fmt_gib(b6, sizeof b6, (double)u->gpu));
}

static void print_human(const struct sp_sample *s, const struct sp_watermarks *wm, const struct sp_spark *k,
			const struct sp_platform *pf, const struct verdict *v, const struct style *st,
			bool procs_scanned, const struct nobody *nb)
{
	print_header(s, st);
	print_pool(s, st);
	print_nobody(s, nb, st);
	if (s->mem.why == SP_OK)
		print_watermarks(wm, st);
	print_budget(s, st);
	print_claims(s, st);
	print_gpus(s, st);
	print_sensors(s, st, k);
	print_pressure(s, st);
	print_platform(pf, st);
	print_procs(s, st, procs_scanned);
	if (procs_scanned)
		print_containers(s, st);
	printf("\n%s%sverdict:%s %s\n", st->bold, v->trouble ? st->red : "", st->off, v->line);
}

int cmd_status(int argc, char **argv)
{
	struct sp_read_opts ro;
	sp_read_opts_init(&ro);
	bool json = false;
	const struct sp_option opts[] = {
		SP_OPT_GROUP("options:"),
		SP_OPT_FLAG(0, "json", &json, "one JSON object (stable keys, null for unknown + reason)"),
		SP_OPT_READ(&ro),
		SP_OPT_DURATION("gpu-timeout", &ro.gpu_timeout_s, "DURATION", 0, 3600, SP_OPTF_LO_OPEN,
				"longest wait for the NVIDIA driver (default 2s); past it the\n"
				"GPU readings are null with the reason \"timeout\""),
		SP_OPT_END(),
	};
	int i = sp_opt_parse(&spec, opts, argc, argv);
	if (i < 0)
		return 0;
	if (i < argc)
		sp_usage_error("status", "unexpected argument '%s'", argv[i]);

	/* once a process, in zeroed static storage: only the pages a sample
	 * fills are ever touched (a calloc cleared all 86 KiB: 22 page faults,
	 * a tenth of an idle status's) */
	static struct sp_sample sample;
	struct sp_sample *s = &sample;
	sp_sample_read(s, &ro);
	const bool procs = (ro.what & SP_READ_PROCS) != 0;
	struct judged *j = malloc(sizeof *j);
	if (!j)
		sp_die(SP_EXIT_IO, "out of memory");
	judge_all(s, procs, j);
	if (json) {
		print_json(s, &j->wm, &j->k, &j->pf, &j->v, procs, &j->nb);
	} else {
		bool col = sp_color(1);
		struct style st = { col ? "\033[1m" : "", col ? "\033[2m" : "", col ? "\033[31m" : "",
				    col ? "\033[33m" : "", col ? "\033[0m" : "" };
		print_human(s, &j->wm, &j->k, &j->pf, &j->v, &st, procs, &j->nb);
	}
	int rc = s->mem.why != SP_OK ? SP_EXIT_USAGE : j->v.trouble ? SP_EXIT_TROUBLE : SP_EXIT_OK;
	free(j);
	if (s->mem.why != SP_OK)
		sp_error("cannot read the memory pool: '%s/meminfo' %s", sp_procfs(), sp_why_text(s->mem.why));
	return rc;
}
