// SPDX-License-Identifier: MIT
#include "watch/summary.h"
#include "probe/poolmodel.h"
#include "util/text.h"
#include "util/json.h"
#include "util/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void sp_summary_init(struct sp_summary *s)
{
	memset(s, 0, sizeof *s);
	s->t_first = s->t_last = s->prev_t = NAN;
	s->mem_total = s->peak_pool_used = s->peak_pool_used_t = s->peak_page_cache = NAN;
	s->lowest_budget = s->lowest_budget_t = NAN;
	s->peak_gpu_temp = s->peak_soc_temp = s->peak_power = s->peak_sys_power = NAN;
	s->gpu_gone_since = s->gpu_gone_first = NAN;
	s->throughput_first = s->throughput_last = NAN;
	s->peak_job_rss = s->peak_job_rss_t = NAN;
	s->peak_job_majflt = s->lowest_contig = s->lowest_contig_t = NAN;
	s->exit_code = -1;
}

static void max_at(double *peak, double *peak_t, double v, double t)
{
	if (!isfinite(v))
		return;
	if (isnan(*peak) || v > *peak) {
		*peak = v;
		if (peak_t)
			*peak_t = t;
	}
}

static void add_sample(struct sp_summary *s, const struct sp_logrow *r)
{
	s->samples++;
	if (isfinite(r->mem_total))
		s->mem_total = r->mem_total;
	/* the pool model's 'used' (top's, status's): page cache excluded */
	max_at(&s->peak_pool_used, &s->peak_pool_used_t, sp_pool_used_of(r->mem_total, r->mem_free, r->page_cache),
	       r->unix_time);
	max_at(&s->peak_page_cache, NULL, r->page_cache, 0);
	if (isfinite(r->budget_now) && (isnan(s->lowest_budget) || r->budget_now < s->lowest_budget)) {
		s->lowest_budget = r->budget_now;
		s->lowest_budget_t = r->unix_time;
	}
	max_at(&s->peak_job_majflt, NULL, r->job_majflt, 0);
	max_at(&s->peak_job_rss, &s->peak_job_rss_t, r->job_rss_bytes, r->unix_time);
	if (isfinite(r->free_2mib) && (isnan(s->lowest_contig) || r->free_2mib < s->lowest_contig)) {
		s->lowest_contig = r->free_2mib;
		s->lowest_contig_t = r->unix_time;
	}
	max_at(&s->peak_gpu_temp, NULL, r->gpu_temp_c, 0);
	max_at(&s->peak_soc_temp, NULL, r->soc_temp_c, 0);
	/* power: each sensor is its own series; the system's (spbm) never
	 * fills a GPU sample the driver did not answer */
	if (isfinite(r->gpu_power_w)) {
		s->power_sum += r->gpu_power_w;
		s->power_n++;
		max_at(&s->peak_power, NULL, r->gpu_power_w, 0);
	}
	if (isfinite(r->sys_power_w)) {
		s->sys_power_sum += r->sys_power_w;
		s->sys_power_n++;
		max_at(&s->peak_sys_power, NULL, r->sys_power_w, 0);
	}
	/* time under each reason: the interval since the previous sample counts
	 * for the reasons active at its start */
	if (s->prev_reasons_ok && isfinite(s->prev_t) && r->unix_time > s->prev_t) {
		double dt = r->unix_time - s->prev_t;
		for (int b = 0; b < SP_SUM_REASONS; b++)
			if (s->prev_reasons >> b & 1)
				s->reason_seconds[b] += dt;
	}
	s->prev_t = r->unix_time;
	s->prev_reasons_ok = r->gpu_reasons_ok;
	s->prev_reasons = r->gpu_reasons;
	if (isfinite(r->throughput)) {
		if (isnan(s->throughput_first))
			s->throughput_first = r->throughput;
		s->throughput_last = r->throughput;
		sp_text_copy(s->throughput_unit, sizeof s->throughput_unit, r->throughput_unit);
	}
}

