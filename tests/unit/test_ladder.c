// SPDX-License-Identifier: MIT
/* The ladder's logic: rung order, the state file format (and corrupt ones),
 * job names, competitors judged by their cap, the change for each rung, and
 * the watcher detection's argv parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "qemu_skip.h"

#include "ladder/decide.h"
#include "ladder/ladder.h"
#include "probe/active.h"
#include "util/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void order(void **st)
{
	(void)st;
	assert_int_equal(sp_ladder_next(0), 1);
	assert_int_equal(sp_ladder_next(1u << 1), 2);
	assert_int_equal(sp_ladder_next(1u << 1 | 1u << 2), 3);
	/* never skip ahead: a later rung tried does not hide an earlier one */
	assert_int_equal(sp_ladder_next(1u << 3 | 1u << 4), 1);
	assert_int_equal(sp_ladder_next(1u << 1 | 1u << 3), 2);
	assert_int_equal(sp_ladder_next(0x1e), 0);
}

static void state_roundtrip(void **st)
{
	(void)st;
	struct sp_ladder_state a, b;
	sp_ladder_state_init(&a);
	a.tried = 1u << 1 | 1u << 3;
	a.proposed = 2;
	a.log_sig = 0xdeadbeef01234567ULL;
	a.updated = 1795944420;
	char buf[1024];
	size_t n = sp_ladder_state_format(&a, "myjob", buf, sizeof buf);
	assert_true(n > 0);
	assert_non_null(strstr(buf, "tried 1,3\n"));
	assert_int_equal(sp_ladder_state_parse(buf, n, "myjob", &b), 0);
	assert_int_equal(b.tried, a.tried);
	assert_int_equal(b.proposed, 2);
	assert_int_equal(b.log_sig, a.log_sig);
	assert_int_equal(b.updated, a.updated);
	/* another job's file is not this job's */
	assert_int_equal(sp_ladder_state_parse(buf, n, "other", &b), -1);
	/* too small a buffer: nothing */
	assert_int_equal(sp_ladder_state_format(&a, "myjob", buf, 20), 0);
	sp_ladder_state_init(&a);
	n = sp_ladder_state_format(&a, "j", buf, sizeof buf);
	assert_non_null(strstr(buf, "tried none\n"));
	assert_int_equal(sp_ladder_state_parse(buf, n, "j", &b), 0);
	assert_int_equal(b.tried, 0);
	/* version 2 writes log_hash; a version 1 file (log_sig: FNV-1a, which no
	 * log is hashed with any more) keeps its rungs and forgets the log */
	a.log_sig = 0xdeadbeef01234567ULL;
	n = sp_ladder_state_format(&a, "j", buf, sizeof buf);
	assert_non_null(strstr(buf, "version 2\n"));
	assert_non_null(strstr(buf, "log_hash deadbeef01234567\n"));
	const char v1[] = "version 1\njob j\ntried 1,2\nproposed 3\nlog_sig 0123456789abcdef\nupdated 5\n";
	assert_int_equal(sp_ladder_state_parse(v1, sizeof v1 - 1, "j", &b), 0);
	assert_int_equal(b.tried, 1u << 1 | 1u << 2);
	assert_int_equal(b.proposed, 3);
	assert_int_equal(b.log_sig, 0);
}

static void state_corrupt(void **st)
{
	(void)st;
	static const char *const bad[] = {
		"",
		"version 3\njob j\n",
		"version 2\n",                       /* no job */
		"version 1\njob j\ntried 5\n",
		"version 1\njob j\ntried 1,,2\n",
		"version 1\njob j\ntried 1;2\n",
		"version 1\njob j\nproposed 9\n",
		"version 1\njob j\nproposed x\n",
		"version 1\njob j\nlog_sig 12\n",
		"version 1\njob j\nlog_sig zzzzzzzzzzzzzzzz\n",
		"version 2\njob j\nlog_hash 12\n",
		"version 1\njob j\nupdated soon\n",
		"version 1\njob j\nfrobnicate 1\n",
		"version 1\njob j\nnospace\n",
		"\x7f" "ELF\x02\x01\x01\0\0\0",
	};
	struct sp_ladder_state s;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		size_t len = i == sizeof bad / sizeof bad[0] - 1 ? 10 : strlen(bad[i]);
		if (sp_ladder_state_parse(bad[i], len, "j", &s) != -1)
			fail_msg("accepted corrupt state #%zu", i);
	}
	char big[600];
	memset(big, 'a', sizeof big);
	assert_int_equal(sp_ladder_state_parse(big, sizeof big, "j", &s), -1);
	const char nul[] = "version 1\njob j\0x\n";
	assert_int_equal(sp_ladder_state_parse(nul, sizeof nul - 1, "j", &s), -1);
}

static void jobs(void **st)
{
	(void)st;
	char j[128];
	sp_ladder_job_from_path("/home/u/runs/train.log", j, sizeof j);
	assert_string_equal(j, "home_u_runs_train.log");
	assert_true(sp_ladder_job_valid(j));
	sp_ladder_job_from_path("/home/u/my run/.hidden", j, sizeof j);
	assert_string_equal(j, "home_u_my_run_.hidden");
	sp_ladder_job_from_path("/", j, sizeof j);
	assert_string_equal(j, "root");
	char longp[400] = "/";
	for (int i = 0; i < 30; i++)
		strcat(longp, "abcdefghij/");
	sp_ladder_job_from_path(longp, j, sizeof j);
	assert_true(sp_ladder_job_valid(j));
	assert_int_equal(strlen(j), 16 + 1 + 80);
	char j2[128];
	longp[5] = 'X';
	sp_ladder_job_from_path(longp, j2, sizeof j2);
	assert_string_not_equal(j, j2); /* same tail, another path: another job */
	assert_false(sp_ladder_job_valid(""));
	assert_false(sp_ladder_job_valid("../etc"));
	assert_false(sp_ladder_job_valid("a/b"));
	assert_false(sp_ladder_job_valid(".x"));
	assert_true(sp_ladder_job_valid("llama-70b_qlora@run+2.v1"));
}

