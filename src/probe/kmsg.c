// SPDX-License-Identifier: MIT
/* The NVIDIA driver's lines in the kernel log, counted (kmsg.h). */
#include "probe/kmsg.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const kind_names[SP_DRV_N] = { "nvrm_oom", "xid", "nvrm_other" };

const char *sp_drv_kind_name(enum sp_drv_kind k)
{
	return (unsigned)k < SP_DRV_N ? kind_names[k] : "?";
}

static bool has(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

int sp_kmsg_classify(const char *line, size_t len)
{
	size_t i = 0;
	/* /dev/kmsg: "PRI,SEQ,USEC,FLAGS;" before the text */
	const char *semi = memchr(line, ';', len);
	if (semi && len > 0 && isdigit((unsigned char)line[0])) {
		size_t q = 0, end = (size_t)(semi - line);
		while (q < end && (isdigit((unsigned char)line[q]) || strchr(",-c+", line[q])))
			q++;
		if (q == end)
			i = end + 1;
	}
	/* dmesg: "[  12.345678] " */
	if (i < len && line[i] == '[') {
		const char *c = memchr(line + i, ']', len - i);
		if (c && (size_t)(c - line) - i < 24)
			i = (size_t)(c - line) + 1;
	}
	while (i < len && line[i] == ' ')
		i++;
	const char *p = line + i;
	size_t n = len - i;
	/* cppcheck takes the loop above's last test for every path */
	// cppcheck-suppress knownConditionTrueFalse
	if (n < 5 || memcmp(p, "NVRM:", 5) != 0)
		return -1;
	if (has(p, n, "NVRM: Xid"))
		return SP_DRV_XID;
	if (has(p, n, "NV_ERR_NO_MEMORY") || has(p, n, "Out of memory") || has(p, n, "failed to allocate"))
		return SP_DRV_NVRM_OOM;
	return SP_DRV_NVRM_OTHER;
}

void sp_kmsg_open(struct sp_kmsg *k, const char *path)
{
	memset(k, 0, sizeof *k);
	k->fd = -1;
	const char *p = path ? path : "/dev/kmsg";
	int fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		k->why = errno == EACCES || errno == EPERM ? SP_NOACCESS : SP_MISSING;
		return;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !(S_ISCHR(st.st_mode) || S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))) {
		close(fd);
		k->why = SP_MALFORMED;
		return;
	}
	k->device = S_ISCHR(st.st_mode);
	k->fd = fd;
	k->why = SP_OK;
}

static void count_line(struct sp_kmsg *k, const char *s, size_t n)
{
	k->lines++;
	int c = sp_kmsg_classify(s, n);
	if (c >= 0)
		k->count[c]++;
}

int sp_kmsg_poll(struct sp_kmsg *k)
{
	if (k->fd < 0)
		return -EBADF;
	char buf[8192];
	for (;;) {
		ssize_t r = read(k->fd, buf, sizeof buf);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			/* EAGAIN: nothing new; EPIPE: records were overwritten before we read them (the next read goes on) */
			if (errno == EAGAIN)
				return 0;
			if (errno == EPIPE)
				continue;
			return -errno;
		}
		if (r == 0)
			return 0;
		if (k->device) {
			/* one record a read; continuation lines (" KEY=value") follow its first line */
			const char *nl = memchr(buf, '\n', (size_t)r);
			count_line(k, buf, nl ? (size_t)(nl - buf) : (size_t)r);
			continue;
		}
		/* a file: lines, one possibly cut by the read's end */
		const char *p = buf, *e = buf + r;
		while (p < e) {
			const char *nl = memchr(p, '\n', (size_t)(e - p));
			size_t n = nl ? (size_t)(nl - p) : (size_t)(e - p);
			/* an overlong line keeps its start: the kind is in its first words */
			size_t room = sizeof k->part - k->partlen;
			size_t take = n < room ? n : room;
			memcpy(k->part + k->partlen, p, take);
			k->partlen += take;
			k->overlong |= take < n;
			if (!nl)
				break;
			if (k->partlen > 0 && k->part[0] != ' ')
				count_line(k, k->part, k->partlen);
			k->partlen = 0;
			k->overlong = false;
			p = nl + 1;
		}
	}
}

void sp_kmsg_close(struct sp_kmsg *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
}
