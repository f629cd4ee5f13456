// SPDX-License-Identifier: MIT
/* sparkops ladder — work an out-of-memory failure in the right order, and do
 * the first rung (flush the page cache) for the user. The decision is
 * ladder/decide.c's (pure); this file parses, reads, writes the state and
 * prints. */
#include "cmd/cli.h"
#include "cmd/cmdutil.h"
#include "cmd/ladderplan.h"
#include "ladder/decide.h"
#include "ladder/ladder.h"
#include "ladder/oomlog.h"
#include "probe/active.h"
#include "probe/evict.h"
#include "probe/flush.h"
#include "probe/pool.h"
#include "probe/probe.h"
#include "probe/sysctl.h"
#include "probe/unexplained.h"
#include "util/fileio.h"
#include "util/input.h"
#include "util/json.h"
#include "util/msg.h"
#include "util/opt.h"
#include "util/units.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the log shows no memory failure: no rung is offered (docs/ladder.md "Exit status") */
#define SP_EXIT_NOT_MEMORY 3

/* the failure's key and words: Ray's memory monitor is its own kind, the
 * classifier's ray_oom_kill, also where a log's OutOfMemoryError would
 * otherwise read as a PyTorch one */
static const char *failure_key(const struct sp_ladder_decision *d)
{
	return d->ray ? sp_oom_kind_key(SP_OOM_RAY) : sp_oom_kind_key(d->kind);
}

static const char *failure_text(const struct sp_ladder_decision *d)
{
	return d->ray ? "Ray's memory monitor killed the task (the node's used memory crossed RAY_memory_usage_threshold)"
		      : sp_oom_kind_text(d->kind);
}

static enum sp_job_family family(const struct sp_ladder_decision *d)
{
	return d->ray ? SP_FAMILY_RAY : sp_ladder_family_of(d->kind, d->facts.engine);
}

static const struct sp_cmdspec spec = {
	.name = "ladder",
	.usage = "usage: sparkops ladder [--log FILE|-] [--job NAME] [--tried N] [--reset] [--plan 'PLAN'] [--json]\n"
		 "       sparkops ladder --apply 1 [--force] [--job NAME] [--json]\n"
		 "\n"
		 "Works an out-of-memory failure in the right order: 1 flush the page cache;\n"
		 "competing servers judged by their cap before any change to the job; 2 shorter\n"
		 "sequence/packing first, then a smaller micro-batch with more gradient\n"
		 "accumulation; 3 bf16 LoRA before QLoRA; 4 a smaller model or two Sparks.\n"
		 "A server's failure (vLLM, SGLang, llama.cpp, Ollama, TGI) gets the server's\n"
		 "own knobs instead: context length, concurrent sequences, the KV cache, the\n"
		 "memory share, then quantized weights and a smaller model.\n"
		 "Reads the live state and, with --log, the failed job's output (failure kind,\n"
		 "phase, the figures it names, the method, batch and model it shows), and\n"
		 "remembers per job which rungs were tried; rungs that do not apply are skipped\n"
		 "with the reason. Batch size is never rung 1.\n"
		 "\n",
	.tail = "exit: 0 advice given (or rung 1 done), 1 every rung tried, or --apply 1 refused while a\n"
		"      job is watched, or the flush failed; 2 usage or input error (an unreadable log,\n"
		"      --apply 2-4); 3 not a memory failure (the log shows none: no rung is offered);\n"
		"      4 --apply 1 without root\n",
};

struct opts {
	const char *evict; /* --evict PATH: rung 1 without root */
	const char *plan;  /* --plan 'MODEL --method ...': a plan command line */
	const char *log;
	const char *job;
	unsigned mark;
	bool reset, json, force;
	int apply;
};

struct style {
	const char *bold, *off;
};

/* ---- options ------------------------------------------------------------------ */

static const char *rung_arg(const char *arg, int *rung)
{
	int64_t v;
	if (sp_parse_i64(arg, &v) < 0 || v < 1 || v > SP_RUNGS)
		return "is not a rung (1-4)";
	*rung = (int)v;
	return NULL;
}

static const char *opt_tried(void *target, const char *arg)
{
	int r;
	const char *bad = rung_arg(arg, &r);
	if (!bad)
		*(unsigned *)target |= 1u << r;
	return bad;
}

static const char *opt_apply(void *target, const char *arg)
{
	return rung_arg(arg, target);
}

static const char *opt_job(void *target, const char *arg)
{
	if (!sp_ladder_job_valid(arg))
		return "is not a job name (1-100 of A-Z a-z 0-9 . _ - @ +, not starting with '.')";
	*(const char **)target = arg;
	return NULL;
}

