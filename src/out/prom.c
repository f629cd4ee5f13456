// SPDX-License-Identifier: MIT
/* Prometheus text exposition of a sample. Base units in names (_bytes,
 * _celsius, _watts, _seconds, _hertz, _ratio), _total on counters, HELP and
 * TYPE on every family, unknown left out. See docs/metrics.md for the list. */
#include "out/prom.h"
#include "probe/poolmodel.h"
#include "probe/container.h"
#include "probe/spark.h"
#include "util/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- escaping ----------------------------------------------------------------- */

/* length of the valid UTF-8 sequence at p (1..4), or 0 when it is not one */
static size_t utf8_seq(const unsigned char *p)
{
	unsigned char c = p[0];
	if (c < 0x80)
		return 1;
	unsigned char lo = 0x80, hi = 0xBF;
	size_t n;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F; /* no UTF-16 surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else {
		return 0;
	}
	/* a NUL is never a continuation byte, so this stops at the string's end */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return n;
}

size_t sp_prom_escape(char *out, size_t cap, const char *in, enum sp_prom_esc mode)
{
	size_t n = 0;
	const unsigned char *p = (const unsigned char *)(in ? in : "");
#define PUT(ch)                            \
	do {                               \
		if (n + 1 < cap)           \
			out[n] = (char)(ch); \
		n++;                       \
	} while (0)
	while (*p) {
		/* a run of printable ASCII that needs no escape (most of a HELP
		 * text, every label value we write): copied whole */
		const unsigned char *q = p;
		while (*q >= 0x20 && *q < 0x7f && *q != '\\' && *q != '"')
			q++;
		if (q > p) {
			size_t run = (size_t)(q - p);
			size_t fit = cap > n + 1 ? cap - 1 - n : 0;
			if (fit)
				memcpy(out + n, p, run < fit ? run : fit);
			n += run;
			p = q;
			continue;
		}
		unsigned char c = *p;
		if (c == '\\') {
			PUT('\\');
			PUT('\\');
			p++;
		} else if (c == '\n') {
			PUT('\\');
			PUT('n');
			p++;
		} else if (c == '"' && mode == SP_PROM_ESC_LABEL) {
			PUT('\\');
			PUT('"');
			p++;
		} else if (c < 0x20 || c == 0x7f) {
			PUT('?');
			p++;
		} else {
			size_t k = utf8_seq(p);
			if (k == 0) {
				PUT('?');
				p++;
			} else {
				for (size_t i = 0; i < k; i++)
					PUT(p[i]);
				p += k;
			}
		}
	}
#undef PUT
	if (cap)
		out[n < cap ? n : cap - 1] = 0;
	return n;
}

/* ---- the writer ------------------------------------------------------------- */

void sp_prom_init(struct sp_prom *w, char *buf, size_t cap)
{
	memset(w, 0, sizeof *w);
	w->buf = buf;
	w->cap = cap;
	if (cap)
		buf[0] = 0;
}

bool sp_prom_fits(const struct sp_prom *w)
{
	return w->len < w->cap;
}

static void put(struct sp_prom *w, const char *s, size_t n)
{
	if (w->len < w->cap) {
		size_t room = w->cap - w->len;
		memcpy(w->buf + w->len, s, n < room ? n : room);
	}
	w->len += n;
}

static void puts_(struct sp_prom *w, const char *s)
{
	put(w, s, strlen(s));
}

static void put_esc(struct sp_prom *w, const char *s, enum sp_prom_esc mode)
{
	size_t room = w->len < w->cap ? w->cap - w->len : 0;
	/* sp_prom_escape writes a NUL in room; the next put overwrites it */
	size_t n = sp_prom_escape(room ? w->buf + w->len : NULL, room, s, mode);
	w->len += n;
}

void sp_prom_family(struct sp_prom *w, const char *name, const char *type, const char *help)
{
	w->fam = name;
	w->fam_type = type;
	w->fam_help = help;
	w->fam_open = false;
}

static void head(struct sp_prom *w, const struct sp_prom_label *labels)
{
	if (!w->fam_open) {
		puts_(w, "# HELP ");
		puts_(w, w->fam);
		puts_(w, " ");
		put_esc(w, w->fam_help, SP_PROM_ESC_HELP);
		puts_(w, "\n# TYPE ");
		puts_(w, w->fam);
		puts_(w, " ");
		puts_(w, w->fam_type);
		puts_(w, "\n");
		w->fam_open = true;
	}
	puts_(w, w->fam);
	if (labels && labels[0].k) {
		puts_(w, "{");
		for (int i = 0; labels[i].k; i++) {
			if (i)
				puts_(w, ",");
			puts_(w, labels[i].k);
			puts_(w, "=\"");
			put_esc(w, labels[i].v, SP_PROM_ESC_LABEL);
			puts_(w, "\"");
		}
		puts_(w, "}");
	}
}

/* " 123\n" without printf: most values are integers (bytes, counts, 0/1) */
static size_t fmt_u64(char *out, uint64_t v)
{
	out[0] = ' ';
	size_t n = sp_u64_digits(out + 1, v);
	out[n + 1] = '\n';
	return n + 2;
}

