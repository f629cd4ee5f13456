// SPDX-License-Identifier: MIT
/* A fake libnvidia-ml.so.1, loaded by sparkops through the same dlopen path as
 * the real one (SPARKOPS_NVML_LIB=build/libfake-nvml.so), driven by a scenario
 * file named by FAKE_NVML_SCENARIO. See tests/fake-nvml/README.md.
 *
 * Built twice: the full library, and with -DFAKE_OLD_DRIVER an old driver
 * that lacks the optional symbols (TemperatureV, CurrentClocksEventReasons,
 * _v3 processes, FieldValues, MemoryInfo_v2) and has only the deprecated ones. */
#include "../../src/probe/nvml_abi.h"

/* exported under the names the real library uses; no header declares them */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define MAXGPU 8
#define MAXRULE 512

/* One rule: from time t0 on (seconds since the first nvmlInit), field `key`
 * of gpu `gpu` answers `ret`, or the value v0 ramping linearly to v1 at t1.
 * hang: the call never returns; sleep_ms: it returns late. */
struct rule {
	char key[32];
	int gpu;
	double t0, t1;
	int ret;
	double v0, v1;
	char str[96];
	int hang;
	int sleep_ms;
};

static struct rule rules[MAXRULE];
static int nrules;
static int loaded, init_count;
static double t_start;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double elapsed(void)
{
	const char *scale = getenv("FAKE_NVML_TIME_SCALE");
	double k = scale ? atof(scale) : 1.0;
	return (now_s() - t_start) * (k > 0 ? k : 1.0);
}

static int parse_ret(const char *s)
{
	static const struct {
		const char *n;
		int r;
	} t[] = { { "NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED }, { "NO_PERMISSION", NVML_ERROR_NO_PERMISSION },
		  { "GPU_IS_LOST", NVML_ERROR_GPU_IS_LOST }, { "UNKNOWN", NVML_ERROR_UNKNOWN },
		  { "TIMEOUT", NVML_ERROR_TIMEOUT }, { "DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED },
		  { "INVALID_ARGUMENT", NVML_ERROR_INVALID_ARGUMENT }, { "NOT_FOUND", NVML_ERROR_NOT_FOUND },
		  { "UNINITIALIZED", NVML_ERROR_UNINITIALIZED } };
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcmp(s, t[i].n) == 0)
			return t[i].r;
	return 0;
}

/* Scenario lines:
 *   KEY GPU SPEC               (from the start)
 *   KEY GPU @T SPEC            (from T seconds on)
 *   KEY GPU @T0-T1 A..B        (linear ramp from A at T0 to B at T1, B after)
 * SPEC: a number (hex 0x.. allowed), an error name, "hang", "sleep:MS:SPEC",
 * or for name/uuid a string (rest of the line). GPU is - for global keys. */
static void load(void)
{
	if (loaded)
		return;
	loaded = 1;
	const char *path = getenv("FAKE_NVML_SCENARIO");
	if (!path)
		return;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof line, f) && nrules < MAXRULE) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char *p = line;
		while (*p == ' ')
			p++;
		if (!*p || *p == '#')
			continue;
		struct rule r;
		memset(&r, 0, sizeof r);
		char gpu[16], rest[400] = "";
		int n = 0;
		if (sscanf(p, "%31s %15s %n", r.key, gpu, &n) < 2)
			continue;
		snprintf(rest, sizeof rest, "%s", p + n);
		r.gpu = strcmp(gpu, "-") == 0 ? -1 : atoi(gpu);
		char *spec = rest;
		if (spec[0] == '@') {
			char *sp = strchr(spec, ' ');
			if (!sp)
				continue;
			*sp = 0;
			char *dash = strchr(spec + 1, '-');
			r.t0 = atof(spec + 1);
			r.t1 = dash ? atof(dash + 1) : r.t0;
			spec = sp + 1;
		}
		if (strcmp(r.key, "name") == 0 || strcmp(r.key, "uuid") == 0 || strcmp(r.key, "driver_version") == 0) {
			snprintf(r.str, sizeof r.str, "%s", spec);
			rules[nrules++] = r;
			continue;
		}
		if (strncmp(spec, "sleep:", 6) == 0) {
			r.sleep_ms = atoi(spec + 6);
			char *c2 = strchr(spec + 6, ':');
			spec = c2 ? c2 + 1 : (char *)"0";
		}
		if (strcmp(spec, "hang") == 0) {
			r.hang = 1;
		} else if ((r.ret = parse_ret(spec)) == 0) {
			char *dots = strstr(spec, "..");
			r.v0 = (double)strtoull(spec, NULL, 0);
			if (spec[0] == '-')
				r.v0 = strtod(spec, NULL);
			r.v1 = dots ? strtod(dots + 2, NULL) : r.v0;
			if (!dots)
				r.t1 = r.t0;
		}
		rules[nrules++] = r;
	}
	fclose(f);
}

