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
	/* '\r' counts: a tqdm bar redraws with it for many KiB between '\n's */
	if (memchr(buf, '\n', n) || memchr(buf, '\r', n))
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

int sp_input_check_follow(const char *path)
{
	int fd = sp_input_open(path);
	if (fd == -ENOENT)
		return 0; /* it appears later: followed from its start then */
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -SP_EINPUT_NOTREG;
	}
	static char buf[SP_TEXT_PROBE];
	ssize_t n;
	do
		n = pread(fd, buf, sizeof buf, 0);
	while (n < 0 && errno == EINTR);
	int e = n < 0 ? -errno : 0;
	close(fd);
	if (e)
		return e;
	struct sp_text_check c = { 0 };
	e = sp_text_check_feed(&c, buf, (size_t)n);
	if (!e && (size_t)n < sizeof buf)
		e = sp_text_check_end(&c);
	return e;
}

const char *sp_input_strerror(int e)
{
	switch (-e) {
	case SP_EINPUT_NOTTEXT:
		return "not text (no line end in the first 64 KiB, or only NUL bytes)";
	case SP_EINPUT_FIFO:
		return "a FIFO or socket, not a file (where stdin is taken, give - and pipe into it)";
	case SP_EINPUT_SHRANK:
		return "the file shrank while it was read (truncated in place, e.g. logrotate copytruncate): read it again";
	case EISDIR:
		return "is a folder, not a file";
	case SP_EINPUT_NOTREG:
		return "a device, not a regular file";
	default:
		return strerror(-e);
	}
}
