// SPDX-License-Identifier: MIT
/* sparkops ladder — work an out-of-memory failure in the right order, and do
 * the first rung (flush the page cache) for the user. */
#include "cmd/cli.h"
#include "cmd/cmdutil.h"
#include "ladder/flush.h"
#include "ladder/ladder.h"
#include "ladder/oomlog.h"
#include "probe/probe.h"
#include "util/active.h"
#include "util/fileio.h"
#include "util/msg.h"
#include "util/paths.h"
#include "util/units.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char help[] =
	"usage: sparkops ladder [--log FILE|-] [--job NAME] [--tried N] [--reset] [--json]\n"
	"       sparkops ladder --apply 1 [--force] [--job NAME] [--json]\n"
	"\n"
	"Works an out-of-memory failure in the right order: 1 flush the page cache;\n"
	"competing servers judged by their cap before any change to the job; 2 shorter\n"
	"sequence/packing first, then a smaller micro-batch with more gradient\n"
	"accumulation; 3 bf16 LoRA before QLoRA; 4 a smaller model or two Sparks.\n"
	"Reads the live state and, with --log, the failed job's output (failure kind,\n"
	"load or step phase, the figures it names), and remembers per job which rungs\n"
	"were tried. Batch size is never rung 1.\n"
	"\n"
	"options:\n"
	"      --log FILE       the failed job's output (- for stdin), read streaming\n"
	"      --job NAME       whose ladder (default: from the log's path, else the working\n"
	"                       directory); state in $XDG_STATE_HOME/sparkops/\n"
	"      --tried N        mark rung N (1-4) as tried (may be repeated)\n"
	"      --reset          forget the rungs tried for this job, then advise\n"
	"      --apply 1        do rung 1 now: sync, then 3 into /proc/sys/vm/drop_caches (root),\n"
	"                       and report what it freed; rungs 2-4 change the job and are printed\n"
	"      --force          flush even while 'sparkops run' or 'sparkops watch' is watching a job\n"
	"      --json           one JSON object (phase, failure, next_rung, rungs_tried, advice ...)\n"
	SP_COMMON_HELP
	"\n"
	"exit: 0 advice given (or rung 1 done), 1 every rung tried, or --apply 1 refused while a\n"
	"      job is watched, or the flush failed; 2 usage or input error (an unreadable log,\n"
	"      --apply 2-4); 4 --apply 1 without root\n";

struct opts {
	const char *log;
	const char *job;
	unsigned mark;
	bool reset, json, force;
	int apply;
};

/* ---- the log ---------------------------------------------------------------- */

static int feed_oomlog(void *p, const char *buf, size_t len)
{
	sp_oomlog_feed(p, buf, len);
	return 0;
}

static int read_log(const char *path, struct sp_oomlog *p)
{
	int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	sp_oomlog_init(p);
	int err = sp_feed_fd(fd, feed_oomlog, p);
	if (fd != STDIN_FILENO)
		close(fd);
	sp_oomlog_finish(p);
	return err;
}

/* ---- state file --------------------------------------------------------------- */

struct state_ctx {
	char job[128];
	char dir[PATH_MAX];
	char path[PATH_MAX];
	bool have_path;
	int lock_fd; /* the state folder, locked from load to save */
	struct sp_ladder_state st;
};

static void state_load(struct state_ctx *c)
{
	sp_ladder_state_init(&c->st);
	if (!c->have_path)
		return;
	char buf[4096];
	size_t len;
	int trunc = 0;
	int r = sp_read_file_t(c->path, buf, sizeof buf, &len, &trunc);
	if (r == -ENOENT)
		return;
	if (r < 0) {
		sp_warn("'%s': %s: starting this job's ladder over", c->path, strerror(-r));
		return;
	}
	if (trunc || sp_ladder_state_parse(buf, len, c->job, &c->st) < 0) {
		sp_warn("'%s': not a ladder state file (corrupt?): starting this job's ladder over", c->path);
		sp_ladder_state_init(&c->st);
	}
}

static void state_save(struct state_ctx *c)
{
	if (!c->have_path)
		return;
	c->st.updated = (int64_t)time(NULL);
	char buf[1024];
	size_t len = sp_ladder_state_format(&c->st, c->job, buf, sizeof buf);
	int r = len ? sp_write_atomic(c->path, buf, len, 0600) : -EOVERFLOW;
	if (r < 0)
		sp_warn("'%s': cannot save the ladder state: %s", c->path, strerror(-r));
	close(c->lock_fd); /* the end of the read-modify-write */
	c->lock_fd = -1;
}

