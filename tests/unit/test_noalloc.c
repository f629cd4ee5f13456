// SPDX-License-Identifier: MIT
/* No heap allocation per sample in steady state: the sampling loop of run,
 * watch and serve must not depend on malloc when memory is what is running
 * out. malloc/calloc/realloc are counted (interposed here; under ASan through
 * its allocator hooks), sp_sample_read runs against the gb10-loaded fixture
 * and the fake NVML (GPU thread included, since it is in this process), and
 * after a warm-up the count must not move. Also: sp_harden_process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "qemu_skip.h"

#include "probe/probe.h"
#include "probe/harden.h"
#include "out/prom.h"
#include "util/paths.h"

#include "alloc_count.h"

static struct sp_sample S;

/* The gb10-loaded fixture and the fake NVML (GB10 scenario, one GPU process) */
static void fake_gb10(struct sp_read_opts *o)
{
	char lib[1024];
	const char *b = getenv("BUILD_DIR");
	snprintf(lib, sizeof lib, "%s/libfake-nvml.so", b ? b : "build");
	setenv("SPARKOPS_NVML_LIB", lib, 1);
	setenv("FAKE_NVML_SCENARIO", "tests/fake-nvml/scenarios/gb10.scn", 1);
	setenv("FAKE_NVML_PROCS", "3301:30000000000", 1);
	sp_paths_init("tests/fixtures/gb10-loaded/proc", "tests/fixtures/gb10-loaded/sys");
	sp_read_opts_init(o);
	o->gpu_timeout_s = 10.0;
}

static void steady_state_allocates_nothing(void **st)
{
	SKIP_UNDER_QEMU(QEMU_THREADS);
	(void)st;
	struct sp_read_opts o;
	fake_gb10(&o);
	/* warm-up: dlopen, nvmlInit, the GPU thread, the scenario file */
	for (int i = 0; i < 3; i++)
		sp_sample_read(&S, &o);
	assert_int_equal(S.gpu_status, SP_OK);
	unsigned long before = atomic_load(&n_alloc);
	assert_true(before > 0); /* the counter is live: the warm-up did allocate (dlopen, thread) */
	for (int i = 0; i < 50; i++)
		sp_sample_read(&S, &o);
	unsigned long after = atomic_load(&n_alloc);
	/* the readings are real, not skipped */
	assert_int_equal(S.mem.why, SP_OK);
	assert_true(S.nprocs > 0 && S.nzones > 0 && S.nhw > 0);
	assert_int_equal(S.gpu_status, SP_OK);
	assert_int_equal(S.gpus[0].temp_c.v, 84);
	if (after != before)
		fprintf(stderr, "%lu allocations in 50 samples\n", after - before);
	assert_int_equal(after - before, 0);
	sp_nvml_release();
}

/* The stack sp_harden_stack() prefaults (and mlockall then locks) covers a
 * sample and its exposition: run both on a thread whose stack is painted,
 * and find the deepest byte they wrote. */
#define PAINT_BYTES (1u << 20)
static char expo[1 << 17];
static void *sample_and_render(void *arg)
{
	const struct sp_read_opts *o = arg;
	sp_sample_read(&S, o);
	struct sp_prom_info info;
	memset(&info, 0, sizeof info);
	return (void *)(uintptr_t)sp_prom_render(expo, sizeof expo, &S, &info, NULL);
}

