// SPDX-License-Identifier: MIT
/* The GPU behind a deadline: a lost GPU mid-run, nonsense values counted,
 * and a driver that hangs forever while the pool keeps being read. Uses the
 * fake NVML (BUILD_DIR/libfake-nvml.so) and the gb10-idle fixture. The hang
 * case wedges the GPU thread for good, so it runs last. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "qemu_skip.h"

#include "probe/probe.h"
#include "util/paths.h"

static char lib[1024];
static struct sp_sample S;

static void use_scenario(const char *name)
{
	char p[512];
	snprintf(p, sizeof p, "tests/fake-nvml/scenarios/%s.scn", name);
	setenv("FAKE_NVML_SCENARIO", p, 1);
	setenv("SPARKOPS_NVML_LIB", lib, 1);
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static void read_sample(double timeout)
{
	struct sp_read_opts o;
	sp_read_opts_init(&o);
	o.gpu_timeout_s = timeout;
	memset(&S, 0, sizeof S);
	sp_sample_read(&S, &o);
}

static void lost_midrun(void **st)
{
	SKIP_UNDER_QEMU(QEMU_THREADS);
	(void)st;
	use_scenario("lost-midrun");
	setenv("FAKE_NVML_TIME_SCALE", "20", 1); /* @1 s is 50 ms */
	read_sample(5.0);
	assert_int_equal(S.gpu_status, SP_OK);
	assert_int_equal(S.ngpu, 1);
	assert_int_equal(S.gpus[0].temp_c.why, SP_OK);
	assert_int_equal(S.gpus[0].temp_c.v, 70);
	/* keep sampling until the loss shows; the pool is read every time */
	int lost = 0;
	for (int i = 0; i < 500 && !lost; i++) {
		nap_ms(5);
		read_sample(5.0);
		assert_int_equal(S.mem.why, SP_OK);
		assert_int_equal(S.gpu_status, SP_OK); /* the driver still answers */
		lost = S.gpus[0].temp_c.why == SP_GPU_LOST;
	}
	assert_true(lost);
	assert_int_equal(S.gpus[0].power_mw.why, SP_GPU_LOST);
	assert_int_equal(S.gpus[0].power_mw.v, 0);
	assert_int_equal(S.gpus[0].sm_clock_mhz.why, SP_GPU_LOST);
	assert_int_equal(sp_nvml_release(), 0);
	unsetenv("FAKE_NVML_TIME_SCALE");
}

static void garbage_counted(void **st)
{
	SKIP_UNDER_QEMU(QEMU_THREADS);
	(void)st;
	use_scenario("garbage");
	read_sample(5.0);
	assert_int_equal(S.gpu_status, SP_OK);
	assert_int_equal(S.ngpu, 2);
	assert_int_equal(S.gpus[0].temp_c.why, SP_IMPLAUSIBLE);
	assert_int_equal(S.gpus[1].power_mw.why, SP_IMPLAUSIBLE);
	assert_int_equal(S.warnings, 7);
	uint64_t before = S.warnings_total;
	read_sample(5.0);
	assert_int_equal(S.warnings_total, before + 7);
	assert_int_equal(sp_nvml_release(), 0);
}

static void warnings_pure(void **st)
{
	(void)st;
	memset(&S, 0, sizeof S);
	assert_int_equal(sp_sample_count_warnings(&S), 0);
	S.nzones = 1;
	S.zones[0].temp_mc.why = SP_IMPLAUSIBLE;
	S.ngpu = 1;
	S.gpus[0].reasons.v = 0x24;
	assert_int_equal(sp_sample_count_warnings(&S), 1);
	S.gpus[0].reasons.v = 0x1000;
	assert_int_equal(sp_sample_count_warnings(&S), 2);
	S.gpus[0].reasons.why = SP_NO_PERMISSION; /* an unread mask has no bits */
	S.gpus[0].energy_mj.why = SP_IMPLAUSIBLE;
	assert_int_equal(sp_sample_count_warnings(&S), 2);
}