void sp_prom_sample(struct sp_prom *w, const struct sp_prom_label *labels, double v)
{
	if (!isfinite(v))
		return; /* never a NaN standing in for "unknown" */
	if (v >= 0 && v < 9.0e15 && v == floor(v)) {
		sp_prom_sample_u64(w, labels, (uint64_t)v);
		return;
	}
	char num[40];
	/* enough digits to round-trip a reading; integers above are exact */
	if (v == floor(v) && fabs(v) < 9.0e15)
		snprintf(num, sizeof num, " %.0f\n", v);
	else
		snprintf(num, sizeof num, " %.15g\n", v);
	head(w, labels);
	puts_(w, num);
}

void sp_prom_sample_u64(struct sp_prom *w, const struct sp_prom_label *labels, uint64_t v)
{
	char num[32];
	size_t n = fmt_u64(num, v);
	head(w, labels);
	put(w, num, n);
}

size_t sp_prom_end(struct sp_prom *w)
{
	if (w->cap)
		w->buf[w->len < w->cap ? w->len : w->cap - 1] = 0;
	return w->len;
}

/* ---- the sample --------------------------------------------------------------- */

#define LBL(...) ((const struct sp_prom_label[]){ __VA_ARGS__, { NULL, NULL } })
#define GAUGE "gauge"
#define COUNTER "counter"

static void u64_if(struct sp_prom *w, const struct sp_prom_label *l, struct sp_u64 f, double scale)
{
	if (!sp_ok(f.why))
		return;
	if (scale == 1.0)
		sp_prom_sample_u64(w, l, f.v);
	else
		sp_prom_sample(w, l, (double)f.v * scale);
}

/* the fingerprint as an info metric: a label per known field (an unknown
 * one is left out, which PromQL reads as ""), and one series per known-bad
 * match */
static const struct sp_platform *prom_platform;
static const uint64_t *prom_drv;

void sp_prom_set_driver_errors(const uint64_t *count)
{
	prom_drv = count;
}

static void write_driver_errors(struct sp_prom *w, const uint64_t *c)
{
	sp_prom_family(w, "sparkops_driver_errors_total", COUNTER,
		       "the NVIDIA driver's lines in the kernel log by kind (nvrm_oom: NV_ERR_NO_MEMORY and failed "
		       "allocations, xid, nvrm_other), since sparkops began reading it");
	for (int k = 0; k < SP_DRV_N; k++)
		sp_prom_sample_u64(w, LBL({ "kind", sp_drv_kind_name((enum sp_drv_kind)k) }), c[k]);
}

void sp_prom_set_platform(const struct sp_platform *p)
{
	prom_platform = p;
}

static void write_platform(struct sp_prom *w, const struct sp_platform *p)
{
	static const enum sp_pfield shown[] = { SP_PF_KERNEL, SP_PF_DRIVER, SP_PF_CUDA,
						SP_PF_DGX_OS, SP_PF_BIOS,   SP_PF_BOARD };
	struct sp_prom_label l[sizeof shown / sizeof shown[0] + 1];
	int n = 0;
	for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++)
		if (p->f[shown[i]].why == SP_OK)
			l[n++] = (struct sp_prom_label){ sp_pfield_name(shown[i]), p->f[shown[i]].v };
	l[n] = (struct sp_prom_label){ NULL, NULL };
	sp_prom_family(w, "sparkops_platform_info", GAUGE,
		       "the platform: kernel, NVIDIA driver, CUDA driver version, DGX OS, BIOS, board (an unknown one "
		       "is left out), always 1");
	sp_prom_sample(w, l, 1);
	sp_prom_family(w, "sparkops_platform_known_bad", GAUGE,
		       "1 for each known-bad version the platform runs (docs/platform.md has each one's source)");
	for (int i = 0; i < p->nwarn; i++)
		sp_prom_sample(w, LBL({ "field", sp_pfield_name(p->warn[i]->field) }, { "version", p->warn[i]->version }),
			       1);
}

static void write_meta(struct sp_prom *w, const struct sp_sample *s, const struct sp_prom_info *info)
{
	sp_prom_family(w, "sparkops_up", GAUGE, "1 when sparkops produced this exposition");
	sp_prom_sample(w, NULL, 1);
	sp_prom_family(w, "sparkops_build_info", GAUGE, "sparkops version, always 1");
	sp_prom_sample(w, LBL({ "version", info && info->version ? info->version : "unknown" }), 1);
	if (prom_platform)
		write_platform(w, prom_platform);
	if (prom_drv)
		write_driver_errors(w, prom_drv);
	if (s->wall > 0) {
		sp_prom_family(w, "sparkops_sample_timestamp_seconds", GAUGE,
			       "when the readings were taken (Unix time)");
		sp_prom_sample(w, NULL, s->wall);
	}
	if (info && info->read_seconds >= 0) {
		sp_prom_family(w, "sparkops_read_duration_seconds", GAUGE, "how long reading every source took");
		sp_prom_sample(w, NULL, info->read_seconds);
	}
	/* each source as a whole: 1 readable, 0 not, with the reason as a label */
	sp_prom_family(w, "sparkops_source_ok", GAUGE,
		       "1 when a source could be read; 0 with the reason in status (its series are then left out)");
	sp_prom_sample(w, LBL({ "source", "meminfo" }, { "status", sp_why_key(s->mem.why) }), s->mem.why == SP_OK);
	for (int r = 0; r < SP_PSI_N; r++) {
		char src[24];
		snprintf(src, sizeof src, "psi_%s", sp_psi_res_name((enum sp_psi_res)r));
		sp_prom_sample(w, LBL({ "source", src }, { "status", sp_why_key(s->psi[r].why) }),
			       s->psi[r].why == SP_OK);
	}
	sp_prom_sample(w, LBL({ "source", "cgroup" }, { "status", s->cg.version ? "ok" : "missing" }),
		       s->cg.version != 0);
	const enum sp_why gs = sp_sample_gpu_state(s);
	sp_prom_sample(w, LBL({ "source", "nvml" }, { "status", sp_why_key(gs) }), gs == SP_OK);
	sp_prom_sample(w, LBL({ "source", "buddyinfo" }, { "status", sp_why_key(s->contig.why) }),
		       s->contig.why == SP_OK);
	if (!info || !info->procs_skipped)
		sp_prom_sample(w, LBL({ "source", "processes" }, { "status", s->procs_seen > 0 ? "ok" : "missing" }),
			       s->procs_seen > 0);
}

