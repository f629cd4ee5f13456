/* SPDX-License-Identifier: MIT */
/* Is a job being watched right now? Finds `sparkops run` / `sparkops watch`
 * processes under the procfs root. */
#ifndef SP_ACTIVE_H
#define SP_ACTIVE_H
#include <stdbool.h>
#include <stddef.h>

/* true when a NUL-separated argv is `sparkops [--procfs X] [--sysfs Y] run|watch ...` */
bool sp_argv_is_watcher(const char *argv, size_t len);
/* The pids of processes whose comm is "sparkops", whose subcommand is run
 * or watch and whose executable is this one's (/proc/PID/exe and
 * /proc/self/exe are the same file: same st_dev and st_ino), this process
 * left out. In a fixture tree (--procfs) an entry without exe is judged on its
 * comm and argv alone. Stores up to max pids; returns how many
 * were found (possibly more than max), or -errno when <procfs> cannot be listed. */
int sp_active_watchers(int *pids, int max);
#endif