static void add_event(struct sp_summary *s, const struct sp_logrow *r)
{
	s->events++;
	char v[64];
	if (strcmp(r->event, SP_EV_EPISODE_START) == 0) {
		if (s->n_episodes >= SP_SUM_MAX_EPISODES) {
			s->episodes_dropped++;
			return;
		}
		struct sp_episode *e = &s->episodes[s->n_episodes++];
		e->start = r->unix_time;
		e->end = NAN;
		e->drop_pct = NAN;
		e->share_pct = -1;
		e->shares[0] = 0;
		if (!sp_detail_get(r->detail, "evidence", e->evidence, sizeof e->evidence))
			e->evidence[0] = 0;
		if (!sp_detail_get(r->detail, "cause", e->cause, sizeof e->cause))
			snprintf(e->cause, sizeof e->cause, "unknown");
		if (sp_detail_get(r->detail, "drop_pct", v, sizeof v))
			e->drop_pct = strtod(v, NULL);
	} else if (strcmp(r->event, SP_EV_EPISODE_END) == 0 || strcmp(r->event, SP_EV_EPISODE_UPDATE) == 0) {
		/* the episode judged over its length: its cause is the latest one said */
		bool end = strcmp(r->event, SP_EV_EPISODE_END) == 0;
		for (int i = s->n_episodes - 1; i >= 0; i--) {
			struct sp_episode *e = &s->episodes[i];
			if (isnan(e->end)) {
				if (end)
					e->end = r->unix_time;
				if (sp_detail_get(r->detail, "share_pct", v, sizeof v)) {
					sp_detail_get(r->detail, "cause", e->cause, sizeof e->cause);
					e->share_pct = (int)strtol(v, NULL, 10);
					if (!sp_detail_get(r->detail, "shares", e->shares, sizeof e->shares) ||
					    strcmp(e->shares, "-") == 0)
						e->shares[0] = 0;
				}
				break;
			}
		}
	} else if (strcmp(r->event, SP_EV_GPU_LOST) == 0) {
		if (isnan(s->gpu_gone_since)) {
			s->gpu_gone_since = r->unix_time;
			if (s->gpu_gone_n++ == 0) {
				s->gpu_gone_first = r->unix_time;
				snprintf(s->gpu_gone_reason, sizeof s->gpu_gone_reason, "%.23s",
					 r->detail[0] ? r->detail : "unknown");
			}
		}
	} else if (strcmp(r->event, SP_EV_GPU_BACK) == 0) {
		if (!isnan(s->gpu_gone_since)) {
			s->gpu_gone_s += r->unix_time - s->gpu_gone_since;
			s->gpu_gone_since = NAN;
		}
	} else if (strcmp(r->event, SP_EV_LOAD_GUARD) == 0) {
		s->load_guard_actions++;
	} else if (strcmp(r->event, SP_EV_LOAD_GUARD_END) == 0) {
		if (!sp_detail_get(r->detail, "reason", s->load_guard_end, sizeof s->load_guard_end))
			snprintf(s->load_guard_end, sizeof s->load_guard_end, "unknown");
	} else if (strncmp(r->event, "guard_", 6) == 0) {
		if (s->n_guard >= SP_SUM_MAX_GUARD) {
			s->guard_dropped++;
			return;
		}
		struct sp_guard_action *g = &s->guard[s->n_guard++];
		g->t = r->unix_time;
		snprintf(g->action, sizeof g->action, "%s", r->event + 6);
		snprintf(g->detail, sizeof g->detail, "%.95s", r->detail);
	} else if (strcmp(r->event, SP_EV_STOP) == 0) {
		/* watch: no exit code, but how the watch ended (pid_ended, signal,
		 * count, duration), as the log says */
		s->ended = true;
		if (!sp_detail_get(r->detail, "reason", s->ended_by, sizeof s->ended_by))
			snprintf(s->ended_by, sizeof s->ended_by, "stop");
		if (sp_detail_get(r->detail, "signal", v, sizeof v))
			s->signal = (int)strtol(v, NULL, 10);
	} else if (strcmp(r->event, SP_EV_EXIT) == 0) {
		s->ended = true;
		if (!sp_detail_get(r->detail, "ended_by", s->ended_by, sizeof s->ended_by))
			snprintf(s->ended_by, sizeof s->ended_by, "exit");
		if (sp_detail_get(r->detail, "exit_code", v, sizeof v))
			s->exit_code = (int)strtol(v, NULL, 10);
		if (sp_detail_get(r->detail, "signal", v, sizeof v))
			s->signal = (int)strtol(v, NULL, 10);
	}
}

void sp_summary_add(struct sp_summary *s, const struct sp_logrow *r)
{
	if (!isfinite(r->unix_time))
		return;
	if (isnan(s->t_first))
		s->t_first = r->unix_time;
	s->t_last = r->unix_time;
	if (r->type == SP_ROW_EVENT)
		add_event(s, r);
	else
		add_sample(s, r);
}

void sp_summary_finish(struct sp_summary *s)
{
	for (int i = 0; i < s->n_episodes; i++)
		if (isnan(s->episodes[i].end))
			s->episodes[i].end = s->t_last;
	if (!isnan(s->gpu_gone_since) && isfinite(s->t_last)) {
		s->gpu_gone_s += s->t_last - s->gpu_gone_since;
		s->gpu_gone_since = NAN;
		s->gpu_gone_open = true;
	}
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(round(v * 1000.0) / 1000.0) : json_null();
}