static void write_pool(struct sp_prom *w, const struct sp_sample *s)
{
	const struct sp_meminfo *m = &s->mem;
	if (m->why != SP_OK)
		return;
	static const struct {
		const char *name, *help;
		enum sp_mi k;
	} rows[] = {
		{ "sparkops_pool_total_bytes", "memory pool size (MemTotal); on UMA the GPU allocates from it too", SP_MI_TOTAL },
		{ "sparkops_pool_free_bytes", "unused memory, usable without reclaim (MemFree)", SP_MI_FREE },
		{ "sparkops_pool_available_bytes", "MemAvailable: free plus what the kernel thinks it can reclaim", SP_MI_AVAILABLE },
		{ "sparkops_pool_shmem_bytes", "shared memory and tmpfs (Shmem): page cache a flush does not drop", SP_MI_SHMEM },
		{ "sparkops_pool_mapped_bytes", "mapped file pages (Mapped), in use by processes", SP_MI_MAPPED },
		{ "sparkops_pool_dirty_bytes", "dirty page cache waiting for writeback (Dirty)", SP_MI_DIRTY },
		{ "sparkops_pool_slab_reclaimable_bytes", "reclaimable kernel slab (SReclaimable)", SP_MI_SRECLAIMABLE },
		{ "sparkops_pool_anon_bytes", "anonymous memory (AnonPages)", SP_MI_ANON_PAGES },
		{ "sparkops_pool_unevictable_bytes", "unevictable memory (Unevictable)", SP_MI_UNEVICTABLE },
		{ "sparkops_pool_swap_total_bytes", "swap space (SwapTotal)", SP_MI_SWAP_TOTAL },
		{ "sparkops_pool_swap_free_bytes", "unused swap (SwapFree)", SP_MI_SWAP_FREE },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		if (!sp_mi_has(m, rows[i].k))
			continue;
		sp_prom_family(w, rows[i].name, GAUGE, rows[i].help);
		sp_prom_sample_u64(w, NULL, m->v[rows[i].k]);
	}
	if (sp_mi_has(m, SP_MI_BUFFERS) && sp_mi_has(m, SP_MI_CACHED)) {
		sp_prom_family(w, "sparkops_pool_page_cache_bytes", GAUGE, "page cache (Buffers + Cached)");
		sp_prom_sample_u64(w, NULL, m->v[SP_MI_BUFFERS] + m->v[SP_MI_CACHED]);
		struct sp_pool pm; /* the pool model's 'used': status's, top's, the run summary's */
		sp_pool_from_sample(&pm, s);
		sp_prom_family(w, "sparkops_pool_used_bytes", GAUGE,
			       "used by processes and the kernel: total - free - page cache (as status and top say it)");
		sp_prom_sample_u64(w, NULL, pm.used);
	}
	if (s->contig.why == SP_OK) {
		sp_prom_family(w, "sparkops_pool_free_contiguous_bytes", GAUGE,
			       "free memory in blocks of at least min_block (/proc/buddyinfo): what the GPU driver's large allocations need");
		sp_prom_sample_u64(w, LBL({ "min_block", "2MiB" }), s->contig.free_2mib);
		if (s->contig.largest_order >= 0) {
			sp_prom_family(w, "sparkops_pool_largest_free_block_bytes", GAUGE,
				       "the largest free block in the pool (/proc/buddyinfo)");
			sp_prom_sample_u64(w, NULL, s->contig.largest);
		}
	}
	sp_prom_family(w, "sparkops_pool_unified", GAUGE, "1 when the GPUs share this pool (GB10 and other UMA parts)");
	sp_prom_sample(w, NULL, sp_sample_is_uma(s));

	const struct sp_budget *b = &s->budget;
	if (sp_ok(b->reclaimable.why)) {
		sp_prom_family(w, "sparkops_pool_reclaimable_bytes", GAUGE,
			       "what a page cache flush would give back (Buffers+Cached-Shmem-Mapped+SReclaimable, or the cgroup's file pages)");
		sp_prom_sample_u64(w, NULL, b->reclaimable.v);
	}
	sp_prom_family(w, "sparkops_budget_reserve_bytes", GAUGE, "memory kept back for the OS and driver");
	sp_prom_sample_u64(w, NULL, b->reserve);
	if (sp_ok(b->now.why)) {
		sp_prom_family(w, "sparkops_budget_now_bytes", GAUGE,
			       "what a new job can count on now: MemFree minus the reserve (or the cgroup's headroom)");
		sp_prom_sample_u64(w, NULL, b->now.v);
	}
	if (sp_ok(b->after_flush.why)) {
		sp_prom_family(w, "sparkops_budget_after_flush_bytes", GAUGE,
			       "what a new job could count on after a page cache flush");
		sp_prom_sample_u64(w, NULL, b->after_flush.v);
	}
	if (sp_ok(b->now.why)) {
		sp_prom_family(w, "sparkops_budget_cgroup_bound", GAUGE,
			       "1 when the cgroup limit is tighter than the machine and sets the budget");
		sp_prom_sample(w, NULL, b->cgroup_bound);
	}
}

