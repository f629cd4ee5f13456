// SPDX-License-Identifier: MIT
/* Slowdown episodes and their causes. See attribute.h and docs/run.md. */
#include "watch/attribute.h"
#include "probe/sample.h"
#include "util/sort.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cause_names[SP_CAUSE_N] = {
	[SP_CAUSE_NONE] = "none",
	[SP_CAUSE_THERMAL] = "thermal",
	[SP_CAUSE_POWER_CAP] = "power_cap",
	[SP_CAUSE_MEMORY_PRESSURE] = "memory_pressure",
	[SP_CAUSE_CPU_CONTENTION] = "cpu_contention",
	[SP_CAUSE_IO_CONTENTION] = "io_stall", /* the name the CSV log uses */
	[SP_CAUSE_COMPETING_PROCESS] = "competing_process",
	[SP_CAUSE_UNKNOWN] = "unknown",
};

const char *sp_cause_name(enum sp_cause c)
{
	return (unsigned)c < SP_CAUSE_N ? cause_names[c] : "unknown";
}

#define THERMAL_BITS (SP_REASON_SW_THERMAL | SP_REASON_HW_THERMAL | SP_REASON_HW_SLOWDOWN)
#define POWER_BITS (SP_REASON_SW_POWER_CAP | SP_REASON_HW_POWER_BRAKE)

void sp_attr_obs_clear(struct sp_attr_obs *o)
{
	memset(o, 0, sizeof *o);
	o->t = o->rate = NAN;
	o->viol_thermal_s = o->viol_power_s = NAN;
	o->gpu_temp_c = o->soc_temp_c = NAN;
	o->gpu_power_w = o->pl1_w = o->pl1_cap_w = NAN;
	o->psi_mem_some = o->psi_mem_full = o->psi_cpu_some = o->psi_io_some = NAN;
	o->swap_used = o->page_cache = NAN;
}