static json_t *int_or_null(double v)
{
	return isfinite(v) ? json_integer((json_int_t)v) : json_null();
}

json_t *sp_summary_json(const struct sp_summary *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "start_unix", num_or_null(s->t_first));
	json_object_set_new(o, "end_unix", num_or_null(s->t_last));
	json_object_set_new(o, "duration_seconds",
			    num_or_null(isfinite(s->t_first) ? s->t_last - s->t_first : NAN));
	json_object_set_new(o, "samples", json_integer(s->samples));
	json_object_set_new(o, "events", json_integer(s->events));
	json_object_set_new(o, "ended_by", s->ended ? sp_json_text(s->ended_by) : json_null());
	json_object_set_new(o, "exit_code", s->exit_code >= 0 ? json_integer(s->exit_code) : json_null());
	json_object_set_new(o, "signal", s->signal > 0 ? json_integer(s->signal) : json_null());
	json_object_set_new(o, "pool_total_bytes", int_or_null(s->mem_total));
	json_object_set_new(o, "peak_pool_used_bytes", int_or_null(s->peak_pool_used));
	json_object_set_new(o, "peak_page_cache_bytes", int_or_null(s->peak_page_cache));
	json_object_set_new(o, "lowest_budget_bytes", int_or_null(s->lowest_budget));
	json_object_set_new(o, "peak_gpu_temp_c", num_or_null(s->peak_gpu_temp));
	json_object_set_new(o, "peak_soc_temp_c", num_or_null(s->peak_soc_temp));
	json_object_set_new(o, "mean_power_w", num_or_null(s->power_n ? s->power_sum / (double)s->power_n : NAN));
	json_object_set_new(o, "peak_power_w", num_or_null(s->peak_power));
	json_object_set_new(o, "power_samples", json_integer(s->power_n));
	json_object_set_new(o, "mean_sys_power_w",
			    num_or_null(s->sys_power_n ? s->sys_power_sum / (double)s->sys_power_n : NAN));
	json_object_set_new(o, "peak_sys_power_w", num_or_null(s->peak_sys_power));
	json_t *gg = json_object();
	json_object_set_new(gg, "count", json_integer(s->gpu_gone_n));
	json_object_set_new(gg, "seconds", num_or_null(s->gpu_gone_n ? s->gpu_gone_s : 0));
	json_object_set_new(gg, "first_unix", num_or_null(s->gpu_gone_first));
	json_object_set_new(gg, "reason", s->gpu_gone_n ? sp_json_text(s->gpu_gone_reason) : json_null());
	json_object_set_new(gg, "back_by_end", s->gpu_gone_n ? json_boolean(!s->gpu_gone_open) : json_null());
	json_object_set_new(o, "gpu_unavailable", gg);
	json_t *rs = json_object();
	for (int b = 0; b < SP_SUM_REASONS; b++)
		if (s->reason_seconds[b] > 0)
			json_object_set_new(rs, sp_reason_name(b), num_or_null(s->reason_seconds[b]));
	json_object_set_new(o, "reason_seconds", rs);
	json_t *ep = json_array();
	for (int i = 0; i < s->n_episodes; i++) {
		const struct sp_episode *e = &s->episodes[i];
		json_t *x = json_object();
		json_object_set_new(x, "start", num_or_null(e->start));
		json_object_set_new(x, "end", num_or_null(e->end));
		json_object_set_new(x, "cause", sp_json_text(e->cause));
		json_object_set_new(x, "drop_pct", num_or_null(e->drop_pct));
		json_object_set_new(x, "evidence", e->evidence[0] ? sp_json_text(e->evidence) : json_null());
		json_object_set_new(x, "cause_share_pct", e->share_pct >= 0 ? json_integer(e->share_pct) : json_null());
		json_t *sh = json_object();
		char tmp[48];
		snprintf(tmp, sizeof tmp, "%s", e->shares);
		for (char *save = NULL, *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			char *colon = strchr(tok, ':');
			if (colon) {
				*colon = 0;
				json_object_set_new(sh, tok, json_integer(strtol(colon + 1, NULL, 10)));
			}
		}
		json_object_set_new(x, "other_causes_pct", sh);
		json_array_append_new(ep, x);
	}
	json_object_set_new(o, "episodes", ep);
	json_t *ga = json_array();
	for (int i = 0; i < s->n_guard; i++) {
		json_t *x = json_object();
		json_object_set_new(x, "time", num_or_null(s->guard[i].t));
		json_object_set_new(x, "action", sp_json_text(s->guard[i].action));
		json_object_set_new(x, "detail", sp_json_text(s->guard[i].detail));
		json_array_append_new(ga, x);
	}
	json_object_set_new(o, "guard_actions", ga);
	json_object_set_new(o, "peak_job_rss_bytes", int_or_null(s->peak_job_rss));
	json_object_set_new(o, "job_major_faults", int_or_null(s->peak_job_majflt));
	json_object_set_new(o, "lowest_free_2mib_bytes", int_or_null(s->lowest_contig));
	json_t *lg = json_object();
	json_object_set_new(lg, "actions", json_integer(s->load_guard_actions));
	json_object_set_new(lg, "ended_by", s->load_guard_end[0] ? sp_json_text(s->load_guard_end) : json_null());
	json_object_set_new(o, "load_guard", lg);
	json_object_set_new(o, "throughput_first", num_or_null(s->throughput_first));
	json_object_set_new(o, "throughput_last", num_or_null(s->throughput_last));
	json_object_set_new(o, "throughput_unit", s->throughput_unit[0] ? sp_json_text(s->throughput_unit) : json_null());
	json_object_set_new(o, "last_row_incomplete", json_boolean(s->last_row_incomplete));
	json_object_set_new(o, "rows_skipped", json_integer(s->rows_skipped));
	json_object_set_new(o, "log_rows_dropped", json_integer(s->rows_dropped));
	return o;
}

