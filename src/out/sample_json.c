// SPDX-License-Identifier: MIT
/* A sample as one JSON object: units in key names, null (never 0) for what is
 * unknown, with the reason beside it. The keys are a promise to scripts. */
#include "out/sample_json.h"
#include "probe/poolmodel.h"
#include "probe/container.h"
#include "probe/spark.h"
#include "util/units.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* value or null; the reason goes into `unavail` under the same key */
static void put_u64(json_t *o, json_t *unavail, const char *key, struct sp_u64 f)
{
	if (sp_ok(f.why)) {
		json_object_set_new(o, key, json_integer((json_int_t)f.v));
	} else {
		json_object_set_new(o, key, json_null());
		if (unavail)
			json_object_set_new(unavail, key, json_string(sp_why_key(f.why)));
	}
}

static void put_real(json_t *o, json_t *unavail, const char *key, bool ok, double v, enum sp_why why)
{
	if (ok && isfinite(v)) {
		json_object_set_new(o, key, json_real(round(v * 1000.0) / 1000.0));
	} else {
		json_object_set_new(o, key, json_null());
		if (unavail)
			json_object_set_new(unavail, key, json_string(sp_why_key(why)));
	}
}

static void put_mi(json_t *o, const struct sp_meminfo *m, const char *key, enum sp_mi k)
{
	if (m->why == SP_OK && sp_mi_has(m, k))
		json_object_set_new(o, key, json_integer((json_int_t)m->v[k]));
	else
		json_object_set_new(o, key, json_null());
}

json_t *sp_json_pool(const struct sp_sample *s)
{
	const struct sp_meminfo *m = &s->mem;
	json_t *p = json_object();
	json_object_set_new(p, "status", json_string(sp_why_key(m->why)));
	json_object_set_new(p, "unified", json_boolean(sp_sample_is_uma(s)));
	put_mi(p, m, "total_bytes", SP_MI_TOTAL);
	put_mi(p, m, "free_bytes", SP_MI_FREE);
	put_mi(p, m, "available_bytes", SP_MI_AVAILABLE);
	if (m->why == SP_OK && sp_mi_has(m, SP_MI_BUFFERS) && sp_mi_has(m, SP_MI_CACHED)) {
		uint64_t cache = m->v[SP_MI_BUFFERS] + m->v[SP_MI_CACHED];
		json_object_set_new(p, "page_cache_bytes", json_integer((json_int_t)cache));
	} else
		json_object_set_new(p, "page_cache_bytes", json_null());
	/* the pool model's figures (probe/poolmodel.h): the same 'used' as top and the run summary */
	struct sp_pool pm;
	sp_pool_from_sample(&pm, s);
	json_object_set_new(p, "used_bytes", m->why == SP_OK && pm.cache_known ? json_integer((json_int_t)pm.used) : json_null());
	json_object_set_new(p, "kernel_bytes", m->why == SP_OK ? json_integer((json_int_t)pm.kernel) : json_null());
	json_object_set_new(p, "processes_held_bytes", json_integer((json_int_t)pm.procs_held));
	put_mi(p, m, "buffers_bytes", SP_MI_BUFFERS);
	put_mi(p, m, "cached_bytes", SP_MI_CACHED);
	put_mi(p, m, "shmem_bytes", SP_MI_SHMEM);
	put_mi(p, m, "mapped_bytes", SP_MI_MAPPED);
	put_mi(p, m, "dirty_bytes", SP_MI_DIRTY);
	put_mi(p, m, "sreclaimable_bytes", SP_MI_SRECLAIMABLE);
	put_mi(p, m, "mlocked_bytes", SP_MI_MLOCKED);
	put_mi(p, m, "unevictable_bytes", SP_MI_UNEVICTABLE);
	put_mi(p, m, "anon_bytes", SP_MI_ANON_PAGES);
	put_mi(p, m, "swap_total_bytes", SP_MI_SWAP_TOTAL);
	put_mi(p, m, "swap_free_bytes", SP_MI_SWAP_FREE);
	put_mi(p, m, "hugepages_total", SP_MI_HUGE_TOTAL);
	put_mi(p, m, "hugepages_free", SP_MI_HUGE_FREE);
	put_mi(p, m, "hugepage_size_bytes", SP_MI_HUGE_SIZE);
	/* contiguous free memory (buddyinfo): null + the reason, never 0 for unknown */
	const struct sp_contig *c = &s->contig;
	json_object_set_new(p, "contiguous_status", json_string(sp_why_key(c->why)));
	json_object_set_new(p, "free_2mib_bytes", c->why == SP_OK ? json_integer((json_int_t)c->free_2mib) : json_null());
	json_object_set_new(p, "largest_free_block_bytes",
			    c->why == SP_OK && c->largest_order >= 0 ? json_integer((json_int_t)c->largest) : json_null());
	return p;
}