void sp_attr_init(struct sp_attr *a, double window_s, double slowdown_pct)
{
	memset(a, 0, sizeof *a);
	a->window_s = window_s;
	a->slowdown_pct = slowdown_pct;
	a->first_t = NAN;
	a->baseline = NAN;
	a->temp_min_since_base = a->power_at_base = NAN;
	a->cause = SP_AC_UNKNOWN;
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static void ev_add(char *ev, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ev_add(char *ev, size_t n, const char *fmt, ...)
{
	size_t l = strlen(ev);
	if (l + 3 >= n)
		return;
	if (l) {
		memcpy(ev + l, "; ", 3);
		l += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ev + l, n - l, fmt, ap);
	va_end(ap);
}

static const char *first_reason(uint64_t bits)
{
	for (int b = 0; b < 9; b++)
		if (bits >> b & 1)
			return sp_reason_name(b);
	return "unknown";
}

static bool grew(double ref, double now, double by)
{
	return !isnan(ref) && !isnan(now) && now - ref > by;
}

enum sp_cause sp_attr_judge(const struct sp_attr *a, const struct sp_attr_obs *ref, const struct sp_attr_obs *now,
			    char *ev, size_t evlen)
{
	ev[0] = 0;
	double span = now->t - ref->t;
	if (!(span > 0))
		span = 1;
	uint64_t rnow = now->reasons_ok ? now->reasons : 0;
	/* "new" is against the window's start and against the job at full speed
	 * (the baseline): a reason that came on after the baseline counts even if
	 * it came on a while before the rate fell */
	const struct sp_attr_obs *base = a->have_baseline ? &a->base_obs : ref;
	uint64_t rref = (ref->reasons_ok ? ref->reasons : 0) & (base->reasons_ok ? base->reasons : 0);

	/* evidence that appeared in the window, strongest first */
	bool thermal = false, power = false;
	if (rnow & THERMAL_BITS & ~rref) {
		thermal = true;
		ev_add(ev, evlen, "%s turned on", first_reason(rnow & THERMAL_BITS & ~rref));
	}
	if (grew(ref->viol_thermal_s, now->viol_thermal_s, 0.05 * span)) {
		thermal = true;
		ev_add(ev, evlen, "thermal violation time +%.1fs", now->viol_thermal_s - ref->viol_thermal_s);
	}
	if (!isnan(now->gpu_temp_c) && now->gpu_temp_c >= SP_ATTR_HOT_C && now->gpu_temp_c - a->temp_min_since_ref >= 2) {
		thermal = true;
		ev_add(ev, evlen, "GPU at %.0f C and rising", now->gpu_temp_c);
	}
	if (!isnan(now->soc_temp_c) && now->soc_temp_c >= SP_ATTR_SOC_HOT_C) {
		thermal = true;
		ev_add(ev, evlen, "SoC at %.0f C", now->soc_temp_c);
	}
	if (thermal)
		return SP_AC_THERMAL;

	bool pl1_now = !isnan(now->pl1_w) && now->pl1_cap_w > 0 && now->pl1_w >= SP_ATTR_PL1_AT_CAP * now->pl1_cap_w;
	bool pl1_ref = !isnan(ref->pl1_w) && ref->pl1_cap_w > 0 && ref->pl1_w >= SP_ATTR_PL1_AT_CAP * ref->pl1_cap_w &&
		       !isnan(base->pl1_w) && base->pl1_cap_w > 0 && base->pl1_w >= SP_ATTR_PL1_AT_CAP * base->pl1_cap_w;
	if (pl1_now && !pl1_ref) {
		power = true;
		ev_add(ev, evlen, "PL1 average %.0f W at its %.0f W cap", now->pl1_w, now->pl1_cap_w);
	}
	if (rnow & POWER_BITS & ~rref) {
		power = true;
		ev_add(ev, evlen, "%s turned on", first_reason(rnow & POWER_BITS & ~rref));
	}
	/* a plateau: power flat (within 5%) over the last samples, no higher than
	 * during the baseline, while the die warmed since then */
	if (a->npow >= SP_ATTR_PLATEAU_N && !isnan(now->gpu_temp_c) && !isnan(a->temp_min_since_base)) {
		double lo = INFINITY, hi = 0;
		for (int i = 0; i < SP_ATTR_PLATEAU_N; i++) {
			lo = fmin(lo, a->pow_ring[i]);
			hi = fmax(hi, a->pow_ring[i]);
		}
		bool flat = hi > 0 && hi - lo <= 0.05 * hi;
		bool not_above = isnan(a->power_at_base) || hi <= 1.05 * a->power_at_base;
		double warmed = now->gpu_temp_c - a->temp_min_since_base;
		if (flat && not_above && warmed >= 3) {
			power = true;
			ev_add(ev, evlen, "power flat at %.0f W while the GPU warmed %.0f C", hi, warmed);
		}
	}
	if (power)
		return SP_AC_POWER_CAP;

	bool mem = false;
	if (!isnan(now->psi_mem_some) && now->psi_mem_some >= SP_ATTR_PSI_MEM) {
		mem = true;
		ev_add(ev, evlen, "PSI memory some %.1f%%", now->psi_mem_some);
	} else if (!isnan(now->psi_mem_full) && now->psi_mem_full >= SP_ATTR_PSI_MEM / 2) {
		mem = true;
		ev_add(ev, evlen, "PSI memory full %.1f%%", now->psi_mem_full);
	}
	if (grew(ref->swap_used, now->swap_used, 256.0 * 1024 * 1024)) {
		mem = true;
		ev_add(ev, evlen, "swap use +%.0f MiB", (now->swap_used - ref->swap_used) / 1048576.0);
	}
	if (!isnan(ref->page_cache) && !isnan(now->page_cache) && now->page_cache < 0.5 * ref->page_cache &&
	    ref->page_cache - now->page_cache >= 1024.0 * 1024 * 1024) {
		mem = true;
		ev_add(ev, evlen, "page cache fell from %.1f to %.1f GiB", ref->page_cache / 1073741824.0,
		       now->page_cache / 1073741824.0);
	}
	if (mem)
		return SP_AC_MEMORY;
	if (a->competing_since_ref || now->process_appeared) {
		ev_add(ev, evlen, "a memory-heavy process appeared");
		return SP_AC_COMPETING;
	}
	if (!isnan(now->psi_cpu_some) && now->psi_cpu_some >= SP_ATTR_PSI_CPU &&
	    (isnan(ref->psi_cpu_some) || now->psi_cpu_some >= ref->psi_cpu_some + 10)) {
		ev_add(ev, evlen, "PSI cpu some %.1f%%", now->psi_cpu_some);
		return SP_AC_CPU;
	}
	if (!isnan(now->psi_io_some) && now->psi_io_some >= SP_ATTR_PSI_IO) {
		ev_add(ev, evlen, "PSI io some %.1f%%", now->psi_io_some);
		return SP_AC_IO;
	}
	/* nothing new: reasons that were already on still say something */
	if (rnow & THERMAL_BITS) {
		ev_add(ev, evlen, "%s on (already before the drop)", first_reason(rnow & THERMAL_BITS));
		return SP_AC_THERMAL;
	}
	if (pl1_now || (rnow & POWER_BITS)) {
		ev_add(ev, evlen, pl1_now ? "PL1 at its cap (already before the drop)" : "%s on (already before the drop)",
		       first_reason(rnow & POWER_BITS));
		return SP_AC_POWER_CAP;
	}
	ev_add(ev, evlen, "no thermal, power, memory, CPU or I/O evidence in the window");
	return SP_AC_UNKNOWN;
}

/* ---- the episode over its whole length ------------------------------------------- */

static bool pl1_at_cap(const struct sp_attr_obs *o)
{
	return !isnan(o->pl1_w) && o->pl1_cap_w > 0 && o->pl1_w >= SP_ATTR_PL1_AT_CAP * o->pl1_cap_w;
}

#define CBIT(c) (1u << (c))

unsigned sp_attr_sample_causes(const struct sp_attr *a, const struct sp_attr_obs *prev, const struct sp_attr_obs *o)
{
	const struct sp_attr_obs *base = &a->base_obs;
	uint64_t r = o->reasons_ok ? o->reasons : 0;
	uint64_t rb = a->have_baseline && base->reasons_ok ? base->reasons : 0;
	unsigned fresh = 0, old = 0;
	double dt = prev && o->t > prev->t ? o->t - prev->t : 1;
	/* thermal: a thermal reason, thermal violation time growing, a hot SoC */
	if (r & THERMAL_BITS & ~rb)
		fresh |= CBIT(SP_AC_THERMAL);
	else if (r & THERMAL_BITS)
		old |= CBIT(SP_AC_THERMAL);
	if (prev && grew(prev->viol_thermal_s, o->viol_thermal_s, 0.05 * dt))
		fresh |= CBIT(SP_AC_THERMAL);
	if (!isnan(o->soc_temp_c) && o->soc_temp_c >= SP_ATTR_SOC_HOT_C)
		fresh |= CBIT(SP_AC_THERMAL);
	/* power: a power reason, PL1 at its cap, or (no reason saying anything)
	 * the sustained limit's signature: the die warming at flat power */
	if (r & POWER_BITS & ~rb)
		fresh |= CBIT(SP_AC_POWER_CAP);
	else if (r & POWER_BITS)
		old |= CBIT(SP_AC_POWER_CAP);
	if (pl1_at_cap(o)) {
		if (a->have_baseline && pl1_at_cap(base))
			old |= CBIT(SP_AC_POWER_CAP);
		else
			fresh |= CBIT(SP_AC_POWER_CAP);
	}
	const struct sp_attr_episode *e = &a->ep;
	if (!(r & (THERMAL_BITS | POWER_BITS)) && !isnan(o->gpu_temp_c) && !isnan(e->temp0) && !isnan(o->gpu_power_w) &&
	    !isnan(e->pow0) && o->gpu_temp_c - e->temp0 >= 3 && fabs(o->gpu_power_w - e->pow0) <= 0.05 * e->pow0)
		fresh |= CBIT(SP_AC_POWER_CAP);
	/* memory, CPU, I/O: PSI at this sample */
	if ((!isnan(o->psi_mem_some) && o->psi_mem_some >= SP_ATTR_PSI_MEM) ||
	    (!isnan(o->psi_mem_full) && o->psi_mem_full >= SP_ATTR_PSI_MEM / 2))
		fresh |= CBIT(SP_AC_MEMORY);
	if (grew(e->swap0, o->swap_used, 256.0 * 1024 * 1024))
		fresh |= CBIT(SP_AC_MEMORY);
	if (!isnan(e->cache0) && !isnan(o->page_cache) && o->page_cache < 0.5 * e->cache0 &&
	    e->cache0 - o->page_cache >= 1024.0 * 1024 * 1024)
		fresh |= CBIT(SP_AC_MEMORY); /* the job's cache stays evicted */
	if (e->competing || o->process_appeared)
		fresh |= CBIT(SP_AC_COMPETING);
	if (!isnan(o->psi_cpu_some) && o->psi_cpu_some >= SP_ATTR_PSI_CPU)
		fresh |= CBIT(SP_AC_CPU);
	if (!isnan(o->psi_io_some) && o->psi_io_some >= SP_ATTR_PSI_IO)
		fresh |= CBIT(SP_AC_IO);
	/* both reasons on: a thermal slowdown clamps the clocks below the power
	 * cap, so the interval is thermal's (PL1 at its cap still counts) */
	if ((fresh & CBIT(SP_AC_THERMAL)) && (r & THERMAL_BITS) && (r & POWER_BITS) && !pl1_at_cap(o))
		fresh &= ~CBIT(SP_AC_POWER_CAP);
	return fresh ? fresh : old;
}

/* the order causes win a tie in: the strongest evidence first */
static const enum sp_cause tie_order[] = { SP_AC_THERMAL, SP_AC_POWER_CAP, SP_AC_MEMORY, SP_AC_COMPETING,
					   SP_AC_CPU, SP_AC_IO };
#define NTIE (sizeof tie_order / sizeof tie_order[0])

static double psi_avg(const struct sp_attr_episode *e, int k)
{
	return e->psi_n[k] ? e->psi_sum[k] / e->psi_n[k] : NAN;
}

/* The evidence words for the dominant cause, over the whole episode. */
static void episode_evidence(struct sp_attr *a, enum sp_cause c)
{
	const struct sp_attr_episode *e = &a->ep;
	char *ev = a->evidence;
	size_t n = sizeof a->evidence;
	ev[0] = 0;
	ev_add(ev, n, "%s %.0f%% of %.1fs", sp_cause_name(c), 100.0 * e->sec[c] / e->total_s, e->total_s);
	if (c == SP_AC_THERMAL || c == SP_AC_POWER_CAP) {
		uint64_t bits = c == SP_AC_THERMAL ? THERMAL_BITS : POWER_BITS;
		int best = -1;
		for (int b = 0; b < 9; b++)
			if ((bits >> b & 1) && e->bit_s[b] > 0 && (best < 0 || e->bit_s[b] > e->bit_s[best]))
				best = b;
		if (best >= 0)
			ev_add(ev, n, "%s on %.1fs", sp_reason_name(best), e->bit_s[best]);
	}
	if (c == SP_AC_THERMAL && e->viol_thermal_s > 0)
		ev_add(ev, n, "thermal violation time +%.1fs", e->viol_thermal_s);
	if (c == SP_AC_POWER_CAP && e->pl1_s > 0)
		ev_add(ev, n, "PL1 at its cap %.1fs", e->pl1_s);
	if (c == SP_AC_POWER_CAP && e->plateau_s > 0)
		ev_add(ev, n, "GPU warming at flat power %.1fs", e->plateau_s);
	if (c == SP_AC_MEMORY && !isnan(psi_avg(e, 0)))
		ev_add(ev, n, "PSI memory some %.1f%% over the episode", psi_avg(e, 0));
	if (c == SP_AC_CPU)
		ev_add(ev, n, "PSI cpu some %.1f%% over the episode", psi_avg(e, 1));
	if (c == SP_AC_IO)
		ev_add(ev, n, "PSI io some %.1f%% over the episode", psi_avg(e, 2));
	if (c == SP_AC_COMPETING)
		ev_add(ev, n, "a memory-heavy process appeared");
}

/* Name the dominant cause and the others' shares; whether it changed. */
static bool episode_judge(struct sp_attr *a)
{
	struct sp_attr_episode *e = &a->ep;
	enum sp_cause best = SP_AC_UNKNOWN;
	double bs = 0;
	for (size_t i = 0; i < NTIE; i++)
		if (e->sec[tie_order[i]] > bs + 1e-9) {
			bs = e->sec[tie_order[i]];
			best = tie_order[i];
		}
	/* unknown when no evidence covers even a fifth of the episode */
	if (!(e->total_s > 0) || bs < 0.2 * e->total_s)
		best = SP_AC_UNKNOWN;
	a->shares[0] = 0;
	for (size_t i = 0; i < NTIE; i++) {
		enum sp_cause c = tie_order[i];
		if (c == best || !(e->sec[c] > 0) || !(e->total_s > 0))
			continue;
		size_t l = strlen(a->shares);
		snprintf(a->shares + l, sizeof a->shares - l, "%s%s %.0f%%", l ? ", " : "", sp_cause_name(c),
			 100.0 * e->sec[c] / e->total_s);
	}
	a->share_pct = best != SP_AC_UNKNOWN ? (int)lround(100.0 * bs / e->total_s) : 0;
	bool changed = best != a->cause;
	if (changed || best != SP_AC_UNKNOWN) {
		a->cause = best;
		if (best != SP_AC_UNKNOWN)
			episode_evidence(a, best);
		else
			snprintf(a->evidence, sizeof a->evidence, "no evidence covers a fifth of the %.1fs episode",
				 e->total_s);
	}
	return changed;
}

/* The episode opens: the detection window's judgement seeds it. */
static void episode_open(struct sp_attr *a, const struct sp_attr_obs *o)
{
	struct sp_attr_episode *e = &a->ep;
	memset(e, 0, sizeof *e);
	e->temp0 = a->ref.gpu_temp_c;
	e->pow0 = a->ref.gpu_power_w;
	e->competing = a->competing_since_ref;
	e->swap0 = a->ref.swap_used;
	e->cache0 = a->ref.page_cache;
	double span = o->t - a->ref.t;
	if (!(span > 0))
		span = 0;
	e->total_s = span;
	if (a->cause != SP_AC_UNKNOWN)
		e->sec[a->cause] = span;
	e->last_t = o->t;
	e->prev = *o;
	a->shares[0] = 0;
	a->share_pct = a->cause != SP_AC_UNKNOWN ? 100 : 0;
}

/* One more sample of an open episode: the interval since the previous one
 * counts for the evidence present now. Returns whether the cause changed. */
static bool episode_add(struct sp_attr *a, const struct sp_attr_obs *o)
{
	struct sp_attr_episode *e = &a->ep;
	double dt = o->t - e->last_t;
	if (o->process_appeared)
		e->competing = true;
	if (!(dt > 0))
		return false;
	unsigned set = sp_attr_sample_causes(a, &e->prev, o);
	for (int c = 0; c < SP_CAUSE_N; c++)
		if (set >> c & 1)
			e->sec[c] += dt;
	uint64_t r = o->reasons_ok ? o->reasons : 0;
	for (int b = 0; b < 9; b++)
		if (r >> b & 1)
			e->bit_s[b] += dt;
	if (pl1_at_cap(o))
		e->pl1_s += dt;
	if (!(r & (THERMAL_BITS | POWER_BITS)) && (set & CBIT(SP_AC_POWER_CAP)) && !pl1_at_cap(o))
		e->plateau_s += dt;
	if (grew(e->prev.viol_thermal_s, o->viol_thermal_s, 0))
		e->viol_thermal_s += o->viol_thermal_s - e->prev.viol_thermal_s;
	const double psi[3] = { o->psi_mem_some, o->psi_cpu_some, o->psi_io_some };
	for (int k = 0; k < 3; k++)
		if (!isnan(psi[k])) {
			e->psi_sum[k] += psi[k];
			e->psi_n[k]++;
		}
	e->total_s += dt;
	e->last_t = o->t;
	e->prev = *o;
	return episode_judge(a);
}

void sp_attr_start_detail(const struct sp_attr *a, char *d, size_t n)
{
	snprintf(d, n, "cause=%s drop_pct=%.1f baseline=%.4g rate=%.4g evidence=%s", sp_cause_name(a->cause),
		 a->drop_pct, a->baseline, a->last_rate, a->evidence);
}

void sp_attr_detail(const struct sp_attr *a, char *d, size_t n)
{
	char sh[96];
	size_t k = 0;
	/* "power_cap 9%, thermal 2%" -> "power_cap:9,thermal:2" */
	for (const char *p = a->shares; *p && k + 1 < sizeof sh; p++) {
		if (*p == '%')
			continue;
		if (*p == ' ' && p > a->shares && p[-1] == ',')
			continue;
		sh[k++] = *p == ' ' ? ':' : *p;
	}
	sh[k] = 0;
	snprintf(d, n, "cause=%s share_pct=%d shares=%s rate=%.4g", sp_cause_name(a->cause), a->share_pct,
		 k ? sh : "-", a->last_rate);
}

/* A healthy sample: the window the evidence is judged over starts a few
 * healthy samples back, so a reason that turned on just before the rate fell
 * still counts as new. */
static void window_reset(struct sp_attr *a, const struct sp_attr_obs *o)
{
	const int cap = SP_ATTR_CONFIRM + 1;
	memmove(a->hist + 1, a->hist, sizeof a->hist[0] * (size_t)(cap - 1));
	a->hist[0] = *o;
	if (a->nhist < cap)
		a->nhist++;
	a->ref = a->hist[a->nhist - 1];
	a->have_ref = true;
	a->competing_since_ref = false;
	a->temp_min_since_ref = INFINITY;
	for (int i = 0; i < a->nhist; i++) {
		if (a->hist[i].process_appeared)
			a->competing_since_ref = true;
		if (a->hist[i].gpu_temp_c < a->temp_min_since_ref)
			a->temp_min_since_ref = a->hist[i].gpu_temp_c;
	}
}

static void window_add(struct sp_attr *a, const struct sp_attr_obs *o)
{
	if (o->process_appeared)
		a->competing_since_ref = true;
	if (!isnan(o->gpu_temp_c) && o->gpu_temp_c < a->temp_min_since_ref)
		a->temp_min_since_ref = o->gpu_temp_c;
}

enum sp_attr_event sp_attr_feed(struct sp_attr *a, const struct sp_attr_obs *o)
{
	bool rate_ok = !isnan(o->rate) && o->rate >= 0;
	if (!isnan(o->gpu_power_w)) {
		memmove(a->pow_ring + 1, a->pow_ring, sizeof(double) * (SP_ATTR_PLATEAU_N - 1));
		a->pow_ring[0] = o->gpu_power_w;
		if (a->npow < SP_ATTR_PLATEAU_N)
			a->npow++;
	} else {
		a->npow = 0;
	}
	if (a->have_baseline && !isnan(o->gpu_temp_c) && !(o->gpu_temp_c >= a->temp_min_since_base))
		a->temp_min_since_base = o->gpu_temp_c;
	if (!a->have_ref)
		window_reset(a, o);
	else
		window_add(a, o);
	if (!a->have_baseline) {
		if (!rate_ok || !o->rate_fresh)
			return SP_ATTR_NONE;
		if (isnan(a->first_t) || strcmp(a->unit, o->unit) != 0) {
			/* the first progress line (or a new kind of bar): start over */
			a->first_t = o->t;
			a->nbase = 0;
			snprintf(a->unit, sizeof a->unit, "%s", o->unit);
		}
		if (a->nbase < SP_ATTR_MAX_BASE)
			a->base[a->nbase++] = o->rate;
		if (o->t - a->first_t >= a->window_s && a->nbase > 0) {
			double tmp[SP_ATTR_MAX_BASE];
			memcpy(tmp, a->base, sizeof(double) * (size_t)a->nbase);
			sp_sort(tmp, (size_t)a->nbase, sizeof tmp[0], cmp_d); /* qsort may malloc */
			a->baseline = tmp[a->nbase / 2];
			a->have_baseline = a->baseline > 0;
			a->temp_min_since_base = o->gpu_temp_c;
			a->power_at_base = o->gpu_power_w;
			a->base_obs = *o;
			window_reset(a, o);
		}
		return SP_ATTR_NONE;
	}
	if (!rate_ok || strcmp(a->unit, o->unit) != 0)
		return SP_ATTR_NONE;
	a->last_rate = o->rate;
	double thr = a->baseline * (1.0 - a->slowdown_pct / 100.0);
	if (o->rate < thr) {
		a->below++;
		a->above = 0;
	} else {
		a->above++;
		a->below = 0;
		if (!a->in_episode)
			window_reset(a, o);
	}
	if (!a->in_episode && a->below >= SP_ATTR_CONFIRM) {
		a->in_episode = true;
		a->episode_start_t = o->t;
		a->drop_pct = (1.0 - o->rate / a->baseline) * 100.0;
		a->cause = sp_attr_judge(a, &a->ref, o, a->evidence, sizeof a->evidence);
		episode_open(a, o);
		return SP_ATTR_EPISODE_START;
	}
	if (a->in_episode && a->above >= SP_ATTR_CONFIRM) {
		a->in_episode = false;
		window_reset(a, o);
		return SP_ATTR_EPISODE_END;
	}
	/* while it lasts (the samples back above the baseline that end it too)
	 * the episode is judged again over its whole length */
	if (a->in_episode && episode_add(a, o))
		return SP_ATTR_EPISODE_UPDATE;
	return SP_ATTR_NONE;
}
