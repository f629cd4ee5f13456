// SPDX-License-Identifier: MIT
/* The ladder's decision (decide.h): what happened, the next rung, the advice
 * and the state to remember. Pure: no I/O, no clock. */
#include "ladder/decide.h"

#include <stdio.h>
#include <string.h>

enum sp_apply_verdict sp_ladder_apply_verdict(int apply, bool root, int watchers, bool force)
{
	if (apply <= 0)
		return SP_APPLY_NONE;
	if (apply > 1)
		return SP_APPLY_PRINT_ONLY;
	if (!root)
		return SP_APPLY_NEED_ROOT;
	if (watchers > 0 && !force)
		return SP_APPLY_WATCHED;
	return SP_APPLY_FLUSH;
}

/* the failure: the log's answer, or the cgroup's OOM killer when the log
 * ends in a bare SIGKILL (or there is no log) */
static void what_happened(const struct sp_ladder_in *in, struct sp_ladder_decision *d)
{
	const struct sp_oomlog *log = in->log;
	const struct sp_sample *s = in->s;
	if (log) {
		d->kind = log->kind;
		d->phase = log->phase;
		d->phase_why = log->phase_why;
		d->evidence = log->evidence;
		d->evidence_line = log->evidence_line;
	}
	if ((d->kind == SP_OOM_SIGKILL || !log) && sp_ok(s->cg.oom_kill.why) && s->cg.oom_kill.v > 0) {
		d->kind = SP_OOM_KERNEL;
		snprintf(d->cg_evidence, sizeof d->cg_evidence,
			 "cgroup %s: oom_kill %llu (memory.events / memory.oom_control)", s->cg.path,
			 (unsigned long long)s->cg.oom_kill.v);
		d->evidence = d->cg_evidence;
		d->evidence_line = 0;
	}
	d->figures = log && d->kind == log->kind;
}

static void job_facts(const struct sp_ladder_in *in, const struct sp_job_facts *planned, struct sp_ladder_decision *d)
{
	const struct sp_sample *s = in->s;
	struct sp_job_facts *f = &d->facts;
	sp_ladder_facts_from_log(f, in->log);
	f->kind = d->kind;
	f->phase = d->phase;
	if (!d->figures) {
		/* the cgroup decided: the log's figures are not this failure's */
		const struct sp_u64 miss = { 0, SP_MISSING };
		f->reserved_unalloc = f->tried = miss;
	}
	f->reclaimable = s->budget.reclaimable;
	f->budget_now = s->budget.now;
	f->budget_after_flush = s->budget.after_flush;
	f->total.why = s->mem.why;
	f->total.v = s->mem.why == SP_OK ? s->mem.v[SP_MI_TOTAL] : 0;
	f->contig_free.why = s->contig.why;
	f->contig_free.v = s->contig.why == SP_OK ? s->contig.free_2mib : 0;
	for (int i = 0; i < d->ncomp; i++) {
		f->nothers++;
		f->others_bytes += d->comp[i].holds_bytes;
		if (d->comp[i].suspect) {
			f->nsuspects++;
			f->suspect_bytes += d->comp[i].holds_bytes;
		}
	}
	if (planned) {
		memcpy(f->smaller_model, planned->smaller_model, sizeof f->smaller_model);
		f->smaller_model[sizeof f->smaller_model - 1] = 0;
		f->smaller_need = planned->smaller_need;
		memcpy(f->next_down, planned->next_down, sizeof f->next_down);
		f->next_down[sizeof f->next_down - 1] = 0;
		memcpy(f->next_down_hf, planned->next_down_hf, sizeof f->next_down_hf);
		f->next_down_hf[sizeof f->next_down_hf - 1] = 0;
		f->two_sparks = planned->two_sparks;
		f->two_sparks_strategy = planned->two_sparks_strategy;
		f->two_sparks_need = planned->two_sparks_need;
		memcpy(f->plan_name, planned->plan_name, sizeof f->plan_name);
		f->plan_name[sizeof f->plan_name - 1] = 0;
		f->plan_how = planned->plan_how;
		f->plan_prec = planned->plan_prec;
		f->plan_need = planned->plan_need;
		f->plan_need_min = planned->plan_need_min;
		f->plan_need_q8 = planned->plan_need_q8;
		f->plan_need_q4 = planned->plan_need_q4;
		if (!f->weights && planned->weights) {
			f->weights = planned->weights;
			f->weights_src = "the planner";
		}
		if (!f->model && planned->model && planned->model[0])
			f->model = planned->model; /* the log did not name it: the plan's model */
	}
}

/* the rungs that do not apply now (never one tried or just done) */
static void rungs_skipped(const struct sp_ladder_in *in, struct sp_ladder_decision *d)
{
	for (int r = 1; r <= SP_RUNGS; r++) {
		if (d->st.tried >> r & 1 || (r == 1 && in->flushed))
			continue;
		struct sp_ladder_skip *k = &d->skip[d->nskip];
		sp_ladder_skip_reason(r, &d->facts, k->reason, sizeof k->reason);
		if (!k->reason[0])
			continue;
		k->rung = r;
		d->nskip++;
		d->skipped |= 1u << r;
	}
}

