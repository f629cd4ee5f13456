// SPDX-License-Identifier: MIT
/* Files a sample reads every time (/proc/meminfo, PSI, the cgroup's own
 * files, sensor readings), kept open and read again from offset 0 with
 * pread: one or two system calls a file instead of open, fstat, two reads
 * and close, and no path walk. Only the kernel's own files are kept (procfs,
 * sysfs, cgroupfs: each read at offset 0 asks the kernel afresh); any other
 * (a fixture's) is opened and closed every time, as sp_read_file does, so a
 * file replaced under a moved root is always read anew. A kept file whose
 * read fails (a removed cgroup or device answers ENODEV) is closed and
 * opened again by path in the same call, so the answer (ENOENT: gone) is
 * what a fresh open gives. At most SP_KEPT_MAX files, O_CLOEXEC, behind a
 * mutex; no heap. */
#ifndef SPARKOPS_PROBE_KEPT_H
#define SPARKOPS_PROBE_KEPT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SP_KEPT_MAX 48
#define SP_KEPT_PATH_MAX 320

/* sp_read_file's contract: 0 and buf (NUL-terminated, *len bytes) or -errno */
int sp_kept_read(const char *path, char *buf, size_t cap, size_t *len);
/* sp_read_i64's contract */
int sp_kept_i64(const char *path, int64_t *out);
/* how many files are kept open now (tests, benchmarks) */
int sp_kept_count(void);
/* fd is on procfs, sysfs or cgroupfs: the kernel's own files and folders,
 * which answer every read afresh and are never replaced, only changed. */
bool sp_kept_kernel_fs(int fd);
/* close them all (they are opened again on the next read) */
void sp_kept_close(void);
#endif