/* 1: parsed, 0: --help was printed */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	const struct sp_option table[] = {
		SP_OPT_GROUP("options:"),
		SP_OPT_IN_PATH("log", &o->log, "FILE", "the failed job's output (- for stdin), read streaming"),
		SP_OPT_CALLBACK("job", &o->job, "NAME", opt_job,
				"whose ladder (default: from the log's path, else the working\n"
				"directory); state in $XDG_STATE_HOME/sparkops/"),
		SP_OPT_CALLBACK("tried", &o->mark, "N", opt_tried, "mark rung N (1-4) as tried (may be repeated)"),
		SP_OPT_FLAG(0, "reset", &o->reset, "forget the rungs tried for this job, then advise"),
		SP_OPT_CALLBACK("apply", &o->apply, "1", opt_apply,
				"do rung 1 now: sync, then 3 into /proc/sys/vm/drop_caches (root),\n"
				"and report what it freed; rungs 2-4 change the job and are printed"),
		SP_OPT_IN_PATH("evict", &o->evict, "PATH",
			    "--apply 1 without root: evict the page cache of your own\n"
			    "files under PATH (a model folder) instead of flushing"),
		SP_OPT_FLAG(0, "force", &o->force, "flush even while 'sparkops run' or 'sparkops watch' is watching a job"),
		SP_OPT_STRING("plan", &o->plan, "PLAN",
			      "a quoted 'sparkops plan' command line ('MODEL --method lora --seq\n"
			      "4096 --batch 4'): plan the next rung's change and print its peak\n"
			      "against the live budget"),
		SP_OPT_FLAG(0, "json", &o->json, "one JSON object (phase, failure, next_rung, rungs_tried, advice ...)"),
		SP_OPT_END(),
	};
	int i = sp_opt_parse(&spec, table, argc, argv);
	if (i < 0)
		return 0;
	if (i < argc)
		sp_usage_error("ladder", "unexpected argument '%s'", argv[i]);
	if (o->force && o->apply != 1)
		sp_usage_error("ladder", "--force only goes with --apply 1");
	if (o->plan) {
		/* plan's own option table and checks, before anything is read */
		if (sp_ladder_plan_parse(o->plan) < 0)
			return 0; /* plan's --help was asked for and printed */
	}
	return 1;
}

/* ---- the log ---------------------------------------------------------------- */

static int feed_oomlog(void *p, const char *buf, size_t len)
{
	sp_oomlog_feed(p, buf, len);
	return 0;
}

static int read_log(const char *path, struct sp_oomlog *p)
{
	int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : sp_input_open(path);
	if (fd < 0)
		return fd;
	sp_oomlog_init(p);
	int err = sp_feed_fd(fd, feed_oomlog, p);
	if (fd != STDIN_FILENO)
		close(fd);
	sp_oomlog_finish(p);
	return err;
}

/* ---- output -------------------------------------------------------------------------- */

/* what the output shows: the decision and what was read and done */
/* --apply 1's compaction (docs/ladder.md "The field corpus": fragmentation in the log or on
 * the machine): what 2 MiB blocks held free before the flush and after the compaction */
struct compaction {
	int err;                       /* sp_compact_memory's: 0 done */
	struct sp_contig before, after;
};

/* the memory nobody holds (probe/unexplained.h, as status computes it): the
 * ladder names it before the rungs when it is SP_UNEXPLAINED_SHOW or more */
struct nobody {
	struct sp_unexplained u;
	struct sp_devshm shm;
	bool shm_read;
	char note[512]; /* the line, or "" under the threshold or unknown */
};

static void nobody_compute(const struct sp_sample *s, struct nobody *n)
{
	memset(n, 0, sizeof *n);
	n->shm_read = sp_unexplained_judge(s, true, &n->u, &n->shm);
	if (!sp_ok(n->u.unexplained.why) || n->u.unexplained.v < SP_UNEXPLAINED_SHOW)
		return;
	const struct sp_shmfile *big = NULL;
	for (int i = 0; n->shm_read && n->shm.why == SP_OK && n->shm.holders_known && i < n->shm.n && !big; i++)
		if (!n->shm.f[i].holder)
			big = &n->shm.f[i]; /* largest first */
	char g[32], b[32], orphan[320];
	if (big)
		snprintf(orphan, sizeof orphan, "the biggest: %s, %s: sparkops evict --shm %s", big->name,
			 sp_fmt_bytes(b, sizeof b, (double)big->resident), big->name);
	else
		snprintf(orphan, sizeof orphan, "sparkops evict --shm NAME; sparkops status lists them");
	snprintf(n->note, sizeof n->note,
		 "%s of the pool is held by no process: check shmem and /dev/shm files no process maps (%s), "
		 "mlocked or hugetlb pages, driver-held memory after a failed job",
		 sp_fmt_gib(g, sizeof g, (double)n->u.unexplained.v), orphan);
}

struct view {
	const struct sp_ladder_job *c;
	const struct sp_sample *s;
	const struct sp_oomlog *log;       /* NULL without --log */
	const struct sp_ladder_decision *d;
	const struct sp_flush_result *flush; /* NULL: nothing flushed */
	const struct sp_sample *before;      /* the reading before rung 1 was done, NULL: none done */
	const struct sp_ladder_plan *plan;   /* --plan, or NULL */
	const struct compaction *compact;    /* rung 1 compacted too, or NULL */
	const struct nobody *nb;             /* the pool's unexplained part, read from s */
};

static json_t *u64_json(struct sp_u64 f)
{
	return sp_ok(f.why) ? json_integer((json_int_t)f.v) : json_null();
}

static json_t *count_json(uint64_t n)
{
	return n ? json_integer((json_int_t)n) : json_null();
}

static json_t *figures_json(const struct view *v)
{
	json_t *o = json_object();
	const struct sp_u64 miss = { 0, SP_MISSING };
	const struct sp_oom_figures none = { miss, miss, miss, miss, miss, miss };
	const struct sp_oom_figures *all = v->log ? &v->log->fig : &none;
	const struct sp_oom_figures *f = v->d->figures && v->log ? &v->log->fig : &none;
	json_object_set_new(o, "tried_to_allocate_bytes", u64_json(f->tried));
	json_object_set_new(o, "total_capacity_bytes", u64_json(f->total));
	json_object_set_new(o, "free_bytes", u64_json(f->free));
	json_object_set_new(o, "reserved_unallocated_bytes", u64_json(f->reserved_unalloc));
	/* the KV cache figures are facts of a server's log, whatever decided the
	 * failure (a training log has none) */
	if (sp_ladder_family_of(v->d->kind, v->d->facts.engine) == SP_FAMILY_TRAINING)
		all = &none;
	json_object_set_new(o, "kv_cache_needed_bytes", u64_json(all->kv_needed));
	/* a negative KV cache (vLLM's "-3.41 GiB") is not 0 bytes: null, and
	 * log.kv_cache_negative says why */
	json_object_set_new(o, "kv_cache_available_bytes",
			    v->log && v->log->kv_negative ? json_null() : u64_json(all->kv_available));
	return o;
}