static void poll_without_request(void **st)
{
	(void)st;
	memset(&S, 0, sizeof S);
	assert_int_equal(sp_gpu_poll(&S, sp_mono_now()), -EINVAL);
	assert_int_equal(S.gpu_status, SP_MISSING);
}

/* A pass that ends after its sample's deadline is not shown by a later
 * sample as current, even when it ends between that sample's request (which
 * found it still running) and its poll; the next pass asked for is. */
static void late_pass_not_current(void **st)
{
	SKIP_UNDER_QEMU(QEMU_THREADS);
	(void)st;
	char path[] = "/tmp/sparkops-late-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	/* every temperature query takes 1 s */
	fputs("count - 1\nname 0 NVIDIA GB10\ntemp 0 sleep:1000:84\npower 0 98600\n"
	      "mem_total 0 NOT_SUPPORTED\n", f);
	fclose(f);
	setenv("FAKE_NVML_SCENARIO", path, 1);
	setenv("SPARKOPS_NVML_LIB", lib, 1);
	memset(&S, 0, sizeof S);
	assert_int_equal(sp_gpu_read_async(), 0);
	assert_int_equal(sp_gpu_poll(&S, sp_mono_now() + 0.01), -ETIMEDOUT);
	assert_int_equal(S.gpu_status, SP_TIMEOUT);
	assert_int_equal(S.ngpu, 0); /* no answer yet: no GPU known */
	/* the next sample's request finds the pass running ... */
	assert_int_equal(sp_gpu_read_async(), 1);
	/* ... which ends before that sample polls (a wait on state, not time) */
	for (int i = 0; i < 1000 && sp_gpu_busy(); i++)
		nap_ms(10);
	assert_int_equal(sp_gpu_busy(), 0);
	memset(&S, 0, sizeof S);
	assert_int_equal(sp_gpu_poll(&S, sp_mono_now() + 5.0), -ETIMEDOUT);
	assert_int_equal(S.gpu_status, SP_TIMEOUT);
	assert_non_null(strstr(S.gpu_detail, "after its deadline"));
	assert_int_equal(S.ngpu, 1); /* who the GPU is stays */
	assert_string_equal(S.gpus[0].name, "NVIDIA GB10");
	assert_int_equal(S.gpus[0].temp_c.why, SP_TIMEOUT);
	assert_int_equal(S.gpus[0].temp_c.v, 0);
	assert_int_equal(S.gpus[0].power_mw.why, SP_TIMEOUT);
	/* a pass this sample asks for, answered in time, is current */
	memset(&S, 0, sizeof S);
	assert_int_equal(sp_gpu_read_async(), 0);
	assert_int_equal(sp_gpu_poll(&S, sp_mono_now() + 30.0), 0);
	unlink(path);
	assert_int_equal(S.gpu_status, SP_OK);
	assert_int_equal(S.gpus[0].temp_c.why, SP_OK);
	assert_int_equal(S.gpus[0].temp_c.v, 84);
	assert_int_equal(sp_nvml_release(), 0);
}

/* After one good pass the driver wedges: the GPUs keep their identity, every
 * reading says timeout, and later samples do not wait again. */
