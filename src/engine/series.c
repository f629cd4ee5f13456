// SPDX-License-Identifier: MIT
/* run --ladder: the automatic retry (engine/retry.h, docs/run.md "Automatic
 * retry"). A job that ends in an out-of-memory failure is run again down the
 * ladder's rungs, each try by try.c in the same log: rung 1 reruns it after a
 * flush (root) or an eviction of the files it names, rung 2 with its batch,
 * sequence or accumulation flags changed (retry.c), rung 3 is said to a
 * person. Without --ladder the series is the one try. */
#include "engine/engine_int.h"
#include "ladder/ladder.h"
#include "ladder/oomlog.h"
#include "probe/evict.h"
#include "probe/flush.h"
#include "probe/harden.h"
#include "probe/sysctl.h"
#include "util/clock.h"
#include "util/json.h"
#include "util/msg.h"
#include "util/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A try starts: its row in the log, its line on stderr, its record. */
static void ladder_try_begin(struct eng_run *w, int rung, const char *change)
{
	struct eng_try *t = &w->tries[w->ntries++];
	memset(t, 0, sizeof *t);
	t->rung = rung;
	t->exit_code = -1;
	snprintf(t->change, sizeof t->change, "%s", change);
	t->argv = json_array();
	for (int i = 0; w->argv[i]; i++)
		json_array_append_new(t->argv, sp_json_text(w->argv[i]));
	eng_cmd_words(t->cmd, sizeof t->cmd, w->argv);
	w->try_t0 = sp_mono_now();
	char d[256];
	snprintf(d, sizeof d, "try=%d rung=%d change=%s pid=%d cmd=%s", w->ntries, rung, change, (int)w->child.pid, t->cmd);
	eng_emit_event(w, SP_EV_LADDER_TRY, d);
	if (w->ntries > 1) {
		char h[256];
		sp_note("ladder: try %d of at most %d, rung %d (%s): %s", w->ntries, w->o->ladder.max_tries, rung,
			sp_detail_human(h, sizeof h, change), t->cmd);
	}
}

static void ladder_stop(struct eng_run *w, const char *reason, int rung, const char *change)
{
	char d[256];
	snprintf(w->stop_reason, sizeof w->stop_reason, "%s", reason);
	w->stop_rung = rung;
	snprintf(w->stop_change, sizeof w->stop_change, "%s", change ? change : "");
	if (rung)
		snprintf(d, sizeof d, "reason=%s tries=%d rung=%d change=%s", reason, w->ntries, rung, change ? change : "");
	else
		snprintf(d, sizeof d, "reason=%s tries=%d", reason, w->ntries);
	eng_emit_event(w, SP_EV_LADDER_STOP, d);
}

/* Why rung 1 cannot be done here, or NULL when it can. */
static const char *rung1_why_not(struct eng_run *w)
{
	static char why[200];
	if (geteuid() == 0) {
		/* the ladder's own rule (sp_ladder_skip_reason): what a flush
		 * would give back now, under SP_FLUSH_WORTH, is not worth a rerun */
		struct sp_job_facts f;
		memset(&f, 0, sizeof f);
		f.reclaimable = w->sample.budget.reclaimable;
		sp_ladder_skip_reason(1, &f, why, sizeof why);
		return why[0] ? why : NULL;
	}
	if (w->o->guard_load)
		return NULL;
	return "not root (the page cache flush needs root), and without --guard-load no eviction of the job's own files";
}

/* Rung 1: as root the page-cache flush; without root (with --guard-load) the
 * page cache of the user's own files the command names (a model folder, a
 * data file), as the load guard evicts the job's own files. NULL when done,
 * else why not. */
