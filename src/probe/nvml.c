// SPDX-License-Identifier: MIT
/* NVML through dlopen: a table of function pointers, versioned names first,
 * optional symbols allowed to be missing. Every reading keeps the driver's
 * reason when it is not there (GB10 answers NOT_SUPPORTED for memory).
 * Everything here runs on the GPU thread of gpuwatch.c, never on the caller's:
 * any of these calls may block for seconds or forever. */
#include "probe/nvml_abi.h"
#include "probe/nvml_internal.h"
#include "probe/probe.h"
#include "util/text.h"
#include "util/envlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
	void *lib;
	const char *libname;
	int state; /* 0 not tried, 1 ready, -1 failed */
	enum sp_why why;
	char detail[128];
	nvml_void_fn init, shutdown;
	nvml_errstr_fn error_string;
	nvml_count_fn get_count;
	nvml_handle_fn get_handle;
	nvml_str_fn get_name, get_uuid;
	nvml_temp_fn get_temp;
	nvml_tempv_fn get_tempv;
	nvml_uint_fn get_power, get_power_limit;
	nvml_ull_fn get_reasons, get_energy;
	nvml_clock_fn get_clock, get_max_clock;
	nvml_util_fn get_util;
	nvml_mem_fn get_mem;
	nvml_mem2_fn get_mem2;
	nvml_procs_fn get_procs;
	nvml_viol_fn get_viol;
	nvml_fields_fn get_fields;
	nvml_sysstr_fn get_sys_driver;
	nvml_sysint_fn get_sys_cuda;
	/* read once a load: they do not change while the driver is loaded */
	int sys_read;
	char sys_driver[32];
	enum sp_why sys_driver_why;
	int sys_cuda;
	enum sp_why sys_cuda_why;
} nvml_fns;

static char libname_buf[512];

_Atomic(const char *) sp_nvml_in_call;
/* name the call about to be made, so a hang can be reported by name */
#define CALLING(fn) atomic_store_explicit(&sp_nvml_in_call, (fn), memory_order_relaxed)

/* First name that resolves wins: versioned names come first. */
static void *resolve(const char *const *names)
{
	for (; *names; names++) {
		dlerror();
		void *p = dlsym(nvml_fns.lib, *names);
		if (p && !dlerror())
			return p;
	}
	dlerror(); /* free a failed lookup's message (see below) */
	return NULL;
}
#define RESOLVE(field, ...) \
	(nvml_fns.field = (__typeof__(nvml_fns.field))resolve((const char *const[]){ __VA_ARGS__, NULL }))

enum sp_why sp_nvml_why(int ret);
enum sp_why sp_nvml_why(int ret)
{
	switch (ret) {
	case NVML_SUCCESS: return SP_OK;
	case NVML_ERROR_NOT_SUPPORTED:
	case NVML_ERROR_FUNCTION_NOT_FOUND: return SP_NOT_SUPPORTED;
	case NVML_ERROR_NO_PERMISSION: return SP_NO_PERMISSION;
	case NVML_ERROR_GPU_IS_LOST: return SP_GPU_LOST;
	case NVML_ERROR_TIMEOUT: return SP_TIMEOUT;
	case NVML_ERROR_DRIVER_NOT_LOADED:
	case NVML_ERROR_LIBRARY_NOT_FOUND: return SP_NO_DRIVER;
	default: return SP_DRIVER_ERROR;
	}
}

static const char *errstr(int ret)
{
	const char *s = nvml_fns.error_string ? nvml_fns.error_string(ret) : NULL;
	return s ? s : "unknown error";
}