static int state_setup(struct state_ctx *c, const struct opts *o)
{
	if (o->job) {
		snprintf(c->job, sizeof c->job, "%s", o->job);
	} else {
		/* the log's real path, else the working directory */
		char abs[PATH_MAX];
		if ((o->log && strcmp(o->log, "-") != 0 && realpath(o->log, abs)) || getcwd(abs, sizeof abs))
			sp_ladder_job_from_path(abs, c->job, sizeof c->job);
		else
			snprintf(c->job, sizeof c->job, "default");
	}
	c->have_path = false;
	c->lock_fd = -1;
	if (sp_ladder_state_dir(c->dir, sizeof c->dir) < 0) {
		sp_warn("neither XDG_STATE_HOME nor HOME is set: the rungs tried are not remembered");
		return 0;
	}
	int n = snprintf(c->path, sizeof c->path, "%s/ladder-%s.state", c->dir, c->job);
	c->have_path = n > 0 && (size_t)n < sizeof c->path;
	if (!c->have_path)
		return 0;
	char msg[PATH_MAX + 300];
	c->lock_fd = sp_ladder_state_lock(c->dir, strrchr(c->path, '/') + 1, msg, sizeof msg);
	if (c->lock_fd < 0) {
		sp_warn("%s: the rungs tried are not remembered", msg);
		c->have_path = false;
	}
	return 0;
}

/* ---- output -------------------------------------------------------------------------- */

static json_t *u64_json(struct sp_u64 f)
{
	return sp_ok(f.why) ? json_integer((json_int_t)f.v) : json_null();
}

struct result {
	struct sp_oomlog *log;     /* NULL without --log */
	enum sp_oom_kind kind;
	enum sp_oom_phase phase;
	const char *phase_why;
	const char *evidence;      /* the deciding line, or the cgroup counter */
	uint64_t evidence_line;
	int counted_tried;         /* a rung counted as tried because the job failed again */
	int next;
	char change[2048];
	char before[1024];         /* what to do about competitors first */
	char advice[4096];
	int ncomp;
	struct sp_competitor comp[SP_MAX_PROCS];
	bool applied;
	struct sp_flush_result flush;
	struct sp_job_facts facts;
};

static json_t *figures_json(const struct result *r)
{
	json_t *o = json_object();
	struct sp_oom_figures none = { { 0, SP_MISSING }, { 0, SP_MISSING }, { 0, SP_MISSING }, { 0, SP_MISSING } };
	const struct sp_oom_figures *f = r->log && r->kind == r->log->kind ? &r->log->fig : &none;
	json_object_set_new(o, "tried_to_allocate_bytes", u64_json(f->tried));
	json_object_set_new(o, "total_capacity_bytes", u64_json(f->total));
	json_object_set_new(o, "free_bytes", u64_json(f->free));
	json_object_set_new(o, "reserved_unallocated_bytes", u64_json(f->reserved_unalloc));
	return o;
}