/* The last matching rule whose start has passed wins. Returns 1 when found. */
static int lookup(const char *key, int gpu, struct rule *out, double *val)
{
	pthread_mutex_lock(&mu);
	load();
	double t = elapsed();
	int found = 0;
	for (int i = 0; i < nrules; i++) {
		struct rule *r = &rules[i];
		if (strcmp(r->key, key) != 0 || (r->gpu != gpu && r->gpu != -1))
			continue;
		if (r->t0 > t)
			continue;
		*out = *r;
		found = 1;
	}
	pthread_mutex_unlock(&mu);
	if (!found)
		return 0;
	if (out->t1 > out->t0 && t < out->t1)
		*val = out->v0 + (out->v1 - out->v0) * (t - out->t0) / (out->t1 - out->t0);
	else
		*val = out->t1 > out->t0 ? out->v1 : out->v0;
	return 1;
}

static void count_call(const char *fn)
{
	const char *log = getenv("FAKE_NVML_CALL_LOG");
	if (!log)
		return;
	FILE *f = fopen(log, "a");
	if (f) {
		fprintf(f, "%s\n", fn);
		fclose(f);
	}
}

/* Apply a rule: hang, sleep, error; else the value. */
static int answer(const char *key, int gpu, double *val, double def, int def_ret)
{
	struct rule r;
	if (!lookup(key, gpu, &r, val)) {
		*val = def;
		return def_ret;
	}
	if (r.sleep_ms > 0) {
		/* FAKE_NVML_SLEEP_SCALE=K: a late answer K times sooner, for a caller
		 * whose deadline is K times shorter (the same outcome, sooner) */
		const char *k = getenv("FAKE_NVML_SLEEP_SCALE");
		double div = k ? atof(k) : 1.0;
		usleep((useconds_t)((double)r.sleep_ms * 1000 / (div > 0 ? div : 1.0)));
	}
	if (r.hang)
		for (;;)
			pause();
	return r.ret;
}

/* FAKE_NVML_HANG_IN_DLOPEN=1: the library's constructor never returns, so
 * dlopen itself hangs (holding the dynamic loader's lock). */
__attribute__((constructor)) static void fake_ctor(void)
{
	const char *h = getenv("FAKE_NVML_HANG_IN_DLOPEN");
	if (h && *h == '1')
		for (;;)
			pause();
}

static int ngpus(void)
{
	double v;
	int ret = answer("count", -1, &v, 1, 0);
	if (ret)
		return -ret;
	return (int)v;
}

static int dev_index(nvmlDevice_t d)
{
	return (int)(intptr_t)d - 1;
}

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
	count_call("nvmlInit_v2");
	pthread_mutex_lock(&mu);
	if (init_count++ == 0)
		t_start = now_s();
	pthread_mutex_unlock(&mu);
	double v;
	return answer("init", -1, &v, 0, getenv("FAKE_NVML_SCENARIO") ? 0 : NVML_ERROR_DRIVER_NOT_LOADED);
}

EXPORT nvmlReturn_t nvmlInit(void)
{
	return nvmlInit_v2();
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
	count_call("nvmlShutdown");
	pthread_mutex_lock(&mu);
	if (init_count > 0)
		init_count--;
	pthread_mutex_unlock(&mu);
	return 0;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case 0: return "Success";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
	case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_TIMEOUT: return "Timeout";
	default: return "Unknown Error";
	}
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *c)
{
	count_call("nvmlDeviceGetCount_v2");
	int n = ngpus();
	if (n < 0)
		return -n;
	*c = (unsigned)n;
	return 0;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d)
{
	double v;
	int ret = answer("handle", (int)i, &v, 0, 0);
	if (ret)
		return ret;
	if ((int)i >= ngpus())
		return NVML_ERROR_INVALID_ARGUMENT;
	*d = (nvmlDevice_t)(intptr_t)(i + 1);
	return 0;
}

