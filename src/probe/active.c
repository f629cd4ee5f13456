// SPDX-License-Identifier: MIT
#include "probe/active.h"
#include "util/dirscan.h"
#include "util/fileio.h"
#include "util/paths.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
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

int sp_active_watchers(int *pids, int max)
{
	struct sp_dir d;
	int r = sp_dir_open(&d, sp_procfs());
	if (r < 0)
		return r;
	int n = 0;
	const int self = (int)getpid();
	const char *name;
	while ((name = sp_dir_next(&d)) != NULL) {
		if (!isdigit((unsigned char)name[0]))
			continue;
		char *e;
		long pid = strtol(name, &e, 10);
		if (*e || pid <= 0 || pid > 0x7fffffff || pid == self)
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
		if (n < max)
			pids[n] = (int)pid;
		n++;
	}
	sp_dir_close(&d);
	return n;
}
