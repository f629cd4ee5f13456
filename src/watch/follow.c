// SPDX-License-Identifier: MIT
/* watch --follow: tail -F semantics. See follow.h. */
#include "watch/follow.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static bool follow_reopen(struct sp_follow *f, bool at_end)
{
	int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	struct stat st;
	/* a growing regular file only: a FIFO or a device (rotated in under the
	 * name) would feed the parser for ever */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	if (f->fd >= 0)
		close(f->fd);
	f->fd = fd;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->off = at_end ? st.st_size : 0;
	return true;
}

void sp_follow_open(struct sp_follow *f, const char *path)
{
	f->path = path;
	f->fd = -1;
	f->off = 0;
	f->reopened = 0;
	follow_reopen(f, true);
}

size_t sp_follow_read(struct sp_follow *f, char *buf, size_t cap)
{
	if (f->fd < 0) {
		if (!follow_reopen(f, false)) /* it appeared after we started: all of it is new */
			return 0;
	}
	struct stat st;
	if (fstat(f->fd, &st) == 0 && st.st_size < f->off) {
		f->off = 0; /* truncated: what is there now is new */
		f->reopened++;
	}
	ssize_t n;
	do
		n = pread(f->fd, buf, cap, f->off);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		f->off += n;
		return (size_t)n;
	}
	/* the old file is read to its end: has the name moved on (rotation)? */
	struct stat ps;
	if (stat(f->path, &ps) == 0 && (ps.st_ino != f->ino || ps.st_dev != f->dev)) {
		if (follow_reopen(f, false)) {
			f->reopened++;
			return sp_follow_read(f, buf, cap);
		}
	}
	return 0;
}

void sp_follow_close(struct sp_follow *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}
