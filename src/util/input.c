// SPDX-License-Identifier: MIT
/* Files a user names as input. See input.h. */
#include "util/input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sp_input_open(const char *path)
{
	/* O_NONBLOCK: opening a FIFO with no writer would wait for one */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	struct stat st;
	int e = 0;
	if (fstat(fd, &st) < 0)
		e = errno;
	else if (S_ISDIR(st.st_mode))
		e = EISDIR;
	else if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
		e = SP_EINPUT_FIFO;
	if (!e) {
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
			e = errno;
	}
	if (e) {
		close(fd);
		return -e;
	}
	return fd;
}

int sp_text_check_feed(struct sp_text_check *c, const char *buf, size_t len)
{
	if (c->seen >= SP_TEXT_PROBE || c->line_end)
		return 0; /* judged: text */
	size_t n = SP_TEXT_PROBE - c->seen < len ? SP_TEXT_PROBE - c->seen : len;
	if (memchr(buf, '\n', n))
		c->line_end = true;
	for (size_t i = 0; i < n && !c->non_nul; i++)
		c->non_nul = buf[i] != '\0';
	c->seen += n;
	if (c->seen >= SP_TEXT_PROBE && !c->line_end)
		return -SP_EINPUT_NOTTEXT;
	return 0;
}

int sp_text_check_end(const struct sp_text_check *c)
{
	return c->seen > 0 && !c->non_nul ? -SP_EINPUT_NOTTEXT : 0;
}

const char *sp_input_strerror(int e)
{
	switch (-e) {
	case SP_EINPUT_NOTTEXT:
		return "not text (no line end in the first 64 KiB, or only NUL bytes)";
	case SP_EINPUT_FIFO:
		return "a FIFO or socket, not a file (to pipe a log, give '-' and use stdin)";
	case SP_EINPUT_SHRANK:
		return "the file shrank while it was read (truncated in place, e.g. logrotate copytruncate): read it again";
	case EISDIR:
		return "is a folder, not a file";
	default:
		return strerror(-e);
	}
}
