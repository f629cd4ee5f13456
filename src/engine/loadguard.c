// SPDX-License-Identifier: MIT
/* The load-guard thread (run --guard-load, docs/run.md "Surviving a model
 * load"): from the launch until the job says it is ready, a deadline or a
 * stop file, it looks at MemFree and the free memory in 2 MiB blocks every
 * SP_LG_LOOK_S, and on a dip (or the driver's out-of-memory lines) flushes
 * and compacts (root) or evicts the job's own files' page cache. Its
 * decisions are watch/loadguard.c's; each action is a receipt in
 * LOG.receipts.jsonl and an event row. */
#include "engine/engine_int.h"
#include "probe/evict.h"
#include "probe/flush.h"
#include "probe/pool.h"
#include "probe/probe.h"
#include "probe/sysctl.h"
#include "util/clock.h"
#include "util/json.h"
#include "util/msg.h"
#include "util/units.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

static double read_free(void)
{
	struct sp_meminfo m;
	sp_meminfo_read(&m);
	return m.why == SP_OK ? (double)m.v[SP_MI_FREE] : NAN;
}

static double read_contig(void)
{
	struct sp_contig c;
	sp_buddyinfo_read(&c);
	return c.why == SP_OK ? (double)c.free_2mib : NAN;
}

static void receipt(struct eng_run *w, json_t *j)
{
	json_object_set_new(j, "time_unix", json_real(floor(sp_wall_now() * 1000.0) / 1000.0));
	char *txt = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
	json_decref(j);
	if (!txt)
		return;
	if (w->rcpt.fd >= 0) {
		size_t l = strlen(txt);
		txt[l] = '\n';
		int e = sp_out_write(&w->rcpt, txt, l + 1);
		(void)e; /* a stalled reader's drops are counted and said at the end */
	}
	free(txt);
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_integer((json_int_t)v) : json_null();
}

static json_t *vm_json(char vals[SP_VM_GUARDED_N][32])
{
	json_t *o = json_object();
	for (int i = 0; i < SP_VM_GUARDED_N; i++)
		json_object_set_new(o, sp_vm_guarded[i], vals[i][0] ? json_string(vals[i]) : json_null());
	return o;
}

struct lg_ctx {
	bool root, compact_missing, said_evict_none;
	char vm0[SP_VM_GUARDED_N][32];
};

/* As root: sync + drop_caches 3 (the one flush function), then compact_memory 1. */
static void lg_act_root(struct eng_run *w, struct lg_ctx *x, json_t *j, const char **action)
{
	json_t *wrote = json_array();
	double t1 = sp_mono_now();
	struct sp_flush_result fr;
	int e = sp_flush_page_cache(&fr);
	double t2 = sp_mono_now();
	json_object_set_new(j, "flush_ms", json_real(round((t2 - t1) * 1e4) / 10));
	if (e < 0) {
		json_object_set_new(j, "flush_error", json_string(sp_procsys_strerror(e)));
		sp_warn("load guard: page cache flush failed: '%s': %s", fr.path, sp_procsys_strerror(e));
	} else {
		json_array_append_new(wrote, json_string("3 > vm/drop_caches (after sync)"));
	}
	*action = "flush";
	if (!x->compact_missing) {
		int c = sp_compact_memory();
		double t3 = sp_mono_now();
		json_object_set_new(j, "compact_ms", json_real(round((t3 - t2) * 1e4) / 10));
		if (c == 0) {
			json_array_append_new(wrote, json_string("1 > vm/compact_memory"));
			*action = e < 0 ? "compact" : "flush+compact";
		} else if (c == -ENOENT) {
			x->compact_missing = true;
			sp_note("load guard: this kernel has no /proc/sys/vm/compact_memory: flushing only");
			json_object_set_new(j, "compact_error", json_string("compact_memory missing"));
		} else {
			json_object_set_new(j, "compact_error", json_string(sp_procsys_strerror(c)));
		}
	}
	json_object_set_new(j, "wrote", wrote);
	(void)w;
}

/* Without root: the page cache of the files the job's processes have open
 * or mapped, those its user owns. */