static void a_sample_fits_the_prefaulted_stack(void **st)
{
	SKIP_UNDER_QEMU(QEMU_THREADS);
	(void)st;
#ifdef UNDER_ASAN
	skip(); /* ASan's frames carry redzones: its depth is not the build's */
#endif
	struct sp_read_opts o;
	fake_gb10(&o);
	unsigned char *stk = mmap(NULL, PAINT_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(stk != MAP_FAILED);
	memset(stk, 0xa5, PAINT_BYTES);
	pthread_attr_t a;
	pthread_attr_init(&a);
	assert_int_equal(pthread_attr_setstack(&a, stk, PAINT_BYTES), 0);
	/* twice: the first sample builds the caches (sensor tables, the
	 * process view's first scan), the second is a steady one */
	for (int k = 0; k < 2; k++) {
		pthread_t t;
		void *len = NULL;
		assert_int_equal(pthread_create(&t, &a, sample_and_render, &o), 0);
		assert_int_equal(pthread_join(t, &len), 0);
		assert_true((size_t)(uintptr_t)len > 1000 && (size_t)(uintptr_t)len < sizeof expo);
	}
	pthread_attr_destroy(&a);
	size_t low = 0;
	while (low < PAINT_BYTES && stk[low] == 0xa5)
		low++;
	size_t used = PAINT_BYTES - low; /* the stack grows down from stk + PAINT_BYTES */
	munmap(stk, PAINT_BYTES);
	fprintf(stderr, "a sample and its exposition used %zu bytes of stack (prefault: %u)\n", used,
		SP_HARDEN_STACK_BYTES);
	assert_true(used > 4096); /* the measure is live */
	assert_true(used <= SP_HARDEN_STACK_BYTES);
	assert_int_equal(S.mem.why, SP_OK);
	assert_true(S.nprocs > 0 && S.nzones > 0 && S.nhw > 0);
	sp_nvml_release();
}

/* A sample's tables at their fullest: 96 hwmon channels, 32 zones (glibc's
 * qsort allocates for arrays this size; the probes must not). */
static void full_tables_allocate_nothing(void **st)
{
	SKIP_UNDER_QEMU(QEMU_THREADS);
	(void)st;
	char root[] = "/tmp/sparkops-sys-XXXXXX", p[512];
	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof p, "mkdir -p %s/class/hwmon/hwmon0 && cd %s/class/hwmon/hwmon0 && echo chip > name && "
		 "for i in $(seq 1 120); do echo $((i * 1000)) > temp${i}_input; done && "
		 "for i in $(seq 0 40); do mkdir -p %s/class/thermal/thermal_zone$i && "
		 "echo 40000 > %s/class/thermal/thermal_zone$i/temp; done", root, root, root, root);
	assert_int_equal(system(p), 0);
	sp_paths_init("tests/fixtures/gb10-idle/proc", root);
	for (int i = 0; i < 2; i++) {
		sp_hwmon_read(&S);
		sp_thermal_read(&S);
	}
	unsigned long before = atomic_load(&n_alloc);
	for (int i = 0; i < 5; i++) {
		sp_hwmon_read(&S);
		sp_thermal_read(&S);
	}
	unsigned long after = atomic_load(&n_alloc);
	assert_int_equal(S.nhw, SP_MAX_HWMON);
	assert_int_equal(S.nzones, SP_MAX_ZONES);
	for (int i = 1; i < S.nhw; i++)
		assert_true(S.hw[i - 1].chan < S.hw[i].chan);
	for (int i = 1; i < S.nzones; i++)
		assert_true(S.zones[i - 1].index < S.zones[i].index);
	snprintf(p, sizeof p, "rm -rf %s", root);
	assert_int_equal(system(p), 0);
	assert_int_equal(after - before, 0);
}

static void harden(void **st)
{
	SKIP_UNDER_QEMU(QEMU_MLOCK);
	(void)st;
	char warn[256];
	pid_t pid;
	int status = 0;
	unsigned done = sp_harden_process(SP_HARDEN_MLOCK, warn, sizeof warn);
#ifdef UNDER_ASAN
	assert_false(done & SP_HARDEN_MLOCK); /* never under ASan: its shadow is terabytes */
	assert_string_equal(warn, "");
#else
	if (done & SP_HARDEN_MLOCK) {
		assert_string_equal(warn, "");
		munlockall();
	} else {
		assert_non_null(strstr(warn, "cannot lock sparkops in memory"));
	}
	/* without the right to lock: one line that says what to do */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { 0, 0 };
		setrlimit(RLIMIT_MEMLOCK, &rl);
		warn[0] = 0;
		done = sp_harden_process(SP_HARDEN_MLOCK, warn, sizeof warn);
		if (geteuid() == 0) /* CAP_IPC_LOCK ignores the limit */
			_exit(done & SP_HARDEN_MLOCK ? 0 : 1);
		_exit(!(done & SP_HARDEN_MLOCK) && strstr(warn, "raise 'ulimit -l'") && !strchr(warn, '\n') ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
#endif
	/* oom_score_adj: root only, and never against a fixture tree */
	sp_paths_init("tests/fixtures/gb10-idle/proc", NULL);
	assert_false(sp_harden_process(SP_HARDEN_OOM, NULL, 0) & SP_HARDEN_OOM);
	sp_paths_init("/proc", "/sys");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		done = sp_harden_process(SP_HARDEN_OOM, NULL, 0);
		FILE *f = fopen("/proc/self/oom_score_adj", "r");
		int v = 0;
		if (!f || fscanf(f, "%d", &v) != 1)
			_exit(2);
		fclose(f);
		if (geteuid() != 0)
			_exit(!(done & SP_HARDEN_OOM) ? 0 : 1);
		/* root, but a container may still refuse it: done says which */
		_exit((done & SP_HARDEN_OOM) ? (v == -900 ? 0 : 1) : (v != -900 ? 0 : 1));
	}
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A child sees only 0, 1, 2 after sp_close_fds_from(3), even for fds
 * opened without O_CLOEXEC (as a vendor library might). */
static void close_inherited(void **st)
{
	SKIP_UNDER_QEMU("closes every fd from 3 in a child, qemu-user's own included (it hangs)");
	(void)st;
	int leak = open("/dev/null", O_RDONLY); /* no O_CLOEXEC, on purpose */
	assert_true(leak >= 0);
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sp_close_fds_from(3);
		int extra = 0;
		for (int fd = 3; fd < 1024; fd++)
			if (fcntl(fd, F_GETFD) >= 0)
				extra++;
		_exit(extra == 0 ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	close(leak);
	close(p[0]);
	close(p[1]);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	install_counter();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(steady_state_allocates_nothing),
		cmocka_unit_test(full_tables_allocate_nothing),
		cmocka_unit_test(a_sample_fits_the_prefaulted_stack),
		cmocka_unit_test(harden),
		cmocka_unit_test(close_inherited),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