static int print_json(const struct state_ctx *c, const struct sp_sample *s, const struct result *r)
{
	json_t *root = json_object();
	json_object_set_new(root, "version", json_string(SPARKOPS_VERSION));
	json_object_set_new(root, "job", sp_json_text(c->job));
	json_object_set_new(root, "state_file", c->have_path ? sp_json_text(c->path) : json_null());
	json_object_set_new(root, "phase", json_string(sp_oom_phase_key(r->phase)));
	json_object_set_new(root, "phase_reason", r->phase_why && r->phase_why[0] ? json_string(r->phase_why) : json_null());
	json_object_set_new(root, "failure", json_string(sp_oom_kind_key(r->kind)));
	json_object_set_new(root, "failure_text", json_string(sp_oom_kind_text(r->kind)));
	if (r->evidence && r->evidence[0]) {
		json_t *e = json_object();
		json_object_set_new(e, "line", r->evidence_line ? json_integer((json_int_t)r->evidence_line) : json_null());
		json_object_set_new(e, "text", sp_json_text(r->evidence));
		json_object_set_new(root, "evidence", e);
	} else {
		json_object_set_new(root, "evidence", json_null());
	}
	json_object_set_new(root, "figures", figures_json(r));
	if (r->log) {
		json_t *l = json_object();
		json_object_set_new(l, "bytes", json_integer((json_int_t)r->log->bytes));
		json_object_set_new(l, "lines", json_integer((json_int_t)r->log->lines));
		json_object_set_new(l, "long_lines", json_integer((json_int_t)r->log->long_lines));
		json_object_set_new(l, "control_bytes", json_integer((json_int_t)r->log->control_bytes));
		json_object_set_new(l, "batch_per_device", r->log->batch_per_device ? json_integer((json_int_t)r->log->batch_per_device) : json_null());
		json_object_set_new(l, "grad_accum", r->log->grad_accum ? json_integer((json_int_t)r->log->grad_accum) : json_null());
		json_object_set_new(l, "seq_len", r->log->seq_len ? json_integer((json_int_t)r->log->seq_len) : json_null());
		json_object_set_new(root, "log", l);
	} else {
		json_object_set_new(root, "log", json_null());
	}
	json_t *live = json_object();
	json_object_set_new(live, "free_bytes", s->mem.why == SP_OK ? json_integer((json_int_t)s->mem.v[SP_MI_FREE]) : json_null());
	json_object_set_new(live, "budget_now_bytes", u64_json(s->budget.now));
	json_object_set_new(live, "reclaimable_bytes", u64_json(s->budget.reclaimable));
	json_object_set_new(live, "budget_after_flush_bytes", u64_json(s->budget.after_flush));
	json_object_set_new(live, "cgroup_oom_kill", u64_json(s->cg.oom_kill));
	json_object_set_new(live, "cgroup_failcnt", u64_json(s->cg.failcnt));
	json_object_set_new(root, "live", live);
	json_t *ca = json_array();
	for (int i = 0; i < r->ncomp; i++) {
		const struct sp_competitor *k = &r->comp[i];
		json_t *o = json_object();
		json_object_set_new(o, "pid", json_integer(k->proc->pid));
		json_object_set_new(o, "name", sp_json_text(k->proc->name));
		json_object_set_new(o, "kind", json_string(sp_proc_kind_name(k->proc->kind)));
		json_object_set_new(o, "holds_bytes", k->holds_ok ? json_integer((json_int_t)k->holds_bytes) : json_null());
		json_object_set_new(o, "cap_fraction", k->proc->has_cap ? json_real(k->proc->cap_frac) : json_null());
		json_object_set_new(o, "cap_default", json_boolean(k->proc->has_cap && k->proc->cap_default));
		json_object_set_new(o, "suspect", json_boolean(k->suspect));
		json_object_set_new(o, "judgement", sp_json_text(k->judgement));
		json_object_set_new(o, "action", k->action[0] ? sp_json_text(k->action) : json_null());
		json_array_append_new(ca, o);
	}
	json_object_set_new(root, "concurrent", ca);
	json_t *tried = json_array();
	for (int i = 1; i <= SP_RUNGS; i++)
		if (c->st.tried >> i & 1)
			json_array_append_new(tried, json_integer(i));
	json_object_set_new(root, "rungs_tried", tried);
	json_object_set_new(root, "counted_tried", r->counted_tried ? json_integer(r->counted_tried) : json_null());
	json_object_set_new(root, "next_rung", r->next ? json_integer(r->next) : json_null());
	json_object_set_new(root, "next_rung_title", json_string(sp_ladder_rung_title_for(r->next, &r->facts)));
	json_object_set_new(root, "before_next_rung", r->before[0] ? sp_json_text(r->before) : json_null());
	json_object_set_new(root, "change", sp_json_text(r->change));
	json_object_set_new(root, "advice", sp_json_text(r->advice));
	if (r->applied) {
		json_object_set_new(root, "freed_bytes", json_integer((json_int_t)r->flush.freed_bytes));
		json_object_set_new(root, "page_cache_before_bytes", json_integer((json_int_t)r->flush.cache_before));
		json_object_set_new(root, "page_cache_after_bytes", json_integer((json_int_t)r->flush.cache_after));
		json_object_set_new(root, "mem_free_gain_bytes", json_integer((json_int_t)r->flush.mem_free_gain));
	}
	int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	fputc('\n', stdout);
	json_decref(root);
	return rc;
}

