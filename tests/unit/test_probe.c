// SPDX-License-Identifier: MIT
/* Unit tests for the probe parsers and the budget arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "probe/kept.h"
#include "probe/probe.h"
#include "probe/jobtree.h"
#include "probe/sample.h"
#include "util/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define S(x) x, sizeof(x) - 1
#define KB 1024ULL

static void meminfo_basic(void **st)
{
	(void)st;
	struct sp_meminfo m;
	const char buf[] = "MemTotal:       125514956 kB\nMemFree:         6501171 kB\n"
			   "MemAvailable:   52218675 kB\nBuffers:          419430 kB\nCached:         46766571 kB\n"
			   "HugePages_Total:       0\nHugepagesize:       2048 kB\n";
	assert_int_equal(sp_meminfo_parse(S(buf), &m), 0);
	assert_int_equal(m.v[SP_MI_TOTAL], 125514956 * KB);
	assert_int_equal(m.v[SP_MI_FREE], 6501171 * KB);
	assert_true(sp_mi_has(&m, SP_MI_AVAILABLE));
	assert_true(sp_mi_has(&m, SP_MI_HUGE_TOTAL));
	assert_int_equal(m.v[SP_MI_HUGE_TOTAL], 0); /* a count, no unit */
	assert_false(sp_mi_has(&m, SP_MI_SHMEM));
}

static void meminfo_keys_at_line_start(void **st)
{
	(void)st;
	struct sp_meminfo m;
	/* "Active(file)" must not be taken for "file", nor "SwapCached" for "Cached" */
	const char buf[] = "MemTotal: 100 kB\nMemFree: 50 kB\nSwapCached: 7 kB\nXCached: 9 kB\n";
	assert_int_equal(sp_meminfo_parse(S(buf), &m), 0);
	assert_false(sp_mi_has(&m, SP_MI_CACHED));
	assert_int_equal(m.v[SP_MI_SWAP_CACHED], 7 * KB);
}

static void meminfo_garbage(void **st)
{
	(void)st;
	struct sp_meminfo m;
	const char bad[] = "MemTotal: 12x kB\nMemFree: 5 kB\n";
	assert_int_equal(sp_meminfo_parse(S(bad), &m), -1);
	assert_int_equal(m.why, SP_MALFORMED);
	const char overflow[] = "MemTotal: 100 kB\nMemFree: 99999999999999999999999 kB\n";
	assert_int_equal(sp_meminfo_parse(S(overflow), &m), -1);
	const char trunc[] = "MemTotal: 100 kB\nMemFree: 50 kB\nCached: 3";
	assert_int_equal(sp_meminfo_parse(S(trunc), &m), 0);
	assert_int_equal(m.v[SP_MI_CACHED], 3); /* the last line cut mid-way: no unit, taken as is */
	assert_int_equal(sp_meminfo_parse("", 0, &m), -1);
	const char neg[] = "MemTotal: 100 kB\nMemFree: -5 kB\n";
	assert_int_equal(sp_meminfo_parse(S(neg), &m), -1);
}

static void psi_lines(void **st)
{
	(void)st;
	struct sp_psi p;
	const char buf[] = "some avg10=4.20 avg60=3.36 avg300=2.10 total=123456\n"
			   "full avg10=1.10 avg60=0.88 avg300=0.55 total=61728\n";
	assert_int_equal(sp_psi_parse(S(buf), &p), 0);
	assert_true(p.some.ok && p.full.ok);
	assert_float_equal(p.some.avg10, 4.2, 1e-9);
	assert_int_equal(p.full.total_us, 61728);
	const char cpu_only[] = "some avg10=0.50 avg60=0.40 avg300=0.30 total=9\n";
	assert_int_equal(sp_psi_parse(S(cpu_only), &p), 0);
	assert_false(p.full.ok);
	const char bad[] = "some avg10=abc avg60=0.00 avg300=0.00 total=0\n";
	assert_int_equal(sp_psi_parse(S(bad), &p), -1);
	assert_int_equal(p.why, SP_MALFORMED);
	const char over[] = "some avg10=101.00 avg60=0.00 avg300=0.00 total=0\n";
	assert_int_equal(sp_psi_parse(S(over), &p), -1);
	const char cut[] = "some avg10=0.50 avg60=0.40 avg3";
	assert_int_equal(sp_psi_parse(S(cut), &p), -1);
}

