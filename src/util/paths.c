// SPDX-License-Identifier: MIT
#include "util/paths.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char procfs_root[512] = "/proc";
static char sysfs_root[512] = "/sys";
static int moved;

static void set_root(char *dst, size_t n, const char *flag, const char *env, const char *def)
{
	const char *v = flag;
	if (!v || !*v)
		v = getenv(env);
	if (!v || !*v)
		v = def;
	if (strcmp(v, def) != 0)
		moved = 1;
	snprintf(dst, n, "%s", v);
	size_t len = strlen(dst);
	while (len > 1 && dst[len - 1] == '/')
		dst[--len] = 0;
}

void sp_paths_init(const char *procfs, const char *sysfs)
{
	moved = 0;
	set_root(procfs_root, sizeof procfs_root, procfs, "SPARKOPS_PROCFS", "/proc");
	set_root(sysfs_root, sizeof sysfs_root, sysfs, "SPARKOPS_SYSFS", "/sys");
}

const char *sp_procfs(void) { return procfs_root; }

const char *sp_etc(void)
{
	static char etc[sizeof procfs_root + 8];
	const char *e = getenv("SPARKOPS_ETC");
	if (e && *e)
		snprintf(etc, sizeof etc, "%s", e);
	else if (!moved)
		snprintf(etc, sizeof etc, "/etc");
	else {
		/* <tree>/proc -> <tree>/etc (the sysfs root when only it moved) */
		const char *base = strcmp(procfs_root, "/proc") != 0 ? procfs_root : sysfs_root;
		const char *slash = strrchr(base, '/');
		int keep = slash && slash != base ? (int)(slash - base) : 0;
		snprintf(etc, sizeof etc, "%.*s%setc", keep, base, keep || (slash == base) ? "/" : "");
	}
	return etc;
}

const char *sp_run_root(void)
{
	const char *r = getenv("SPARKOPS_RUN_DIR");
	return r && r[0] == '/' ? r : NULL;
}
int sp_paths_is_fixture(void) { return moved; }

int sp_path_join(char *out, size_t n, const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	if (dl + 1 + nl >= n)
		return -1;
	for (size_t i = 0; i < dl; i++)
		out[i] = dir[i];
	out[dl] = '/';
	memcpy(out + dl + 1, name, nl + 1); /* its NUL too */
	return 0;
}

static int vpath(char *out, size_t n, const char *root, const char *fmt, va_list ap)
{
	/* a name with nothing to format (meminfo: read every sample) is put
	 * together by hand, as printf would */
	if (!strchr(fmt, '%'))
		return sp_path_join(out, n, root, fmt);
	int a = snprintf(out, n, "%s/", root);
	if (a < 0 || (size_t)a >= n)
		return -1;
	/* ap was started by both callers; the analyzer loses track of a va_list
	 * passed as a parameter */
	int b = vsnprintf(out + a, n - (size_t)a, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	if (b < 0 || (size_t)b >= n - (size_t)a)
		return -1;
	return 0;
}

int sp_proc_path(char *out, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vpath(out, n, procfs_root, fmt, ap);
	va_end(ap);
	return r;
}

int sp_proc_file(char *out, size_t n, const char *name) { return sp_path_join(out, n, procfs_root, name); }

int sp_sys_path(char *out, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vpath(out, n, sysfs_root, fmt, ap);
	va_end(ap);
	return r;
}

int sp_etc_path(char *out, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vpath(out, n, sp_etc(), fmt, ap);
	va_end(ap);
	return r;
}