static void write_cgroup(struct sp_prom *w, const struct sp_sample *s)
{
	const struct sp_cgroup *cg = &s->cg;
	if (!cg->version)
		return;
	char ver[8];
	snprintf(ver, sizeof ver, "%d", cg->version);
	const struct sp_prom_label *l = LBL({ "cgroup", cg->path }, { "version", ver });
	sp_prom_family(w, "sparkops_cgroup_memory_limit_bytes", GAUGE,
		       "the tightest memory limit above sparkops's cgroup (absent when unlimited)");
	u64_if(w, l, cg->limit, 1.0);
	sp_prom_family(w, "sparkops_cgroup_memory_usage_bytes", GAUGE, "memory charged to the cgroup");
	u64_if(w, l, cg->usage, 1.0);
	sp_prom_family(w, "sparkops_cgroup_memory_file_bytes", GAUGE, "page cache charged to the cgroup");
	u64_if(w, l, cg->file, 1.0);
	sp_prom_family(w, "sparkops_cgroup_oom_kills_total", COUNTER, "processes killed by the cgroup's OOM killer");
	u64_if(w, l, cg->oom_kill, 1.0);
	sp_prom_family(w, "sparkops_cgroup_oom_events_total", COUNTER, "times the cgroup hit its limit and the OOM killer ran");
	u64_if(w, l, cg->oom, 1.0);
}

static void write_psi(struct sp_prom *w, const struct sp_sample *s)
{
	static const char *const win[3] = { "10s", "60s", "300s" };
	sp_prom_family(w, "sparkops_psi_avg_ratio", GAUGE,
		       "pressure stall information: share of time stalled, averaged over window (kind some or full)");
	for (int r = 0; r < SP_PSI_N; r++) {
		const struct sp_psi *p = &s->psi[r];
		if (p->why != SP_OK)
			continue;
		const char *res = sp_psi_res_name((enum sp_psi_res)r);
		for (int f = 0; f < 2; f++) {
			const struct sp_psi_line *ln = f ? &p->full : &p->some;
			if (!ln->ok)
				continue;
			const double v[3] = { ln->avg10, ln->avg60, ln->avg300 };
			for (int i = 0; i < 3; i++)
				sp_prom_sample(w, LBL({ "resource", res }, { "kind", f ? "full" : "some" }, { "window", win[i] }),
					       v[i] / 100.0);
		}
	}
	sp_prom_family(w, "sparkops_psi_stalled_seconds_total", COUNTER,
		       "pressure stall information: cumulative time stalled (kind some or full)");
	for (int r = 0; r < SP_PSI_N; r++) {
		const struct sp_psi *p = &s->psi[r];
		if (p->why != SP_OK)
			continue;
		const char *res = sp_psi_res_name((enum sp_psi_res)r);
		for (int f = 0; f < 2; f++) {
			const struct sp_psi_line *ln = f ? &p->full : &p->some;
			if (ln->ok)
				sp_prom_sample(w, LBL({ "resource", res }, { "kind", f ? "full" : "some" }),
					       (double)ln->total_us / 1e6);
		}
	}
}

