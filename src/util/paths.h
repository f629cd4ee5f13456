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
/* SPARKOPS_RUN_DIR, when set to an absolute path: the one root of every
 * file sparkops keeps of its own on this machine, in place of the defaults
 * (the job status folder <root>/run instead of $XDG_RUNTIME_DIR/sparkops,
 * /run/sparkops or /tmp/sparkops-UID; the ladder's state folder <root>/state
 * instead of $XDG_STATE_HOME/sparkops or ~/.local/state/sparkops). The test
 * suite sets it so that nothing it runs reads or writes the machine's own.
 * NULL when unset, empty or relative. */
const char *sp_run_root(void);

/* snprintf helpers: "<procfs>/<rel>"; return 0, or -1 when the path does not fit */
int sp_proc_path(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int sp_sys_path(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* <procfs root>/name, name taken as it is (not a format): 0, or -1 if it
 * does not fit */
int sp_proc_file(char *out, size_t n, const char *name);
/* dir/name into out (what "%s/%s" would write, without printf: paths put
 * together every sample): 0, or -1 if it does not fit (out untouched) */
int sp_path_join(char *out, size_t n, const char *dir, const char *name);
int sp_etc_path(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#endif