static json_t *evidence_json(const struct sp_ladder_decision *d)
{
	if (!d->evidence || !d->evidence[0])
		return json_null();
	json_t *e = json_object();
	json_object_set_new(e, "line", count_json(d->evidence_line));
	json_object_set_new(e, "text", sp_json_text(d->evidence));
	return e;
}

static json_t *log_json(const struct sp_oomlog *log)
{
	if (!log)
		return json_null();
	json_t *l = json_object();
	json_object_set_new(l, "bytes", json_integer((json_int_t)log->bytes));
	json_object_set_new(l, "lines", json_integer((json_int_t)log->lines));
	json_object_set_new(l, "long_lines", json_integer((json_int_t)log->long_lines));
	json_object_set_new(l, "control_bytes", json_integer((json_int_t)log->control_bytes));
	json_object_set_new(l, "batch_per_device", count_json(log->batch_per_device));
	json_object_set_new(l, "grad_accum", count_json(log->grad_accum));
	json_object_set_new(l, "seq_len", count_json(log->seq_len));
	json_object_set_new(l, "engine", log->engine ? json_string(sp_log_engine_key(log->engine)) : json_null());
	json_object_set_new(l, "method", log->method ? json_string(sp_log_method_key(log->method)) : json_null());
	json_object_set_new(l, "method_reason", log->method_why[0] ? sp_json_text(log->method_why) : json_null());
	json_object_set_new(l, "trainable_pct", log->trainable_pct > 0 ? json_real(log->trainable_pct) : json_null());
	json_object_set_new(l, "model", log->model[0] ? sp_json_text(log->model) : json_null());
	json_object_set_new(l, "max_model_len", count_json(log->max_model_len));
	json_object_set_new(l, "est_max_model_len", count_json(log->est_max_model_len));
	json_object_set_new(l, "max_num_seqs", count_json(log->max_num_seqs));
	json_object_set_new(l, "kv_cache_negative", json_boolean(log->kv_negative));
	json_object_set_new(l, "vllm_v1", json_boolean(log->vllm_v1));
	/* the classifier's verdicts beyond the kind (oomlog.h; docs/ladder.md "The field corpus") */
	json_object_set_new(l, "killer", log->killer ? json_string(sp_log_killer_key(log->killer)) : json_null());
	json_object_set_new(l, "killer_threshold", json_boolean(log->killer_threshold));
	json_object_set_new(l, "killer_limit_pct", log->killer_limit_pct > 0 ? json_real(log->killer_limit_pct) : json_null());
	json_object_set_new(l, "not_memory", json_boolean(log->not_memory && log->kind == SP_OOM_UNKNOWN));
	json_object_set_new(l, "not_memory_evidence", log->not_memory ? sp_json_text(log->not_memory_why) : json_null());
	json_object_set_new(l, "weights_alloc", json_boolean(log->weights_alloc));
	json_object_set_new(l, "fragmented", log->fragmented ? sp_json_text(log->fragmented_why) : json_null());
	return l;
}

static json_t *live_json(const struct sp_sample *s)
{
	json_t *live = json_object();
	json_object_set_new(live, "free_bytes", s->mem.why == SP_OK ? json_integer((json_int_t)s->mem.v[SP_MI_FREE]) : json_null());
	json_object_set_new(live, "budget_now_bytes", u64_json(s->budget.now));
	json_object_set_new(live, "reclaimable_bytes", u64_json(s->budget.reclaimable));
	json_object_set_new(live, "budget_after_flush_bytes", u64_json(s->budget.after_flush));
	json_object_set_new(live, "cgroup_oom_kill", u64_json(s->cg.oom_kill));
	json_object_set_new(live, "cgroup_failcnt", u64_json(s->cg.failcnt));
	return live;
}

static json_t *competitors_json(const struct sp_ladder_decision *d)
{
	json_t *ca = json_array();
	for (int i = 0; i < d->ncomp; i++) {
		const struct sp_competitor *k = &d->comp[i];
		json_t *o = json_object();
		json_object_set_new(o, "pid", json_integer(k->proc->pid));
		json_object_set_new(o, "name", sp_json_text(k->proc->name));
		json_object_set_new(o, "kind", json_string(sp_proc_kind_name(k->proc->kind)));
		json_object_set_new(o, "holds_bytes", k->holds_ok ? json_integer((json_int_t)k->holds_bytes) : json_null());
		json_object_set_new(o, "cap_fraction", k->proc->has_cap ? json_real(k->proc->cap_frac) : json_null());
		json_object_set_new(o, "cap_bytes", k->cap_ok ? json_integer((json_int_t)k->cap_bytes) : json_null());
		json_object_set_new(o, "cap_default", json_boolean(k->proc->has_cap && k->proc->cap_default));
		json_object_set_new(o, "suspect", json_boolean(k->suspect));
		json_object_set_new(o, "judgement", sp_json_text(k->judgement));
		json_object_set_new(o, "action", k->action[0] ? sp_json_text(k->action) : json_null());
		json_array_append_new(ca, o);
	}
	return ca;
}