static const char *clock_of(char *buf, size_t n, double t)
{
	if (!isfinite(t)) {
		snprintf(buf, n, "?");
		return buf;
	}
	char iso[40];
	sp_iso_time(iso, sizeof iso, t);
	snprintf(buf, n, "%.8s", iso + 11); /* HH:MM:SS */
	return buf;
}

const char *sp_detail_human(char *buf, size_t n, const char *d)
{
	size_t o = 0;
#define PUT(...)                                                                 \
	do {                                                                     \
		int k_ = snprintf(buf + o, o < n ? n - o : 0, __VA_ARGS__);      \
		if (k_ > 0)                                                      \
			o = o + (size_t)k_ < n ? o + (size_t)k_ : (n ? n - 1 : 0); \
	} while (0)
	if (n)
		buf[0] = 0;
	while (*d) {
		size_t tl = strcspn(d, " ");
		const char *eq = memchr(d, '=', tl);
		char g[32];
		char *end = NULL;
		double b = eq && eq - d > 6 && strncmp(eq - 6, "_bytes", 6) == 0 ? strtod(eq + 1, &end) : NAN;
		if (end == d + tl && isfinite(b))
			PUT("%.*s=%s", (int)(eq - 6 - d), d, sp_fmt_gib(g, sizeof g, b));
		else
			PUT("%.*s", (int)tl, d);
		d += tl;
		while (*d == ' ') {
			PUT(" ");
			d++;
		}
	}
#undef PUT
	return buf;
}

/* A log detail for people (see sp_detail_human). */
static void print_human_detail(FILE *f, const char *d)
{
	char h[1024];
	fputs(sp_detail_human(h, sizeof h, d), f);
}