static void print_human(const struct state_ctx *c, const struct sp_sample *s, const struct result *r)
{
	const bool col = sp_color(STDOUT_FILENO);
	const char *bold = col ? "\033[1m" : "", *off = col ? "\033[0m" : "";
	char g1[32], g2[32], g3[32];
	printf("%ssparkops ladder%s  job '%s'\n\n", bold, off, c->job);
	if (r->applied) {
		printf("%sFLUSHED%s  sync; echo 3 > %s/sys/vm/drop_caches\n", bold, off, sp_procfs());
		printf("  page cache  %s -> %s: freed %s (MemFree %+.1f GiB)\n\n",
		       sp_fmt_gib(g1, sizeof g1, (double)r->flush.cache_before),
		       sp_fmt_gib(g2, sizeof g2, (double)r->flush.cache_after),
		       sp_fmt_gib(g3, sizeof g3, (double)r->flush.freed_bytes), (double)r->flush.mem_free_gain / (double)SP_GiB);
	}
	if (r->log || r->kind != SP_OOM_UNKNOWN) {
		printf("  %-10s %s: %s\n", "failure", sp_oom_kind_key(r->kind), sp_oom_kind_text(r->kind));
		printf("  %-10s %s%s%s%s\n", "phase", sp_oom_phase_key(r->phase), r->phase_why && r->phase_why[0] ? " (" : "",
		       r->phase_why ? r->phase_why : "", r->phase_why && r->phase_why[0] ? ")" : "");
		if (r->evidence && r->evidence[0]) {
			if (r->evidence_line)
				printf("  %-10s line %llu: %.160s\n", "evidence", (unsigned long long)r->evidence_line, r->evidence);
			else
				printf("  %-10s %s\n", "evidence", r->evidence);
		}
		if (r->log && r->kind == r->log->kind) {
			const struct sp_oom_figures *f = &r->log->fig;
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
	} else {
		printf("  %-10s no log given (--log FILE): the ladder from the live state only\n", "failure");
	}
	if (sp_ok(s->budget.now.why)) {
		printf("  %-10s %s for a new job now", "live", sp_fmt_gib(g1, sizeof g1, (double)s->budget.now.v));
		if (sp_ok(s->budget.reclaimable.why))
			printf(", a flush gives back %s", sp_fmt_gib(g2, sizeof g2, (double)s->budget.reclaimable.v));
		printf("\n");
	}
	if (sp_ok(s->cg.oom_kill.why) && s->cg.oom_kill.v > 0)
		printf("  %-10s the OOM killer has killed %llu process(es) in cgroup %s\n", "cgroup",
		       (unsigned long long)s->cg.oom_kill.v, s->cg.path);
	if (r->ncomp) {
		printf("\n%sCONCURRENT%s  judged by their cap, not their presence\n", bold, off);
		for (int i = 0; i < r->ncomp; i++)
			printf("  %s %-14s pid %-7d %s\n", r->comp[i].suspect ? "!" : " ", r->comp[i].proc->name,
			       r->comp[i].proc->pid, r->comp[i].judgement);
	}
	printf("\n%sLADDER%s  ", bold, off);
	for (int i = 1; i <= SP_RUNGS; i++)
		printf("%s%d%s%s%s", i == r->next ? "[" : "", i, (c->st.tried >> i & 1) ? " tried" : "",
		       i == r->next ? "]" : "", i < SP_RUNGS ? "  " : "");
	printf("\n");
	if (r->counted_tried)
		printf("  rung %d was proposed for this job last time and it failed again: counted as tried\n",
		       r->counted_tried);
	if (r->before[0] && r->next >= 2)
		printf("  %sbefore changing the job:%s %s\n", bold, off, r->before);
	if (r->next)
		printf("  %snext: rung %d, %s%s\n  change: %s\n", bold, r->next, sp_ladder_rung_title_for(r->next, &r->facts), off, r->change);
	else
		printf("  %s\n", r->change);
	if (r->before[0] && r->next == 1)
		printf("  then, before any change to the job: %s\n", r->before);
	if (r->next && !r->applied)
		printf("\n  after trying it, rerun the job; if it fails again, 'sparkops ladder --log LOG' with its new log\n"
		       "  (same path, or the same --job) proposes the next rung; '--tried %d' marks it by hand\n", r->next);
}

/* ---- the command --------------------------------------------------------------------- */

static int parse_rung(const char *arg, const char *flag)
{
	int64_t v;
	if (sp_parse_i64(arg, &v) < 0 || v < 1 || v > SP_RUNGS)
		sp_usage_error("ladder", "%s: '%s' is not a rung (1-4)", flag, arg);
	return (int)v;
}

int cmd_ladder(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "log", required_argument, NULL, 'l' },
		{ "job", required_argument, NULL, 'J' },
		{ "tried", required_argument, NULL, 't' },
		{ "reset", no_argument, NULL, 'R' },
		{ "apply", required_argument, NULL, 'a' },
		{ "force", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		SP_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { 0 };
	int ch;
	sp_opt_begin();
	while ((ch = getopt_long(argc, argv, SP_OPTSTRING, lopts, NULL)) != -1) {
		if (sp_common_opt(ch, optarg))
			continue;
		switch (ch) {
		case 'l': o.log = optarg; break;
		case 'J':
			if (!sp_ladder_job_valid(optarg))
				sp_usage_error("ladder", "--job: '%s' is not a job name (1-100 of A-Z a-z 0-9 . _ - @ +, "
							 "not starting with '.')", optarg);
			o.job = optarg;
			break;
		case 't': o.mark |= 1u << parse_rung(optarg, "--tried"); break;
		case 'R': o.reset = true; break;
		case 'a': o.apply = parse_rung(optarg, "--apply"); break;
		case 'f': o.force = true; break;
		case 'j': o.json = true; break;
		case 'h': return sp_print_help(help);
		default: sp_opt_bad("ladder", ch, argv);
		}
	}
	if (optind < argc)
		sp_usage_error("ladder", "unexpected argument '%s'", argv[optind]);
	if (o.force && o.apply != 1)
		sp_usage_error("ladder", "--force only goes with --apply 1");

	/* rung 1 needs root: say so before reading or writing anything */
	if (o.apply == 1 && geteuid() != 0) {
		sp_error("--apply 1 needs root to write %s/sys/vm/drop_caches: run 'sudo sparkops ladder --apply 1'",
			 sp_procfs());
		return SP_EXIT_NOPERM;
	}

	static struct result r;
	memset(&r, 0, sizeof r);
	static struct sp_oomlog log;
	if (o.log) {
		int e = read_log(o.log, &log);
		if (e < 0) {
			sp_error("'%s': %s", strcmp(o.log, "-") == 0 ? "stdin" : o.log, strerror(-e));
			return SP_EXIT_USAGE;
		}
		r.log = &log;
	}

	static struct sp_sample s;
	struct sp_read_opts ro;
	sp_read_opts_init(&ro);
	ro.what = SP_READ_MEM | SP_READ_CGROUP | SP_READ_PROCS;
	sp_sample_read(&s, &ro);

	/* what happened */
	static char cg_evidence[400]; /* r is static and points at it */
	cg_evidence[0] = 0;
	if (r.log) {
		r.kind = log.kind;
		r.phase = log.phase;
		r.phase_why = log.phase_why;
		r.evidence = log.evidence;
		r.evidence_line = log.evidence_line;
	}
	if ((r.kind == SP_OOM_SIGKILL || !r.log) && sp_ok(s.cg.oom_kill.why) && s.cg.oom_kill.v > 0) {
		/* a SIGKILL end (or no log) in a cgroup whose OOM killer has struck */
		r.kind = SP_OOM_KERNEL;
		snprintf(cg_evidence, sizeof cg_evidence, "cgroup %s: oom_kill %llu (memory.events / memory.oom_control)",
			 s.cg.path, (unsigned long long)s.cg.oom_kill.v);
		r.evidence = cg_evidence;
		r.evidence_line = 0;
	}

	/* the job's memory */
	static struct state_ctx c;
	state_setup(&c, &o);
	if (o.reset)
		sp_ladder_state_init(&c.st);
	else
		state_load(&c);
	c.st.tried |= o.mark;
	if (r.log && c.st.proposed && c.st.log_sig && log.sig != c.st.log_sig && r.kind != SP_OOM_UNKNOWN &&
	    !(c.st.tried >> c.st.proposed & 1) && !o.mark) {
		/* a different failed log after a proposal: that rung did not save the job */
		c.st.tried |= 1u << c.st.proposed;
		r.counted_tried = c.st.proposed;
	}

	struct sp_job_facts f = { 0 };
	f.kind = r.kind;
	f.phase = r.phase;
	if (r.log) {
		f.batch_per_device = log.batch_per_device;
		f.grad_accum = log.grad_accum;
		f.seq_len = log.seq_len;
	}
	f.reclaimable = s.budget.reclaimable;
	f.budget_now = s.budget.now;
	f.budget_after_flush = s.budget.after_flush;
	f.total.why = s.mem.why;
	f.total.v = s.mem.why == SP_OK ? s.mem.v[SP_MI_TOTAL] : 0;

	r.facts = f;
	if (o.apply > 1) {
		/* rungs 2-4 change the job: print the change, do nothing */
		sp_ladder_change(o.apply, &f, r.change, sizeof r.change);
		sp_error("--apply %d: rungs 2-4 change the job itself, which sparkops cannot do for you; "
			 "the change to make is printed", o.apply);
		if (o.json) {
			json_t *j = json_object();
			json_object_set_new(j, "rung", json_integer(o.apply));
			json_object_set_new(j, "applied", json_false());
			json_object_set_new(j, "title", json_string(sp_ladder_rung_title_for(o.apply, &f)));
			json_object_set_new(j, "change", sp_json_text(r.change));
			json_dumpf(j, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
			fputc('\n', stdout);
			json_decref(j);
		} else {
			printf("rung %d, %s\nchange: %s\n", o.apply, sp_ladder_rung_title_for(o.apply, &f), r.change);
		}
		return SP_EXIT_USAGE;
	}
	if (o.apply == 1) {
		int pids[8];
		int n = sp_active_watchers(pids, 8);
		if (n > 0 && !o.force) {
			sp_error("not flushing: 'sparkops run/watch' is watching a job (pid %d%s); a flush is a "
				 "between-runs reset: wait for it to end, or add --force", pids[0], n > 1 ? " and others" : "");
			return SP_EXIT_TROUBLE;
		}
		int e = sp_flush_page_cache(&r.flush);
		if (e == -EACCES || e == -EPERM || e == -EROFS) {
			sp_error("'%s/sys/vm/drop_caches': %s: flushing needs root with CAP_SYS_ADMIN (in a container, "
				 "run it on the host)", sp_procfs(), strerror(-e));
			return SP_EXIT_NOPERM;
		}
		if (e < 0) {
			sp_error("'%s/sys/vm/drop_caches': %s: nothing flushed", sp_procfs(), strerror(-e));
			return SP_EXIT_TROUBLE;
		}
		r.applied = true;
		c.st.tried |= 1u << 1;
	}

	r.next = sp_ladder_next(c.st.tried);
	sp_ladder_change(r.next, &f, r.change, sizeof r.change);
	r.ncomp = sp_ladder_competitors(&s, r.comp, SP_MAX_PROCS);
	for (int i = 0; i < r.ncomp; i++)
		if (r.comp[i].suspect)
			snprintf(r.before + strlen(r.before), sizeof r.before - strlen(r.before), "%s%s",
				 r.before[0] ? "; " : "", r.comp[i].action);
	if (!r.next)
		snprintf(r.advice, sizeof r.advice, "%s", r.change);
	else if (r.before[0] && r.next >= 2)
		snprintf(r.advice, sizeof r.advice, "before changing the job: %s. Then rung %d (%s): %s", r.before, r.next,
			 sp_ladder_rung_title_for(r.next, &f), r.change);
	else if (r.before[0])
		snprintf(r.advice, sizeof r.advice, "rung %d (%s): %s. Then, before any change to the job: %s", r.next,
			 sp_ladder_rung_title_for(r.next, &f), r.change, r.before);
	else
		snprintf(r.advice, sizeof r.advice, "rung %d (%s): %s", r.next, sp_ladder_rung_title_for(r.next, &f), r.change);

	c.st.proposed = r.next;
	if (r.log)
		c.st.log_sig = log.sig;
	state_save(&c);

	if (o.json)
		print_json(&c, &s, &r);
	else
		print_human(&c, &s, &r);
	return r.next ? SP_EXIT_OK : SP_EXIT_TROUBLE;
}