static const char *rung1_do(struct eng_run *w, char *change, size_t n)
{
	static char why[300];
	char a[32], b[32];
	if (geteuid() == 0) {
		struct sp_flush_result r;
		int e = sp_flush_page_cache(&r);
		if (e < 0) {
			snprintf(why, sizeof why, "the page cache flush failed: '%.200s': %s", r.path, sp_procsys_strerror(e));
			return why;
		}
		sp_note("ladder: rung 1: flushed the page cache: %s freed, %s free now",
			sp_fmt_gib(a, sizeof a, (double)r.freed_bytes), sp_fmt_gib(b, sizeof b, (double)r.after.v[SP_MI_FREE]));
		snprintf(change, n, "flush:freed_bytes=%llu", (unsigned long long)r.freed_bytes);
		return NULL;
	}
	struct sp_evict *ev = malloc(sizeof *ev);
	if (!ev)
		return "out of memory";
	sp_evict_init(ev, false);
	for (int i = 1; w->argv[i]; i++) {
		const char *p = w->argv[i];
		const char *eq = p[0] == '-' ? strchr(p, '=') : NULL;
		if (eq)
			p = eq + 1; /* --model=/path */
		struct stat st;
		if (p[0] && strcmp(p, "/") != 0 && stat(p, &st) == 0)
			sp_evict_path(ev, p);
	}
	long files = ev->files;
	uint64_t before = ev->resident_before, after = ev->resident_after;
	free(ev);
	if (files == 0) {
		snprintf(why, sizeof why, "not root, and none of the files the command names is the user's to evict");
		return why;
	}
	sp_note("ladder: rung 1: evicted the page cache of %ld of the command's files: %s -> %s resident", files,
		sp_fmt_gib(a, sizeof a, (double)before), sp_fmt_gib(b, sizeof b, (double)after));
	snprintf(change, n, "evict:files=%ld", files);
	return NULL;
}

/* The failure of the try that just ended: the classifier's kind over the
 * job's stdout and stderr, or the kernel's OOM kill; SP_OOM_UNKNOWN when it
 * was not an OOM. */
static enum sp_oom_kind ladder_kind(struct eng_run *w, const char *by, int code, enum sp_oom_phase *phase)
{
	enum sp_oom_kind k = SP_OOM_UNKNOWN;
	*phase = SP_PHASE_UNKNOWN;
	for (int i = 0; i < 2; i++) {
		sp_oomlog_finish(&w->oom[i]);
		if (w->oom[i].kind > k) {
			k = w->oom[i].kind;
			*phase = w->oom[i].phase;
		}
	}
	/* "Killed" alone is an OOM only when the job did die of SIGKILL (137) */
	if (k == SP_OOM_SIGKILL && code != 137)
		k = SP_OOM_UNKNOWN;
	if (strcmp(by, "oom_kill") == 0 && k < SP_OOM_KERNEL)
		k = SP_OOM_KERNEL;
	return k;
}

/* What a person does next (rung 3), for the job as the log shows it. */
static void ladder_human(struct eng_run *w, enum sp_oom_kind kind, enum sp_oom_phase phase, char *out, size_t n)
{
	const struct sp_engine_opts *o = w->o;
	struct sp_job_facts f;
	memset(&f, 0, sizeof f);
	f.kind = kind;
	f.phase = phase;
	const struct sp_oomlog *l = w->oom[1].kind >= w->oom[0].kind ? &w->oom[1] : &w->oom[0];
	f.batch_per_device = l->batch_per_device;
	f.grad_accum = l->grad_accum;
	f.seq_len = l->seq_len;
	long v;
	if (o->ladder.batch_flag && sp_retry_flag_find(w->argv, o->ladder.batch_flag, &v) >= 0)
		f.batch_per_device = (uint64_t)v;
	if (o->ladder.accum_flag && sp_retry_flag_find(w->argv, o->ladder.accum_flag, &v) >= 0)
		f.grad_accum = (uint64_t)v;
	if (o->ladder.seq_flag && sp_retry_flag_find(w->argv, o->ladder.seq_flag, &v) >= 0)
		f.seq_len = (uint64_t)v;
	f.reclaimable.why = f.budget_now.why = f.budget_after_flush.why = f.total.why = SP_MISSING;
	char change[1536];
	sp_ladder_change(3, &f, change, sizeof change);
	snprintf(out, n, "%s: %s", sp_ladder_rung_title_for(3, &f), change);
}

/* Start the next try with w->argv: the per-try state reset, the job spawned.
 * false: it could not start (said; the exit code is set). */