static void competitors(void **st)
{
	(void)st;
	static struct sp_sample s;
	memset(&s, 0, sizeof s);
	s.mem.why = SP_OK;
	s.mem.v[SP_MI_TOTAL] = 120ULL << 30;
	s.mem.have = 1u << SP_MI_TOTAL;
	s.nprocs = 4;
	struct sp_proc *p = s.procs;
	snprintf(p[0].name, sizeof p[0].name, "vllm");
	p[0].kind = SP_PROC_SERVER, p[0].pid = 1, p[0].has_cap = true, p[0].cap_frac = 0.9, p[0].cap_default = true;
	p[0].rss_bytes = 3ULL << 30, p[0].gpu_mem = (struct sp_u64){ 1ULL << 30, SP_OK };
	snprintf(p[1].name, sizeof p[1].name, "vllm");
	p[1].kind = SP_PROC_SERVER, p[1].pid = 2, p[1].has_cap = true, p[1].cap_frac = 0.3, p[1].rss_bytes = 2ULL << 30;
	snprintf(p[1].cap_flag, sizeof p[1].cap_flag, "--gpu-memory-utilization");
	snprintf(p[2].name, sizeof p[2].name, "ollama");
	p[2].kind = SP_PROC_SERVER, p[2].pid = 3, p[2].rss_bytes = 9ULL << 30;
	snprintf(p[3].name, sizeof p[3].name, "ollama");
	p[3].kind = SP_PROC_SERVER, p[3].pid = 4, p[3].rss_bytes = 1ULL << 30;
	struct sp_competitor c[8];
	assert_int_equal(sp_ladder_competitors(&s, c, 8), 4);
	assert_true(c[0].suspect);  /* uncapped vLLM */
	/* what it holds (RSS + GPU memory), its cap apart: a cap is not memory held */
	assert_int_equal(c[0].holds_bytes, 4ULL << 30);
	assert_true(c[0].cap_ok);
	assert_int_equal(c[0].cap_bytes, (uint64_t)(0.9 * (double)(120ULL << 30)));
	assert_non_null(strstr(c[0].judgement, "holds 4.0 GiB now"));
	assert_false(c[1].suspect); /* capped at 0.3: judged by its cap */
	assert_true(c[2].suspect);  /* 9 GiB resident Ollama */
	assert_false(c[3].suspect);
	assert_non_null(strstr(c[0].judgement, "uncapped"));
	assert_string_equal(c[1].action, "");
	p[1].cap_frac = 0.7;
	sp_ladder_competitors(&s, c, 8);
	assert_true(c[1].suspect);  /* a high cap is as bad as none */
	assert_true(c[0].holds_ok && c[2].holds_ok);

	/* the pool size unknown: a cap's share is not turned into "0.0 GiB" */
	s.mem.why = SP_MISSING;
	s.mem.v[SP_MI_TOTAL] = 0;
	sp_ladder_competitors(&s, c, 8);
	assert_true(c[0].suspect);
	assert_false(c[0].cap_ok);
	assert_true(c[0].holds_ok); /* what it holds is still known */
	assert_null(strstr(c[0].judgement, "0.0 GiB"));
	assert_non_null(strstr(c[0].judgement, "0.90 of the pool"));
	assert_null(strstr(c[1].judgement, "0.0 GiB"));
	assert_true(c[2].holds_ok); /* RSS is known without the pool */
}

static const char *change(int rung, enum sp_oom_kind k, enum sp_oom_phase ph, uint64_t b, uint64_t a)
{
	static char buf[2048];
	struct sp_job_facts f = { 0 };
	f.kind = k, f.phase = ph, f.batch_per_device = b, f.grad_accum = a;
	f.reclaimable.why = f.budget_now.why = f.budget_after_flush.why = f.total.why = SP_MISSING;
	sp_ladder_change(rung, &f, buf, sizeof buf);
	return buf;
}

static void changes(void **st)
{
	(void)st;
	/* batch size is never rung 1 */
	for (int k = 0; k < SP_OOM_KIND_N; k++)
		for (int ph = 0; ph <= SP_PHASE_STEP; ph++) {
			const char *c = change(1, (enum sp_oom_kind)k, (enum sp_oom_phase)ph, 8, 4);
			assert_non_null(strstr(c, "drop_caches"));
			assert_null(strstr(c, "batch"));
		}
	/* step: sequence first, then batch with accumulation */
	const char *c = change(2, SP_OOM_TORCH, SP_PHASE_STEP, 8, 4);
	const char *seq = strstr(c, "max_seq_length"), *bat = strstr(c, "per_device_train_batch_size 8 -> 4");
	assert_non_null(seq);
	assert_non_null(bat);
	assert_true(seq < bat);
	assert_non_null(strstr(c, "gradient_accumulation_steps 4 -> 8"));
	assert_non_null(strstr(c, "stays 32"));
	/* load: the load-time peak, never the batch */
	c = change(2, SP_OOM_TORCH, SP_PHASE_LOAD, 8, 4);
	assert_non_null(strstr(c, "load-time peak"));
	assert_null(strstr(c, "per_device_train_batch_size"));
	assert_null(strstr(c, "max_seq_length"));
	c = change(2, SP_OOM_KERNEL, SP_PHASE_LOAD, 0, 0);
	assert_non_null(strstr(c, "pre-quantized"));
	/* micro-batch already 1 */
	c = change(2, SP_OOM_TORCH, SP_PHASE_STEP, 1, 16);
	assert_non_null(strstr(c, "gradient_checkpointing"));
	/* rung 3: bf16 LoRA before QLoRA; a QLoRA OOM is not proof */
	c = change(3, SP_OOM_TORCH, SP_PHASE_STEP, 0, 0);
	assert_true(strstr(c, "bf16 LoRA") < strstr(c, "QLoRA"));
	c = change(3, SP_OOM_BNB, SP_PHASE_STEP, 0, 0);
	assert_non_null(strstr(c, "not proof"));
	/* servers get server changes */
	c = change(2, SP_OOM_VLLM_STARTUP, SP_PHASE_LOAD, 0, 0);
	assert_non_null(strstr(c, "--max-model-len"));
	c = change(2, SP_OOM_OLLAMA, SP_PHASE_LOAD, 0, 0);
	assert_non_null(strstr(c, "num_ctx"));
	c = change(4, SP_OOM_TORCH, SP_PHASE_STEP, 0, 0);
	assert_non_null(strstr(c, "never tensor parallelism"));
	struct sp_job_facts f = { 0 };
	f.kind = SP_OOM_TORCH, f.phase = SP_PHASE_LOAD;
	assert_non_null(strstr(sp_ladder_rung_title_for(2, &f), "load-time peak"));
	f.phase = SP_PHASE_STEP;
	assert_non_null(strstr(sp_ladder_rung_title_for(2, &f), "sequence"));
	f.kind = SP_OOM_VLLM_STARTUP;
	assert_null(strstr(sp_ladder_rung_title_for(2, &f), "batch"));
	c = change(0, SP_OOM_TORCH, SP_PHASE_STEP, 0, 0);
	assert_non_null(strstr(c, "every rung"));
}