static json_t *skipped_json(const struct sp_ladder_decision *d)
{
	json_t *a = json_array();
	for (int i = 0; i < d->nskip; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "rung", json_integer(d->skip[i].rung));
		json_object_set_new(o, "reason", sp_json_text(d->skip[i].reason));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *bytes_or_null(uint64_t v)
{
	return v ? json_integer((json_int_t)v) : json_null();
}

/* what the checks read (docs/ladder.md "What the ladder checks") */
static void checks_json(json_t *root, const struct sp_ladder_decision *d)
{
	const struct sp_job_facts *f = &d->facts;
	json_t *mc = json_null();
	if (f->plan_need) {
		mc = json_object();
		json_object_set_new(mc, "model", sp_json_text(f->plan_name));
		json_object_set_new(mc, "from", json_string(f->plan_how ? f->plan_how : "--plan"));
		json_object_set_new(mc, "need_bytes", json_integer((json_int_t)f->plan_need));
		json_object_set_new(mc, "least_need_bytes", bytes_or_null(f->plan_need_min));
		json_object_set_new(mc, "need_8bit_bytes", bytes_or_null(f->plan_need_q8));
		json_object_set_new(mc, "need_4bit_bytes", bytes_or_null(f->plan_need_q4));
	}
	json_object_set_new(root, "model_check", mc);
	json_object_set_new(root, "weights_bytes", bytes_or_null(f->weights));
	const struct sp_log_facts *m = f->more;
	json_t *h = json_null();
	if (m && m->frac_hint) {
		h = json_object();
		json_object_set_new(h, "direction", json_string(m->frac_hint < 0 ? "lower" : "higher"));
		json_object_set_new(h, "flag", json_string(m->frac_hint_flag));
		json_object_set_new(h, "line", json_integer((json_int_t)m->frac_hint_line));
		json_object_set_new(h, "text", sp_json_text(m->frac_hint_text));
	}
	json_object_set_new(root, "server_hint", h);
	json_object_set_new(root, "share_used", m && m->frac_used > 0 ? json_real(m->frac_used) : json_null());
	enum sp_job_family fam = family(d);
	json_t *share = json_null();
	if (!d->not_memory && (fam == SP_FAMILY_VLLM || fam == SP_FAMILY_SGLANG || fam == SP_FAMILY_TGI)) {
		char why[400];
		double v = sp_ladder_share(f, why, sizeof why);
		share = json_object();
		json_object_set_new(share, "advised", v > 0 ? json_real(v) : json_null());
		json_object_set_new(share, "why", why[0] ? sp_json_text(why) : json_null());
	}
	json_object_set_new(root, "share", share);
	json_t *ray = json_null();
	if (d->ray && m) {
		ray = json_object();
		json_object_set_new(ray, "used_bytes", bytes_or_null(m->ray_used));
		json_object_set_new(ray, "total_bytes", bytes_or_null(m->ray_total));
		json_object_set_new(ray, "threshold", m->ray_threshold > 0 ? json_real(m->ray_threshold) : json_null());
		json_object_set_new(ray, "table_rows", json_integer(m->ray_rows));
		json_object_set_new(ray, "table_top", m->ray_top[0] ? sp_json_text(m->ray_top) : json_null());
	}
	json_object_set_new(root, "ray", ray);
}

static void ladder_json(json_t *root, const struct sp_ladder_decision *d)
{
	checks_json(root, d);
	json_t *tried = json_array();
	for (int i = 1; i <= SP_RUNGS; i++)
		if (d->st.tried >> i & 1)
			json_array_append_new(tried, json_integer(i));
	json_object_set_new(root, "rungs_tried", tried);
	json_object_set_new(root, "counted_tried", d->counted_tried ? json_integer(d->counted_tried) : json_null());
	json_object_set_new(root, "skipped", skipped_json(d));
	json_object_set_new(root, "family", json_string(sp_ladder_family_key(family(d))));
	uint64_t len = sp_ladder_model_len(&d->facts);
	json_object_set_new(root, "max_model_len_advised",
			    len && family(d) != SP_FAMILY_TRAINING && family(d) != SP_FAMILY_RAY ? json_integer((json_int_t)len)
													: json_null());
	json_object_set_new(root, "fragmentation", d->fragmentation[0] ? sp_json_text(d->fragmentation) : json_null());
	json_object_set_new(root, "next_rung", d->next ? json_integer(d->next) : json_null());
	json_object_set_new(root, "next_rung_title", json_string(d->not_memory ? "not a memory failure: no rung"
									       : sp_ladder_rung_title_for(d->next, &d->facts)));
	json_object_set_new(root, "before_next_rung", d->before[0] ? sp_json_text(d->before) : json_null());
	json_object_set_new(root, "change", sp_json_text(d->change));
	json_object_set_new(root, "advice", sp_json_text(d->advice));
}

static void compact_json(json_t *root, const struct compaction *k)
{
	if (!k)
		return;
	json_object_set_new(root, "compacted", json_boolean(k->err == 0));
	json_object_set_new(root, "contiguous_before_bytes",
			    k->before.why == SP_OK ? json_integer((json_int_t)k->before.free_2mib) : json_null());
	json_object_set_new(root, "contiguous_after_bytes",
			    k->after.why == SP_OK ? json_integer((json_int_t)k->after.free_2mib) : json_null());
}

static void flush_json(json_t *root, const struct sp_flush_result *f)
{
	if (!f)
		return;
	json_object_set_new(root, "freed_bytes", json_integer((json_int_t)f->freed_bytes));
	json_object_set_new(root, "page_cache_before_bytes", json_integer((json_int_t)f->cache_before));
	json_object_set_new(root, "page_cache_after_bytes", json_integer((json_int_t)f->cache_after));
	json_object_set_new(root, "mem_free_gain_bytes", json_integer((json_int_t)f->mem_free_gain));
}

static int dump_json(json_t *root)
{
	int rc = sp_json_print(stdout, root);
	json_decref(root);
	return rc;
}

static int print_json(const struct view *v)
{
	const struct sp_ladder_decision *d = v->d;
	json_t *root = json_object();
	json_object_set_new(root, "version", json_string(SPARKOPS_VERSION));
	json_object_set_new(root, "job", sp_json_text(v->c->job));
	json_object_set_new(root, "state_file", v->c->have_path ? sp_json_text(v->c->path) : json_null());
	json_object_set_new(root, "phase", json_string(sp_oom_phase_key(d->phase)));
	json_object_set_new(root, "phase_reason", d->phase_why && d->phase_why[0] ? json_string(d->phase_why) : json_null());
	json_object_set_new(root, "failure", json_string(failure_key(d)));
	json_object_set_new(root, "failure_text", json_string(failure_text(d)));
	json_object_set_new(root, "not_memory_failure", json_boolean(d->not_memory));
	json_object_set_new(root, "evidence", evidence_json(d));
	json_object_set_new(root, "figures", figures_json(v));
	json_object_set_new(root, "log", log_json(v->log));
	json_object_set_new(root, "live", live_json(v->s));
	/* after rung 1 was done, "live" is read after it; this is the reading before */
	json_object_set_new(root, "live_before_flush", v->before ? live_json(v->before) : json_null());
	json_object_set_new(root, "concurrent", competitors_json(d));
	json_object_set_new(root, "unexplained_bytes", u64_json(v->nb->u.unexplained));
	json_object_set_new(root, "unexplained_threshold_bytes", json_integer((json_int_t)SP_UNEXPLAINED_SHOW));
	json_object_set_new(root, "unexplained_note", v->nb->note[0] ? sp_json_text(v->nb->note) : json_null());
	ladder_json(root, d);
	flush_json(root, v->flush);
	compact_json(root, v->compact);
	json_object_set_new(root, "plan", v->plan ? sp_ladder_plan_json(v->plan) : json_null());
	return dump_json(root);
}

static void print_flushed(const struct style *y, const struct sp_flush_result *f)
{
	char g1[32], g2[32], g3[32];
	printf("%sFLUSHED%s  sync; echo 3 > %s\n", y->bold, y->off, f->path);
	printf("  page cache  %s -> %s: freed %s (MemFree %+.1f GiB)\n\n",
	       sp_fmt_gib(g1, sizeof g1, (double)f->cache_before), sp_fmt_gib(g2, sizeof g2, (double)f->cache_after),
	       sp_fmt_gib(g3, sizeof g3, (double)f->freed_bytes), (double)f->mem_free_gain / (double)SP_GiB);
}

static void print_figures(const struct sp_oom_figures *f)
{
	char g1[32];
	const struct {
		const char *name;
		struct sp_u64 v;
	} figs[] = { { "tried to allocate", f->tried }, { "total capacity", f->total },
		     { "free", f->free }, { "reserved but unallocated", f->reserved_unalloc } };
	bool any = false;
	for (size_t i = 0; i < 4; i++)
		if (sp_ok(figs[i].v.why)) {
			printf("%s%s %s", any ? ", " : "  figures    ", figs[i].name,
			       sp_fmt_bytes(g1, sizeof g1, (double)figs[i].v.v));
			any = true;
		}
	if (any)
		printf("\n");
}

/* what else the log says about the job, on one line ("" when nothing) */
static void print_log_facts(const struct sp_oomlog *log, bool server)
{
	char line[1024] = "", g1[32], g2[32];
	size_t o = 0;
#define ADD(...) (o += (size_t)snprintf(line + o, o < sizeof line ? sizeof line - o : 0, __VA_ARGS__))
	if (log->engine)
		ADD("%s%s", o ? ", " : "", sp_log_engine_key(log->engine));
	if (log->model[0])
		ADD("%smodel %.120s", o ? ", " : "", log->model);
	if (log->method)
		ADD("%s%s%s%.90s%s", o ? ", " : "", sp_log_method_key(log->method), log->method_why[0] ? " (" : "",
		    log->method_why, log->method_why[0] ? ")" : "");
	if (log->batch_per_device)
		ADD("%sbatch %llu", o ? ", " : "", (unsigned long long)log->batch_per_device);
	if (log->grad_accum)
		ADD("%saccumulation %llu", o ? ", " : "", (unsigned long long)log->grad_accum);
	if (log->seq_len)
		ADD("%ssequence %llu", o ? ", " : "", (unsigned long long)log->seq_len);
	if (log->max_model_len)
		ADD("%smax_model_len %llu", o ? ", " : "", (unsigned long long)log->max_model_len);
	if (log->est_max_model_len)
		ADD("%sestimated max length %llu", o ? ", " : "", (unsigned long long)log->est_max_model_len);
	if (log->max_num_seqs)
		ADD("%smax_num_seqs %llu", o ? ", " : "", (unsigned long long)log->max_num_seqs);
	if (server && sp_ok(log->fig.kv_needed.why) && sp_ok(log->fig.kv_available.why))
		ADD("%sKV cache %s needed, %s%s available", o ? ", " : "",
		    sp_fmt_gib(g1, sizeof g1, (double)log->fig.kv_needed.v), log->kv_negative ? "negative (" : "",
		    log->kv_negative ? "none)" : sp_fmt_gib(g2, sizeof g2, (double)log->fig.kv_available.v));
	else if (server && log->kv_negative)
		ADD("%sKV cache memory negative", o ? ", " : "");
#undef ADD
	if (o)
		printf("  %-10s %s\n", "log says", line);
}

static void print_failure(const struct view *v)
{
	const struct sp_ladder_decision *d = v->d;
	if (!v->log && d->kind == SP_OOM_UNKNOWN) {
		printf("  %-10s no log given (--log FILE): the ladder from the live state only\n", "failure");
		return;
	}
	const char *why = d->phase_why;
	printf("  %-10s %s: %s\n", "failure", failure_key(d), failure_text(d));
	printf("  %-10s %s%s%s%s\n", "phase", sp_oom_phase_key(d->phase), why && why[0] ? " (" : "", why ? why : "",
	       why && why[0] ? ")" : "");
	if (d->evidence && d->evidence[0]) {
		if (d->evidence_line)
			printf("  %-10s line %llu: %.160s\n", "evidence", (unsigned long long)d->evidence_line, d->evidence);
		else
			printf("  %-10s %s\n", "evidence", d->evidence);
	}
	if (d->figures && v->log)
		print_figures(&v->log->fig);
	if (v->log)
		print_log_facts(v->log, family(d) != SP_FAMILY_TRAINING);
}

static void print_live(const struct style *y, const struct view *v)
{
	const struct sp_sample *s = v->s;
	const struct sp_ladder_decision *d = v->d;
	char g1[32], g2[32];
	if (sp_ok(s->budget.now.why)) {
		printf("  %-10s %s for a new job now", "live", sp_fmt_gib(g1, sizeof g1, (double)s->budget.now.v));
		if (v->before)
			printf(" (read after the %s; before it: %s)", v->flush ? "flush" : "eviction",
			       sp_ok(v->before->budget.now.why) ? sp_fmt_gib(g2, sizeof g2, (double)v->before->budget.now.v)
								: "unknown");
		else if (sp_ok(s->budget.reclaimable.why))
			printf(", a flush gives back %s", sp_fmt_gib(g2, sizeof g2, (double)s->budget.reclaimable.v));
		printf("\n");
	}
	if (v->nb->note[0])
		printf("  %-10s %s\n", "nobody", v->nb->note);
	if (sp_ok(s->cg.oom_kill.why) && s->cg.oom_kill.v > 0)
		printf("  %-10s the OOM killer has killed %llu process(es) in cgroup %s\n", "cgroup",
		       (unsigned long long)s->cg.oom_kill.v, s->cg.path);
	if (d->ncomp) {
		printf("\n%sCONCURRENT%s  judged by their cap, not their presence\n", y->bold, y->off);
		for (int i = 0; i < d->ncomp; i++)
			printf("  %s %-14s pid %-7d %s\n", d->comp[i].suspect ? "!" : " ", d->comp[i].proc->name,
			       d->comp[i].proc->pid, d->comp[i].judgement);
	}
}

static void print_ladder(const struct style *y, const struct view *v)
{
	const struct sp_ladder_decision *d = v->d;
	if (d->not_memory) {
		printf("\n%sLADDER%s  no rung: not a memory failure (exit 3)\n  %s\n", y->bold, y->off, d->change);
		return;
	}
	printf("\n%sLADDER%s  ", y->bold, y->off);
	for (int i = 1; i <= SP_RUNGS; i++)
		printf("%s%d%s%s%s", i == d->next ? "[" : "", i,
		       (d->st.tried >> i & 1) ? " tried" : (d->skipped >> i & 1) ? " skipped" : "", i == d->next ? "]" : "",
		       i < SP_RUNGS ? "  " : "");
	printf("\n");
	for (int i = 0; i < d->nskip; i++)
		printf("  rung %d skipped: %s\n", d->skip[i].rung, d->skip[i].reason);
	if (d->counted_tried)
		printf("  rung %d was proposed for this job last time and it failed again: counted as tried\n",
		       d->counted_tried);
	if (d->before[0] && d->next >= 2)
		printf("  %sbefore changing the job:%s %s\n", y->bold, y->off, d->before);
	if (d->next)
		printf("  %snext: rung %d, %s%s\n  change: %s\n", y->bold, d->next,
		       sp_ladder_rung_title_for(d->next, &d->facts), y->off, d->change);
	else
		printf("  %s\n", d->change);
	if (d->before[0] && d->next == 1)
		printf("  then, before any change to the job: %s\n", d->before);
	if (d->next && !v->flush)
		printf("\n  after trying it, rerun the job; if it fails again, 'sparkops ladder --log LOG' with its new log\n"
		       "  (same path, or the same --job) proposes the next rung; '--tried %d' marks it by hand\n", d->next);
}

static void print_human(const struct view *v)
{
	const bool col = sp_color(STDOUT_FILENO);
	const struct style y = { col ? "\033[1m" : "", col ? "\033[0m" : "" };
	printf("%ssparkops ladder%s  job '%s'\n\n", y.bold, y.off, v->c->job);
	if (v->flush)
		print_flushed(&y, v->flush);
	if (v->compact) {
		char g1[32], g2[32];
		if (v->compact->err)
			printf("%sCOMPACT%s  echo 1 > compact_memory failed: %s\n", y.bold, y.off, strerror(-v->compact->err));
		else
			printf("%sCOMPACTED%s echo 1 > compact_memory: free in blocks of 2 MiB or more %s before the flush, "
			       "%s after\n",
			       y.bold, y.off,
			       v->compact->before.why == SP_OK ? sp_fmt_bytes(g1, sizeof g1, (double)v->compact->before.free_2mib) : "unknown",
			       v->compact->after.why == SP_OK ? sp_fmt_bytes(g2, sizeof g2, (double)v->compact->after.free_2mib) : "unknown");
	}
	print_failure(v);
	print_live(&y, v);
	print_ladder(&y, v);
	if (v->plan)
		sp_ladder_plan_print(v->plan, y.bold, y.off);
}

/* --apply 2-4: the change to make, nothing done */
static int print_change_only(int rung, const struct sp_ladder_decision *d, const struct sp_ladder_plan *plan, bool json)
{
	char change[2048];
	const char *title = sp_ladder_rung_title_for(rung, &d->facts);
	sp_ladder_change(rung, &d->facts, change, sizeof change);
	sp_error("--apply %d: rungs 2-4 change the job itself, which sparkops cannot do for you; "
		 "the change to make is printed", rung);
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "rung", json_integer(rung));
		json_object_set_new(j, "applied", json_false());
		json_object_set_new(j, "title", json_string(title));
		json_object_set_new(j, "change", sp_json_text(change));
		json_object_set_new(j, "plan", plan ? sp_ladder_plan_json(plan) : json_null());
		dump_json(j);
	} else {
		printf("rung %d, %s\nchange: %s\n", rung, title, change);
		if (plan)
			sp_ladder_plan_print(plan, "", "");
	}
	return SP_EXIT_USAGE;
}