static void lg_act_evict(struct eng_run *w, struct lg_ctx *x, json_t *j, const char **action)
{
	struct sp_evict *ev = malloc(sizeof *ev);
	*action = "evict";
	if (!ev)
		return;
	sp_evict_init(ev, false);
	eng_scan_tree(w, &w->lg_tree);
	eng_guard_keep_own(w, &w->lg_tree);
	for (int i = 0; i < w->lg_tree.n; i++)
		sp_evict_pid(ev, w->lg_tree.pids[i]);
	json_object_set_new(j, "files", json_integer(ev->files));
	/* residency is a figure only for files whose pages the kernel tells us
	 * about: with every evicted file unknown, it is null, not 0 */
	const bool known = ev->files > ev->unknown_files;
	json_object_set_new(j, "resident_before_bytes", known ? json_integer((json_int_t)ev->resident_before) : json_null());
	json_object_set_new(j, "resident_after_bytes", known ? json_integer((json_int_t)ev->resident_after) : json_null());
	json_object_set_new(j, "residency_unknown_files", json_integer(ev->unknown_files));
	json_object_set_new(j, "skipped_not_owned", json_integer(ev->not_owned));
	json_object_set_new(j, "wrote", json_array());
	if (ev->files == 0) {
		/* nothing taken this time: said so of this moment (the job may open
		 * its model's files later, and the next action evicts them) */
		*action = "evict_none";
		if (!x->said_evict_none) {
			x->said_evict_none = true;
			sp_note("load guard: not root, and none of the files the job has open or mapped now is its user's "
				"to evict (the next action looks again)");
		}
	}
	free(ev);
}

static void lg_act(struct eng_run *w, struct lg_ctx *x, double free_b, double contig_b)
{
	json_t *j = json_object();
	json_object_set_new(j, "event", json_string("action"));
	const char *action = "none";
	double t0 = sp_mono_now();
	if (x->root)
		lg_act_root(w, x, j, &action);
	else
		lg_act_evict(w, x, j, &action);
	double ms = (sp_mono_now() - t0) * 1000.0;
	double fa = read_free(), ca = read_contig();
	json_object_set_new(j, "action", json_string(action));
	json_object_set_new(j, "trigger", json_string(w->lg.by_driver ? "driver_oom" : "floor"));
	json_object_set_new(j, "mem_free_before_bytes", num_or_null(free_b));
	json_object_set_new(j, "mem_free_after_bytes", num_or_null(fa));
	json_object_set_new(j, "free_2mib_before_bytes", num_or_null(contig_b));
	json_object_set_new(j, "free_2mib_after_bytes", num_or_null(ca));
	json_object_set_new(j, "ms", json_real(round(ms * 10) / 10));
	receipt(w, j);
	char d[256], a[32], b[32], c[32], e[32];
	snprintf(d, sizeof d, "action=%s trigger=%s free_before=%.0f free_after=%.0f contig_before=%.0f contig_after=%.0f ms=%.0f",
		 action, w->lg.by_driver ? "driver_oom" : "floor", free_b, fa, contig_b, ca, ms);
	eng_guard_queue(w, SP_EV_LOAD_GUARD, d);
	if (strcmp(action, "evict_none") == 0) /* said once as a note; the receipt and the row keep each */
		return;
	sp_warn("load guard: %s%s in %.0f ms: MemFree %s -> %s, in 2 MiB blocks %s -> %s", action,
		w->lg.by_driver ? " (the driver logged out-of-memory lines)" : "", ms,
		sp_fmt_gib(a, sizeof a, free_b), sp_fmt_gib(b, sizeof b, fa), sp_fmt_gib(c, sizeof c, contig_b),
		sp_fmt_gib(e, sizeof e, ca));
}

