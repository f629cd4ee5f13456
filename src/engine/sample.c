// SPDX-License-Identifier: MIT
/* A sample of the engine, every --interval: the machine read (the GPU
 * behind its deadline), the job's process tree, the events between two
 * samples, the row with the job's memory and throughput, attribution and its
 * episodes, the NVIDIA driver's kernel-log lines; and the log rows every
 * part of the engine writes through eng_emit. */
#include "engine/engine_int.h"
#include "ladder/ladder.h"
#include "probe/probe.h"
#include "util/clock.h"
#include "util/msg.h"
#include "util/paths.h"
#include "util/units.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* At short intervals the two scans of every process (competing processes,
 * the job's tree) run at most this often; between them the job's known
 * processes are re-read alone. Keeps a 1 s sample cheap on a busy machine. */
#define SCAN_EVERY_S 5.0

void eng_emit(struct eng_run *w, struct sp_logrow *r)
{
	sp_summary_add(&w->sum, r);
	if (!w->log_ok)
		return;
	int e = sp_csvlog_write(&w->log, r, sp_mono_now());
	if (e < 0 && !w->log_warned) {
		sp_error("'%s': %s; the log stops here, the job keeps running", w->log.path, strerror(-e));
		w->log_warned = true;
	} else if (e == 0 && w->log_warned) {
		sp_note("'%s': writing again (%ld rows lost)", w->log.path, w->log.lost);
		w->log_warned = false;
	}
}

void eng_emit_event(struct eng_run *w, const char *ev, const char *detail)
{
	struct sp_logrow r;
	sp_logrow_event(&r, sp_wall_now(), ev, detail);
	eng_emit(w, &r);
}

void eng_scan_tree(struct eng_run *w, struct sp_tree *t)
{
	if (w->root_is_self)
		sp_tree_scan(t, LIVE_PROC, w->self, false, w->child.relay);
	else if (w->root > 0)
		sp_tree_scan(t, LIVE_PROC, w->root, true, w->self); /* --pid $$: sparkops is not the job */
	else
		t->n = 0, t->rss_bytes = 0;
}

/* Our own stderr line while a tqdm bar sits unfinished on the terminal:
 * start it on a line of its own, as tqdm.write does. */
static void own_line(struct eng_run *w)
{
	if (w->prog[1].len > 0 && isatty(STDERR_FILENO)) {
		ssize_t x = write(STDERR_FILENO, "\n", 1);
		(void)x;
	}
}

static void episode_line(struct eng_run *w, enum sp_attr_event e)
{
	struct sp_attr *a = &w->attr;
	char d[256];
	own_line(w);
	if (e == SP_ATTR_EPISODE_START) {
		sp_attr_start_detail(a, d, sizeof d); /* the evidence readable, spaces kept */
		eng_emit_event(w, SP_EV_EPISODE_START, d);
		sp_warn("slowdown: %.3g %s is %.0f%% under the %.3g %s baseline: %s (%s)%s", a->last_rate, a->unit,
			a->drop_pct, a->baseline, a->unit, sp_attr_cause_name(a->cause), a->evidence,
			a->cause == SP_AC_POWER_CAP
				? "; this is the platform's sustained power limit (PL1), expected under long load: "
				  "not a reason to retune the batch size"
				: "");
	} else if (e == SP_ATTR_EPISODE_UPDATE) {
		/* judged over its whole length, the episode has another dominant cause */
		sp_attr_detail(a, d, sizeof d);
		eng_emit_event(w, SP_EV_EPISODE_UPDATE, d);
		sp_note("slowdown: now mostly %s (%s)%s%s", sp_attr_cause_name(a->cause), a->evidence,
			a->shares[0] ? "; also " : "", a->shares);
	} else {
		sp_attr_detail(a, d, sizeof d);
		eng_emit_event(w, SP_EV_EPISODE_END, d);
		sp_note("slowdown over: %.3g %s, back within %.0f%% of the baseline (it was %s)", a->last_rate, a->unit,
			a->slowdown_pct, sp_attr_cause_name(a->cause));
	}
}

/* Read the machine into w->sample and the job's tree into w->tree (the two
 * scans of every process at most every SCAN_EVERY_S); keep the cgroup's
 * first OOM-kill count. Returns whether the scans were full. */