/* ---- the command --------------------------------------------------------------------- */

/* --apply 1: the flush, unless a watched job or the kernel refuses; 0 done */
static int apply_flush(const struct opts *o, struct sp_flush_result *fr)
{
	int pids[8];
	int n = sp_active_watchers(pids, 8);
	if (sp_ladder_apply_verdict(o->apply, true, n, o->force) == SP_APPLY_WATCHED) {
		sp_error("not flushing: 'sparkops run/watch' is watching a job (pid %d%s); a flush is a "
			 "between-runs reset: wait for it to end, or add --force", pids[0], n > 1 ? " and others" : "");
		return SP_EXIT_TROUBLE;
	}
	int e = sp_flush_page_cache(fr);
	if (e == -EACCES || e == -EPERM || e == -EROFS) {
		sp_error("'%s': %s: flushing needs root with CAP_SYS_ADMIN (in a container, "
			 "run it on the host)", fr->path, strerror(-e));
		return SP_EXIT_NOPERM;
	}
	if (e == -EXDEV) {
		sp_error("'%s': %s: nothing flushed", fr->path, sp_procsys_strerror(e));
		return SP_EXIT_USAGE;
	}
	if (e < 0) {
		sp_error("'%s': %s: nothing flushed", fr->path, sp_procsys_strerror(e));
		return SP_EXIT_TROUBLE;
	}
	return 0;
}