void sp_summary_print(FILE *f, const struct sp_summary *s)
{
	char a[32], b[32], c[32];
	fprintf(f, "summary:\n");
	fprintf(f, "  duration      %s, %ld samples, %ld events\n",
		sp_fmt_duration(a, sizeof a, isfinite(s->t_first) ? s->t_last - s->t_first : 0), s->samples, s->events);
	if (s->ended && s->exit_code < 0) {
		fprintf(f, "  ended         by %s\n", s->ended_by);
	} else if (s->ended) {
		if (s->signal > 0)
			fprintf(f, "  ended         by %s (signal %d, exit status %d)\n", s->ended_by, s->signal, s->exit_code);
		else
			fprintf(f, "  ended         by %s (exit code %d)\n", s->ended_by, s->exit_code);
	}
	if (s->gpu_gone_n)
		fprintf(f, "  GPU           unavailable %d time%s, %s in all (%s from %s)%s\n", s->gpu_gone_n,
			s->gpu_gone_n == 1 ? "" : "s", sp_fmt_duration(a, sizeof a, s->gpu_gone_s), s->gpu_gone_reason,
			clock_of(c, sizeof c, s->gpu_gone_first),
			s->gpu_gone_open ? "; not answering at the end" : "; it answered again");
	if (isfinite(s->peak_pool_used)) {
		/* 'used' as top and status say it: the page cache is apart */
		fprintf(f, "  peak pool use %s of %s at %s", sp_fmt_gib(a, sizeof a, s->peak_pool_used),
			isfinite(s->mem_total) ? sp_fmt_gib(b, sizeof b, s->mem_total) : "?",
			clock_of(c, sizeof c, s->peak_pool_used_t));
		if (isfinite(s->peak_page_cache))
			fprintf(f, " (page cache apart, at most %s)", sp_fmt_gib(a, sizeof a, s->peak_page_cache));
		fputc('\n', f);
	}
	if (isfinite(s->lowest_budget))
		fprintf(f, "  lowest budget %s at %s\n", sp_fmt_gib(a, sizeof a, s->lowest_budget),
			clock_of(c, sizeof c, s->lowest_budget_t));
	if (isfinite(s->lowest_contig))
		fprintf(f, "  lowest 2MiB+  %s free in blocks of 2 MiB or more at %s\n",
			sp_fmt_bytes(a, sizeof a, s->lowest_contig), clock_of(c, sizeof c, s->lowest_contig_t));
	if (isfinite(s->peak_job_rss)) {
		char g[32];
		fprintf(f, "  job RSS       peak %s (the job's processes)\n", sp_fmt_gib(g, sizeof g, s->peak_job_rss));
	}
	if (isfinite(s->peak_job_majflt))
		fprintf(f, "  major faults  %.0f (the job's processes)\n", s->peak_job_majflt);
	if (s->load_guard_end[0] || s->load_guard_actions)
		fprintf(f, "  load guard    %d action%s, stopped: %s\n", s->load_guard_actions,
			s->load_guard_actions == 1 ? "" : "s", s->load_guard_end[0] ? s->load_guard_end : "no");
	if (isfinite(s->peak_gpu_temp) || isfinite(s->peak_soc_temp)) {
		fprintf(f, "  peak temp    ");
		if (isfinite(s->peak_gpu_temp))
			fprintf(f, " GPU %.0f C", s->peak_gpu_temp);
		if (isfinite(s->peak_soc_temp))
			fprintf(f, " SoC %.1f C", s->peak_soc_temp);
		fprintf(f, "\n");
	}
	if (s->power_n) {
		fprintf(f, "  GPU power     mean %.1f W, peak %.1f W", s->power_sum / (double)s->power_n, s->peak_power);
		if (s->power_n < s->samples)
			fprintf(f, " (read in %ld of %ld samples)", s->power_n, s->samples);
		fprintf(f, "\n");
	}
	if (s->sys_power_n)
		fprintf(f, "  system power  mean %.1f W, peak %.1f W\n", s->sys_power_sum / (double)s->sys_power_n,
			s->peak_sys_power);
	for (int r = 0; r < SP_SUM_REASONS; r++)
		if (s->reason_seconds[r] > 0)
			fprintf(f, "  under %-22s %s\n", sp_reason_name(r),
				sp_fmt_duration(a, sizeof a, s->reason_seconds[r]));
	if (isfinite(s->throughput_first))
		fprintf(f, "  throughput    first %.4g, last %.4g %s\n", s->throughput_first, s->throughput_last,
			s->throughput_unit);
	if (s->n_episodes == 0)
		fprintf(f, "  slowdowns     none\n");
	for (int i = 0; i < s->n_episodes; i++) {
		const struct sp_episode *e = &s->episodes[i];
		fprintf(f, "  slowdown      %s-%s %s", clock_of(a, sizeof a, e->start), clock_of(b, sizeof b, e->end),
			e->cause);
		if (e->share_pct >= 0)
			fprintf(f, " %d%%", e->share_pct);
		if (isfinite(e->drop_pct))
			fprintf(f, " (-%.0f%%)", e->drop_pct);
		if (e->shares[0]) {
			fprintf(f, "; also ");
			for (const char *p = e->shares; *p; p++)
				fputs(*p == ':' ? " " : *p == ',' ? "%, " : (char[]){ *p, 0 }, f);
			fputc('%', f);
		}
		fprintf(f, "\n");
	}
	for (int i = 0; i < s->n_guard; i++) {
		fprintf(f, "  guard         %s %s ", clock_of(a, sizeof a, s->guard[i].t), s->guard[i].action);
		print_human_detail(f, s->guard[i].detail);
		fputc('\n', f);
	}
	if (s->last_row_incomplete)
		fprintf(f, "  note          the last row was incomplete (the log was cut off)\n");
	if (s->rows_skipped)
		fprintf(f, "  note          %ld bad rows skipped\n", s->rows_skipped);
	if (s->rows_dropped)
		fprintf(f, "  log           %ld row%s dropped: the log's reader stopped reading\n", s->rows_dropped,
			s->rows_dropped == 1 ? "" : "s");
}
