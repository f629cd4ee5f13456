// SPDX-License-Identifier: MIT
#include "probe/active.h"
#include "probe/jobtree.h"
#include "util/dirscan.h"
#include "util/fileio.h"
#include "util/paths.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool sp_argv_is_watcher(const char *argv, size_t len)
{
	const char *p = argv, *end = argv + len;
	if (p >= end)
		return false;
	p += strnlen(p, (size_t)(end - p)) + 1; /* argv[0] */
	while (p < end) {
		size_t wl = strnlen(p, (size_t)(end - p));
		if (wl == 0)
			return false;
		if ((wl == 8 && memcmp(p, "--procfs", 8) == 0) || (wl == 7 && memcmp(p, "--sysfs", 7) == 0)) {
			p += wl + 1;
			if (p >= end)
				return false;
			p += strnlen(p, (size_t)(end - p)) + 1; /* its value */
			continue;
		}
		if (p[0] == '-') { /* --procfs=X, --sysfs=X */
			p += wl + 1;
			continue;
		}
		return (wl == 3 && memcmp(p, "run", 3) == 0) || (wl == 5 && memcmp(p, "watch", 5) == 0);
	}
	return false;
}

/* Is <procfs>/PID/exe the very file this process runs (self: its stat)?
 * On the live /proc it must be: a name and an argv are anyone's to choose
 * (`exec -a`, a copy of sleep called sparkops), the executable file is not.
 * In a fixture tree an entry without exe is a planted watcher and counts on
 * its comm and argv alone; one with exe (a link into the live /proc) is
 * checked like the live one. */
static bool exe_is_self(const char *exe, const struct stat *self, bool self_ok)
{
	struct stat st;
	if (sp_paths_is_fixture()) {
		if (lstat(exe, &st) < 0 && errno == ENOENT)
			return true;
	}
	if (!self_ok || stat(exe, &st) < 0)
		return false;
	return st.st_dev == self->st_dev && st.st_ino == self->st_ino;
}

int sp_active_watchers(int *pids, int max)
{
	struct sp_dir d;
	int r = sp_dir_open(&d, sp_procfs());
	if (r < 0)
		return r;
	/* our own executable, always from the live /proc: it is this process */
	char selfexe[64];
	struct stat self;
	snprintf(selfexe, sizeof selfexe, "%s/self/exe", SP_LIVE_PROC);
	const bool self_ok = stat(selfexe, &self) == 0;
	int n = 0;
	const int me = (int)getpid();
	const char *name;
	while ((name = sp_dir_next(&d)) != NULL) {
		if (!isdigit((unsigned char)name[0]))
			continue;
		char *e;
		long pid = strtol(name, &e, 10);
		if (*e || pid <= 0 || pid > 0x7fffffff || pid == me)
			continue;
		char path[4200], comm[64], argv[1024];
		size_t len;
		if (sp_proc_path(path, sizeof path, "%ld/comm", pid) < 0 || sp_read_line(path, comm, sizeof comm) < 0)
			continue;
		if (strcmp(comm, "sparkops") != 0)
			continue;
		if (sp_proc_path(path, sizeof path, "%ld/cmdline", pid) < 0 ||
		    sp_read_file(path, argv, sizeof argv, &len) < 0)
			continue;
		if (!sp_argv_is_watcher(argv, len))
			continue;
		if (sp_proc_path(path, sizeof path, "%ld/exe", pid) < 0 || !exe_is_self(path, &self, self_ok))
			continue;
		if (n < max)
			pids[n] = (int)pid;
		n++;
	}
	sp_dir_close(&d);
	return n;
}