static void watcher_argv(void **st)
{
	(void)st;
#define A(s) s, sizeof s - 1
	assert_true(sp_argv_is_watcher(A("sparkops\0run\0--\0python\0train.py\0")));
	assert_true(sp_argv_is_watcher(A("/usr/bin/sparkops\0watch\0--pid\0001\0")));
	assert_true(sp_argv_is_watcher(A("sparkops\0--procfs\0/x\0--sysfs\0/y\0run\0--\0a\0")));
	assert_true(sp_argv_is_watcher(A("sparkops\0--procfs=/x\0watch\0")));
	assert_false(sp_argv_is_watcher(A("sparkops\0ladder\0--apply\0001\0")));
	assert_false(sp_argv_is_watcher(A("sparkops\0status\0run\0")));
	assert_false(sp_argv_is_watcher(A("sparkops\0--procfs\0")));
	assert_false(sp_argv_is_watcher(A("sparkops\0")));
	assert_false(sp_argv_is_watcher("", 0));
	assert_false(sp_argv_is_watcher(A("sparkops\0runner\0")));
#undef A
}

/* a planted process entry in a fixture procfs: comm, argv, and exe (a link
 * to `exe`, or none when NULL) */
static void plant(const char *root, int pid, const char *argv, size_t alen, const char *exe)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%d", root, pid);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/%d/comm", root, pid);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("sparkops\n", f);
	fclose(f);
	snprintf(p, sizeof p, "%s/%d/cmdline", root, pid);
	f = fopen(p, "w");
	assert_non_null(f);
	fwrite(argv, 1, alen, f);
	fclose(f);
	if (exe) {
		snprintf(p, sizeof p, "%s/%d/exe", root, pid);
		assert_int_equal(symlink(exe, p), 0);
	}
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Only a process whose executable is this one counts as a watcher: a copy
 * of another program named sparkops with argv 'sparkops run' does not. In a
 * fixture tree an entry without exe is judged on comm and argv (the CLI
 * tests plant watchers that way). */
static void watcher_exe_identity(void **st)
{
	(void)st;
	SKIP_UNDER_QEMU(QEMU_SELFEXE);
	char root[] = "/tmp/sp-active-XXXXXX", me[4096], p[600];
	assert_non_null(mkdtemp(root));
	ssize_t n = readlink("/proc/self/exe", me, sizeof me - 1);
	assert_true(n > 0);
	me[n] = 0;
	static const char run[] = "sparkops\0run\0--\0python\0";
	plant(root, 100, run, sizeof run - 1, NULL);              /* fixture style: counts */
	plant(root, 101, run, sizeof run - 1, "/bin/sh");         /* an impostor: another file */
	plant(root, 102, run, sizeof run - 1, me);                /* this very executable: counts */
	plant(root, 103, run, sizeof run - 1, "/nonexistent/x");  /* unresolvable: not proven */
	sp_paths_init(root, NULL);
	int pids[8];
	int k = sp_active_watchers(pids, 8);
	sp_paths_init("/proc", "/sys");
	assert_int_equal(k, 2);
	qsort(pids, 2, sizeof pids[0], cmp_int);
	assert_int_equal(pids[0], 100);
	assert_int_equal(pids[1], 102);
	for (int pid = 100; pid <= 103; pid++) {
		const char *names[] = { "exe", "comm", "cmdline" };
		for (int i = 0; i < 3; i++) {
			snprintf(p, sizeof p, "%s/%d/%s", root, pid, names[i]);
			unlink(p);
		}
		snprintf(p, sizeof p, "%s/%d", root, pid);
		rmdir(p);
	}
	rmdir(root);
}

/* ---- the decision (ladder/decide.c): pure, called as cmd/ladder.c calls it ---- */

static struct sp_sample dsample;
static struct sp_oomlog dlog;
static struct sp_ladder_decision dd;

static const struct sp_oomlog *classify(const char *text)
{
	sp_oomlog_init(&dlog);
	sp_oomlog_feed(&dlog, text, strlen(text));
	sp_oomlog_finish(&dlog);
	return &dlog;
}

static void live(uint64_t oom_kills)
{
	memset(&dsample, 0, sizeof dsample);
	dsample.mem.why = SP_MISSING;
	dsample.budget.now.why = dsample.budget.reclaimable.why = dsample.budget.after_flush.why = SP_MISSING;
	snprintf(dsample.cg.path, sizeof dsample.cg.path, "/user.slice");
	dsample.cg.oom_kill.why = SP_OK;
	dsample.cg.oom_kill.v = oom_kills;
}