static bool ladder_spawn(struct eng_run *w, int rung, const char *change)
{
	const struct sp_engine_opts *o = w->o;
	for (int i = 0; i < 2; i++)
		if (w->child.prog_fd[i] >= 0) {
			close(w->child.prog_fd[i]);
			w->child.prog_fd[i] = -1;
		}
	eng_lg_end(w);
	w->job_done = false;
	w->status = 0;
	w->end_sampled = w->end_done = false;
	atomic_store(&w->ready, false);
	w->ready_what[0] = 0;
	for (int i = 0; i < 2; i++) {
		sp_oomlog_init(&w->oom[i]);
		sp_progress_init(&w->prog[i], o->progress_re);
		w->prog_seen[i] = 0;
	}
	sp_attr_init(&w->attr, o->baseline_window_s, o->slowdown_pct);
	w->rate = NAN;
	w->unit[0] = 0;
	w->rate_fresh = false;
	/* the cgroup's OOM kills are counted from here */
	w->oom_first_ok = sp_ok(w->sample.cg.oom_kill.why);
	w->oom_kill_first = w->sample.cg.oom_kill.v;
	int rc = eng_job_start(w);
	if (rc) {
		w->end_done = true;
		w->end_code = rc;
		ladder_stop(w, "not_started", 0, NULL);
		return false;
	}
	ladder_try_begin(w, rung, change);
	w->lg_append = true;
	eng_lg_start(w);
	sp_harden_relock();
	w->next = sp_mono_now();
	return true;
}

static void ladder_notes(struct eng_run *w, const struct sp_retry_plan *p)
{
	for (int i = 0; i < p->nnotes; i++) {
		sp_note("ladder: %s", p->notes[i]);
		eng_emit_event(w, SP_EV_LADDER_SKIP, p->notes[i]);
	}
}

/* The series ends with this try: it succeeded, was interrupted or stopped
 * by the guard, or did not fail for want of memory. Said and logged. */
static bool ladder_ends_here(struct eng_run *w, int code, const char *by, enum sp_oom_kind kind)
{
	if (code == 0) {
		if (w->ntries > 1) {
			char h[256];
			sp_note("ladder: try %d succeeded (%s)", w->ntries,
				sp_detail_human(h, sizeof h, w->tries[w->ntries - 1].change));
		}
		ladder_stop(w, "succeeded", 0, NULL);
	} else if (w->interrupted) {
		sp_note("ladder: interrupted: no further try");
		ladder_stop(w, "interrupted", 0, NULL);
	} else if (strcmp(by, "guard") == 0) {
		sp_note("ladder: the guard stopped the job: not retried");
		ladder_stop(w, "guard", 0, NULL);
	} else if (kind == SP_OOM_UNKNOWN) {
		sp_note("ladder: exit %d is not an out-of-memory failure: not retried", code);
		ladder_stop(w, "not_oom", 0, NULL);
	} else {
		return false;
	}
	return true;
}

/* After a try ended: true when the next try started. */
static bool ladder_after(struct eng_run *w)
{
	const struct sp_engine_opts *o = w->o;
	if (!w->oom || !w->have_child || !w->job_done || w->ntries == 0)
		return false;
	eng_on_signals(w); /* a Ctrl-C that came as the try ended stops the series too */
	eng_take_sample(w);
	w->end_sampled = true;
	const char *by;
	int code = eng_job_end_how(w, &by);
	enum sp_oom_phase phase;
	enum sp_oom_kind kind = ladder_kind(w, by, code, &phase);
	struct eng_try *t = &w->tries[w->ntries - 1];
	t->exit_code = code;
	snprintf(t->ended_by, sizeof t->ended_by, "%s", by);
	snprintf(t->failure, sizeof t->failure, "%s", code == 0 ? "" : kind == SP_OOM_UNKNOWN ? "not_oom" : sp_oom_kind_key(kind));
	t->seconds = w->t_done - w->try_t0;
	if (ladder_ends_here(w, code, by, kind))
		return false;
	sp_note("ladder: try %d ran out of memory (%s, exit %d)", w->ntries, sp_oom_kind_text(kind), code);
	const char *why1 = rung1_why_not(w);
	char change[256];
	struct sp_retry_plan p;
	for (;;) {
		if (sp_retry_next(&o->ladder, &w->rst, w->argv, why1, &p) < 0) {
			sp_error("ladder: out of memory");
			ladder_stop(w, "error", 0, NULL);
			return false;
		}
		ladder_notes(w, &p);
		if (p.step == SP_RS_HUMAN) {
			char h[2048];
			ladder_human(w, kind, phase, h, sizeof h);
			sp_warn("ladder: no automatic rung is left after %d tr%s; rung 3 needs a person: %s", w->ntries,
				w->ntries == 1 ? "y" : "ies", h);
			sp_note("ladder: the last command was: %s", t->cmd);
			ladder_stop(w, "human", 3, h);
			return false;
		}
		if (w->ntries >= o->ladder.max_tries) {
			char nx[400];
			snprintf(nx, sizeof nx, "%s%s", p.step == SP_RS_RUNG1 ? "rerun unchanged after " : "",
				 p.step == SP_RS_RUNG1 ? (geteuid() == 0 ? "a page cache flush" : "evicting the command's files")
						       : p.change);
			sp_warn("ladder: --ladder-max-tries %d reached; the next would have been rung %d: %s", o->ladder.max_tries,
				p.rung, nx);
			ladder_stop(w, "max_tries", p.rung, nx);
			free(p.argv);
			return false;
		}
		if (p.step != SP_RS_RUNG1)
			break;
		/* a Ctrl-C before the flush: nothing more is done */
		eng_on_signals(w);
		if (w->interrupted)
			break;
		const char *no = rung1_do(w, change, sizeof change);
		if (!no)
			break;
		why1 = no; /* rung 1 failed: said as skipped, on to rung 2 */
		w->rst.rung1_done = false;
	}
	eng_end_event(w); /* this try's exit row */
	eng_on_signals(w);
	if (w->interrupted) {
		free(p.argv);
		sp_note("ladder: interrupted: no further try");
		ladder_stop(w, "interrupted", 0, NULL);
		return false;
	}
	if (p.step != SP_RS_RUNG1) {
		snprintf(change, sizeof change, "%s", p.change);
		free(w->owned_argv);
		w->owned_argv = w->argv = p.argv;
	}
	return ladder_spawn(w, p.rung, change);
}