json_t *sp_json_budget(const struct sp_sample *s)
{
	const struct sp_budget *b = &s->budget;
	json_t *o = json_object();
	json_object_set_new(o, "reserve_bytes", json_integer((json_int_t)b->reserve));
	put_u64(o, NULL, "now_bytes", b->now);
	put_u64(o, NULL, "after_flush_bytes", b->after_flush);
	put_u64(o, NULL, "reclaimable_bytes", b->reclaimable);
	json_object_set_new(o, "cgroup_bound", json_boolean(b->cgroup_bound));
	return o;
}

json_t *sp_json_cgroup(const struct sp_sample *s)
{
	const struct sp_cgroup *cg = &s->cg;
	json_t *o = json_object();
	json_object_set_new(o, "version", cg->version ? json_integer(cg->version) : json_null());
	json_object_set_new(o, "path", cg->version ? sp_json_text(cg->path) : json_null());
	json_t *un = json_object();
	put_u64(o, un, "limit_bytes", cg->limit);
	put_u64(o, un, "usage_bytes", cg->usage);
	put_u64(o, un, "file_bytes", cg->file);
	put_u64(o, un, "oom_kill", cg->oom_kill);
	put_u64(o, un, "oom", cg->oom);
	put_u64(o, un, "failcnt", cg->failcnt);
	json_object_set_new(o, "unavailable", un);
	return o;
}

json_t *sp_json_psi(const struct sp_sample *s)
{
	json_t *o = json_object();
	for (int r = 0; r < SP_PSI_N; r++) {
		const struct sp_psi *p = &s->psi[r];
		if (p->why != SP_OK) {
			json_t *x = json_object();
			json_object_set_new(x, "status", json_string(sp_why_key(p->why)));
			json_object_set_new(o, sp_psi_res_name((enum sp_psi_res)r), x);
			continue;
		}
		json_t *x = json_object();
		json_object_set_new(x, "status", json_string("ok"));
		const struct sp_psi_line *lines[2] = { &p->some, &p->full };
		const char *names[2] = { "some", "full" };
		for (int i = 0; i < 2; i++) {
			if (!lines[i]->ok) {
				json_object_set_new(x, names[i], json_null());
				continue;
			}
			json_t *l = json_object();
			json_object_set_new(l, "avg10_pct", json_real(lines[i]->avg10));
			json_object_set_new(l, "avg60_pct", json_real(lines[i]->avg60));
			json_object_set_new(l, "avg300_pct", json_real(lines[i]->avg300));
			json_object_set_new(l, "total_us", json_integer((json_int_t)lines[i]->total_us));
			json_object_set_new(x, names[i], l);
		}
		json_object_set_new(o, sp_psi_res_name((enum sp_psi_res)r), x);
	}
	return o;
}

json_t *sp_json_thermal(const struct sp_sample *s)
{
	json_t *a = json_array();
	for (int i = 0; i < s->nzones; i++) {
		const struct sp_zone *z = &s->zones[i];
		json_t *o = json_object();
		json_object_set_new(o, "zone", json_integer(z->index));
		json_object_set_new(o, "type", sp_json_text(z->type));
		put_real(o, NULL, "temp_c", sp_ok(z->temp_mc.why), (double)z->temp_mc.v / 1000.0, z->temp_mc.why);
		if (!sp_ok(z->temp_mc.why))
			json_object_set_new(o, "reason", json_string(sp_why_key(z->temp_mc.why)));
		json_array_append_new(a, o);
	}
	return a;
}

