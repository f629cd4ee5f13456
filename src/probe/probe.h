/* SPDX-License-Identifier: MIT */
/* The probes: thin readers over pure buffer parsers. Parsers never open files,
 * so tests and fuzzers call them directly. */
#ifndef SP_PROBE_H
#define SP_PROBE_H
#include "probe/sample.h"

/* /proc/meminfo: keys matched at line start; values in kB become bytes.
 * Returns 0 when MemTotal and MemFree were found, -1 otherwise (m->why set). */
int sp_meminfo_parse(const char *buf, size_t len, struct sp_meminfo *m);
void sp_meminfo_read(struct sp_meminfo *m);

/* PSI: "some avg10=.. avg60=.. avg300=.. total=.." and "full ..." lines.
 * Returns 0 when at least the "some" line parsed. */
int sp_psi_parse(const char *buf, size_t len, struct sp_psi *p);
void sp_psi_read(struct sp_psi p[SP_PSI_N]);

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
void sp_procs_read(struct sp_sample *s, const struct sp_read_opts *o);
/* The entry for pid, read and added as a GPU process when the scan missed it. */
struct sp_proc *sp_proc_ensure(struct sp_sample *s, int pid);

/* NVML (dlopen) */
void sp_gpu_read(struct sp_sample *s);
void sp_nvml_release(void);
/* Name of the library that was loaded, or NULL. */
const char *sp_nvml_libname(void);
#endif