bool eng_series_open(struct eng_run *w)
{
	if (!w->o->ladder.on || !w->o->argv)
		return true;
	w->oom = calloc(2, sizeof *w->oom);
	if (!w->oom)
		return false;
	sp_oomlog_init(&w->oom[0]);
	sp_oomlog_init(&w->oom[1]);
	return true;
}

void eng_series_run(struct eng_run *w)
{
	if (w->oom)
		ladder_try_begin(w, 0, "none");
	do
		eng_try_run(w);
	while (ladder_after(w));
}

/* ---- the end summary's part ---- */

/* --summary: the tries and how the series stopped */
void eng_ladder_json(struct eng_run *w, json_t *j)
{
	json_t *a = json_array();
	for (int i = 0; i < w->ntries; i++) {
		const struct eng_try *t = &w->tries[i];
		json_t *o = json_object();
		json_object_set_new(o, "try", json_integer(i + 1));
		json_object_set_new(o, "rung", json_integer(t->rung));
		json_object_set_new(o, "change", json_string(t->change));
		json_object_set_new(o, "argv", json_incref(t->argv));
		json_object_set_new(o, "command", sp_json_text(t->cmd));
		json_object_set_new(o, "exit_code", t->exit_code >= 0 ? json_integer(t->exit_code) : json_null());
		json_object_set_new(o, "ended_by", t->ended_by[0] ? json_string(t->ended_by) : json_null());
		json_object_set_new(o, "failure", t->failure[0] ? json_string(t->failure) : json_null());
		json_object_set_new(o, "seconds", t->exit_code >= 0 ? json_real(round(t->seconds * 1000) / 1000) : json_null());
		json_array_append_new(a, o);
	}
	json_object_set_new(j, "ladder_tries", a);
	json_t *s = json_object();
	json_object_set_new(s, "reason", w->stop_reason[0] ? json_string(w->stop_reason) : json_null());
	json_object_set_new(s, "rung", w->stop_rung ? json_integer(w->stop_rung) : json_null());
	json_object_set_new(s, "change", w->stop_change[0] ? sp_json_text(w->stop_change) : json_null());
	json_object_set_new(j, "ladder_stop", s);
}

void eng_ladder_print(struct eng_run *w, FILE *f)
{
	for (int i = 0; i < w->ntries; i++) {
		const struct eng_try *t = &w->tries[i];
		fprintf(f, "  ladder try %-2d rung %d %-28s ", i + 1, t->rung, t->change);
		if (t->exit_code >= 0)
			fprintf(f, "exit %d%s%s, %.1fs: %s\n", t->exit_code, t->failure[0] ? " " : "", t->failure, t->seconds,
				t->cmd);
		else
			fprintf(f, "did not end: %s\n", t->cmd);
	}
	if (w->stop_reason[0])
		fprintf(f, "  ladder        stopped: %s%s%s\n", w->stop_reason, w->stop_change[0] ? ": " : "", w->stop_change);
}

void eng_series_free(struct eng_run *w)
{
	for (int i = 0; i < w->ntries; i++)
		json_decref(w->tries[i].argv);
	free(w->owned_argv);
	free(w->oom);
}