json_t *sp_json_hwmon(const struct sp_sample *s)
{
	json_t *a = json_array();
	for (int i = 0; i < s->nhw; i++) {
		const struct sp_hwchan *c = &s->hw[i];
		json_t *o = json_object();
		json_object_set_new(o, "chip", sp_json_text(c->chip));
		json_object_set_new(o, "hwmon", json_integer(c->hwmon));
		static const char *kinds[] = { "temp", "power", "energy" };
		json_object_set_new(o, "kind", json_string(kinds[c->kind]));
		json_object_set_new(o, "channel", json_integer(c->chan));
		json_object_set_new(o, "label", sp_json_text(c->label));
		bool ok = sp_ok(c->value.why);
		switch (c->kind) {
		case SP_HW_TEMP:
			put_real(o, NULL, "temp_c", ok, (double)c->value.v / 1e3, c->value.why);
			break;
		case SP_HW_POWER:
			put_real(o, NULL, "power_w", ok, (double)c->value.v / 1e6, c->value.why);
			if (sp_ok(c->cap.why))
				json_object_set_new(o, "cap_w", json_real((double)c->cap.v / 1e6));
			if (sp_ok(c->max.why))
				json_object_set_new(o, "max_w", json_real((double)c->max.v / 1e6));
			break;
		case SP_HW_ENERGY:
			put_real(o, NULL, "energy_j", ok, (double)c->value.v / 1e6, c->value.why);
			break;
		}
		if (!ok)
			json_object_set_new(o, "reason", json_string(sp_why_key(c->value.why)));
		json_array_append_new(a, o);
	}
	return a;
}

json_t *sp_json_spark(const struct sp_sample *s)
{
	struct sp_spark k;
	sp_spark_derive(s, &k);
	if (!k.present)
		return json_null();
	json_t *o = json_object();
	put_real(o, NULL, "system_power_w", k.sys_power_ok, k.sys_power_w, SP_MISSING);
	put_real(o, NULL, "soc_power_w", k.soc_power_ok, k.soc_power_w, SP_MISSING);
	put_real(o, NULL, "gpu_power_w", k.gpu_power_ok, k.gpu_power_w, SP_MISSING);
	put_real(o, NULL, "pl1_w", k.pl1_ok, k.pl1_w, SP_MISSING);
	put_real(o, NULL, "pl1_cap_w", k.pl1_cap_ok, k.pl1_cap_w, SP_MISSING);
	put_real(o, NULL, "pl1_pct_of_cap", k.pl1_ok && k.pl1_cap_ok, k.pl1_pct, SP_MISSING);
	json_object_set_new(o, "at_pl1_cap", json_boolean(k.at_pl1_cap));
	json_object_set_new(o, "usb_pd_safety_mode", json_boolean(k.usb_pd_safety));
	put_real(o, NULL, "die_temp_c", k.die_temp_ok, k.die_temp_c, SP_MISSING);
	return o;
}

json_t *sp_json_reasons(uint64_t mask)
{
	json_t *a = json_array();
	for (int b = 0; b < 64; b++) {
		if (!(mask >> b & 1))
			continue;
		const char *n = sp_reason_name(b);
		char buf[32];
		if (!n) {
			snprintf(buf, sizeof buf, "unknown_bit_%d", b);
			n = buf;
		}
		json_array_append_new(a, json_string(n));
	}
	return a;
}

json_t *sp_json_gpu(const struct sp_gpu *g)
{
	json_t *o = json_object(), *un = json_object();
	json_object_set_new(o, "index", json_integer(g->index));
	json_object_set_new(o, "name", sp_json_text(g->name));
	json_object_set_new(o, "uuid", g->uuid[0] ? sp_json_text(g->uuid) : json_null());
	json_object_set_new(o, "integrated", json_boolean(g->integrated));
	put_u64(o, un, "temperature_c", g->temp_c);
	put_real(o, un, "power_w", sp_ok(g->power_mw.why), (double)g->power_mw.v / 1e3, g->power_mw.why);
	put_real(o, un, "power_limit_w", sp_ok(g->power_limit_mw.why), (double)g->power_limit_mw.v / 1e3,
		 g->power_limit_mw.why);
	put_u64(o, un, "sm_clock_mhz", g->sm_clock_mhz);
	put_u64(o, un, "sm_clock_max_mhz", g->sm_clock_max_mhz);
	put_u64(o, un, "utilization_pct", g->util_gpu_pct);
	put_u64(o, un, "memory_utilization_pct", g->util_mem_pct);
	if (sp_ok(g->reasons.why)) {
		json_object_set_new(o, "clocks_event_reasons", sp_json_reasons(g->reasons.v));
		json_object_set_new(o, "clocks_event_reasons_mask", json_integer((json_int_t)g->reasons.v));
	} else {
		json_object_set_new(o, "clocks_event_reasons", json_null());
		json_object_set_new(o, "clocks_event_reasons_mask", json_null());
		json_object_set_new(un, "clocks_event_reasons", json_string(sp_why_key(g->reasons.why)));
	}
	put_real(o, un, "power_violation_seconds", sp_ok(g->viol_power_ns.why), (double)g->viol_power_ns.v / 1e9,
		 g->viol_power_ns.why);
	put_real(o, un, "thermal_violation_seconds", sp_ok(g->viol_thermal_ns.why),
		 (double)g->viol_thermal_ns.v / 1e9, g->viol_thermal_ns.why);
	put_real(o, un, "energy_j", sp_ok(g->energy_mj.why), (double)g->energy_mj.v / 1e3, g->energy_mj.why);
	json_t *mem = json_object();
	json_object_set_new(mem, "status", json_string(sp_why_key(g->mem_total.why)));
	put_u64(mem, NULL, "total_bytes", g->mem_total);
	put_u64(mem, NULL, "free_bytes", g->mem_free);
	put_u64(mem, NULL, "used_bytes", g->mem_used);
	json_object_set_new(o, "memory", mem);
	json_object_set_new(o, "unavailable", un);
	return o;
}