static void write_sensors(struct sp_prom *w, const struct sp_sample *s)
{
	char zone[16], hw[16], sensor[24];
	sp_prom_family(w, "sparkops_thermal_zone_temp_celsius", GAUGE, "thermal zone temperature");
	for (int i = 0; i < s->nzones; i++) {
		const struct sp_zone *z = &s->zones[i];
		if (!sp_ok(z->temp_mc.why))
			continue;
		snprintf(zone, sizeof zone, "%d", z->index);
		sp_prom_sample(w, LBL({ "zone", zone }, { "type", z->type }), (double)z->temp_mc.v / 1e3);
	}
	static const struct {
		enum sp_hw_kind kind;
		const char *name, *type, *help, *prefix;
		double scale;
	} fams[] = {
		{ SP_HW_TEMP, "sparkops_hwmon_temp_celsius", GAUGE, "hwmon temperature channel", "temp", 1e-3 },
		{ SP_HW_POWER, "sparkops_hwmon_power_watts", GAUGE, "hwmon power channel (input or average)", "power", 1e-6 },
		{ SP_HW_ENERGY, "sparkops_hwmon_energy_joules_total", COUNTER, "hwmon energy counter", "energy", 1e-6 },
	};
	for (size_t f = 0; f < sizeof fams / sizeof fams[0]; f++) {
		sp_prom_family(w, fams[f].name, fams[f].type, fams[f].help);
		for (int i = 0; i < s->nhw; i++) {
			const struct sp_hwchan *c = &s->hw[i];
			if (c->kind != fams[f].kind || !sp_ok(c->value.why))
				continue;
			snprintf(hw, sizeof hw, "hwmon%d", c->hwmon);
			snprintf(sensor, sizeof sensor, "%s%d", fams[f].prefix, c->chan);
			sp_prom_sample(w, LBL({ "hwmon", hw }, { "chip", c->chip }, { "sensor", sensor }, { "label", c->label }),
				       (double)c->value.v * fams[f].scale);
		}
	}
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 0)
			sp_prom_family(w, "sparkops_hwmon_power_cap_watts", GAUGE, "hwmon power limit (powerN_cap)");
		else
			sp_prom_family(w, "sparkops_hwmon_power_cap_max_watts", GAUGE, "the highest value the power limit accepts");
		for (int i = 0; i < s->nhw; i++) {
			const struct sp_hwchan *c = &s->hw[i];
			const struct sp_i64 *f = pass ? &c->max : &c->cap;
			if (c->kind != SP_HW_POWER || !sp_ok(f->why))
				continue;
			snprintf(hw, sizeof hw, "hwmon%d", c->hwmon);
			snprintf(sensor, sizeof sensor, "power%d", c->chan);
			sp_prom_sample(w, LBL({ "hwmon", hw }, { "chip", c->chip }, { "sensor", sensor }, { "label", c->label }),
				       (double)f->v * 1e-6);
		}
	}

	/* GB10's own sensors, derived (probe/spark.h) */
	struct sp_spark k;
	sp_spark_derive(s, &k);
	if (!k.present)
		return;
	const struct {
		const char *name, *help;
		bool ok;
		double v;
	} sk[] = {
		{ "sparkops_spark_system_power_watts", "GB10 system power (spbm sys_total)", k.sys_power_ok, k.sys_power_w },
		{ "sparkops_spark_soc_power_watts", "GB10 SoC package power (spbm soc_pkg)", k.soc_power_ok, k.soc_power_w },
		{ "sparkops_spark_gpu_power_watts", "GB10 GPU power (spbm gpu)", k.gpu_power_ok, k.gpu_power_w },
		{ "sparkops_spark_pl1_power_watts", "GB10 PL1 controller average: the sustained power limit's reading",
		  k.pl1_ok, k.pl1_w },
		{ "sparkops_spark_pl1_cap_watts", "GB10 PL1 cap (140 W stock; under 50 W, e.g. 20 W or 30 W, is the USB-PD safety mode)",
		  k.pl1_cap_ok, k.pl1_cap_w },
		{ "sparkops_spark_die_temp_celsius", "GB10 die temperature: the hottest acpitz zone", k.die_temp_ok,
		  k.die_temp_c },
	};
	for (size_t i = 0; i < sizeof sk / sizeof sk[0]; i++) {
		if (!sk[i].ok)
			continue;
		sp_prom_family(w, sk[i].name, GAUGE, sk[i].help);
		sp_prom_sample(w, NULL, sk[i].v);
	}
	if (k.pl1_ok && k.pl1_cap_ok && k.pl1_cap_w > 0) {
		sp_prom_family(w, "sparkops_spark_pl1_cap_used_ratio", GAUGE, "PL1 average over its cap");
		sp_prom_sample(w, NULL, k.pl1_pct / 100.0);
		sp_prom_family(w, "sparkops_spark_at_pl1_cap", GAUGE,
			       "1 when PL1 is at its cap (>= 97%): the platform's sustained power limit is in force");
		sp_prom_sample(w, NULL, k.at_pl1_cap);
	}
	if (k.pl1_cap_ok) {
		sp_prom_family(w, "sparkops_spark_usb_pd_safety_mode", GAUGE,
			       "1 when PL1 is capped under 50 W, far below its 140 W: the supply's USB-PD safety mode (wrong or weak adapter) or a stuck low-power state");
		sp_prom_sample(w, NULL, k.usb_pd_safety);
	}
}

/* ---- GPUs ------------------------------------------------------------------------ */

struct gpu_field {
	const char *field; /* for sparkops_gpu_reading_ok */
	const char *name, *type, *help;
	size_t off;
	double scale;
};
#define GOFF(f) offsetof(struct sp_gpu, f)
static const struct gpu_field gpu_fields[] = {
	{ "temperature", "sparkops_gpu_temp_celsius", GAUGE, "GPU temperature (NVML)", GOFF(temp_c), 1 },
	{ "power", "sparkops_gpu_power_watts", GAUGE, "GPU power draw (NVML, 1 s average)", GOFF(power_mw), 1e-3 },
	{ "power_limit", "sparkops_gpu_power_limit_watts", GAUGE, "enforced GPU power limit (N/A on GB10)",
	  GOFF(power_limit_mw), 1e-3 },
	{ "sm_clock", "sparkops_gpu_sm_clock_hertz", GAUGE, "SM clock", GOFF(sm_clock_mhz), 1e6 },
	{ "sm_clock_max", "sparkops_gpu_sm_clock_max_hertz", GAUGE, "highest SM clock", GOFF(sm_clock_max_mhz), 1e6 },
	{ "utilization", "sparkops_gpu_utilization_ratio", GAUGE, "share of time a kernel ran on the GPU",
	  GOFF(util_gpu_pct), 1e-2 },
	{ "memory_utilization", "sparkops_gpu_memory_utilization_ratio", GAUGE,
	  "share of time device memory was read or written", GOFF(util_mem_pct), 1e-2 },
	{ "energy", "sparkops_gpu_energy_joules_total", COUNTER, "GPU energy since the driver loaded",
	  GOFF(energy_mj), 1e-3 },
	{ "memory", "sparkops_gpu_memory_total_bytes", GAUGE,
	  "GPU memory as NVML reports it (NOT_SUPPORTED on GB10: see sparkops_pool_*)", GOFF(mem_total), 1 },
	{ "memory_free", "sparkops_gpu_memory_free_bytes", GAUGE, "free GPU memory as NVML reports it", GOFF(mem_free), 1 },
	{ "memory_used", "sparkops_gpu_memory_used_bytes", GAUGE, "used GPU memory as NVML reports it", GOFF(mem_used), 1 },
	{ "clocks_event_reasons", NULL, NULL, NULL, GOFF(reasons), 1 },
	{ "power_violation", NULL, NULL, NULL, GOFF(viol_power_ns), 1 },
	{ "thermal_violation", NULL, NULL, NULL, GOFF(viol_thermal_ns), 1 },
};