static void cgroup_self(void **st)
{
	(void)st;
	char path[256];
	const char v2[] = "0::/system.slice/train.service\n";
	assert_int_equal(sp_cgroup_parse_self(S(v2), path, sizeof path), 2);
	assert_string_equal(path, "/system.slice/train.service");
	const char v1[] = "12:pids:/docker/abc\n4:memory:/docker/abc\n0::/\n";
	assert_int_equal(sp_cgroup_parse_self(S(v1), path, sizeof path), 1);
	assert_string_equal(path, "/docker/abc");
	const char v1multi[] = "3:cpu,memory:/x\n";
	assert_int_equal(sp_cgroup_parse_self(S(v1multi), path, sizeof path), 1);
	const char nomem[] = "3:cpu:/x\n";
	assert_int_equal(sp_cgroup_parse_self(S(nomem), path, sizeof path), 0);
	assert_int_equal(sp_cgroup_parse_self(S("garbage"), path, sizeof path), 0);
}

static void cgroup_values(void **st)
{
	(void)st;
	uint64_t v;
	int un;
	assert_int_equal(sp_cgroup_parse_limit("max\n", &v, &un), 0);
	assert_int_equal(un, 1);
	assert_int_equal(sp_cgroup_parse_limit("17179869184\n", &v, &un), 0);
	assert_int_equal(un, 0);
	assert_int_equal(v, 17179869184ULL);
	assert_int_equal(sp_cgroup_parse_limit("maximum", &v, &un), -1);
	assert_int_equal(sp_cgroup_parse_limit("-1", &v, &un), -1);
	const char ev[] = "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n";
	assert_int_equal(sp_kv_lookup(S(ev), "oom_kill", &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(sp_kv_lookup(S(ev), "oom", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(sp_kv_lookup(S(ev), "nothere", &v), -1);
	const char v1[] = "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n";
	assert_int_equal(sp_kv_lookup(S(v1), "oom_kill", &v), 0);
	assert_int_equal(v, 1);
}

/* tiny fixture writer: root/rel gets text (folders made) */
static void put_file(const char *root, const char *rel, const char *text)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	for (char *q = path + strlen(root) + 1; (q = strchr(q, '/')) != NULL; q++) {
		*q = 0;
		mkdir(path, 0755);
		*q = '/';
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The cgroup's own files are read every time; where it is and the limits
 * above it are kept a while, but a folder that is gone is resolved again at
 * once: a moved process never reads its old cgroup. */
static void cgroup_cached_where(void **st)
{
	(void)st;
	char root[] = "/tmp/sparkops-cgXXXXXX";
	assert_non_null(mkdtemp(root));
	char proc[600], sys[600];
	snprintf(proc, sizeof proc, "%s/proc", root);
	snprintf(sys, sizeof sys, "%s/sys", root);
	put_file(root, "proc/self/cgroup", "0::/a/b\n");
	put_file(root, "sys/fs/cgroup/a/b/memory.current", "100\n");
	put_file(root, "sys/fs/cgroup/a/b/memory.max", "max\n");
	put_file(root, "sys/fs/cgroup/a/b/memory.stat", "anon 1\nfile 5\n");
	put_file(root, "sys/fs/cgroup/a/b/memory.events", "low 0\noom 1\noom_kill 2\n");
	put_file(root, "sys/fs/cgroup/a/memory.max", "5000\n");
	sp_paths_init(proc, sys);
	struct sp_cgroup cg;
	sp_cgroup_read(&cg);
	assert_int_equal(cg.version, 2);
	assert_string_equal(cg.path, "/a/b");
	assert_int_equal(cg.usage.v, 100);
	assert_int_equal(cg.file.v, 5);
	assert_int_equal(cg.oom.v, 1);
	assert_int_equal(cg.oom_kill.v, 2);
	assert_int_equal(cg.limit.why, SP_OK);
	assert_int_equal(cg.limit.v, 5000); /* the parent's */

	/* the folder's own files: every read */
	put_file(root, "sys/fs/cgroup/a/b/memory.current", "200\n");
	put_file(root, "sys/fs/cgroup/a/b/memory.max", "3000\n");
	put_file(root, "sys/fs/cgroup/a/b/memory.events", "low 0\noom 4\noom_kill 3\n");
	sp_cgroup_read(&cg);
	assert_int_equal(cg.usage.v, 200);
	assert_int_equal(cg.limit.v, 3000);
	assert_int_equal(cg.oom.v, 4);
	assert_int_equal(cg.oom_kill.v, 3);

	/* moved: the old folder gone, the new one read in the same call */
	put_file(root, "proc/self/cgroup", "0::/c\n");
	put_file(root, "sys/fs/cgroup/c/memory.current", "7\n");
	put_file(root, "sys/fs/cgroup/c/memory.max", "900\n");
	char old[1024];
	snprintf(old, sizeof old, "%s/sys/fs/cgroup/a/b/memory.current", root);
	assert_int_equal(unlink(old), 0);
	sp_cgroup_read(&cg);
	assert_string_equal(cg.path, "/c");
	assert_int_equal(cg.usage.why, SP_OK);
	assert_int_equal(cg.usage.v, 7);
	assert_int_equal(cg.limit.v, 900);

	/* other roots: resolved afresh */
	put_file(root, "other/self/cgroup", "0::/a\n");
	put_file(root, "sys/fs/cgroup/a/memory.current", "11\n");
	char other[600];
	snprintf(other, sizeof other, "%s/other", root);
	sp_paths_init(other, sys);
	sp_cgroup_read(&cg);
	assert_string_equal(cg.path, "/a");
	assert_int_equal(cg.usage.v, 11);
	sp_paths_init(NULL, NULL);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* The kernel's files a sample reads every time stay open and are read
 * afresh; any other file (a fixture's) is opened every time */
static void kept_files(void **st)
{
	(void)st;
	char buf[8192];
	size_t len = 0;
	int n0 = sp_kept_count();
	assert_int_equal(sp_kept_read("/proc/meminfo", buf, sizeof buf, &len), 0);
	assert_true(len > 0 && strncmp(buf, "MemTotal:", 9) == 0);
	assert_int_equal(sp_kept_count(), n0 + 1);
	assert_int_equal(sp_kept_read("/proc/meminfo", buf, sizeof buf, &len), 0);
	assert_true(strncmp(buf, "MemTotal:", 9) == 0);
	assert_int_equal(strlen(buf), len);
	assert_int_equal(sp_kept_count(), n0 + 1); /* the same fd */
	/* a file of a moved root: read anew, also when replaced */
	char dir[] = "/tmp/sparkops-keptXXXXXX";
	assert_non_null(mkdtemp(dir));
	put_file(dir, "v", "41\n");
	char p[600];
	snprintf(p, sizeof p, "%s/v", dir);
	int64_t v = 0;
	assert_int_equal(sp_kept_i64(p, &v), 0);
	assert_int_equal(v, 41);
	assert_int_equal(sp_kept_count(), n0 + 1);
	put_file(dir, "v.new", "42\n");
	char q[600];
	snprintf(q, sizeof q, "%s/v.new", dir);
	assert_int_equal(rename(q, p), 0);
	assert_int_equal(sp_kept_i64(p, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(sp_kept_i64(p, &v), -ENOENT);
	assert_int_equal(rmdir(dir), 0);
	sp_kept_close();
	assert_int_equal(sp_kept_count(), 0);
	assert_int_equal(sp_kept_read("/proc/meminfo", buf, sizeof buf, &len), 0);
	assert_int_equal(sp_kept_count(), 1);
	sp_kept_close();
}

static void budget(void **st)
{
	(void)st;
	struct sp_meminfo m;
	memset(&m, 0, sizeof m);
	m.why = SP_OK;
	m.v[SP_MI_TOTAL] = 120ULL << 30;
	m.v[SP_MI_FREE] = 10ULL << 30;
	m.v[SP_MI_BUFFERS] = 1ULL << 30;
	m.v[SP_MI_CACHED] = 50ULL << 30;
	m.v[SP_MI_SHMEM] = 2ULL << 30;
	m.v[SP_MI_MAPPED] = 3ULL << 30;
	m.v[SP_MI_SRECLAIMABLE] = 1ULL << 30;
	m.have = ~0ULL;
	struct sp_budget b;
	sp_budget_compute(&b, &m, NULL, 4ULL << 30);
	assert_int_equal(b.now.v, 6ULL << 30);
	/* 1 + 50 - 2 (shmem) - 3 (mapped) + 1 (slab) = 47 GiB reclaimable */
	assert_int_equal(b.reclaimable.v, 47ULL << 30);
	assert_int_equal(b.after_flush.v, 53ULL << 30);
	/* reserve above free: the budget is 0, not negative */
	sp_budget_compute(&b, &m, NULL, 20ULL << 30);
	assert_int_equal(b.now.v, 0);
	/* a tighter cgroup */
	struct sp_cgroup cg;
	memset(&cg, 0, sizeof cg);
	cg.limit = (struct sp_u64){ 8ULL << 30, SP_OK };
	cg.usage = (struct sp_u64){ 6ULL << 30, SP_OK };
	cg.file = (struct sp_u64){ 1ULL << 30, SP_OK };
	sp_budget_compute(&b, &m, &cg, 4ULL << 30);
	assert_true(b.cgroup_bound);
	assert_int_equal(b.now.v, 2ULL << 30);
	assert_int_equal(b.after_flush.v, 3ULL << 30);
	/* unknown meminfo: the budget is unknown */
	m.why = SP_MISSING;
	sp_budget_compute(&b, &m, NULL, 4ULL << 30);
	assert_int_equal(b.now.why, SP_MISSING);
}

static void classify(void **st)
{
	(void)st;
	struct sp_proc p;
	memset(&p, 0, sizeof p);
	const char vllm[] = "python3\0-m\0vllm.entrypoints.openai.api_server\0--gpu-memory-utilization\0"
			    "0.5\0";
	assert_true(sp_proc_classify("python3", S(vllm), &p));
	assert_string_equal(p.name, "vllm");
	assert_int_equal(p.kind, SP_PROC_SERVER);
	assert_true(p.has_cap && !p.cap_default);
	assert_float_equal(p.cap_frac, 0.5, 1e-9);
	const char vllm_eq[] = "/usr/bin/vllm\0serve\0m\0--gpu-memory-utilization=0.3\0";
	assert_true(sp_proc_classify("vllm", S(vllm_eq), &p));
	assert_float_equal(p.cap_frac, 0.3, 1e-9);
	const char vllm_def[] = "vllm\0serve\0m\0";
	assert_true(sp_proc_classify("vllm", S(vllm_def), &p));
	assert_true(p.cap_default);
	assert_float_equal(p.cap_frac, 0.9, 1e-9);
	const char ollama[] = "/usr/local/bin/ollama\0serve\0";
	assert_true(sp_proc_classify("ollama", S(ollama), &p));
	assert_int_equal(p.kind, SP_PROC_SERVER);
	assert_false(p.has_cap);
	const char tr[] = "python3\0-u\0scripts/train_lora.py\0--bs\0" "4\0";
	assert_true(sp_proc_classify("python3", S(tr), &p));
	assert_int_equal(p.kind, SP_PROC_TRAINER);
	assert_string_equal(p.name, "train_lora.py");
	const char plain[] = "python3\0serve_docs.py\0";
	assert_false(sp_proc_classify("python3", S(plain), &p));
	const char deep[] = "cp\0-r\0/data\0/x\0/y\0/models/nemo\0";
	assert_false(sp_proc_classify("cp", S(deep), &p));
	uint64_t pages;
	assert_int_equal(sp_statm_parse("200 100 5 1 0 50 0\n", &pages), 0);
	assert_int_equal(pages, 100);
	assert_int_equal(sp_statm_parse("garbage", &pages), -1);
}

/* run/watch: the GPU wait is half the interval, never more than the timeout */
static void gpu_timeout_for_interval(void **st)
{
	(void)st;
	assert_true(sp_gpu_timeout_for_interval(2.0, 0.2) == 0.1);
	assert_true(sp_gpu_timeout_for_interval(2.0, 1.0) == 0.5);
	assert_true(sp_gpu_timeout_for_interval(2.0, 30.0) == 2.0);
	assert_true(sp_gpu_timeout_for_interval(2.0, 4.0) == 2.0);
	assert_true(sp_gpu_timeout_for_interval(2.0, 0.0) == 2.0);
}

/* the guard's signal set loses this process and its ancestors, nothing else */
static void tree_drops_self_line(void **st)
{
	(void)st;
	pid_t line[SP_SELF_LINE_MAX];
	int nl = sp_self_line(SP_LIVE_PROC, line, SP_SELF_LINE_MAX);
	assert_true(nl >= 2);
	assert_int_equal(line[0], getpid());
	assert_int_equal(line[1], getppid());
	static struct sp_tree t;
	t.n = 0;
	t.pids[t.n++] = 4194303; /* above any real pid: not ours */
	t.pids[t.n++] = getpid();
	t.pids[t.n++] = getppid();
	t.pids[t.n++] = 4194302;
	assert_int_equal(sp_tree_drop_self_line(&t, SP_LIVE_PROC), 2);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.pids[0], 4194303);
	assert_int_equal(t.pids[1], 4194302);
}

/* /proc/PID/stat: comm up to the last ')', start time (22), rss (24) */
static void pidstat(void **st)
{
	(void)st;
	char comm[20];
	uint64_t start, rss;
	const char a[] = "4242 (python3) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 123456 "
			 "1000000 2500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n";
	assert_int_equal(sp_pidstat_parse(a, strlen(a), comm, sizeof comm, &start, &rss), 0);
	assert_string_equal(comm, "python3");
	assert_int_equal(start, 123456);
	assert_int_equal(rss, 2500);
	const char b[] = "7 (a) (b) c) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 4096 12 0\n";
	assert_int_equal(sp_pidstat_parse(b, strlen(b), comm, sizeof comm, &start, &rss), 0);
	assert_string_equal(comm, "a) (b) c");
	assert_int_equal(start, 99);
	assert_int_equal(rss, 12);
	const char longc[] = "8 (a-name-longer-than-the-buffer) S 1 8 8 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 3";
	assert_int_equal(sp_pidstat_parse(longc, strlen(longc), comm, sizeof comm, &start, &rss), 0);
	assert_string_equal(comm, "a-name-longer-than-");
	const char cut[] = "9 (x) S 1 9 9 0 -1 0 0 0";
	assert_int_equal(sp_pidstat_parse(cut, strlen(cut), comm, sizeof comm, &start, &rss), -1);
	const char junk[] = "9 (x) S 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5x 0 3";
	assert_int_equal(sp_pidstat_parse(junk, strlen(junk), comm, sizeof comm, &start, &rss), -1);
	assert_int_equal(sp_pidstat_parse("no parens", 9, comm, sizeof comm, &start, &rss), -1);
}

/* The paths a sample reads are joined without printf: byte for byte what
 * "%s/%s" writes, refused (out untouched) exactly when it would be cut */
static void path_join_is_printf(void **st)
{
	(void)st;
	const char *dirs[] = { "", "/", "/proc", "/sys/fs/cgroup/memory/user.slice/a b" };
	const char *names[] = { "", "meminfo", "pressure/memory", "memory.limit_in_bytes" };
	for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++)
		for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
			for (size_t n = 1; n < 64; n++) {
				char want[64], got[64];
				memset(got, 'x', sizeof got);
				int w = snprintf(want, n, "%s/%s", dirs[d], names[k]);
				int r = sp_path_join(got, n, dirs[d], names[k]);
				if ((size_t)w < n) {
					assert_int_equal(r, 0);
					assert_string_equal(got, want);
				} else {
					assert_int_equal(r, -1);
					assert_true(got[0] == 'x');
				}
			}
	char a[128], b[128];
	assert_int_equal(sp_proc_file(a, sizeof a, "pressure/io"), 0);
	assert_int_equal(sp_proc_path(b, sizeof b, "pressure/%s", "io"), 0);
	assert_string_equal(a, b);
	assert_int_equal(sp_proc_path(a, sizeof a, "meminfo"), 0); /* no format: joined by hand */
	assert_int_equal(sp_proc_path(b, sizeof b, "%s", "meminfo"), 0);
	assert_string_equal(a, b);
	assert_int_equal(sp_proc_path(a, 4, "meminfo"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(meminfo_basic), cmocka_unit_test(meminfo_keys_at_line_start),
		cmocka_unit_test(meminfo_garbage), cmocka_unit_test(psi_lines),
		cmocka_unit_test(cgroup_self), cmocka_unit_test(cgroup_values), cmocka_unit_test(cgroup_cached_where), cmocka_unit_test(kept_files),
		cmocka_unit_test(budget), cmocka_unit_test(classify),
		cmocka_unit_test(gpu_timeout_for_interval), cmocka_unit_test(tree_drops_self_line),
		cmocka_unit_test(pidstat), cmocka_unit_test(path_join_is_printf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