static void lg_stopped(struct eng_run *w, double t)
{
	struct sp_lguard *g = &w->lg;
	const char *why = sp_lg_end_name(g->end);
	char d[200];
	snprintf(d, sizeof d, "reason=%s actions=%d after_s=%.1f", why, g->actions, t - g->t0);
	eng_guard_queue(w, SP_EV_LOAD_GUARD_END, d);
	json_t *j = json_object();
	json_object_set_new(j, "event", json_string("stop"));
	json_object_set_new(j, "reason", json_string(why));
	json_object_set_new(j, "ready_line", g->end == SP_LG_READY ? sp_json_text(w->ready_what) : json_null());
	json_object_set_new(j, "actions", json_integer(g->actions));
	json_object_set_new(j, "after_s", json_real(round((t - g->t0) * 10) / 10));
	receipt(w, j);
	switch (g->end) {
	case SP_LG_READY:
		sp_note("load guard: the job is ready (%s) after %.0fs, %d action%s; it stops acting now (its drops would "
			"evict pages the job still maps) and keeps counting",
			w->ready_what, t - g->t0, g->actions, g->actions == 1 ? "" : "s");
		break;
	case SP_LG_DEADLINE:
		sp_warn("load guard: the %gs deadline passed and the readiness line never came%s; it stops acting",
			g->cfg.deadline_s, w->o->ready_re ? " (--ready did not match)" : "");
		break;
	case SP_LG_STOP_FILE:
		sp_note("load guard: the stop file '%s' is there; it stops acting", w->o->load_stop_file);
		break;
	default:
		sp_note("load guard: the job ended before it was ready");
		break;
	}
}

/* At the end: the vm sysctls as found; the guard writes only the two
 * triggers (drop_caches, compact_memory), which hold no setting, so a
 * setting that changed was changed by someone else, and is said, not undone. */
static void lg_final(struct eng_run *w, struct lg_ctx *x)
{
	char vm1[SP_VM_GUARDED_N][32];
	sp_vm_snapshot(vm1);
	json_t *changed = json_array();
	for (int i = 0; i < SP_VM_GUARDED_N; i++)
		if (strcmp(x->vm0[i], vm1[i]) != 0) {
			json_array_append_new(changed, json_string(sp_vm_guarded[i]));
			sp_warn("load guard: vm.%s changed during the run (%s -> %s), not by sparkops", sp_vm_guarded[i],
				x->vm0[i], vm1[i]);
		}
	json_t *j = json_object();
	json_object_set_new(j, "event", json_string("end"));
	json_object_set_new(j, "actions", json_integer(w->lg.actions));
	json_object_set_new(j, "stopped_by", json_string(sp_lg_end_name(w->lg.end)));
	json_object_set_new(j, "below_floor_after_stop", json_integer(w->lg.below_after));
	json_object_set_new(j, "sysctls_after", vm_json(vm1));
	json_object_set_new(j, "sysctls_changed", changed);
	json_object_set_new(j, "sysctls_touched", json_array()); /* none: drop_caches and compact_memory are triggers */
	receipt(w, j);
}