static void hang_keeps_sampling(void **st)
{
	SKIP_UNDER_QEMU(QEMU_THREADS);
	(void)st;
	/* a driver that answers once, then hangs in the power query for good */
	char path[] = "/tmp/sparkops-hang-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("count - 1\nname 0 NVIDIA GB10\ntemp 0 84\npower 0 98600\npower 0 @1 hang\n"
	      "mem_total 0 NOT_SUPPORTED\n", f);
	fclose(f);
	setenv("FAKE_NVML_SCENARIO", path, 1);
	setenv("SPARKOPS_NVML_LIB", lib, 1);
	setenv("FAKE_NVML_TIME_SCALE", "20", 1);
	read_sample(5.0);
	assert_int_equal(S.gpu_status, SP_OK);
	assert_int_equal(S.gpus[0].temp_c.v, 84);
	/* until a sample finds the thread in a call (on a loaded machine a pass
	 * may also end after its deadline first: a timeout too, not the hang) */
	for (int i = 0; i < 500 && !(S.gpu_status == SP_TIMEOUT && strstr(S.gpu_detail, "still in")); i++) {
		nap_ms(5);
		read_sample(0.05);
	}
	unlink(path);
	assert_int_equal(S.gpu_status, SP_TIMEOUT);
	assert_non_null(strstr(S.gpu_detail, "nvmlDeviceGetPowerUsage"));
	/* who the GPU is stays; what it reads does not */
	assert_int_equal(S.ngpu, 1);
	assert_string_equal(S.gpus[0].name, "NVIDIA GB10");
	assert_true(S.gpus[0].integrated);
	assert_int_equal(S.gpus[0].temp_c.why, SP_TIMEOUT);
	assert_int_equal(S.gpus[0].temp_c.v, 0);
	assert_int_equal(S.gpus[0].power_mw.why, SP_TIMEOUT);
	assert_int_equal(S.mem.why, SP_OK);
	assert_true(S.budget.now.why == SP_OK);
	assert_true(S.nzones > 0);
	assert_int_equal(sp_gpu_busy(), 1);
	for (int i = 0; i < 3; i++) {
		/* still stuck: a new request is not queued behind the hung call */
		assert_int_equal(sp_gpu_read_async(), 1);
		read_sample(60.0); /* would take a minute if it waited */
		assert_int_equal(S.gpu_status, SP_TIMEOUT);
		assert_int_equal(S.ngpu, 1);
		assert_int_equal(S.mem.why, SP_OK);
		assert_int_equal(S.psi[SP_PSI_MEMORY].why, SP_OK);
	}
	/* wedged: release leaves the library alone and says so */
	assert_int_equal(sp_nvml_release(), 1);
}

/* No driver: one pass says so, and later samples say the same without
 * waking the GPU thread again (the loader never retries before a release) */
static void no_driver_one_pass(void **st)
{
	SKIP_UNDER_QEMU(QEMU_THREADS);
	(void)st;
	setenv("SPARKOPS_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
	read_sample(5.0);
	assert_int_equal(S.gpu_status, SP_NO_DRIVER);
	char detail[sizeof S.gpu_detail];
	snprintf(detail, sizeof detail, "%s", S.gpu_detail);
	assert_non_null(strstr(detail, "not found"));
	assert_int_equal(sp_gpu_passes(), 1);
	for (int i = 0; i < 3; i++) {
		read_sample(5.0);
		assert_int_equal(S.gpu_status, SP_NO_DRIVER);
		assert_int_equal(S.ngpu, 0);
		assert_string_equal(S.gpu_detail, detail);
		assert_true(S.mem.why == SP_OK); /* the rest is read every time */
	}
	assert_int_equal(sp_gpu_passes(), 1);
	/* released: the next sample asks the driver again */
	assert_int_equal(sp_nvml_release(), 0);
	assert_int_equal(sp_gpu_passes(), 0);
	read_sample(5.0);
	assert_int_equal(S.gpu_status, SP_NO_DRIVER);
	assert_int_equal(sp_gpu_passes(), 1);
	assert_int_equal(sp_nvml_release(), 0);
}

int main(void)
{
	const char *b = getenv("BUILD_DIR");
	snprintf(lib, sizeof lib, "%s/libfake-nvml.so", b ? b : "build");
	sp_paths_init("tests/fixtures/gb10-idle/proc", "tests/fixtures/gb10-idle/sys");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(poll_without_request), cmocka_unit_test(warnings_pure),
		cmocka_unit_test(no_driver_one_pass),
		cmocka_unit_test(lost_midrun), cmocka_unit_test(garbage_counted),
		cmocka_unit_test(late_pass_not_current),
		cmocka_unit_test(hang_keeps_sampling),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