static const struct sp_ladder_decision *decide(const struct sp_oomlog *log, const struct sp_ladder_state *st,
					       unsigned mark, bool flushed)
{
	struct sp_ladder_in in = { log, &dsample, { 0 }, mark, flushed };
	if (st)
		in.st = *st;
	sp_ladder_decide(&in, &dd);
	return &dd;
}

#define TORCH_OOM "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"

static void decide_first_call(void **st)
{
	(void)st;
	live(0);
	const struct sp_ladder_decision *d = decide(NULL, NULL, 0, false);
	assert_int_equal(d->kind, SP_OOM_UNKNOWN);
	assert_null(d->evidence);
	assert_false(d->figures);
	assert_int_equal(d->next, 1);
	assert_int_equal(d->counted_tried, 0);
	assert_string_equal(d->before, "");
	assert_true(strncmp(d->advice, "rung 1 (flush the page cache): ", 31) == 0);
	/* the state to remember: rung 1 proposed, no log answered */
	assert_int_equal(d->st.proposed, 1);
	assert_int_equal(d->st.tried, 0);
	assert_int_equal(d->st.log_sig, 0);

	d = decide(classify(TORCH_OOM), NULL, 0, false);
	assert_int_equal(d->kind, SP_OOM_TORCH);
	assert_true(d->figures);
	assert_int_equal(d->evidence_line, 1);
	assert_ptr_equal(d->evidence, dlog.evidence);
	assert_int_equal(d->st.log_sig, dlog.sig);
	assert_int_equal(d->facts.kind, SP_OOM_TORCH);
}

static void decide_cgroup_kills(void **st)
{
	(void)st;
	/* no log, but the cgroup's OOM killer struck: that is the failure */
	live(3);
	const struct sp_ladder_decision *d = decide(NULL, NULL, 0, false);
	assert_int_equal(d->kind, SP_OOM_KERNEL);
	assert_ptr_equal(d->evidence, d->cg_evidence);
	assert_string_equal(d->cg_evidence, "cgroup /user.slice: oom_kill 3 (memory.events / memory.oom_control)");
	assert_int_equal(d->evidence_line, 0);
	/* a log that ends in a bare SIGKILL in that cgroup: the kernel's OOM kill */
	d = decide(classify("step 10\nKilled\n"), NULL, 0, false);
	assert_int_equal(dlog.kind, SP_OOM_SIGKILL);
	assert_int_equal(d->kind, SP_OOM_KERNEL);
	assert_false(d->figures); /* the log's figures are not this failure's */
	/* a more specific log keeps its own answer */
	d = decide(classify(TORCH_OOM), NULL, 0, false);
	assert_int_equal(d->kind, SP_OOM_TORCH);
	assert_true(d->figures);
}

static void decide_failed_again(void **st)
{
	(void)st;
	live(0);
	struct sp_ladder_state s0 = { .tried = 1u << 1, .proposed = 2, .log_sig = 111, .updated = 42 };
	/* a different failed log after rung 2 was proposed: rung 2 did not help */
	const struct sp_ladder_decision *d = decide(classify(TORCH_OOM), &s0, 0, false);
	assert_int_equal(d->counted_tried, 2);
	assert_int_equal(d->st.tried, 1u << 1 | 1u << 2);
	assert_int_equal(d->next, 3);
	assert_int_equal(d->st.proposed, 3);
	assert_int_equal(d->st.updated, 42); /* the writer stamps the time, not the decision */
	/* the same log again: nothing new was tried */
	s0.log_sig = dlog.sig;
	d = decide(&dlog, &s0, 0, false);
	assert_int_equal(d->counted_tried, 0);
	assert_int_equal(d->next, 2);
	/* --tried by hand wins over the guess */
	s0.log_sig = 111;
	d = decide(&dlog, &s0, 1u << 3, false);
	assert_int_equal(d->counted_tried, 0);
	assert_int_equal(d->st.tried, 1u << 1 | 1u << 3);
	assert_int_equal(d->next, 2);
	/* a log with nothing memory-related proves nothing */
	d = decide(classify("all good\n"), &s0, 0, false);
	assert_int_equal(d->counted_tried, 0);
	/* without a log the remembered signature stays */
	d = decide(NULL, &s0, 0, false);
	assert_int_equal(d->st.log_sig, 111);
}

static void decide_flush_and_end(void **st)
{
	(void)st;
	live(0);
	/* rung 1 just done: counted, the next is rung 2 */
	const struct sp_ladder_decision *d = decide(NULL, NULL, 0, true);
	assert_int_equal(d->st.tried, 1u << 1);
	assert_int_equal(d->next, 2);
	/* every rung tried: no next rung, the advice says what is left */
	d = decide(NULL, NULL, 0x1e, false);
	assert_int_equal(d->next, 0);
	assert_int_equal(d->st.proposed, 0);
	assert_string_equal(d->advice, d->change);
	assert_true(d->change[0] != 0);
}

static void decide_competitors(void **st)
{
	(void)st;
	live(0);
	dsample.nprocs = 1;
	struct sp_proc *p = &dsample.procs[0];
	snprintf(p->name, sizeof p->name, "vllm");
	p->kind = SP_PROC_SERVER, p->pid = 7, p->has_cap = true, p->cap_frac = 0.9, p->cap_default = true;
	/* rung 1 next: the flush first, then the competitor */
	const struct sp_ladder_decision *d = decide(NULL, NULL, 0, false);
	assert_int_equal(d->ncomp, 1);
	assert_true(d->comp[0].suspect);
	assert_string_equal(d->before, d->comp[0].action);
	assert_true(strncmp(d->advice, "rung 1 (", 8) == 0);
	assert_non_null(strstr(d->advice, ". Then, before any change to the job: "));
	/* rung 2 next: the competitor before any change to the job */
	d = decide(NULL, NULL, 1u << 1, false);
	assert_true(strncmp(d->advice, "before changing the job: ", 25) == 0);
	assert_non_null(strstr(d->advice, ". Then rung 2 ("));
}

