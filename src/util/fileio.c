// SPDX-License-Identifier: MIT
#include "util/fileio.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

ssize_t sp_read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return got ? (ssize_t)got : -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

ssize_t sp_write_full(int fd, const void *buf, size_t n)
{
	size_t put = 0;
	while (put < n) {
		ssize_t w = write(fd, (const char *)buf + put, n - put);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		put += (size_t)w;
	}
	return (ssize_t)put;
}

int sp_read_file_t(const char *path, char *buf, size_t cap, size_t *len, int *truncated)
{
	if (cap == 0)
		return -EINVAL;
	buf[0] = 0;
	if (len)
		*len = 0;
	if (truncated)
		*truncated = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	ssize_t r = sp_read_full(fd, buf, cap - 1);
	int err = errno;
	if (r >= 0 && (size_t)r == cap - 1 && truncated) {
		char extra;
		ssize_t e;
		do
			e = read(fd, &extra, 1);
		while (e < 0 && errno == EINTR);
		*truncated = e > 0;
	}
	close(fd);
	if (r < 0)
		return -err;
	buf[r] = 0;
	if (len)
		*len = (size_t)r;
	return 0;
}

int sp_read_file(const char *path, char *buf, size_t cap, size_t *len)
{
	return sp_read_file_t(path, buf, cap, len, NULL);
}

int sp_read_at(int dfd, const char *rel, char *buf, size_t cap, size_t *len)
{
	if (cap == 0)
		return -EINVAL;
	buf[0] = 0;
	if (len)
		*len = 0;
	int fd = openat(dfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	ssize_t r;
	do
		r = read(fd, buf, cap - 1);
	while (r < 0 && errno == EINTR);
	int err = errno;
	close(fd);
	if (r < 0)
		return -err;
	buf[r] = 0;
	if (len)
		*len = (size_t)r;
	return 0;
}

int sp_read_line(const char *path, char *buf, size_t cap)
{
	size_t len;
	int r = sp_read_file(path, buf, cap, &len);
	if (r < 0)
		return r;
	char *nl = memchr(buf, '\n', len);
	if (nl)
		*nl = 0;
	return 0;
}

/* the rest of a token is blanks (a sysfs value ends with its newline) */
static bool only_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	return !*p;
}

int sp_parse_i64(const char *s, int64_t *out)
{
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return -EINVAL;
	errno = 0;
	char *end;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (!only_blanks(end))
		return -EINVAL;
	*out = v;
	return 0;
}

int sp_parse_u64(const char *s, uint64_t *out)
{
	while (*s == ' ' || *s == '\t')
		s++;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (!only_blanks(end))
		return -EINVAL;
	*out = v;
	return 0;
}

int sp_read_i64(const char *path, int64_t *out)
{
	char buf[64];
	int r = sp_read_file(path, buf, sizeof buf, NULL);
	if (r < 0)
		return r;
	return sp_parse_i64(buf, out);
}

int sp_write_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
		return -ENAMETOOLONG;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	int err = 0;
	if (fchmod(fd, mode) < 0 || sp_write_full(fd, data, len) < 0 || fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}