static nvmlReturn_t get_str(const char *key, nvmlDevice_t d, char *buf, unsigned len, const char *def)
{
	struct rule r;
	double v;
	const char *s = def;
	if (lookup(key, dev_index(d), &r, &v))
		s = r.str;
	if (len == 0)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	snprintf(buf, len, "%s", s);
	return 0;
}

/* driver_version - STRING | ERROR ; cuda_version - N | ERROR */
EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *buf, unsigned len)
{
	count_call("nvmlSystemGetDriverVersion");
	struct rule r;
	double v;
	const char *s = "580.95.05";
	if (lookup("driver_version", -1, &r, &v)) {
		int ret = parse_ret(r.str);
		if (ret)
			return ret;
		s = r.str;
	}
	if (len == 0)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	snprintf(buf, len, "%s", s);
	return 0;
}

EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
	count_call("nvmlSystemGetCudaDriverVersion");
	double d;
	int ret = answer("cuda_version", -1, &d, 13000, 0);
	if (ret)
		return ret;
	*v = (int)d;
	return 0;
}

#ifndef FAKE_OLD_DRIVER
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	count_call("nvmlSystemGetCudaDriverVersion_v2");
	return nvmlSystemGetCudaDriverVersion(v);
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned len)
{
	return get_str("name", d, buf, len, "NVIDIA Fake GPU");
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *buf, unsigned len)
{
	return get_str("uuid", d, buf, len, "GPU-00000000-fake-0000-0000-000000000000");
}

#define UINT_GETTER(fn, key, def)                                         \
	EXPORT nvmlReturn_t fn(nvmlDevice_t d, unsigned *out)             \
	{                                                                 \
		count_call(#fn);                                          \
		double v;                                                 \
		int ret = answer(key, dev_index(d), &v, def, 0);          \
		if (ret == 0)                                             \
			*out = (unsigned)v;                               \
		return ret;                                               \
	}

UINT_GETTER(nvmlDeviceGetPowerUsage, "power", 50000)
UINT_GETTER(nvmlDeviceGetEnforcedPowerLimit, "power_limit", 300000)

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *out)
{
	count_call("nvmlDeviceGetTemperature");
	(void)sensor;
	double v;
	int ret = answer("temp", dev_index(d), &v, 40, 0);
	if (ret == 0)
		*out = (unsigned)v;
	return ret;
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *out)
{
	double v;
	int ret = answer(type == NVML_CLOCK_SM ? "sm_clock" : "mem_clock", dev_index(d), &v, 1500, 0);
	if (ret == 0)
		*out = (unsigned)v;
	return ret;
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned *out)
{
	double v;
	int ret = answer(type == NVML_CLOCK_SM ? "sm_clock_max" : "mem_clock_max", dev_index(d), &v, 2000, 0);
	if (ret == 0)
		*out = (unsigned)v;
	return ret;
}

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	double g, m;
	int ret = answer("util_gpu", dev_index(d), &g, 0, 0);
	if (ret)
		return ret;
	ret = answer("util_mem", dev_index(d), &m, 0, 0);
	if (ret)
		return ret;
	u->gpu = (unsigned)g;
	u->memory = (unsigned)m;
	return 0;
}

EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *out)
{
	double v;
	int ret = answer("energy", dev_index(d), &v, 0, NVML_ERROR_NOT_SUPPORTED);
	if (ret == 0)
		*out = (unsigned long long)v;
	return ret;
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *out)
{
	count_call("nvmlDeviceGetCurrentClocksThrottleReasons");
	double v;
	int ret = answer("reasons", dev_index(d), &v, 0, 0);
	if (ret == 0)
		*out = (unsigned long long)v;
	return ret;
}