static void apply_verdicts(void **st)
{
	(void)st;
	assert_int_equal(sp_ladder_apply_verdict(0, false, 3, false), SP_APPLY_NONE);
	assert_int_equal(sp_ladder_apply_verdict(2, false, -1, false), SP_APPLY_PRINT_ONLY);
	assert_int_equal(sp_ladder_apply_verdict(4, true, 2, true), SP_APPLY_PRINT_ONLY);
	assert_int_equal(sp_ladder_apply_verdict(1, false, -1, false), SP_APPLY_NEED_ROOT);
	assert_int_equal(sp_ladder_apply_verdict(1, false, 0, true), SP_APPLY_NEED_ROOT);
	assert_int_equal(sp_ladder_apply_verdict(1, true, -1, false), SP_APPLY_FLUSH); /* not looked yet */
	assert_int_equal(sp_ladder_apply_verdict(1, true, 0, false), SP_APPLY_FLUSH);
	assert_int_equal(sp_ladder_apply_verdict(1, true, 2, false), SP_APPLY_WATCHED);
	assert_int_equal(sp_ladder_apply_verdict(1, true, 2, true), SP_APPLY_FLUSH);
}

/* ---- serving rungs, the log's facts, skips (issue 15) ---------------------------------- */

#define GiB (1ULL << 30)

static void facts_init(struct sp_job_facts *f, enum sp_oom_kind k, enum sp_log_engine e)
{
	memset(f, 0, sizeof *f);
	sp_ladder_facts_from_log(f, NULL);
	f->kind = k, f->engine = e, f->phase = SP_PHASE_LOAD;
	f->reclaimable.why = f->budget_now.why = f->budget_after_flush.why = f->total.why = SP_MISSING;
}

static const char *fchange(int rung, const struct sp_job_facts *f)
{
	static char buf[4096];
	sp_ladder_change(rung, f, buf, sizeof buf);
	return buf;
}

static void serving_families(void **st)
{
	(void)st;
	/* the kind names the engine; a generic kind in a server's log is that server's */
	assert_int_equal(sp_ladder_family_of(SP_OOM_VLLM_KV, SP_ENGINE_UNKNOWN), SP_FAMILY_VLLM);
	assert_int_equal(sp_ladder_family_of(SP_OOM_VLLM_STARTUP, SP_ENGINE_UNKNOWN), SP_FAMILY_VLLM);
	assert_int_equal(sp_ladder_family_of(SP_OOM_SGLANG, SP_ENGINE_UNKNOWN), SP_FAMILY_SGLANG);
	assert_int_equal(sp_ladder_family_of(SP_OOM_LLAMACPP, SP_ENGINE_UNKNOWN), SP_FAMILY_LLAMACPP);
	assert_int_equal(sp_ladder_family_of(SP_OOM_TGI, SP_ENGINE_UNKNOWN), SP_FAMILY_TGI);
	assert_int_equal(sp_ladder_family_of(SP_OOM_OLLAMA, SP_ENGINE_UNKNOWN), SP_FAMILY_OLLAMA);
	assert_int_equal(sp_ladder_family_of(SP_OOM_OLLAMA, SP_ENGINE_LLAMACPP), SP_FAMILY_LLAMACPP);
	assert_int_equal(sp_ladder_family_of(SP_OOM_CUDA_ERROR, SP_ENGINE_VLLM), SP_FAMILY_VLLM);
	assert_int_equal(sp_ladder_family_of(SP_OOM_TORCH, SP_ENGINE_SGLANG), SP_FAMILY_SGLANG);
	assert_int_equal(sp_ladder_family_of(SP_OOM_TORCH, SP_ENGINE_UNKNOWN), SP_FAMILY_TRAINING);
	assert_int_equal(sp_ladder_family_of(SP_OOM_BNB, SP_ENGINE_VLLM), SP_FAMILY_TRAINING);
	assert_string_equal(sp_ladder_family_key(SP_FAMILY_LLAMACPP), "llamacpp");

	struct sp_job_facts f;
	const char *c;
	/* each engine's own knobs, with the model from the log in the command */
	facts_init(&f, SP_OOM_SGLANG, SP_ENGINE_SGLANG);
	f.model = "Qwen/Qwen2.5-72B-Instruct";
	c = fchange(2, &f);
	assert_non_null(strstr(c, "--context-length"));
	assert_non_null(strstr(c, "--max-running-requests"));
	assert_non_null(strstr(c, "--mem-fraction-static"));
	assert_non_null(strstr(c, "--kv-cache-dtype fp8_e5m2"));
	assert_non_null(strstr(c, "sglang.launch_server --model-path Qwen/Qwen2.5-72B-Instruct"));
	assert_null(strstr(c, "batch_size"));
	facts_init(&f, SP_OOM_LLAMACPP, SP_ENGINE_LLAMACPP);
	f.model = "llama-70b-q8_0.gguf";
	f.max_model_len = 131072;
	c = fchange(2, &f);
	assert_non_null(strstr(c, "(1) -c 65536"));
	assert_non_null(strstr(c, "-np 1"));
	assert_non_null(strstr(c, "--cache-type-k q8_0"));
	assert_non_null(strstr(c, "-ngl"));
	assert_non_null(strstr(c, "frees nothing")); /* honest about -ngl on one pool */
	assert_non_null(strstr(c, "llama-server -m llama-70b-q8_0.gguf -c 65536"));
	facts_init(&f, SP_OOM_OLLAMA, SP_ENGINE_OLLAMA);
	c = fchange(2, &f);
	assert_non_null(strstr(c, "OLLAMA_CONTEXT_LENGTH"));
	assert_non_null(strstr(c, "OLLAMA_NUM_PARALLEL=1"));
	assert_non_null(strstr(c, "OLLAMA_MAX_LOADED_MODELS=1"));
	assert_non_null(strstr(c, "OLLAMA_KV_CACHE_TYPE=q8_0"));
	facts_init(&f, SP_OOM_TGI, SP_ENGINE_TGI);
	c = fchange(2, &f);
	assert_non_null(strstr(c, "--max-batch-prefill-tokens"));
	assert_non_null(strstr(c, "--max-total-tokens"));
	assert_non_null(strstr(c, "--max-input-tokens"));
	/* rung 3 for servers: quantized weights of the same model */
	facts_init(&f, SP_OOM_VLLM_KV, SP_ENGINE_VLLM);
	f.model = "meta-llama/Llama-3.1-70B-Instruct";
	c = fchange(3, &f);
	assert_non_null(strstr(c, "quantized checkpoint of meta-llama/Llama-3.1-70B-Instruct"));
	assert_non_null(strstr(sp_ladder_rung_title_for(3, &f), "quantized weights"));
	c = fchange(4, &f);
	assert_non_null(strstr(c, "smaller or more quantized model than meta-llama/Llama-3.1-70B-Instruct"));
}

