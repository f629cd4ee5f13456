// SPDX-License-Identifier: MIT
/* The load guard's decisions and the readiness matcher. See loadguard.h. */
#include "watch/loadguard.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *sp_lg_end_name(enum sp_lg_end e)
{
	switch (e) {
	case SP_LG_READY: return "ready";
	case SP_LG_DEADLINE: return "deadline";
	case SP_LG_STOP_FILE: return "stop_file";
	case SP_LG_JOB_ENDED: return "job_ended";
	default: return "running";
	}
}

void sp_lguard_init(struct sp_lguard *g, const struct sp_lg_cfg *c, double t0)
{
	memset(g, 0, sizeof *g);
	g->cfg = *c;
	g->t0 = t0;
	g->last_act = -INFINITY;
}

static bool under(const struct sp_lguard *g, double free_b, double contig_b)
{
	return (g->cfg.floor > 0 && isfinite(free_b) && free_b < (double)g->cfg.floor) ||
	       (g->cfg.contig_floor > 0 && isfinite(contig_b) && contig_b < (double)g->cfg.contig_floor);
}

enum sp_lg_act sp_lguard_step(struct sp_lguard *g, double t, double free_b, double contig_b, bool ready,
			      bool stop_file, bool job_alive)
{
	bool floors = under(g, free_b, contig_b);
	bool now_under = floors || g->driver_oom;
	g->by_driver = !floors && g->driver_oom;
	if (g->end != SP_LG_RUNNING) {
		/* stopped: its own drops would evict pages the ranks still map; count only */
		if (now_under && !g->below)
			g->below_after++;
		g->below = now_under;
		return SP_LG_NONE;
	}
	enum sp_lg_end e = ready ? SP_LG_READY
			   : stop_file ? SP_LG_STOP_FILE
			   : !job_alive ? SP_LG_JOB_ENDED
			   : t - g->t0 >= g->cfg.deadline_s ? SP_LG_DEADLINE
							    : SP_LG_RUNNING;
	g->below = now_under;
	if (e != SP_LG_RUNNING) {
		g->end = e;
		return SP_LG_STOP;
	}
	if (now_under && t - g->last_act >= SP_LG_COOLDOWN_S)
		return SP_LG_ACT;
	return SP_LG_NONE;
}

void sp_lguard_acted(struct sp_lguard *g, double t)
{
	g->last_act = t;
	g->actions++;
}

/* ---- readiness ---------------------------------------------------------------- */

static const struct {
	const char *text, *who;
} known[] = {
	{ "Application startup complete", "vLLM" },
	{ "The server is fired up and ready to roll", "SGLang" },
	{ "server is listening on", "llama.cpp server" },
	{ "Listening on", "Ollama" },
};

void sp_ready_init(struct sp_ready *r, const regex_t *re)
{
	memset(r, 0, sizeof *r);
	r->re = re;
}

static void line_end(struct sp_ready *r)
{
	if (r->matched || r->overlong) {
		r->len = 0;
		r->overlong = false;
		return;
	}
	r->line[r->len] = 0;
	if (r->re) {
		if (regexec(r->re, r->line, 0, NULL, 0) == 0) {
			r->matched = true;
			snprintf(r->what, sizeof r->what, "--ready");
		}
	} else {
		for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
			if (strstr(r->line, known[i].text)) {
				r->matched = true;
				snprintf(r->what, sizeof r->what, "%s", known[i].who);
				break;
			}
	}
	r->len = 0;
}

bool sp_ready_feed(struct sp_ready *r, const char *buf, size_t n)
{
	for (size_t i = 0; i < n && !r->matched; i++) {
		char c = buf[i];
		if (c == '\n' || c == '\r') {
			line_end(r);
			continue;
		}
		if (c == 0)
			c = ' ';
		if (r->len + 1 >= sizeof r->line) {
			if (!r->overlong) {
				line_end(r); /* a line longer than the buffer: its start is judged, the rest skipped */
				r->overlong = true;
			}
			continue;
		}
		if (!r->overlong)
			r->line[r->len++] = c;
	}
	return r->matched;
}
