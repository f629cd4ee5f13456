// SPDX-License-Identifier: MIT
/* The pool guard's decision logic. See guard.h. */
#include "watch/guard.h"

#include <math.h>
#include <string.h>

bool sp_guard_enabled(const struct sp_guard_cfg *c)
{
	return c->min_free > 0 || c->psi_full_pct > 0;
}

void sp_guard_init(struct sp_guard *g, const struct sp_guard_cfg *c)
{
	memset(g, 0, sizeof *g);
	g->cfg = *c;
	g->lowest_free = INFINITY;
	g->freed_t = g->short_since = g->short_pool = g->psi_since = NAN;
}

double sp_guard_confirm_s(const struct sp_guard *g)
{
	return g->cfg.confirm_s > 0 ? g->cfg.confirm_s : SP_GUARD_DEFAULT_CONFIRM_S;
}

static void episode_reset(struct sp_guard *g)
{
	g->freed_t = g->short_since = g->short_pool = g->psi_since = NAN;
	g->held = false;
	g->futile = false;
	g->short_now = false;
}

/* Stop now? The pool short (or PSI) for the window, or still falling. */
static bool confirmed(struct sp_guard *g, double t, bool psi, bool shrt, double pool)
{
	if (shrt) {
		if (isnan(g->short_since)) {
			g->short_since = t;
			g->short_pool = pool;
		}
		if (t - g->short_since >= sp_guard_confirm_s(g))
			return true;
		if (isfinite(pool) && g->short_pool - pool >= SP_GUARD_FALL)
			return true; /* still falling: an allocator, not a dip */
	} else {
		g->short_since = g->short_pool = NAN;
	}
	if (!psi) {
		g->psi_since = NAN;
		return false;
	}
	if (isnan(g->psi_since))
		g->psi_since = t;
	return t - g->psi_since >= SP_GUARD_PSI_CONFIRM_S;
}

enum sp_guard_act sp_guard_step(struct sp_guard *g, double t, const struct sp_guard_look *l)
{
	double fr = l->free_bytes;
	double rec = isfinite(l->reclaimable) && l->reclaimable > 0 ? l->reclaimable : 0;
	if (!isnan(fr) && fr < g->lowest_free)
		g->lowest_free = fr;
	const double floor_b = (double)g->cfg.min_free;
	bool low = g->cfg.min_free > 0 && !isnan(fr) && fr < floor_b;
	bool psi = g->cfg.psi_full_pct > 0 && !isnan(l->psi_full) && l->psi_full > g->cfg.psi_full_pct;
	double pool = isnan(fr) ? NAN : fr + rec;
	/* short: even all that is reclaimable would not lift the pool over the floor */
	bool shrt = low && pool < floor_b;
	g->short_now = shrt;
	switch (g->state) {
	case SP_GUARD_OK:
		if (!low && !psi)
			return SP_GA_NONE;
		g->state = SP_GUARD_WARNED;
		g->bad_since = t;
		g->by_psi = !low;
		episode_reset(g);
		g->short_now = shrt;
		if (psi)
			g->psi_since = t;
		if (shrt) {
			g->short_since = t;
			g->short_pool = pool;
		}
		return SP_GA_WARN;
	case SP_GUARD_WARNED: {
		if (!low && !psi) {
			g->state = SP_GUARD_OK;
			episode_reset(g);
			return SP_GA_RECOVERED;
		}
		if (low)
			g->by_psi = false;
		/* 1. what costs nothing, at most once per window */
		bool can_free = g->cfg.can_flush || g->cfg.can_evict;
		/* again only after one that gave something back: a futile eviction
		 * repeated every window would only throw out the job's own hot files */
		if (low && can_free && !g->futile && rec >= SP_GUARD_TAKE_MIN &&
		    (isnan(g->freed_t) || t - g->freed_t >= sp_guard_confirm_s(g))) {
			g->freed_t = t;
			g->frees++;
			return SP_GA_FREE;
		}
		/* 2. stop only when nothing reclaimable is left to take, or the box stalls */
		if (confirmed(g, t, psi, shrt, pool)) {
			if (!l->job_alive)
				return SP_GA_NONE;
			g->state = SP_GUARD_TERMED;
			g->term_t = t;
			return SP_GA_TERM;
		}
		/* 3. under the floor, but the cache covers it: the kernel reclaims it for the job */
		if (low && !shrt && !g->held) {
			g->held = true;
			return SP_GA_HOLD;
		}
		return SP_GA_NONE;
	}
	case SP_GUARD_TERMED:
		if (l->job_alive && t - g->term_t >= g->cfg.grace_s) {
			g->state = SP_GUARD_KILLED;
			return SP_GA_KILL;
		}
		return SP_GA_NONE;
	case SP_GUARD_KILLED:
		return SP_GA_NONE;
	}
	return SP_GA_NONE;
}

void sp_guard_freed(struct sp_guard *g, double gained)
{
	if (isfinite(gained) && gained > 0)
		g->freed_bytes += gained;
	if (!(isfinite(gained) && gained >= SP_GUARD_TAKE_MIN))
		g->futile = true;
}

int sp_guard_sleep_ms(const struct sp_guard *g, double pool_bytes)
{
	if (g->state != SP_GUARD_OK)
		return 20; /* in trouble: look often */
	if (g->cfg.min_free == 0 || isnan(pool_bytes))
		return SP_GUARD_MAX_SLEEP_MS;
	double head = pool_bytes - (double)g->cfg.min_free;
	if (head <= 0)
		return SP_GUARD_MIN_SLEEP_MS;
	/* half the time the fastest allocator needs to eat the headroom */
	double ms = head / SP_GUARD_FAST_RATE * 1000.0 / 2.0;
	if (ms < SP_GUARD_MIN_SLEEP_MS)
		return SP_GUARD_MIN_SLEEP_MS;
	if (ms > SP_GUARD_MAX_SLEEP_MS)
		return SP_GUARD_MAX_SLEEP_MS;
	return (int)ms;
}
