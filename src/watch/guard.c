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
}

enum sp_guard_act sp_guard_step(struct sp_guard *g, double t, double free_bytes, double psi_full, bool job_alive)
{
	if (!isnan(free_bytes) && free_bytes < g->lowest_free)
		g->lowest_free = free_bytes;
	bool low = g->cfg.min_free > 0 && !isnan(free_bytes) && free_bytes < (double)g->cfg.min_free;
	bool psi = g->cfg.psi_full_pct > 0 && !isnan(psi_full) && psi_full > g->cfg.psi_full_pct;
	bool bad = low || psi;
	switch (g->state) {
	case SP_GUARD_OK:
		if (!bad)
			return SP_GA_NONE;
		g->state = SP_GUARD_WARNED;
		g->bad_since = t;
		g->by_psi = !low;
		return SP_GA_WARN;
	case SP_GUARD_WARNED: {
		if (!bad) {
			g->state = SP_GUARD_OK;
			return SP_GA_RECOVERED;
		}
		if (low)
			g->by_psi = false;
		double wait = g->by_psi ? SP_GUARD_PSI_CONFIRM_S : SP_GUARD_CONFIRM_S;
		if (t - g->bad_since < wait)
			return SP_GA_NONE;
		if (g->cfg.can_flush && !g->flushed) {
			g->flushed = true;
			g->bad_since = t; /* give the flush one more confirmation window */
			return SP_GA_FLUSH;
		}
		if (!job_alive)
			return SP_GA_NONE;
		g->state = SP_GUARD_TERMED;
		g->term_t = t;
		return SP_GA_TERM;
	}
	case SP_GUARD_TERMED:
		if (job_alive && t - g->term_t >= g->cfg.grace_s) {
			g->state = SP_GUARD_KILLED;
			return SP_GA_KILL;
		}
		return SP_GA_NONE;
	case SP_GUARD_KILLED:
		return SP_GA_NONE;
	}
	return SP_GA_NONE;
}

int sp_guard_sleep_ms(const struct sp_guard *g, double free_bytes)
{
	if (g->state != SP_GUARD_OK)
		return 20; /* in trouble: look often */
	if (g->cfg.min_free == 0 || isnan(free_bytes))
		return SP_GUARD_MAX_SLEEP_MS;
	double head = free_bytes - (double)g->cfg.min_free;
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