static bool sample_read(struct eng_run *w)
{
	struct sp_sample *s = &w->sample;
	/* the GPU is read by the GPU thread behind a deadline (probe/gpuwatch.c):
	 * a hung driver costs this sample at most ro.gpu_timeout_s, and the
	 * guard, on its own thread, never waits for it at all */
	double t = sp_mono_now();
	bool full = !w->scanned || t - w->last_scan >= SCAN_EVERY_S || w->o->interval_s >= SCAN_EVERY_S;
	struct sp_read_opts ro = w->ro;
	if (!full)
		ro.what &= ~(unsigned)SP_READ_PROCS;
	sp_sample_read(s, &ro);
	if (full) {
		eng_scan_tree(w, &w->tree);
		w->last_scan = t;
		w->scanned = true;
	} else {
		sp_tree_refresh(&w->tree, LIVE_PROC);
	}
	if (!w->oom_first_ok && sp_ok(s->cg.oom_kill.why)) {
		w->oom_kill_first = s->cg.oom_kill.v;
		w->oom_first_ok = true;
	}
	return full;
}

/* The job's latest throughput from the relay's progress lines, into r. */
static void sample_rate(struct eng_run *w, struct sp_logrow *r)
{
	for (int i = 0; i < 2; i++)
		sp_progress_flush(&w->prog[i]);
	for (int i = 0; i < 2; i++)
		if (w->prog[i].updates != w->prog_seen[i]) {
			w->prog_seen[i] = w->prog[i].updates;
			w->rate = w->prog[i].rate;
			snprintf(w->unit, sizeof w->unit, "%s", w->prog[i].unit);
			w->rate_fresh = true;
		}
	if (!isnan(w->rate)) {
		r->throughput = w->rate;
		snprintf(r->throughput_unit, sizeof r->throughput_unit, "%s", w->unit);
	}
}

/* Feed attribution the sample's row; an episode's start or end is said. */
static void sample_attr(struct eng_run *w, const struct sp_sample *s, const struct sp_logrow *r, bool appeared)
{
	struct sp_attr_obs o;
	sp_attr_obs_clear(&o);
	o.t = s->mono;
	o.rate = w->rate;
	snprintf(o.unit, sizeof o.unit, "%s", w->unit);
	o.rate_fresh = w->rate_fresh;
	w->rate_fresh = false;
	o.reasons_ok = r->gpu_reasons_ok;
	o.reasons = r->gpu_reasons;
	o.viol_thermal_s = r->gpu_thermal_viol_s;
	o.viol_power_s = r->gpu_power_viol_s;
	o.gpu_temp_c = r->gpu_temp_c;
	o.soc_temp_c = r->soc_temp_c;
	o.gpu_power_w = r->gpu_power_w;
	o.pl1_w = r->pl1_w;
	o.pl1_cap_w = r->pl1_cap_w;
	o.psi_mem_some = r->psi_mem_some;
	o.psi_mem_full = r->psi_mem_full;
	o.psi_cpu_some = r->psi_cpu_some;
	o.psi_io_some = r->psi_io_some;
	o.swap_used = r->swap_used;
	o.page_cache = r->page_cache;
	o.process_appeared = appeared;
	enum sp_attr_event e = sp_attr_feed(&w->attr, &o);
	if (e != SP_ATTR_NONE) {
		/* the episode row carries the sample's time */
		episode_line(w, e);
	}
}

/* A GPU lost or hung mid-run is said at once on the terminal, and again
 * when it answers (the event row, the summary and the exposition say it
 * too): its readings are unknown meanwhile, never the last ones. */
static void gpu_said(struct eng_run *w, const struct sp_logrow *r)
{
	if (r->type != SP_ROW_EVENT)
		return;
	char t[16];
	time_t tt = (time_t)r->unix_time;
	struct tm tm;
	if (!localtime_r(&tt, &tm) || strftime(t, sizeof t, "%H:%M:%S", &tm) == 0)
		snprintf(t, sizeof t, "?");
	if (strcmp(r->event, SP_EV_GPU_LOST) == 0) {
		w->gpu_gone_wall = r->unix_time;
		sp_warn("the GPU stopped answering at %s (%s): its temperature, power and clocks are unknown until it "
			"answers again; the job goes on", t, r->detail);
	} else if (strcmp(r->event, SP_EV_GPU_BACK) == 0) {
		char d[32];
		if (isfinite(w->gpu_gone_wall))
			sp_warn("the GPU answers again at %s, after %s", t,
				sp_fmt_duration(d, sizeof d, r->unix_time - w->gpu_gone_wall));
		else
			sp_warn("the GPU answers at %s (it had not at the start)", t);
		w->gpu_gone_wall = NAN;
	}
}

/* The kernel log: --kmsg FILE, else /dev/kmsg when the roots are the
 * machine's (unreadable: not root, dmesg_restrict: left out, as the exporters do).
 * What it held before the start is read once and not reported: only lines
 * that arrive during the run are events. */
