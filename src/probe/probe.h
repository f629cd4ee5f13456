/* SPDX-License-Identifier: MIT */
/* The probes: thin readers over pure buffer parsers. Parsers never open files,
 * so tests and fuzzers call them directly. */
#ifndef SP_PROBE_H
#define SP_PROBE_H
#include "probe/sample.h"
#include "util/clock.h" /* sp_mono_now: the deadlines below are on its clock */

/* /proc/meminfo: keys matched at line start; values in kB become bytes.
 * Returns 0 when MemTotal and MemFree were found, -1 otherwise (m->why set). */
int sp_meminfo_parse(const char *buf, size_t len, struct sp_meminfo *m);
void sp_meminfo_read(struct sp_meminfo *m);

/* PSI: "some avg10=.. avg60=.. avg300=.. total=.." and "full ..." lines.
 * Returns 0 when at least the "some" line parsed. */
int sp_psi_parse(const char *buf, size_t len, struct sp_psi *p);
void sp_psi_read(struct sp_psi p[SP_PSI_N]);
/* A PSI trigger ("some 100000 1000000", len with its NUL) on
 * <procfs>/pressure/<res>: the fd to poll for POLLPRI, or -1. */
int sp_psi_trigger_open(enum sp_psi_res res, const char *trig, size_t len);

/* cgroup parsers */
/* /proc/self/cgroup: finds the v2 ("0::/path") or v1 memory controller path.
 * Returns the version (1, 2) or 0 when neither is there. */
int sp_cgroup_parse_self(const char *buf, size_t len, char *path, size_t pathcap);
/* "max" -> *unlimited=1; a number -> the value. 0 or -1 for garbage. */
int sp_cgroup_parse_limit(const char *buf, uint64_t *val, int *unlimited);
/* "key value" lines (memory.events, memory.stat, memory.oom_control): 0 and *val, or -1 */
int sp_kv_lookup(const char *buf, size_t len, const char *key, uint64_t *val);
void sp_cgroup_read(struct sp_cgroup *cg);

void sp_thermal_read(struct sp_sample *s);
void sp_hwmon_read(struct sp_sample *s);

/* processes */
/* Recognise a memory-heavy program from its comm and NUL-separated argv.
 * Fills name/kind/cap fields; returns true when it is a known server or trainer. */
bool sp_proc_classify(const char *comm, const char *argv, size_t argv_len, struct sp_proc *p);
/* /proc/PID/statm: resident pages (second field). 0 or -1. */
int sp_statm_parse(const char *buf, uint64_t *resident_pages);
/* /proc/PID/stat: comm (up to the last ')'), start time (field 22) and
 * resident pages (field 24). 0 or -1. */
int sp_pidstat_parse(const char *buf, size_t len, char *comm, size_t comm_cap, uint64_t *start,
		     uint64_t *rss_pages);
/* The memory-heavy processes: a full scan of /proc on the first call and on
 * an adaptive period (o->proc_scan_cost_x times the last scan's CPU time,
 * from o->proc_scan_min_s, 5 s or top's 2 s, to 60 s), the
 * listed ones re-read in between (procs.c). */
void sp_procs_read(struct sp_sample *s, const struct sp_read_opts *o);
/* Tests: the next sp_procs_read scans, as if its period had run out. */
void sp_procs_scan_due(void);
/* Tests: the period the last scan set (seconds). */
double sp_procs_period(void);
/* The entry for pid, read and added as a GPU process when the scan missed it. */
struct sp_proc *sp_proc_ensure(struct sp_sample *s, int pid);

/* ---- the GPU, behind a deadline (gpuwatch.c) ----------------------------------
 * Every NVML call (dlopen and nvmlInit included) is made by one persistent GPU
 * thread; callers only wait for it, at most until a deadline. A wedged driver
 * therefore costs a caller its deadline once, and nothing after that: while a
 * pass is still stuck, new requests are not queued behind it and polls answer
 * at once. Past the deadline every GPU reading is SP_TIMEOUT (JSON null +
 * "timeout") and gpu_status is SP_TIMEOUT with the hung call named in
 * gpu_detail; only the GPUs' identity (index, name, uuid, integrated) is kept
 * from the last answer. Readings from an earlier pass are never presented as
 * current. A result that arrives after its deadline is dropped; the next
 * request asks again.
 *
 * Periodic sampling (run, watch, serve), one sampling thread:
 *
 *     double t0 = sp_mono_now();
 *     sp_gpu_read_async();                 // the GPU thread starts a pass
 *     ... read the pool, PSI, thermal: they never wait for the GPU ...
 *     sp_gpu_poll(s, t0 + timeout);        // fresh values, or SP_TIMEOUT
 *
 * sp_sample_read() does exactly this with o->gpu_timeout_s (default
 * SP_DEFAULT_GPU_TIMEOUT, 2 s). The guard path (read pool, decide, signal)
 * must not include SP_READ_GPU. */
/* sp_mono_now(): util/clock.h */
/* Ask for a pass. 0: started; 1: a pass asked for earlier is still running
 * (the next poll will not wait for it, nor show its readings, which predate
 * this sample, should it end meanwhile); -EAGAIN: the thread could not start. */
int sp_gpu_read_async(void);
/* Wait for the pass until `deadline` (sp_mono_now() seconds), then fill the
 * GPU part of *s (gpu_status, gpu_detail, ngpu, gpus[], per-process GPU memory
 * into s->procs). 0 fresh; -ETIMEDOUT readings marked SP_TIMEOUT; -EAGAIN no
 * thread (gpu_status SP_DRIVER_ERROR). No heap allocation. */
int sp_gpu_poll(struct sp_sample *s, double deadline);
/* 1 while an NVML call is in flight (possibly forever) */
int sp_gpu_busy(void);
/* Passes the GPU thread has finished since it started (or was released).
 * Without a driver (no library, or its load or nvmlInit failed) there is one:
 * that answer cannot change before sp_nvml_release, so later samples reuse
 * it without waking the thread. */
uint64_t sp_gpu_passes(void);
/* At exit: nvmlShutdown and dlclose on the GPU thread, then it ends. When a
 * call is in flight nothing is touched and 1 is returned: the caller should
 * leave with _exit() after flushing its output (a wedged library's
 * destructors may hang too). 0 when released (or never started). */
int sp_nvml_release(void);
#endif