/* the rungs tried: by hand, by a new failed log after a proposal, by the flush */
static void rungs_tried(const struct sp_ladder_in *in, struct sp_ladder_decision *d)
{
	struct sp_ladder_state *st = &d->st;
	st->tried |= in->mark;
	if (in->log && st->proposed && st->log_sig && in->log->sig != st->log_sig && d->kind != SP_OOM_UNKNOWN &&
	    !(st->tried >> st->proposed & 1) && !in->mark) {
		/* a different failed log after a proposal: that rung did not save the job */
		st->tried |= 1u << st->proposed;
		d->counted_tried = st->proposed;
	}
	if (in->flushed)
		st->tried |= 1u << 1;
}

static void advise(const struct sp_ladder_in *in, struct sp_ladder_decision *d)
{
	const char *title = sp_ladder_rung_title_for(d->next, &d->facts);
	for (int i = 0; i < d->ncomp; i++)
		if (d->comp[i].suspect)
			snprintf(d->before + strlen(d->before), sizeof d->before - strlen(d->before), "%s%s",
				 d->before[0] ? "; " : "", d->comp[i].action);
	if (d->fragmentation[0])
		snprintf(d->before + strlen(d->before), sizeof d->before - strlen(d->before), "%s%s",
			 d->before[0] ? "; " : "", d->fragmentation);
	if (in->log && d->facts.killer_threshold) {
		char knob[640];
		sp_oomlog_killer_knob(in->log, knob, sizeof knob);
		if (knob[0])
			snprintf(d->before + strlen(d->before), sizeof d->before - strlen(d->before), "%s%s",
				 d->before[0] ? "; " : "", knob);
	}
	if (!d->next)
		snprintf(d->advice, sizeof d->advice, "%s", d->change);
	else if (d->before[0] && d->next >= 2)
		snprintf(d->advice, sizeof d->advice, "before changing the job: %s. Then rung %d (%s): %s", d->before,
			 d->next, title, d->change);
	else if (d->before[0])
		snprintf(d->advice, sizeof d->advice, "rung %d (%s): %s. Then, before any change to the job: %s", d->next,
			 title, d->change, d->before);
	else
		snprintf(d->advice, sizeof d->advice, "rung %d (%s): %s", d->next, title, d->change);
}

/* a log with no memory failure in it: no rung, the state as it was (the
 * marks by hand are kept) */
static void not_memory(const struct sp_ladder_in *in, struct sp_ladder_decision *d)
{
	const struct sp_log_facts *m = &in->log->more;
	d->not_memory = true;
	d->st.tried |= in->mark;
	d->next = 0;
	if (m->last_error[0])
		snprintf(d->change, sizeof d->change, "the log shows no memory failure (its last error, line %llu: %.150s): "
			 "no rung of the OOM ladder answers it; fix that error and rerun", (unsigned long long)m->last_error_line,
			 m->last_error);
	else
		snprintf(d->change, sizeof d->change, "the log shows no memory failure: no rung of the OOM ladder answers "
			 "it; if the job did run out of memory, give the log that says so (stderr too)");
	snprintf(d->advice, sizeof d->advice, "not a memory failure: %s", d->change);
	/* nothing proposed for this log (the caller keeps the job's state as it
	 * was, less the marks by hand: cmd/ladder.c) */
	d->st.proposed = 0;
	d->st.log_sig = in->log->sig;
}

void sp_ladder_decide(const struct sp_ladder_in *in, struct sp_ladder_decision *d)
{
	sp_ladder_decide_planned(in, NULL, d);
}

void sp_ladder_decide_planned(const struct sp_ladder_in *in, const struct sp_job_facts *planned,
			      struct sp_ladder_decision *d)
{
	memset(d, 0, sizeof *d);
	d->st = in->st;
	what_happened(in, d);
	d->ncomp = sp_ladder_competitors(in->s, d->comp, SP_MAX_PROCS);
	job_facts(in, planned, d);
	d->ray = d->facts.ray;
	if (in->log && d->kind == SP_OOM_UNKNOWN && !d->ray) {
		/* the log holds no memory failure: no rung answers it */
		not_memory(in, d);
		return;
	}
	rungs_tried(in, d);
	rungs_skipped(in, d);
	d->next = sp_ladder_next(d->st.tried | d->skipped);
	sp_ladder_change(d->next, &d->facts, d->change, sizeof d->change);
	sp_ladder_fragmentation(&d->facts, d->fragmentation, sizeof d->fragmentation);
	advise(in, d);
	d->st.proposed = d->next;
	if (in->log)
		d->st.log_sig = in->log->sig;
}

enum sp_apply_verdict sp_ladder_apply_verdict_evict(int apply, bool root, bool have_paths, int watchers, bool force)
{
	if (apply == 1 && !root && have_paths)
		return SP_APPLY_EVICT; /* the caller's own page cache: no job of anyone else is touched */
	return sp_ladder_apply_verdict(apply, root, watchers, force);
}