json_t *sp_json_container(const struct sp_container *c)
{
	if (c->runtime == SP_CT_NONE)
		return json_null();
	json_t *o = json_object(), *un = json_object();
	json_object_set_new(o, "runtime", json_string(sp_ct_runtime_name(c->runtime)));
	json_object_set_new(o, "id", json_string(c->id));
	json_object_set_new(o, "short_id", json_string(c->short_id));
	json_object_set_new(o, "name", sp_json_text(c->name));
	json_object_set_new(o, "name_source", json_string(c->name_src ? c->name_src : "short_id"));
	bool kube = c->pod_uid[0] != 0;
	json_object_set_new(o, "pod_uid", kube ? json_string(c->pod_uid) : json_null());
	json_object_set_new(o, "pod", kube && sp_ok(c->pod_why) ? sp_json_text(c->pod) : json_null());
	json_object_set_new(o, "namespace", kube && sp_ok(c->ns_why) ? sp_json_text(c->ns) : json_null());
	if (!kube) {
		json_object_set_new(un, "pod", json_string("not_kubernetes"));
		json_object_set_new(un, "namespace", json_string("not_kubernetes"));
	} else {
		if (!sp_ok(c->pod_why))
			json_object_set_new(un, "pod", json_string(sp_why_key(c->pod_why)));
		/* the pod's hosts file names it, only the kubelet's log folder names its namespace */
		if (!sp_ok(c->ns_why))
			json_object_set_new(un, "namespace", json_string(sp_ok(c->pod_why) ? "not_in_kubelet_folders"
											 : sp_why_key(c->ns_why)));
	}
	json_object_set_new(o, "cgroup", c->cg_path[0] ? sp_json_text(c->cg_path) : json_null());
	json_object_set_new(o, "unavailable", un);
	return o;
}

json_t *sp_json_procs(const struct sp_sample *s)
{
	json_t *a = json_array();
	for (int i = 0; i < s->nprocs; i++) {
		const struct sp_proc *p = &s->procs[i];
		json_t *o = json_object();
		json_object_set_new(o, "pid", json_integer(p->pid));
		json_object_set_new(o, "name", sp_json_text(p->name));
		json_object_set_new(o, "comm", sp_json_text(p->comm));
		json_object_set_new(o, "kind", json_string(sp_proc_kind_name(p->kind)));
		json_object_set_new(o, "rss_bytes", json_integer((json_int_t)p->rss_bytes));
		put_u64(o, NULL, "gpu_memory_bytes", p->gpu_mem);
		json_object_set_new(o, "held_bytes", json_integer((json_int_t)sp_pool_proc_held(p)));
		if (p->has_cap) {
			json_object_set_new(o, "cap_fraction", json_real(p->cap_frac));
			json_object_set_new(o, "cap_source", json_string(p->cap_default ? "default" : p->cap_flag));
			const char *of = "pool";
			double base = sp_cap_base_bytes(s, &of);
			if (base > 0) {
				json_object_set_new(o, "cap_bytes", json_integer((json_int_t)(p->cap_frac * base)));
				json_object_set_new(o, "cap_of", json_string(strcmp(of, "pool") == 0 ? "pool" : "gpu"));
			}
		} else {
			json_object_set_new(o, "cap_fraction", json_null());
		}
		json_object_set_new(o, "cmdline", sp_json_text(p->cmdline));
		json_object_set_new(o, "container", sp_json_container(&p->ct));
		json_object_set_new(o, "unit", p->ct.runtime == SP_CT_NONE && p->ct.unit[0] ? sp_json_text(p->ct.unit)
											   : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

json_t *sp_json_gpus(const struct sp_sample *s)
{
	json_t *a = json_array();
	for (int i = 0; i < s->ngpu; i++)
		json_array_append_new(a, sp_json_gpu(&s->gpus[i]));
	return a;
}