static void vllm_rungs(void **st)
{
	(void)st;
	struct sp_job_facts f;
	const char *c;
	/* the KV cache does not fit: the log's estimate, rounded down to 1024 */
	facts_init(&f, SP_OOM_VLLM_KV, SP_ENGINE_VLLM);
	f.model = "Qwen/Qwen3-30B-A3B";
	f.max_model_len = 131072, f.est_max_model_len = 77888;
	assert_int_equal(sp_ladder_model_len(&f), 77824);
	c = fchange(2, &f);
	const char *len = strstr(c, "--max-model-len 77824"), *seqs = strstr(c, "--max-num-seqs"),
		   *kvb = strstr(c, "--kv-cache-memory-bytes"), *fp8 = strstr(c, "--kv-cache-dtype fp8"),
		   *util = strstr(c, "(5) a --gpu-memory-utilization");
	/* the cheapest order for a server */
	assert_non_null(len);
	assert_true(len < seqs && seqs < kvb && kvb < fp8 && fp8 < util);
	assert_non_null(strstr(c, "vllm serve Qwen/Qwen3-30B-A3B --max-model-len 77824"));
	/* no estimate: max_model_len scaled by available / needed KV cache */
	f.est_max_model_len = 0;
	f.kv_needed = (struct sp_u64){ 16 * GiB, SP_OK };
	f.kv_available = (struct sp_u64){ 8 * GiB, SP_OK };
	assert_int_equal(sp_ladder_model_len(&f), 65536);
	c = fchange(2, &f);
	assert_non_null(strstr(c, "--kv-cache-memory-bytes 17179869184"));
	/* nothing but the max length: half of it */
	f.kv_needed.why = f.kv_available.why = SP_MISSING;
	f.max_model_len = 40000;
	assert_int_equal(sp_ladder_model_len(&f), 19456);
	f.max_model_len = 0;
	assert_int_equal(sp_ladder_model_len(&f), 0);
	assert_non_null(strstr(fchange(2, &f), "a shorter --max-model-len"));
	f.max_num_seqs = 256;
	assert_non_null(strstr(fchange(2, &f), "--max-num-seqs 128 (from 256)"));

	/* the start-up check: the share of the pool first, judged against the other holders */
	facts_init(&f, SP_OOM_VLLM_STARTUP, SP_ENGINE_VLLM);
	f.total = (struct sp_u64){ 120 * GiB, SP_OK };
	f.budget_after_flush = (struct sp_u64){ 67 * GiB, SP_OK };
	f.nothers = 2, f.others_bytes = 40 * GiB, f.nsuspects = 1, f.suspect_bytes = 30 * GiB;
	c = fchange(2, &f);
	util = strstr(c, "--gpu-memory-utilization 0.55");
	assert_non_null(util);
	assert_true(util < strstr(c, "max-model-len"));
	assert_non_null(strstr(c, "2 other processes holding 40.0 GiB"));
	assert_non_null(strstr(c, "1 of them a suspect"));
	/* the flush says what vLLM's check reads */
	c = fchange(1, &f);
	assert_non_null(strstr(c, "mem_get_info"));
	assert_non_null(strstr(c, "MemAvailable"));
	/* negative KV cache memory: the share first too */
	facts_init(&f, SP_OOM_VLLM_KV, SP_ENGINE_VLLM);
	f.kv_negative = true;
	c = fchange(2, &f);
	assert_true(strstr(c, "--gpu-memory-utilization") < strstr(c, "max-model-len"));
	assert_non_null(strstr(c, "negative"));
}

static void method_tiers(void **st)
{
	(void)st;
	struct sp_job_facts f;
	char why[256];
	facts_init(&f, SP_OOM_TORCH, SP_ENGINE_UNKNOWN);
	f.phase = SP_PHASE_STEP;
	f.model = "unsloth/Llama-3.1-8B";
	f.method = SP_LOG_METHOD_LORA, f.method_why = "trainable%: 0.52";
	const char *c = fchange(3, &f);
	assert_non_null(strstr(c, "already bf16 LoRA (trainable%: 0.52)"));
	assert_non_null(strstr(c, "QLoRA"));
	assert_null(strstr(c, "full fine-tune"));
	assert_non_null(strstr(c, "sparkops plan unsloth/Llama-3.1-8B --method qlora"));
	assert_non_null(strstr(sp_ladder_rung_title_for(3, &f), "LoRA becomes QLoRA"));
	sp_ladder_skip_reason(3, &f, why, sizeof why);
	assert_string_equal(why, "");
	f.method = SP_LOG_METHOD_FULL, f.method_why = NULL;
	c = fchange(3, &f);
	assert_non_null(strstr(c, "full fine-tune"));
	assert_non_null(strstr(c, "--method lora"));
	/* QLoRA: nothing lower, the rung is skipped with the reason */
	f.method = SP_LOG_METHOD_QLORA, f.method_why = "Unsloth QLoRA banner";
	sp_ladder_skip_reason(3, &f, why, sizeof why);
	assert_string_equal(why, "the job is already QLoRA (Unsloth QLoRA banner): there is no lower tier");
	/* but a bitsandbytes OOM keeps its own rung 3 (bf16 LoRA may fit where QLoRA's buffers did not) */
	f.kind = SP_OOM_BNB;
	sp_ladder_skip_reason(3, &f, why, sizeof why);
	assert_string_equal(why, "");
	assert_int_equal(sp_ladder_method_down(SP_LOG_METHOD_FULL), SP_LOG_METHOD_LORA);
	assert_int_equal(sp_ladder_method_down(SP_LOG_METHOD_LORA), SP_LOG_METHOD_QLORA);
	assert_int_equal(sp_ladder_method_down(SP_LOG_METHOD_QLORA), SP_LOG_METHOD_UNKNOWN);
	/* a 4-bit checkpoint served: no lower tier of weights */
	facts_init(&f, SP_OOM_VLLM_KV, SP_ENGINE_VLLM);
	f.model = "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4";
	sp_ladder_skip_reason(3, &f, why, sizeof why);
	assert_non_null(strstr(why, "already a 4-bit checkpoint"));
	f.model = "Qwen/Qwen2.5-7B-Instruct";
	sp_ladder_skip_reason(3, &f, why, sizeof why);
	assert_string_equal(why, "");
}