static void *lg_main(void *arg)
{
	struct eng_run *w = arg;
	const struct sp_engine_opts *o = w->o;
	struct lg_ctx x;
	memset(&x, 0, sizeof x);
	x.root = geteuid() == 0;
	sp_vm_snapshot(x.vm0);
	struct sp_lg_cfg cfg = { o->load_floor, o->load_contig_floor, o->load_deadline_s };
	struct sp_meminfo m;
	sp_meminfo_read(&m);
	uint64_t total = m.why == SP_OK ? m.v[SP_MI_TOTAL] : 0;
	if (cfg.floor == 0)
		cfg.floor = total && total / 8 < SP_LG_DEFAULT_FLOOR ? total / 8 : SP_LG_DEFAULT_FLOOR;
	if (cfg.contig_floor == 0)
		cfg.contig_floor = total && total / 64 < SP_LG_DEFAULT_CONTIG_FLOOR ? total / 64 : SP_LG_DEFAULT_CONTIG_FLOOR;
	sp_lguard_init(&w->lg, &cfg, sp_mono_now());
	char a[32], b[32];
	sp_note("load guard: until the job is ready (%s) or %gs: MemFree under %s or under %s in 2 MiB blocks -> %s; "
		"receipts in '%s'",
		o->ready_re ? "--ready" : w->ready_progress ? "a known server's line or its first progress update"
							     : "a known server's line",
		cfg.deadline_s, sp_fmt_gib(a, sizeof a, (double)cfg.floor), sp_fmt_gib(b, sizeof b, (double)cfg.contig_floor),
		x.root ? "flush + compact" : "evict the job's own files", w->receipts);
	json_t *j = json_object();
	json_object_set_new(j, "event", json_string("start"));
	json_object_set_new(j, "mode", json_string(x.root ? "root" : "evict"));
	json_object_set_new(j, "floor_bytes", json_integer((json_int_t)cfg.floor));
	json_object_set_new(j, "contig_floor_bytes", json_integer((json_int_t)cfg.contig_floor));
	json_object_set_new(j, "deadline_s", json_real(cfg.deadline_s));
	json_object_set_new(j, "sysctls_before", vm_json(x.vm0));
	receipt(w, j);
	uint64_t drv_oom = atomic_load(&w->drv_oom); /* the sample loop's count (kmsg_turn) */
	for (;;) {
		double t = sp_mono_now();
		double fr = read_free(), cg = read_contig();
		uint64_t d = atomic_load(&w->drv_oom);
		w->lg.driver_oom = d > drv_oom; /* NVRM out-of-memory lines arrived: act as on a dip */
		bool stopf = o->load_stop_file && access(o->load_stop_file, F_OK) == 0;
		enum sp_lg_act act = sp_lguard_step(&w->lg, t, fr, cg, atomic_load(&w->ready), stopf,
						    atomic_load(&w->job_alive));
		if (act == SP_LG_ACT) {
			lg_act(w, &x, fr, cg);
			sp_lguard_acted(&w->lg, sp_mono_now());
		} else if (act == SP_LG_STOP) {
			lg_stopped(w, t);
		}
		/* lines seen during the cooldown wait for the next action */
		if (act == SP_LG_ACT || w->lg.end != SP_LG_RUNNING)
			drv_oom = d;
		struct pollfd p = { .fd = w->l_stop, .events = POLLIN };
		if (poll(&p, 1, (int)(SP_LG_LOOK_S * 1000)) > 0)
			break;
	}
	/* the end came while it was acting (or between two looks): say why it stopped */
	if (w->lg.end == SP_LG_RUNNING) {
		double t = sp_mono_now();
		bool stopf = o->load_stop_file && access(o->load_stop_file, F_OK) == 0;
		if (sp_lguard_step(&w->lg, t, NAN, NAN, atomic_load(&w->ready), stopf, false) == SP_LG_STOP)
			lg_stopped(w, t);
	}
	lg_final(w, &x);
	return NULL;
}

static bool argv_is_server(char **argv)
{
	static const char *const servers[] = { "vllm", "sglang", "llama-server", "llama_cpp", "ollama", "tritonserver" };
	for (int i = 0; argv && argv[i]; i++)
		for (size_t k = 0; k < sizeof servers / sizeof servers[0]; k++)
			if (strstr(argv[i], servers[k]))
				return true;
	return false;
}

void eng_lg_start(struct eng_run *w)
{
	const struct sp_engine_opts *o = w->o;
	if (!o->guard_load || !o->argv)
		return;
	snprintf(w->receipts, sizeof w->receipts, "%s.receipts.jsonl", w->logname);
	/* the one door: a link planted by another user, a block device, a
	 * hard link to someone else's file are refused; a FIFO never blocks */
	char msg[1400];
	if (sp_out_open(&w->rcpt, w->receipts, w->lg_append ? SP_OUT_APPEND : SP_OUT_TRUNC, 0644, msg, sizeof msg) < 0)
		sp_warn("load guard: %s; acting without receipts", msg[0] ? msg : w->receipts);
	for (int i = 0; i < 2; i++)
		sp_ready_init(&w->readyx[i], o->ready_re);
	w->ready_progress = !o->ready_re && !argv_is_server(w->argv);
	w->l_stop = eventfd(0, EFD_CLOEXEC);
	if (!eng_gq_open(w) || w->l_stop < 0 || eng_thread_start(&w->lthread, lg_main, w) != 0)
		sp_error("the load guard could not start: %s", strerror(errno));
	else
		w->lthread_on = true;
}

void eng_lg_end(struct eng_run *w)
{
	bool was_on = w->lthread_on;
	if (was_on) {
		uint64_t one = 1;
		ssize_t x = write(w->l_stop, &one, sizeof one);
		(void)x;
		pthread_join(w->lthread, NULL);
		w->lthread_on = false;
	}
	if (w->rcpt.fd >= 0 || w->rcpt.dirfd >= 0) {
		sp_out_close(&w->rcpt, 0.2);
		if (sp_out_dropped(&w->rcpt) > 0)
			sp_warn("'%s': %ld receipts dropped: its reader stopped reading", w->receipts,
				sp_out_dropped(&w->rcpt));
	}
	if (was_on)
		eng_guard_drain(w);
}