/* --apply 1 --evict PATH without root: the caller's own files' page cache; 0 done */
static int apply_evict(const char *path)
{
	struct sp_evict *e = malloc(sizeof *e);
	if (!e)
		return SP_EXIT_IO;
	sp_evict_init(e, false);
	int r = sp_evict_path(e, path);
	int rc = 0;
	char a[32], b[32];
	if (r < 0) {
		sp_error("--evict '%s': %s", path, strerror(-r));
		rc = SP_EXIT_USAGE;
	} else if (e->files == 0) {
		sp_error("--evict '%s': nothing evictable: none of its files is yours (%ld of other users); "
			 "flushing needs root", path, e->not_owned);
		rc = SP_EXIT_NOPERM;
	} else {
		sp_note("rung 1 without root: evicted the page cache of %ld file%s under '%s' (%s resident before, %s after)",
			e->files, e->files == 1 ? "" : "s", path, sp_fmt_bytes(a, sizeof a, (double)e->resident_before),
			sp_fmt_bytes(b, sizeof b, (double)e->resident_after));
	}
	free(e);
	return rc;
}

/* the machine: memory, the cgroup, the processes */
static void reread(struct sp_sample *s)
{
	struct sp_read_opts ro;
	sp_read_opts_init(&ro);
	ro.what = SP_READ_MEM | SP_READ_CGROUP | SP_READ_PROCS;
	sp_sample_read(s, &ro);
}

