/* SPDX-License-Identifier: MIT */
/* Roots for every machine path: tests and bug reports point them at a tree. */
#ifndef SP_PATHS_H
#define SP_PATHS_H
#include <stddef.h>

/* Set by --procfs/--sysfs, else SPARKOPS_PROCFS/SPARKOPS_SYSFS, else /proc and /sys. */
void sp_paths_init(const char *procfs, const char *sysfs);
const char *sp_procfs(void);
/* true when a root was moved away from the live machine */
int sp_paths_is_fixture(void);

/* The root of /etc: SPARKOPS_ETC, else, when --procfs or --sysfs moved a
 * root to a tree (a fixture, a copy of a machine), the etc/ beside that
 * tree's proc/ (so nothing of the live machine mixes in), else /etc. */
const char *sp_etc(void);

/* snprintf helpers: "<procfs>/<rel>"; return 0, or -1 when the path does not fit */
int sp_proc_path(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int sp_sys_path(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int sp_etc_path(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#endif
