/* SPDX-License-Identifier: MIT */
#include "util/envlib.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/msg.h"

/* one folder of the resolved path: owned by root; the file's own folder not
 * writable by group or others, a folder higher up only when sticky (others
 * cannot rename root's entries in it) */
static bool dir_ok(const char *dir, bool own, char *why, size_t wn)
{
	struct stat st;
	if (stat(dir, &st) != 0) {
		snprintf(why, wn, "folder '%s': %s", dir, strerror(errno));
		return false;
	}
	if (st.st_uid != 0) {
		snprintf(why, wn, "folder '%s' is owned by uid %u, not root", dir, (unsigned)st.st_uid);
		return false;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && (own || !(st.st_mode & S_ISVTX))) {
		snprintf(why, wn, "folder '%s' is writable by group or others", dir);
		return false;
	}
	return true;
}

bool sp_env_lib_check(unsigned euid, const char *path, char *out, size_t n, char *why, size_t wn)
{
	if (why && wn)
		why[0] = '\0';
	if (!strchr(path, '/') || euid != 0) {
		snprintf(out, n, "%s", path);
		return true;
	}
	char real[PATH_MAX];
	if (!realpath(path, real)) {
		/* nothing there: nothing to run; dlopen fails and says so */
		if (errno == ENOENT || errno == ENOTDIR) {
			snprintf(out, n, "%s", path);
			return true;
		}
		snprintf(why, wn, "%s", strerror(errno));
		return false;
	}
	struct stat st;
	if (stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, wn, "'%s' is not a regular file", real);
		return false;
	}
	if (st.st_uid != 0) {
		snprintf(why, wn, "'%s' is owned by uid %u, not root", real, (unsigned)st.st_uid);
		return false;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, wn, "'%s' is writable by group or others", real);
		return false;
	}
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", real);
	bool own = true;
	for (;;) {
		char *slash = strrchr(dir, '/');
		if (!slash)
			break;
		if (slash == dir) {
			if (!dir_ok("/", own, why, wn))
				return false;
			break;
		}
		*slash = '\0';
		if (!dir_ok(dir, own, why, wn))
			return false;
		own = false;
	}
	if (strlen(real) >= n) {
		snprintf(why, wn, "the path is too long");
		return false;
	}
	snprintf(out, n, "%s", real);
	return true;
}

bool sp_env_lib_ok(const char *var, const char *path, char *out, size_t n)
{
	char why[PATH_MAX + 96];
	if (sp_env_lib_check((unsigned)geteuid(), path, out, n, why, sizeof why))
		return true;
	sp_warn("%s: not loaded as root (%s): the default library is used", var, why);
	return false;
}