static int load(void)
{
	if (nvml_fns.state)
		return nvml_fns.state;
	nvml_fns.state = -1;
	nvml_fns.why = SP_NO_DRIVER;
	const char *env = getenv("SPARKOPS_NVML_LIB");
	static char env_real[sizeof libname_buf];
	/* as root, a library named by the environment is loaded only when root
	 * owns it and its folders (else a warning and the default library) */
	if (env && *env && !sp_env_lib_ok("SPARKOPS_NVML_LIB", env, env_real, sizeof env_real))
		env = NULL;
	const char *cands[3] = { NULL, NULL, NULL };
	if (env && *env) {
		cands[0] = env_real;
	} else {
		cands[0] = "libnvidia-ml.so.1";
		cands[1] = "libnvidia-ml.so";
	}
	CALLING("dlopen");
	for (int i = 0; cands[i] && !nvml_fns.lib; i++) {
		nvml_fns.lib = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL);
		if (nvml_fns.lib) {
			snprintf(libname_buf, sizeof libname_buf, "%s", cands[i]);
			nvml_fns.libname = libname_buf;
		}
	}
	CALLING(NULL);
	if (!nvml_fns.lib) {
		const char *e = dlerror();
		snprintf(nvml_fns.detail, sizeof nvml_fns.detail, "%s not found%s%s",
			 env && *env ? env : "libnvidia-ml.so.1", e && env ? ": " : "", e && env ? e : "");
		/* glibc keeps the message in a per-thread heap buffer until the next
		 * dlerror() or the thread's end; free it now (LeakSanitizer saw it
		 * when the process exited before the GPU thread did) */
		dlerror();
		return nvml_fns.state;
	}
	RESOLVE(init, "nvmlInit_v2", "nvmlInit");
	RESOLVE(shutdown, "nvmlShutdown");
	RESOLVE(error_string, "nvmlErrorString");
	RESOLVE(get_count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	RESOLVE(get_handle, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
	if (!nvml_fns.init || !nvml_fns.get_count || !nvml_fns.get_handle) {
		snprintf(nvml_fns.detail, sizeof nvml_fns.detail, "%s lacks nvmlInit/nvmlDeviceGetCount: not an NVML library",
			 nvml_fns.libname);
		nvml_fns.why = SP_DRIVER_ERROR;
		dlclose(nvml_fns.lib);
		nvml_fns.lib = NULL;
		return nvml_fns.state;
	}
	/* optional: each may be missing on an old or a stripped driver */
	RESOLVE(get_name, "nvmlDeviceGetName");
	RESOLVE(get_uuid, "nvmlDeviceGetUUID");
	RESOLVE(get_tempv, "nvmlDeviceGetTemperatureV");
	RESOLVE(get_temp, "nvmlDeviceGetTemperature");
	RESOLVE(get_power, "nvmlDeviceGetPowerUsage");
	RESOLVE(get_power_limit, "nvmlDeviceGetEnforcedPowerLimit");
	RESOLVE(get_energy, "nvmlDeviceGetTotalEnergyConsumption");
	RESOLVE(get_reasons, "nvmlDeviceGetCurrentClocksEventReasons",
		"nvmlDeviceGetCurrentClocksThrottleReasons");
	RESOLVE(get_clock, "nvmlDeviceGetClockInfo");
	RESOLVE(get_max_clock, "nvmlDeviceGetMaxClockInfo");
	RESOLVE(get_util, "nvmlDeviceGetUtilizationRates");
	RESOLVE(get_mem2, "nvmlDeviceGetMemoryInfo_v2");
	RESOLVE(get_mem, "nvmlDeviceGetMemoryInfo");
	RESOLVE(get_procs, "nvmlDeviceGetComputeRunningProcesses_v3",
		"nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses");
	RESOLVE(get_fields, "nvmlDeviceGetFieldValues");
	RESOLVE(get_viol, "nvmlDeviceGetViolationStatus");
	RESOLVE(get_sys_driver, "nvmlSystemGetDriverVersion");
	RESOLVE(get_sys_cuda, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion");

	CALLING("nvmlInit");
	int ret = nvml_fns.init();
	CALLING(NULL);
	if (ret != NVML_SUCCESS) {
		nvml_fns.why = sp_nvml_why(ret);
		if (nvml_fns.why == SP_DRIVER_ERROR || nvml_fns.why == SP_NOT_SUPPORTED)
			nvml_fns.why = SP_NO_DRIVER;
		snprintf(nvml_fns.detail, sizeof nvml_fns.detail, "nvmlInit failed: %s", errstr(ret));
		dlclose(nvml_fns.lib);
		nvml_fns.lib = NULL;
		return nvml_fns.state;
	}
	nvml_fns.state = 1;
	nvml_fns.why = SP_OK;
	return nvml_fns.state;
}

void sp_nvml_unload(void)
{
	if (nvml_fns.state == 1 && nvml_fns.shutdown) {
		CALLING("nvmlShutdown");
		nvml_fns.shutdown();
		CALLING(NULL);
	}
	if (nvml_fns.lib)
		dlclose(nvml_fns.lib);
	memset(&nvml_fns, 0, sizeof nvml_fns);
}

static void set(struct sp_u64 *f, int ret, unsigned long long v)
{
	f->v = ret == NVML_SUCCESS ? v : 0;
	f->why = sp_nvml_why(ret);
}

#define MISSING_FN(f) ((f)->v = 0, (f)->why = SP_NOT_SUPPORTED)

/* Values outside physical bounds are rejected, not shown. */
static void bound(struct sp_u64 *f, unsigned long long max)
{
	if (f->why == SP_OK && f->v > max) {
		f->why = SP_IMPLAUSIBLE;
		f->v = 0;
	}
}

static int field_value(nvmlDevice_t dev, unsigned id, unsigned long long *out)
{
	if (!nvml_fns.get_fields)
		return NVML_ERROR_FUNCTION_NOT_FOUND;
	nvmlFieldValue_t fv;
	memset(&fv, 0, sizeof fv);
	fv.fieldId = id;
	CALLING("nvmlDeviceGetFieldValues");
	int ret = nvml_fns.get_fields(dev, 1, &fv);
	if (ret != NVML_SUCCESS)
		return ret;
	if (fv.nvmlReturn != NVML_SUCCESS)
		return fv.nvmlReturn;
	*out = fv.value.ullVal;
	return NVML_SUCCESS;
}

/* the name ("GPU N" when NVML gives none) and the UUID, printable */
static void read_ident(nvmlDevice_t dev, struct sp_gpu *g)
{
	if (nvml_fns.get_name) {
		CALLING("nvmlDeviceGetName");
		int ret = nvml_fns.get_name(dev, g->name, sizeof g->name);
		if (ret != NVML_SUCCESS)
			snprintf(g->name, sizeof g->name, "GPU %u", g->index);
	} else {
		snprintf(g->name, sizeof g->name, "GPU %u", g->index);
	}
	g->name[sizeof g->name - 1] = 0;
	CALLING("nvmlDeviceGetUUID");
	if (nvml_fns.get_uuid && nvml_fns.get_uuid(dev, g->uuid, sizeof g->uuid) != NVML_SUCCESS)
		g->uuid[0] = 0;
	g->uuid[sizeof g->uuid - 1] = 0;
	sp_text_clean(g->name);
	sp_text_clean(g->uuid);
}

/* temperature: the V struct first, the deprecated call after */
static void read_temp(nvmlDevice_t dev, struct sp_gpu *g)
{
	int ret;
	unsigned u = 0;
	ret = NVML_ERROR_FUNCTION_NOT_FOUND;
	if (nvml_fns.get_tempv) {
		nvmlTemperature_t t = { .version = nvmlTemperature_v1, .sensorType = NVML_TEMPERATURE_GPU };
		CALLING("nvmlDeviceGetTemperatureV");
		ret = nvml_fns.get_tempv(dev, &t);
		if (ret == NVML_SUCCESS) {
			if (t.temperature < 0)
				ret = NVML_ERROR_UNKNOWN;
			u = (unsigned)t.temperature;
		}
	}
	if (ret != NVML_SUCCESS && ret != NVML_ERROR_GPU_IS_LOST && nvml_fns.get_temp) {
		CALLING("nvmlDeviceGetTemperature");
		ret = nvml_fns.get_temp(dev, NVML_TEMPERATURE_GPU, &u);
	}
	set(&g->temp_c, ret, u);
	bound(&g->temp_c, 150);
}

/* power draw and its limit, energy, the SM clock and its maximum */
static void read_power_clocks(nvmlDevice_t dev, struct sp_gpu *g)
{
	int ret;
	unsigned u = 0;
	unsigned long long ull = 0;
	if (nvml_fns.get_power) {
		CALLING("nvmlDeviceGetPowerUsage");
		ret = nvml_fns.get_power(dev, &u);
		set(&g->power_mw, ret, u);
		bound(&g->power_mw, 2000000);
	} else {
		MISSING_FN(&g->power_mw);
	}
	if (nvml_fns.get_power_limit) {
		CALLING("nvmlDeviceGetEnforcedPowerLimit");
		ret = nvml_fns.get_power_limit(dev, &u);
		set(&g->power_limit_mw, ret, u);
		bound(&g->power_limit_mw, 2000000);
	} else {
		MISSING_FN(&g->power_limit_mw);
	}
	if (nvml_fns.get_energy) {
		CALLING("nvmlDeviceGetTotalEnergyConsumption");
		ret = nvml_fns.get_energy(dev, &ull);
		set(&g->energy_mj, ret, ull);
	} else {
		MISSING_FN(&g->energy_mj);
	}
	if (nvml_fns.get_clock) {
		CALLING("nvmlDeviceGetClockInfo");
		ret = nvml_fns.get_clock(dev, NVML_CLOCK_SM, &u);
		set(&g->sm_clock_mhz, ret, u);
		bound(&g->sm_clock_mhz, 10000);
	} else {
		MISSING_FN(&g->sm_clock_mhz);
	}
	if (nvml_fns.get_max_clock) {
		CALLING("nvmlDeviceGetMaxClockInfo");
		ret = nvml_fns.get_max_clock(dev, NVML_CLOCK_SM, &u);
		set(&g->sm_clock_max_mhz, ret, u);
		bound(&g->sm_clock_max_mhz, 10000);
	} else {
		MISSING_FN(&g->sm_clock_max_mhz);
	}
}

/* utilisation (a 0 mW reading under load is marked implausible) and the
 * clock event reasons */
static void read_util(nvmlDevice_t dev, struct sp_gpu *g)
{
	int ret;
	unsigned long long ull = 0;
	if (nvml_fns.get_util) {
		nvmlUtilization_t ut = { 0, 0 };
		CALLING("nvmlDeviceGetUtilizationRates");
		ret = nvml_fns.get_util(dev, &ut);
		set(&g->util_gpu_pct, ret, ut.gpu);
		set(&g->util_mem_pct, ret, ut.memory);
		bound(&g->util_gpu_pct, 100);
		bound(&g->util_mem_pct, 100);
		/* 0 mW while the GPU is busy is a broken sensor, not a free lunch */
		if (sp_ok(g->power_mw.why) && g->power_mw.v == 0 && sp_ok(g->util_gpu_pct.why) &&
		    g->util_gpu_pct.v >= 50) {
			g->power_mw.why = SP_IMPLAUSIBLE;
		}
	} else {
		MISSING_FN(&g->util_gpu_pct);
		MISSING_FN(&g->util_mem_pct);
	}
	if (nvml_fns.get_reasons) {
		CALLING("nvmlDeviceGetCurrentClocksEventReasons");
		ret = nvml_fns.get_reasons(dev, &ull);
		set(&g->reasons, ret, ull);
	} else {
		MISSING_FN(&g->reasons);
	}
}

/* cumulative violation time: field values first (the replacement), then
 * the deprecated nvmlDeviceGetViolationStatus */
static void read_violation(nvmlDevice_t dev, unsigned field, int policy, struct sp_u64 *f)
{
	unsigned long long ull = 0;
	int ret = field_value(dev, field, &ull);
	if (ret != NVML_SUCCESS && ret != NVML_ERROR_GPU_IS_LOST && nvml_fns.get_viol) {
		nvmlViolationTime_t vt = { 0, 0 };
		CALLING("nvmlDeviceGetViolationStatus");
		ret = nvml_fns.get_viol(dev, policy, &vt);
		ull = vt.violationTime;
	}
	set(f, ret, ull);
}

/* memory: _v2 with its version word, then the original */
static void read_memory(nvmlDevice_t dev, struct sp_gpu *g)
{
	int ret;
	ret = NVML_ERROR_FUNCTION_NOT_FOUND;
	if (nvml_fns.get_mem2) {
		nvmlMemory_v2_t m2;
		memset(&m2, 0, sizeof m2);
		m2.version = nvmlMemory_v2;
		CALLING("nvmlDeviceGetMemoryInfo_v2");
		ret = nvml_fns.get_mem2(dev, &m2);
		if (ret == NVML_SUCCESS) {
			set(&g->mem_total, ret, m2.total);
			set(&g->mem_free, ret, m2.free);
			set(&g->mem_used, ret, m2.used);
		}
	}
	if (ret != NVML_SUCCESS && ret != NVML_ERROR_GPU_IS_LOST && nvml_fns.get_mem) {
		nvmlMemory_t m;
		memset(&m, 0, sizeof m);
		CALLING("nvmlDeviceGetMemoryInfo");
		ret = nvml_fns.get_mem(dev, &m);
		set(&g->mem_total, ret, m.total);
		set(&g->mem_free, ret, m.free);
		set(&g->mem_used, ret, m.used);
	} else if (ret != NVML_SUCCESS) {
		set(&g->mem_total, ret, 0);
		set(&g->mem_free, ret, 0);
		set(&g->mem_used, ret, 0);
	}
}

static void read_gpu(nvmlDevice_t dev, struct sp_gpu *g)
{
	read_ident(dev, g);
	read_temp(dev, g);
	read_power_clocks(dev, g);
	read_util(dev, g);
	read_violation(dev, NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP, NVML_PERF_POLICY_POWER, &g->viol_power_ns);
	read_violation(dev, NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN, NVML_PERF_POLICY_THERMAL,
		       &g->viol_thermal_ns);
	read_memory(dev, g);
	CALLING(NULL);
	/* GB10 and other integrated parts cannot report memory: they share the pool */
	g->integrated = g->mem_total.why == SP_NOT_SUPPORTED || strstr(g->name, "GB10") != NULL;
}

/* Per-process GPU memory, as a list the caller attaches to its processes. */
static void read_gpu_procs(nvmlDevice_t dev, struct sp_gpu_snap *snap)
{
	if (!nvml_fns.get_procs)
		return;
	nvmlProcessInfo_t infos[64];
	unsigned count = 64;
	CALLING("nvmlDeviceGetComputeRunningProcesses");
	int ret = nvml_fns.get_procs(dev, &count, infos);
	CALLING(NULL);
	if (ret != NVML_SUCCESS)
		return;
	if (count > 64)
		count = 64;
	for (unsigned i = 0; i < count; i++) {
		/* NVML_VALUE_NOT_AVAILABLE is all ones */
		if (infos[i].usedGpuMemory == ~0ULL)
			continue;
		int pid = (int)infos[i].pid;
		int k = 0;
		while (k < snap->nprocs && snap->procs[k].pid != pid)
			k++;
		if (k == snap->nprocs) {
			if (snap->nprocs >= SP_SNAP_MAX_PROCS)
				continue;
			snap->procs[k].pid = pid;
			snap->procs[k].bytes = 0;
			snap->nprocs++;
		}
		snap->procs[k].bytes += infos[i].usedGpuMemory;
	}
}

/* the driver's and CUDA's versions, once a load */
static void read_system(struct sp_gpu_snap *snap)
{
	if (!nvml_fns.sys_read) {
		nvml_fns.sys_read = 1;
		int ret = NVML_ERROR_FUNCTION_NOT_FOUND;
		if (nvml_fns.get_sys_driver) {
			CALLING("nvmlSystemGetDriverVersion");
			ret = nvml_fns.get_sys_driver(nvml_fns.sys_driver, sizeof nvml_fns.sys_driver);
			CALLING(NULL);
		}
		nvml_fns.sys_driver[sizeof nvml_fns.sys_driver - 1] = 0;
		sp_text_clean(nvml_fns.sys_driver);
		nvml_fns.sys_driver_why = sp_nvml_why(ret);
		if (ret == NVML_SUCCESS && !nvml_fns.sys_driver[0])
			nvml_fns.sys_driver_why = SP_MALFORMED;
		ret = NVML_ERROR_FUNCTION_NOT_FOUND;
		if (nvml_fns.get_sys_cuda) {
			CALLING("nvmlSystemGetCudaDriverVersion");
			ret = nvml_fns.get_sys_cuda(&nvml_fns.sys_cuda);
			CALLING(NULL);
		}
		nvml_fns.sys_cuda_why = sp_nvml_why(ret);
		/* CUDA 1.0 .. 99.x: anything else is not a version */
		if (ret == NVML_SUCCESS && (nvml_fns.sys_cuda < 1000 || nvml_fns.sys_cuda > 99990))
			nvml_fns.sys_cuda_why = SP_IMPLAUSIBLE;
	}
	snprintf(snap->driver, sizeof snap->driver, "%s", nvml_fns.sys_driver);
	snap->driver_why = nvml_fns.sys_driver_why;
	snap->cuda = nvml_fns.sys_cuda;
	snap->cuda_why = nvml_fns.sys_cuda_why;
}

void sp_nvml_collect(struct sp_gpu_snap *snap)
{
	snap->ngpu = 0;
	snap->nprocs = 0;
	snap->detail[0] = 0;
	snap->lib[0] = 0;
	snap->sticky = 0;
	snap->driver[0] = 0;
	snap->cuda = 0;
	if (load() != 1) {
		snap->sticky = 1; /* load() does not retry: every later pass says the same */
		snap->status = nvml_fns.why;
		snap->driver_why = snap->cuda_why = nvml_fns.why;
		snprintf(snap->detail, sizeof snap->detail, "%s", nvml_fns.detail);
		return;
	}
	read_system(snap);
	unsigned count = 0;
	CALLING("nvmlDeviceGetCount");
	int ret = nvml_fns.get_count(&count);
	CALLING(NULL);
	if (ret != NVML_SUCCESS) {
		snap->status = sp_nvml_why(ret);
		snprintf(snap->detail, sizeof snap->detail, "nvmlDeviceGetCount: %s", errstr(ret));
		return;
	}
	if (count == 0) {
		snap->status = SP_NO_GPU;
		snprintf(snap->detail, sizeof snap->detail, "the NVIDIA driver sees no GPU");
		return;
	}
	snap->status = SP_OK;
	snprintf(snap->lib, sizeof snap->lib, "%s", nvml_fns.libname);
	for (unsigned i = 0; i < count && snap->ngpu < SP_MAX_GPUS; i++) {
		struct sp_gpu *g = &snap->gpus[snap->ngpu];
		memset(g, 0, sizeof *g);
		g->index = i;
		nvmlDevice_t dev;
		CALLING("nvmlDeviceGetHandleByIndex");
		ret = nvml_fns.get_handle(i, &dev);
		CALLING(NULL);
		if (ret != NVML_SUCCESS) {
			snprintf(g->name, sizeof g->name, "GPU %u", i);
			sp_gpu_mark(g, sp_nvml_why(ret));
			snap->ngpu++;
			continue;
		}
		read_gpu(dev, g);
		read_gpu_procs(dev, snap);
		snap->ngpu++;
	}
}