/* what the decision reads: the log, the machine, the job's state */
static int gather(const struct opts *o, struct sp_oomlog *log, struct sp_sample *s, struct sp_ladder_job *c)
{
	if (o->log) {
		int e = read_log(o->log, log);
		if (e < 0) {
			sp_error("'%s': %s", strcmp(o->log, "-") == 0 ? "stdin" : o->log, sp_input_strerror(e));
			return SP_EXIT_USAGE;
		}
	}
	reread(s);
	sp_ladder_job_open(c, o->job, o->log, o->reset);
	if (c->warn[0])
		sp_warn("%s", c->warn);
	return 0;
}

/* what the planner says of the job's model (--plan's, or the log's when the
 * catalog knows it and a server runs it), before any rung is offered */
static void model_checked(const struct sp_ladder_in *in, const struct sp_ladder_decision *d, struct sp_job_facts *f)
{
	memset(f, 0, sizeof *f);
	struct sp_ladder_model_check mc;
	/* a served Hugging Face checkpoint is planned in bf16; a GGUF's
	 * quantization is not in its name, so llama.cpp's and Ollama's are not
	 * planned (their weights come from the log) */
	enum sp_job_family fam = family(d);
	bool serving = fam == SP_FAMILY_VLLM || fam == SP_FAMILY_SGLANG || fam == SP_FAMILY_TGI || fam == SP_FAMILY_RAY;
	if (sp_ladder_model_check(in->log ? in->log->model : NULL, serving, &mc) < 0)
		return;
	snprintf(f->plan_name, sizeof f->plan_name, "%s", mc.name);
	f->plan_how = mc.how;
	f->plan_prec = mc.precision;
	f->plan_need = mc.need;
	f->plan_need_min = mc.need_min;
	f->plan_need_q8 = mc.need_q8;
	f->plan_need_q4 = mc.need_q4;
	f->weights = mc.weights;
}

