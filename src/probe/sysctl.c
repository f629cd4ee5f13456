// SPDX-License-Identifier: MIT
/* Small reads of <procfs>/sys. See sysctl.h. */
#include "probe/sysctl.h"
#include "util/fileio.h"
#include "util/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

int sp_drop_caches_path(char *out, size_t n)
{
	return sp_proc_path(out, n, "sys/vm/drop_caches");
}

int sp_hostname_read(char *buf, size_t n)
{
	char path[600];
	if (sp_proc_path(path, sizeof path, "sys/kernel/hostname") < 0)
		return -ENAMETOOLONG;
	return sp_read_line(path, buf, n);
}

static bool test_writes(void)
{
	const char *v = getenv("SPARKOPS_TEST_PROCFS_WRITES");
	return v && strcmp(v, "1") == 0;
}

int sp_procsys_open_write(const char *rel)
{
	bool fixture = sp_paths_is_fixture();
	if (fixture && !test_writes())
		return -EXDEV;
	int dfd = open(sp_procfs(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	struct statfs fs;
	if (!fixture && (fstatfs(dfd, &fs) < 0 || fs.f_type != PROC_SUPER_MAGIC)) {
		close(dfd);
		return -EXDEV; /* "/proc" that is not the kernel's procfs */
	}
	char part[256];
	const char *p = rel;
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		if (len == 0 || len >= sizeof part) {
			close(dfd);
			return -EINVAL;
		}
		memcpy(part, p, len);
		part[len] = '\0';
		int flags = slash ? O_RDONLY | O_DIRECTORY : O_WRONLY | O_NONBLOCK | O_NOCTTY;
		int fd = openat(dfd, part, flags | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		if (fd < 0) {
			/* a symlink as a folder gives ENOTDIR with O_DIRECTORY|O_NOFOLLOW */
			struct stat ls;
			if ((e == ENOTDIR || e == ELOOP) && fstatat(dfd, part, &ls, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(ls.st_mode))
				e = ELOOP;
			close(dfd);
			return -e;
		}
		close(dfd);
		if (!slash) {
			struct stat st;
			if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
				close(fd);
				return -EINVAL;
			}
			/* a test tree: only the caller's own file */
			if (fixture && st.st_uid != geteuid()) {
				close(fd);
				return -EXDEV;
			}
			int fl = fcntl(fd, F_GETFL);
			if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
				e = errno;
				close(fd);
				return -e;
			}
			return fd;
		}
		dfd = fd;
		p = slash + 1;
	}
}

const char *sp_procsys_strerror(int e)
{
	if (e == -EXDEV)
		return "writes under /proc/sys go only to the real /proc, never into a --procfs tree";
	if (e == -ELOOP)
		return "a symbolic link: never followed for a write under /proc/sys";
	if (e == -EINVAL)
		return "not a regular file";
	return strerror(-e);
}