void eng_kmsg_start(struct eng_run *w)
{
	const struct sp_engine_opts *o = w->o;
	w->kmsg.fd = -1;
	if (!o->kmsg_path && sp_paths_is_fixture())
		return;
	sp_kmsg_open(&w->kmsg, o->kmsg_path);
	if (w->kmsg.why != SP_OK) {
		if (o->kmsg_path)
			sp_warn("--kmsg '%s': %s; the driver's lines are not read", o->kmsg_path, sp_why_text(w->kmsg.why));
		return;
	}
	sp_kmsg_poll(&w->kmsg);
	memcpy(w->drv_seen, w->kmsg.count, sizeof w->drv_seen);
	atomic_store(&w->drv_oom, w->drv_seen[SP_DRV_NVRM_OOM]); /* before the load guard's first look */
	if (w->metrics.on) {
		pthread_mutex_lock(&w->metrics.lock);
		sp_prom_set_driver_errors(w->metrics.drv);
		pthread_mutex_unlock(&w->metrics.lock);
	}
}

/* New driver lines since the last sample: one event row and one line on
 * the terminal per kind that arrived. */
static void kmsg_turn(struct eng_run *w)
{
	w->drv_new = false;
	if (w->kmsg.fd < 0)
		return;
	sp_kmsg_poll(&w->kmsg);
	uint64_t add[SP_DRV_N];
	for (int k = 0; k < SP_DRV_N; k++) {
		add[k] = w->kmsg.count[k] - w->drv_seen[k];
		w->drv_seen[k] = w->kmsg.count[k];
		w->drv_new |= add[k] > 0;
	}
	atomic_store(&w->drv_oom, w->drv_seen[SP_DRV_NVRM_OOM]);
	if (!w->drv_new)
		return;
	w->log.urgent = true; /* the rows that say it are on disk at once */
	for (int k = 0; k < SP_DRV_N; k++) {
		if (!add[k])
			continue;
		char d[96];
		snprintf(d, sizeof d, "kind=%s count=%llu", sp_drv_kind_name((enum sp_drv_kind)k),
			 (unsigned long long)add[k]);
		eng_emit_event(w, SP_EV_DRIVER_ERROR, d);
		sp_warn("the NVIDIA driver logged %llu %s line%s in the kernel log (%llu in this run)%s",
			(unsigned long long)add[k], sp_drv_kind_name((enum sp_drv_kind)k), add[k] == 1 ? "" : "s",
			(unsigned long long)w->drv_seen[k],
			k == SP_DRV_NVRM_OOM ? ": the driver could not allocate; the pool is near its end" : "");
	}
}

/* The log's fsync policy (docs/run.md "A log that survives the end"):
 * every row at once while the machine is near its end, else every
 * --fsync-interval. Near its end: a guard is on and MemFree is within its
 * margin of the floor (a quarter of the floor, at least 1 GiB, above it),
 * free memory in 2 MiB blocks is under SP_CONTIG_LOW, or driver lines
 * arrived this sample. */
static void log_urgency(struct eng_run *w, const struct sp_sample *s)
{
	const struct sp_engine_opts *o = w->o;
	bool near = false;
	uint64_t fl = o->guard.min_free;
	if (fl > 0 && s->mem.why == SP_OK) {
		uint64_t margin = fl / 4 > (1ULL << 30) ? fl / 4 : (1ULL << 30);
		near = s->mem.v[SP_MI_FREE] < fl + margin;
	}
	if (s->contig.why == SP_OK && s->contig.free_2mib < SP_CONTIG_LOW)
		near = true;
	w->log.urgent = near;
	kmsg_turn(w); /* sets it too when the driver speaks */
}

/* One sample: read, its events, its row (with the job's memory and
 * throughput), attribution, the log, the metrics endpoint's copy. */
void eng_take_sample(struct eng_run *w)
{
	struct sp_sample *s = &w->sample;
	bool full = sample_read(w);

	struct sp_logrow rows[24];
	bool appeared = false;
	int n = sp_events_diff(&w->ev, s, full, w->tree.pids, w->tree.n, rows, 24, &appeared);
	log_urgency(w, s);
	for (int i = 0; i < n; i++) {
		eng_emit(w, &rows[i]);
		gpu_said(w, &rows[i]);
	}

	struct sp_logrow r;
	sp_logrow_from_sample(&r, s);
	if (w->root > 0 || w->root_is_self) {
		r.job_rss_bytes = (double)w->tree.rss_bytes;
		r.job_majflt = (double)sp_tree_majflt(&w->tree, LIVE_PROC);
	}
	sample_rate(w, &r);
	sample_attr(w, s, &r, appeared);
	eng_emit(w, &r);
	if (w->metrics.on)
		eng_metrics_publish(w, s);
	eng_stat_publish(w);
	eng_status_draw(w, &r);
}