static const struct sp_u64 *gfield(const struct sp_gpu *g, size_t off)
{
	return (const struct sp_u64 *)((const char *)g + off);
}

static void write_gpus(struct sp_prom *w, const struct sp_sample *s)
{
	char idx[SP_MAX_GPUS][12];
	for (int i = 0; i < s->ngpu; i++)
		snprintf(idx[i], sizeof idx[i], "%u", s->gpus[i].index);
	sp_prom_family(w, "sparkops_gpus", GAUGE, "GPUs NVML reports (absent when NVML is not usable)");
	if (s->gpu_status == SP_OK || s->gpu_status == SP_NO_GPU)
		sp_prom_sample(w, NULL, s->ngpu);

	sp_prom_family(w, "sparkops_gpu_info", GAUGE, "one series per GPU, always 1");
	for (int i = 0; i < s->ngpu; i++) {
		const struct sp_gpu *g = &s->gpus[i];
		sp_prom_sample(w, LBL({ "gpu", idx[i] }, { "name", g->name }, { "uuid", g->uuid },
				      { "integrated", g->integrated ? "true" : "false" }),
			       1);
	}
	for (size_t f = 0; f < sizeof gpu_fields / sizeof gpu_fields[0]; f++) {
		if (!gpu_fields[f].name)
			continue;
		sp_prom_family(w, gpu_fields[f].name, gpu_fields[f].type, gpu_fields[f].help);
		for (int i = 0; i < s->ngpu; i++)
			u64_if(w, LBL({ "gpu", idx[i] }, { "name", s->gpus[i].name }), *gfield(&s->gpus[i], gpu_fields[f].off),
			       gpu_fields[f].scale);
	}
	/* every known reason 0/1 when the mask is readable; none when it is not */
	sp_prom_family(w, "sparkops_gpu_clocks_event_reason_active", GAUGE,
		       "1 while a clocks event reason (throttle reason) holds the clock down, 0 when not");
	for (int i = 0; i < s->ngpu; i++) {
		const struct sp_gpu *g = &s->gpus[i];
		if (!sp_ok(g->reasons.why))
			continue;
		for (int bit = 0; sp_reason_name(bit); bit++)
			sp_prom_sample(w, LBL({ "gpu", idx[i] }, { "name", g->name }, { "reason", sp_reason_name(bit) }),
				       (g->reasons.v >> bit) & 1);
	}
	sp_prom_family(w, "sparkops_gpu_violation_seconds_total", COUNTER,
		       "cumulative time the clock was held down by a policy (power or thermal)");
	for (int i = 0; i < s->ngpu; i++) {
		const struct sp_gpu *g = &s->gpus[i];
		if (sp_ok(g->viol_power_ns.why))
			sp_prom_sample(w, LBL({ "gpu", idx[i] }, { "name", g->name }, { "policy", "power" }),
				       (double)g->viol_power_ns.v / 1e9);
		if (sp_ok(g->viol_thermal_ns.why))
			sp_prom_sample(w, LBL({ "gpu", idx[i] }, { "name", g->name }, { "policy", "thermal" }),
				       (double)g->viol_thermal_ns.v / 1e9);
	}
	/* unknown is visible without a fake 0: one series per field, 1 read or 0 with the reason */
	sp_prom_family(w, "sparkops_gpu_reading_ok", GAUGE,
		       "1 when a GPU reading was available; 0 with the reason in status (its series is then left out)");
	for (int i = 0; i < s->ngpu; i++) {
		const struct sp_gpu *g = &s->gpus[i];
		for (size_t f = 0; f < sizeof gpu_fields / sizeof gpu_fields[0]; f++) {
			const struct sp_u64 *v = gfield(g, gpu_fields[f].off);
			sp_prom_sample(w, LBL({ "gpu", idx[i] }, { "name", g->name }, { "field", gpu_fields[f].field },
					      { "status", sp_why_key(v->why) }),
				       sp_ok(v->why));
		}
	}
}

/* ---- processes ------------------------------------------------------------------- */