static nvmlReturn_t mem(nvmlDevice_t d, unsigned long long *total, unsigned long long *free_,
			unsigned long long *used)
{
	double t, f;
	int ret = answer("mem_total", dev_index(d), &t, 80.0 * 1073741824.0, 0);
	if (ret)
		return ret;
	ret = answer("mem_free", dev_index(d), &f, 70.0 * 1073741824.0, 0);
	if (ret)
		return ret;
	*total = (unsigned long long)t;
	*free_ = (unsigned long long)f;
	*used = *total - *free_;
	return 0;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	count_call("nvmlDeviceGetMemoryInfo");
	return mem(d, &m->total, &m->free, &m->used);
}

static nvmlReturn_t procs(nvmlDevice_t d, unsigned *count, nvmlProcessInfo_t *infos)
{
	struct rule r;
	double v;
	if (lookup("procs", dev_index(d), &r, &v) && r.ret)
		return r.ret;
	/* "procs GPU pid:bytes,pid:bytes" is kept in str by a second rule kind */
	const char *spec = getenv("FAKE_NVML_PROCS");
	unsigned n = 0;
	nvmlProcessInfo_t tmp[64];
	if (spec) {
		char buf[1024];
		snprintf(buf, sizeof buf, "%s", spec);
		for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && n < 64;
		     tok = strtok_r(NULL, ",", &save)) {
			char *colon = strchr(tok, ':');
			if (!colon)
				continue;
			tmp[n].pid = (unsigned)atoi(tok);
			tmp[n].usedGpuMemory = strtoull(colon + 1, NULL, 0);
			tmp[n].gpuInstanceId = tmp[n].computeInstanceId = 0xFFFFFFFF;
			n++;
		}
	}
	if (*count < n) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	memcpy(infos, tmp, n * sizeof tmp[0]);
	*count = n;
	return 0;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned *c, nvmlProcessInfo_t *i)
{
	count_call("nvmlDeviceGetComputeRunningProcesses_v2");
	return procs(d, c, i);
}

EXPORT nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t d, int policy, nvmlViolationTime_t *vt)
{
	count_call("nvmlDeviceGetViolationStatus");
	double v;
	int ret = answer(policy == NVML_PERF_POLICY_POWER ? "viol_power" : "viol_thermal", dev_index(d), &v, 0,
			 NVML_ERROR_NOT_SUPPORTED);
	if (ret == 0) {
		vt->referenceTime = (unsigned long long)(elapsed() * 1e6);
		vt->violationTime = (unsigned long long)v;
	}
	return ret;
}

#ifndef FAKE_OLD_DRIVER
EXPORT nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t d, nvmlTemperature_t *t)
{
	count_call("nvmlDeviceGetTemperatureV");
	if (t->version != nvmlTemperature_v1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	double v;
	int ret = answer("temp", dev_index(d), &v, 40, 0);
	if (ret == 0)
		t->temperature = (int)v;
	return ret;
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *out)
{
	count_call("nvmlDeviceGetCurrentClocksEventReasons");
	double v;
	int ret = answer("reasons", dev_index(d), &v, 0, 0);
	if (ret == 0)
		*out = (unsigned long long)v;
	return ret;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
	count_call("nvmlDeviceGetMemoryInfo_v2");
	if (m->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	m->reserved = 0;
	return mem(d, &m->total, &m->free, &m->used);
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned *c, nvmlProcessInfo_t *i)
{
	count_call("nvmlDeviceGetComputeRunningProcesses_v3");
	return procs(d, c, i);
}

EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t *fv)
{
	count_call("nvmlDeviceGetFieldValues");
	int any = 0;
	for (int k = 0; k < n; k++) {
		const char *key = NULL;
		switch (fv[k].fieldId) {
		case NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP: key = "viol_power"; break;
		case NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN: key = "viol_thermal"; break;
		default: break;
		}
		if (!key) {
			fv[k].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
			continue;
		}
		double v;
		fv[k].nvmlReturn = answer(key, dev_index(d), &v, 0, NVML_ERROR_NOT_SUPPORTED);
		if (fv[k].nvmlReturn == 0) {
			fv[k].value.ullVal = (unsigned long long)v;
			any = 1;
		}
	}
	(void)any; /* like the real one: SUCCESS, each entry has its own return */
	return 0;
}
#endif