/* the planner's rung 4 into the facts the decision takes (the model's check kept) */
static void planned_facts(const struct sp_ladder_plan *lp, struct sp_job_facts *f)
{
	snprintf(f->smaller_model, sizeof f->smaller_model, "%s", lp->smaller_model);
	f->next_down[0] = f->next_down_hf[0] = 0;
	f->smaller_need = lp->smaller_need;
	f->two_sparks = lp->two_sparks;
	f->two_sparks_strategy = lp->two_sparks_strategy;
	f->two_sparks_need = lp->two_sparks_need;
	f->model = lp->model_arg;
}

/* decide, and with --plan: plan the rung proposed (or asked for by --apply
 * N), then decide again with the planner's rung 4; 0 or an exit status */
static int decide_and_plan(const struct opts *o, const struct sp_ladder_in *in, struct sp_ladder_decision *d,
			   struct sp_ladder_plan *lp)
{
	static struct sp_job_facts pf;
	sp_ladder_decide(in, d);
	if (d->not_memory)
		return 0;
	/* every rung is checked against the planner's figures for the job's model */
	model_checked(in, d, &pf);
	sp_ladder_decide_planned(in, &pf, d);
	if (!o->plan) {
		/* rung 4 names the catalog's next size down of the log's model */
		if (d->next != 4 || !in->log ||
		    sp_rung_next_size_down(in->log->model, pf.next_down, sizeof pf.next_down, pf.next_down_hf,
					     sizeof pf.next_down_hf) < 0)
			return 0;
		sp_ladder_decide_planned(in, &pf, d);
		return 0;
	}
	int rung = o->apply > 1 ? o->apply : d->next;
	/* a server's rung 2 names a context (--max-model-len N): plan that one */
	lp->seq_advised = family(d) != SP_FAMILY_TRAINING && family(d) != SP_FAMILY_RAY ? sp_ladder_model_len(&d->facts) : 0;
	int rc = sp_ladder_plan_run(lp, in->s, rung);
	if (rc)
		return rc;
	planned_facts(lp, &pf);
	sp_ladder_decide_planned(in, &pf, d);
	return 0;
}

int cmd_ladder(int argc, char **argv)
{
	struct opts o = { 0 };
	if (!parse_opts(argc, argv, &o))
		return 0;
	/* rung 1 needs root: say so before reading or writing anything */
	enum sp_apply_verdict av = sp_ladder_apply_verdict_evict(o.apply, geteuid() == 0, o.evict != NULL, -1, o.force);
	if (av == SP_APPLY_NEED_ROOT) {
		char dc[4200];
		sp_drop_caches_path(dc, sizeof dc);
		sp_error("--apply 1 needs root to write %s: run 'sudo sparkops ladder --apply 1' (or add --evict PATH "
			 "to drop your own files' page cache without root)", dc);
		return SP_EXIT_NOPERM;
	}
	if (o.evict && o.apply != 1)
		sp_usage_error("ladder", "--evict goes with --apply 1");
	static struct sp_oomlog log;
	static struct sp_sample s, before;
	static struct sp_ladder_job c;
	static struct sp_ladder_decision d;
	static struct sp_ladder_plan lp;
	int rc = gather(&o, &log, &s, &c);
	if (rc)
		return rc;
	struct sp_ladder_in in = { o.log ? &log : NULL, &s, c.st, o.mark, false };
	if (sp_ladder_apply_verdict(o.apply, true, -1, o.force) == SP_APPLY_PRINT_ONLY) {
		rc = decide_and_plan(&o, &in, &d, &lp);
		if (rc)
			return rc;
		return print_change_only(o.apply, &d, o.plan && lp.line ? &lp : NULL, o.json);
	}
	struct sp_flush_result fr;
	if (av == SP_APPLY_EVICT) {
		rc = apply_evict(o.evict);
		if (rc)
			return rc;
		in.flushed = true; /* rung 1 done, in its form without root */
	} else if (o.apply == 1) {
		rc = apply_flush(&o, &fr);
		if (rc)
			return rc;
		in.flushed = true;
	}
	static struct compaction comp;
	bool compacted = false;
	if (in.flushed && av != SP_APPLY_EVICT &&
	    ((o.log && log.fragmented) || (s.contig.why == SP_OK && s.contig.free_2mib < SP_CONTIG_LOW))) {
		/* fragmentation (the log's or the machine's): rung 1 compacts after the flush */
		comp.before = s.contig;
		comp.err = sp_compact_memory();
		compacted = true;
	}
	if (in.flushed) {
		/* what is shown and decided from is read after the flush */
		before = s;
		reread(&s);
	}
	if (compacted)
		comp.after = s.contig;
	rc = decide_and_plan(&o, &in, &d, &lp);
	if (rc)
		return rc;
	if (d.not_memory)
		c.st.tried |= d.st.tried; /* a log with no memory failure leaves the job's state as it was, marks added */
	else
		c.st = d.st;
	if (sp_ladder_job_save(&c) < 0)
		sp_warn("%s", c.warn);
	struct nobody *nb = malloc(sizeof *nb);
	if (!nb)
		sp_die(SP_EXIT_IO, "out of memory");
	nobody_compute(&s, nb);
	const struct view v = { &c, &s, in.log, &d, in.flushed && av != SP_APPLY_EVICT ? &fr : NULL,
				in.flushed ? &before : NULL, o.plan && lp.line ? &lp : NULL, compacted ? &comp : NULL, nb };
	if (o.json)
		print_json(&v);
	else
		print_human(&v);
	free(nb);
	if (d.not_memory)
		return SP_EXIT_NOT_MEMORY;
	return d.next ? SP_EXIT_OK : SP_EXIT_TROUBLE;
}
