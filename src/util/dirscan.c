// SPDX-License-Identifier: MIT
#include "util/dirscan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

int sp_dir_open(struct sp_dir *d, const char *path)
{
	d->len = d->pos = 0;
	d->fd = open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	return d->fd < 0 ? -errno : 0;
}

const char *sp_dir_next(struct sp_dir *d)
{
	for (;;) {
		if (d->pos >= d->len) {
			if (d->fd < 0)
				return NULL;
			long n;
			do
				n = syscall(SYS_getdents64, d->fd, d->buf, sizeof d->buf);
			while (n < 0 && errno == EINTR);
			if (n <= 0)
				return NULL;
			d->len = (size_t)n;
			d->pos = 0;
		}
		struct linux_dirent64 *e = (struct linux_dirent64 *)(void *)(d->buf + d->pos);
		if (e->d_reclen == 0)
			return NULL;
		d->pos += e->d_reclen;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		d->ino = e->d_ino;
		return e->d_name;
	}
}

size_t sp_dir_left(const struct sp_dir *d)
{
	size_t n = 0;
	for (size_t off = d->pos; off < d->len; n++) {
		const struct linux_dirent64 *e = (const struct linux_dirent64 *)(const void *)(d->buf + off);
		if (e->d_reclen == 0)
			break;
		off += e->d_reclen;
	}
	return n;
}

void sp_dir_close(struct sp_dir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}