static void fragmentation(void **st)
{
	(void)st;
	struct sp_job_facts f;
	char buf[512];
	facts_init(&f, SP_OOM_TORCH, SP_ENGINE_UNKNOWN);
	f.reserved_unalloc = (struct sp_u64){ 6 * GiB + GiB / 2, SP_OK };
	f.tried = (struct sp_u64){ 2 * GiB, SP_OK };
	sp_ladder_fragmentation(&f, buf, sizeof buf);
	assert_non_null(strstr(buf, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"));
	assert_non_null(strstr(buf, "6.5 GiB reserved but unallocated"));
	/* under 1 GiB: not worth a word */
	f.reserved_unalloc.v = GiB / 2;
	sp_ladder_fragmentation(&f, buf, sizeof buf);
	assert_string_equal(buf, "");
	/* less than the allocation that failed: defragmenting would not have served it */
	f.reserved_unalloc.v = 2 * GiB, f.tried.v = 4 * GiB;
	sp_ladder_fragmentation(&f, buf, sizeof buf);
	assert_string_equal(buf, "");
	/* the allocation unknown: the threshold alone */
	f.tried.why = SP_MISSING;
	sp_ladder_fragmentation(&f, buf, sizeof buf);
	assert_non_null(strstr(buf, "expandable_segments"));
	f.reserved_unalloc.why = SP_MISSING;
	sp_ladder_fragmentation(&f, buf, sizeof buf);
	assert_string_equal(buf, "");
}

static void rung4_planned(void **st)
{
	(void)st;
	struct sp_job_facts f;
	facts_init(&f, SP_OOM_TORCH, SP_ENGINE_UNKNOWN);
	f.model = "llama-3.1-70b";
	const char *c = fchange(4, &f);
	assert_non_null(strstr(c, "smaller model than llama-3.1-70b"));
	assert_non_null(strstr(c, "--plan")); /* not planned: says how to find out */
	snprintf(f.smaller_model, sizeof f.smaller_model, "llama-3.1-8b");
	f.smaller_need = 30 * GiB;
	f.two_sparks = 1, f.two_sparks_strategy = "FSDP", f.two_sparks_need = 70 * GiB;
	c = fchange(4, &f);
	assert_non_null(strstr(c, "llama-3.1-8b instead of llama-3.1-70b"));
	assert_non_null(strstr(c, "two Sparks with FSDP over the link (the planner: 70.0 GiB per node)"));
	f.two_sparks = -1;
	c = fchange(4, &f);
	assert_non_null(strstr(c, "two Sparks with FSDP do not fit either"));
}

/* a live sample with a budget: what a flush gives back, the pool */
static void live_budget(double reclaim_gib, double now_gib)
{
	live(0);
	dsample.mem.why = SP_OK;
	dsample.mem.v[SP_MI_TOTAL] = 120 * GiB;
	dsample.budget.reclaimable = (struct sp_u64){ (uint64_t)(reclaim_gib * (double)GiB), SP_OK };
	dsample.budget.now = (struct sp_u64){ (uint64_t)(now_gib * (double)GiB), SP_OK };
	dsample.budget.after_flush = (struct sp_u64){ (uint64_t)((now_gib + reclaim_gib) * (double)GiB), SP_OK };
}

static void decide_skips(void **st)
{
	(void)st;
	/* a flush would give back 0.3 GiB: rung 1 is skipped, with the reason */
	live_budget(0.3, 80);
	const struct sp_ladder_decision *d = decide(classify(TORCH_OOM), NULL, 0, false);
	assert_int_equal(d->next, 2);
	assert_int_equal(d->nskip, 1);
	assert_int_equal(d->skip[0].rung, 1);
	assert_string_equal(d->skip[0].reason, "a flush would give back only 307.2 MiB: it costs a rerun for nothing");
	assert_int_equal(d->skipped, 1u << 1);
	/* not remembered as tried: re-judged next time */
	assert_int_equal(d->st.tried, 0);
	assert_int_equal(d->st.proposed, 2);
	/* 1 GiB or more: worth it */
	live_budget(1.0, 80);
	d = decide(classify(TORCH_OOM), NULL, 0, false);
	assert_int_equal(d->next, 1);
	assert_int_equal(d->nskip, 0);
	/* vLLM's KV cache: a flush does not make it larger (sized from the
	 * utilization share less what the model took), rung 1 skipped even
	 * with plenty to flush */
	live_budget(20, 80);
	sp_oomlog_init(&dlog);
	sp_oomlog_finish(&dlog);
	dlog.kind = SP_OOM_VLLM_KV;
	dlog.engine = SP_ENGINE_VLLM;
	dlog.est_max_model_len = 77888;
	d = decide(&dlog, NULL, 0, false);
	assert_int_equal(d->next, 2);
	assert_int_equal(d->nskip, 1);
	assert_int_equal(d->skip[0].rung, 1);
	assert_non_null(strstr(d->skip[0].reason, "a flush does not make the KV cache larger"));
	assert_non_null(strstr(d->change, "--max-model-len 77824"));
	/* vLLM's start-up check reads free memory: there the flush stays first */
	dlog.kind = SP_OOM_VLLM_STARTUP;
	d = decide(&dlog, NULL, 0, false);
	assert_int_equal(d->next, 1);
	/* unknown: not skipped */
	live(0);
	d = decide(classify(TORCH_OOM), NULL, 0, false);
	assert_int_equal(d->next, 1);
	/* just flushed: done, not skipped */
	live_budget(0.1, 80);
	d = decide(NULL, NULL, 0, true);
	assert_int_equal(d->st.tried, 1u << 1);
	assert_int_equal(d->nskip, 0);
	/* a QLoRA job past rung 2: rung 3 skipped, rung 4 next */
	live_budget(5, 80);
	sp_oomlog_init(&dlog);
	sp_oomlog_feed(&dlog, TORCH_OOM, strlen(TORCH_OOM));
	sp_oomlog_finish(&dlog);
	dlog.method = SP_LOG_METHOD_QLORA;
	snprintf(dlog.method_why, sizeof dlog.method_why, "trainable%%: 0.41, 4-bit base");
	snprintf(dlog.model, sizeof dlog.model, "meta-llama/Llama-3.1-70B");
	struct sp_ladder_state s0 = { .tried = 1u << 1 | 1u << 2, .proposed = 0, .log_sig = 0 };
	d = decide(&dlog, &s0, 0, false);
	assert_int_equal(d->next, 4);
	assert_int_equal(d->nskip, 1);
	assert_int_equal(d->skip[0].rung, 3);
	assert_non_null(strstr(d->change, "meta-llama/Llama-3.1-70B"));
	/* every rung tried or skipped: the end */
	s0.tried |= 1u << 4;
	d = decide(&dlog, &s0, 0, false);
	assert_int_equal(d->next, 0);
	assert_non_null(strstr(d->change, "does not apply"));
	/* the planner's answer for rung 4 goes into the change */
	struct sp_job_facts planned = { 0 };
	snprintf(planned.smaller_model, sizeof planned.smaller_model, "llama-3.1-8b");
	planned.smaller_need = 20 * GiB;
	planned.two_sparks = -1, planned.two_sparks_strategy = "FSDP", planned.two_sparks_need = 90 * GiB;
	s0.tried = 1u << 1 | 1u << 2;
	struct sp_ladder_in in = { &dlog, &dsample, s0, 0, false };
	sp_ladder_decide_planned(&in, &planned, &dd);
	assert_int_equal(dd.next, 4);
	assert_non_null(strstr(dd.change, "llama-3.1-8b instead of meta-llama/Llama-3.1-70B"));
	assert_non_null(strstr(dd.change, "do not fit either"));
}

static void decide_log_facts(void **st)
{
	(void)st;
	/* the log's facts reach the change: Unsloth's batch and accumulation, the sequence */
	live_budget(5, 80);
	sp_oomlog_init(&dlog);
	sp_oomlog_feed(&dlog, TORCH_OOM, strlen(TORCH_OOM));
	sp_oomlog_finish(&dlog);
	dlog.phase = SP_PHASE_STEP;
	dlog.batch_per_device = 2, dlog.grad_accum = 4, dlog.seq_len = 4096;
	dlog.fig.reserved_unalloc = (struct sp_u64){ 6 * GiB + GiB / 2, SP_OK };
	struct sp_ladder_state s0 = { .tried = 1u << 1 };
	const struct sp_ladder_decision *d = decide(&dlog, &s0, 0, false);
	assert_int_equal(d->next, 2);
	assert_non_null(strstr(d->change, "max_seq_length 4096 -> 2048"));
	assert_non_null(strstr(d->change, "per_device_train_batch_size 2 -> 1, gradient_accumulation_steps 4 -> 8"));
	/* fragmentation: before any change to the job */
	assert_non_null(strstr(d->fragmentation, "expandable_segments:True"));
	assert_non_null(strstr(d->before, "expandable_segments:True"));
	assert_true(strncmp(d->advice, "before changing the job: ", 25) == 0);
	/* a vLLM log: the serving rungs, with the log's number */
	sp_oomlog_init(&dlog);
	sp_oomlog_feed(&dlog, "x\n", 2);
	sp_oomlog_finish(&dlog);
	dlog.kind = SP_OOM_VLLM_KV, dlog.engine = SP_ENGINE_VLLM, dlog.est_max_model_len = 77888;
	snprintf(dlog.model, sizeof dlog.model, "Qwen/Qwen3-30B-A3B");
	d = decide(&dlog, &s0, 0, false);
	assert_int_equal(d->next, 2);
	assert_non_null(strstr(d->change, "--max-model-len 77824"));
	assert_string_equal(d->fragmentation, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(order),         cmocka_unit_test(state_roundtrip), cmocka_unit_test(state_corrupt),
		cmocka_unit_test(jobs),          cmocka_unit_test(competitors),     cmocka_unit_test(changes),
		cmocka_unit_test(watcher_argv),     cmocka_unit_test(watcher_exe_identity),
		cmocka_unit_test(decide_first_call), cmocka_unit_test(decide_cgroup_kills),
		cmocka_unit_test(decide_failed_again), cmocka_unit_test(decide_flush_and_end),
		cmocka_unit_test(decide_competitors), cmocka_unit_test(apply_verdicts),
		cmocka_unit_test(serving_families), cmocka_unit_test(vllm_rungs),
		cmocka_unit_test(method_tiers), cmocka_unit_test(fragmentation),
		cmocka_unit_test(rung4_planned), cmocka_unit_test(decide_skips),
		cmocka_unit_test(decide_log_facts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