static void write_procs(struct sp_prom *w, const struct sp_sample *s)
{
	char pid[SP_MAX_PROCS][12];
	int n = s->nprocs < SP_MAX_PROCS ? s->nprocs : SP_MAX_PROCS;
	for (int i = 0; i < n; i++)
		snprintf(pid[i], sizeof pid[i], "%d", s->procs[i].pid);
#define PL(i) LBL({ "pid", pid[i] }, { "name", s->procs[i].name }, { "kind", sp_proc_kind_name(s->procs[i].kind) })
	sp_prom_family(w, "sparkops_process_resident_bytes", GAUGE,
		       "resident memory of a recognised inference server, trainer or large process");
	for (int i = 0; i < n; i++)
		sp_prom_sample_u64(w, PL(i), s->procs[i].rss_bytes);
	sp_prom_family(w, "sparkops_process_gpu_memory_bytes", GAUGE, "GPU memory NVML attributes to the process");
	for (int i = 0; i < n; i++)
		u64_if(w, PL(i), s->procs[i].gpu_mem, 1.0);
	sp_prom_family(w, "sparkops_process_memory_cap_ratio", GAUGE,
		       "the share of the pool a server may take (vLLM --gpu-memory-utilization, default 0.9 when absent)");
	for (int i = 0; i < n; i++) {
		const struct sp_proc *p = &s->procs[i];
		if (!p->has_cap)
			continue;
		sp_prom_sample(w,
			       LBL({ "pid", pid[i] }, { "name", p->name }, { "kind", sp_proc_kind_name(p->kind) },
				   { "source", p->cap_default ? "default" : p->cap_flag }),
			       p->cap_frac);
	}
	sp_prom_family(w, "sparkops_process_memory_cap_bytes", GAUGE,
		       "the cap as bytes: its share of the GPU memory on a discrete GPU, of the pool total on UMA");
	for (int i = 0; i < n; i++) {
		const struct sp_proc *p = &s->procs[i];
		if (p->has_cap && sp_cap_base_bytes(s, NULL) > 0)
			sp_prom_sample(w, PL(i), floor(p->cap_frac * sp_cap_base_bytes(s, NULL)));
	}
#undef PL
	sp_prom_family(w, "sparkops_processes", GAUGE, "recognised memory-heavy processes by kind");
	if (s->procs_seen > 0) {
		static const enum sp_proc_kind kinds[] = { SP_PROC_SERVER, SP_PROC_TRAINER, SP_PROC_GPU, SP_PROC_OTHER };
		for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
			int c = 0;
			for (int i = 0; i < n; i++)
				c += s->procs[i].kind == kinds[k];
			sp_prom_sample(w, LBL({ "kind", sp_proc_kind_name(kinds[k]) }), c);
		}
	}
}

/* ---- containers ------------------------------------------------------------------------
 * One series a container for the SP_PROM_CONTAINERS largest (memory.current,
 * else its processes' RSS + GPU memory), the rest summed into one row labelled
 * container="other": at most SP_PROM_CONTAINERS + 1 series a family, whatever
 * runs on the box (docs/metrics.md). */
#define SP_PROM_CONTAINERS 8

static uint64_t ct_weight(const struct sp_ctmem *m)
{
	uint64_t g = sp_ok(m->gpu_mem.why) ? m->gpu_mem.v : 0;
	return sp_ok(m->current.why) ? m->current.v : m->rss_bytes + g;
}

static void write_containers(struct sp_prom *w, const struct sp_sample *s)
{
	int n = s->ncontainers < SP_MAX_CONTAINERS ? s->ncontainers : SP_MAX_CONTAINERS;
	int order[SP_MAX_CONTAINERS] = { 0 };
	for (int i = 0; i < n; i++)
		order[i] = i;
	for (int i = 1; i < n; i++) /* insertion sort, largest first: at most 16 */
		for (int j = i; j > 0 && ct_weight(&s->containers[order[j]]) > ct_weight(&s->containers[order[j - 1]]); j--) {
			int t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	int shown = n < SP_PROM_CONTAINERS ? n : SP_PROM_CONTAINERS;
	bool other = n > shown || s->containers_dropped > 0;
	struct sp_ctmem rest;
	memset(&rest, 0, sizeof rest);
	rest.current.why = rest.peak.why = rest.limit.why = rest.file.why = rest.gpu_mem.why = SP_MISSING;
	for (int i = shown; i < n; i++) {
		const struct sp_ctmem *m = &s->containers[order[i]];
		rest.rss_bytes += m->rss_bytes;
		rest.nprocs += m->nprocs;
		if (sp_ok(m->current.why)) {
			rest.current.v += m->current.v;
			rest.current.why = SP_OK;
		}
		if (sp_ok(m->file.why)) {
			rest.file.v += m->file.v;
			rest.file.why = SP_OK;
		}
		if (sp_ok(m->gpu_mem.why)) {
			rest.gpu_mem.v += m->gpu_mem.v;
			rest.gpu_mem.why = SP_OK;
		}
	}
	const char *rt[SP_PROM_CONTAINERS], *pod[SP_PROM_CONTAINERS], *ns[SP_PROM_CONTAINERS];
	for (int i = 0; i < shown; i++) {
		const struct sp_container *c = &s->containers[order[i]].ct;
		bool kube = c->pod_uid[0] != 0;
		rt[i] = sp_ct_runtime_name(c->runtime);
		pod[i] = kube && sp_ok(c->pod_why) ? c->pod : "";
		ns[i] = kube && sp_ok(c->ns_why) ? c->ns : "";
	}
#define CL(i) LBL({ "runtime", rt[i] }, { "container", s->containers[order[i]].ct.name }, \
		  { "id", s->containers[order[i]].ct.short_id }, { "pod", pod[i] }, { "namespace", ns[i] })
#define OTHER LBL({ "runtime", "" }, { "container", "other" }, { "id", "" }, { "pod", "" }, { "namespace", "" })
	sp_prom_family(w, "sparkops_containers", GAUGE,
		       "containers the listed memory-heavy processes run in (dropped: past the sample's table)");
	if (s->procs_seen > 0) {
		sp_prom_sample(w, LBL({ "state", "seen" }), n);
		sp_prom_sample(w, LBL({ "state", "dropped" }), s->containers_dropped);
	}
	sp_prom_family(w, "sparkops_container_memory_bytes", GAUGE,
		       "memory charged to the container's cgroup (memory.current; v1 memory.usage_in_bytes)");
	for (int i = 0; i < shown; i++)
		u64_if(w, CL(i), s->containers[order[i]].current, 1.0);
	if (other)
		u64_if(w, OTHER, rest.current, 1.0);
	sp_prom_family(w, "sparkops_container_memory_peak_bytes", GAUGE,
		       "the cgroup's high-water mark (memory.peak; v1 memory.max_usage_in_bytes)");
	for (int i = 0; i < shown; i++)
		u64_if(w, CL(i), s->containers[order[i]].peak, 1.0);
	sp_prom_family(w, "sparkops_container_memory_limit_bytes", GAUGE,
		       "the cgroup's limit (memory.max; v1 memory.limit_in_bytes), absent when unlimited; on unified "
		       "memory it does not bound the GPU's allocations");
	for (int i = 0; i < shown; i++)
		u64_if(w, CL(i), s->containers[order[i]].limit, 1.0);
	sp_prom_family(w, "sparkops_container_page_cache_bytes", GAUGE,
		       "page cache charged to the container (memory.stat file; v1 cache)");
	for (int i = 0; i < shown; i++)
		u64_if(w, CL(i), s->containers[order[i]].file, 1.0);
	if (other)
		u64_if(w, OTHER, rest.file, 1.0);
	sp_prom_family(w, "sparkops_container_resident_bytes", GAUGE,
		       "resident memory of the container's listed processes");
	for (int i = 0; i < shown; i++)
		sp_prom_sample_u64(w, CL(i), s->containers[order[i]].rss_bytes);
	if (other)
		sp_prom_sample_u64(w, OTHER, rest.rss_bytes);
	sp_prom_family(w, "sparkops_container_gpu_memory_bytes", GAUGE,
		       "GPU memory NVML attributes to the container's listed processes");
	for (int i = 0; i < shown; i++)
		u64_if(w, CL(i), s->containers[order[i]].gpu_mem, 1.0);
	if (other)
		u64_if(w, OTHER, rest.gpu_mem, 1.0);
#undef CL
#undef OTHER
}

