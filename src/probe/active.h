/* SPDX-License-Identifier: MIT */
/* Is a job being watched right now? Finds `sparkops run` / `sparkops watch`
 * processes under the procfs root. */
#ifndef SP_ACTIVE_H
#define SP_ACTIVE_H
#include <stdbool.h>
#include <stddef.h>

/* true when a NUL-separated argv is `sparkops [--procfs X] [--sysfs Y] run|watch ...` */
bool sp_argv_is_watcher(const char *argv, size_t len);
/* The pids of processes whose comm is "sparkops" and whose subcommand is run
 * or watch (this process left out). Stores up to max pids; returns how many
 * were found (possibly more than max), or -errno when <procfs> cannot be listed. */
int sp_active_watchers(int *pids, int max);
#endif