void sp_prom_write_sample(struct sp_prom *w, const struct sp_sample *s, const struct sp_prom_info *info)
{
	write_meta(w, s, info);
	write_pool(w, s);
	write_cgroup(w, s);
	write_psi(w, s);
	write_sensors(w, s);
	write_gpus(w, s);
	write_procs(w, s);
	write_containers(w, s);
}

/* ---- the job ------------------------------------------------------------------------ */

void sp_prom_job_append(struct sp_prom *w, const struct sp_prom_job *job)
{
	char pid[12];
	snprintf(pid, sizeof pid, "%d", job->pid);
	const char *unit = job->rate_unit && job->rate_unit[0] ? job->rate_unit : "it";
	sp_prom_family(w, "sparkops_job_info", GAUGE, "the job sparkops run/watch follows, always 1");
	sp_prom_sample(w, LBL({ "pid", pid }, { "command", job->command ? job->command : "" }), 1);
	if (job->start_unix >= 0) {
		sp_prom_family(w, "sparkops_job_start_time_seconds", GAUGE, "when the job started (Unix time)");
		sp_prom_sample(w, NULL, job->start_unix);
	}
	if (job->rate_ok) {
		sp_prom_family(w, "sparkops_job_throughput_per_second", GAUGE,
			       "the job's own throughput parsed from its output (unit: it, step, sample)");
		sp_prom_sample(w, LBL({ "unit", unit }), job->rate);
	}
	if (job->baseline_ok) {
		sp_prom_family(w, "sparkops_job_baseline_throughput_per_second", GAUGE,
			       "the job's early throughput, the baseline slowdowns are measured against");
		sp_prom_sample(w, LBL({ "unit", unit }), job->baseline);
	}
	if (job->rate_ok && job->baseline_ok && job->baseline > 0) {
		sp_prom_family(w, "sparkops_job_throughput_ratio", GAUGE, "throughput over its baseline (1 = no slowdown)");
		sp_prom_sample(w, NULL, job->rate / job->baseline);
	}
	if (job->steps_ok) {
		sp_prom_family(w, "sparkops_job_progress_total", COUNTER, "iterations the job reported done");
		sp_prom_sample_u64(w, LBL({ "unit", unit }), job->steps);
	}
	sp_prom_family(w, "sparkops_job_slowdown_episodes_total", COUNTER, "slowdown episodes since the job started");
	sp_prom_sample_u64(w, NULL, job->episodes);
	/* every cause 0/1 when attribution has a verdict; none when it does not */
	sp_prom_family(w, "sparkops_job_slowdown_cause", GAUGE,
		       "1 for the cause attribution currently gives for the job's throughput, 0 for the others");
	if (job->cause_ok)
		for (int c = 0; c < SP_CAUSE_N; c++)
			sp_prom_sample(w, LBL({ "cause", sp_cause_name((enum sp_cause)c) }), job->cause == (enum sp_cause)c);
}

size_t sp_prom_render(char *buf, size_t cap, const struct sp_sample *s, const struct sp_prom_info *info,
		      const struct sp_prom_job *job)
{
	struct sp_prom w;
	sp_prom_init(&w, buf, cap);
	sp_prom_write_sample(&w, s, info);
	if (job)
		sp_prom_job_append(&w, job);
	return sp_prom_end(&w);
}
