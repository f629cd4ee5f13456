// SPDX-License-Identifier: MIT
#include "util/fileio.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* fd from a non-blocking open: a regular file; or -EINVAL. The flag stays
 * set: regular files ignore it (procfs, sysfs and the file systems a fixture
 * lives on), and sp_read_full clears it should a read ever answer EAGAIN, so
 * a sample pays no two fcntl(2) calls per file. */
static int regular_only(int fd)
{
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

bool sp_fd_blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl >= 0 && (fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0;
}

int sp_open_proc(const char *path, int flags)
{
	/* O_NONBLOCK: a FIFO planted under a moved root must not hang the open */
	int fd = regular_only(open(path, flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
	if (fd >= 0 && (flags & O_ACCMODE) != O_RDONLY)
		(void)sp_fd_blocking(fd); /* writers (drop_caches, oom_score_adj) get a blocking fd, as before */
	return fd;
}

ssize_t sp_read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN && sp_fd_blocking(fd))
				continue; /* a non-blocking fd (sp_open_proc's): block from now on */
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

/* Read fd (closed here) into buf as sp_read_file_t says. */
static int read_into(int fd, char *buf, size_t cap, size_t *len, int *truncated)
{
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

static int read_start(char *buf, size_t cap, size_t *len, int *truncated)
{
	if (cap == 0)
		return -EINVAL;
	buf[0] = 0;
	if (len)
		*len = 0;
	if (truncated)
		*truncated = 0;
	return 0;
}

int sp_read_file_t(const char *path, char *buf, size_t cap, size_t *len, int *truncated)
{
	if (read_start(buf, cap, len, truncated) < 0)
		return -EINVAL;
	int fd = sp_open_proc(path, O_RDONLY);
	return fd < 0 ? fd : read_into(fd, buf, cap, len, truncated);
}

int sp_read_file(const char *path, char *buf, size_t cap, size_t *len)
{
	return sp_read_file_t(path, buf, cap, len, NULL);
}

int sp_read_at(int dfd, const char *rel, char *buf, size_t cap, size_t *len)
{
	if (read_start(buf, cap, len, NULL) < 0)
		return -EINVAL;
	/* the same checks as sp_open_proc: a FIFO under a moved root is refused */
	int fd = regular_only(openat(dfd, rel, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
	return fd < 0 ? fd : read_into(fd, buf, cap, len, NULL);
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

/* ---- user-named output files ------------------------------------------------ */

static void say(char *msg, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *msg, size_t cap, const char *fmt, ...)
{
	if (!msg || !cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, cap, fmt, ap);
	va_end(ap);
}

void sp_owner_name(uid_t uid, char *out, size_t n)
{
	struct passwd pw, *res = NULL;
	char buf[1024];
	if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res)
		snprintf(out, n, "%s (uid %ld)", res->pw_name, (long)uid);
	else
		snprintf(out, n, "uid %ld", (long)uid);
}

/* the folder part of path ("." when there is none) */
static int dir_of(const char *path, char *out, size_t n)
{
	const char *slash = strrchr(path, '/');
	int w;
	if (!slash)
		w = snprintf(out, n, ".");
	else if (slash == path)
		w = snprintf(out, n, "/");
	else
		w = snprintf(out, n, "%.*s", (int)(slash - path), path);
	return w > 0 && (size_t)w < n ? 0 : -ENAMETOOLONG;
}

static bool trusted_uid(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* A symbolic link is followed only when it and its folder belong to the
 * caller or root: anyone else could aim it at a file root must not touch. */
static int check_link(const char *link, const struct stat *lst, char *msg, size_t cap)
{
	char who[160], dir[PATH_MAX];
	struct stat dst;
	if (!trusted_uid(lst->st_uid)) {
		sp_owner_name(lst->st_uid, who, sizeof who);
		say(msg, cap, "'%s' is a symbolic link owned by %s: not following it", link, who);
		return -EPERM;
	}
	if (dir_of(link, dir, sizeof dir) < 0)
		return say(msg, cap, "'%s': %s", link, strerror(ENAMETOOLONG)), -ENAMETOOLONG;
	if (stat(dir, &dst) < 0)
		return say(msg, cap, "'%s': %s", dir, strerror(errno)), -errno;
	if (!trusted_uid(dst.st_uid)) {
		sp_owner_name(dst.st_uid, who, sizeof who);
		say(msg, cap, "'%s' is a symbolic link in '%s', a folder owned by %s: not following it", link, dir, who);
		return -EPERM;
	}
	return 0;
}

/* Walk the chain of links from path (each one checked) to the name that is
 * not a link. *final gets that name; *st its lstat (st_mode 0: absent). */
static int own_fd(const char *p)
{
	const char *rest = strncmp(p, "/proc/self/fd/", 14) == 0 ? p + 14 : strncmp(p, "/dev/fd/", 8) == 0 ? p + 8 : NULL; // layers: a user's path
	if (!rest || !*rest || strspn(rest, "0123456789") != strlen(rest) || strlen(rest) > 6)
		return -1;
	return (int)strtol(rest, NULL, 10); /* at most six digits, checked above */
}

static int resolve(const char *path, char *final, size_t n, struct stat *st, int *fdnum, char *msg, size_t cap)
{
	char cur[PATH_MAX], next[PATH_MAX], dir[PATH_MAX];
	*fdnum = -1;
	if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
		return say(msg, cap, "'%s': %s", path, strerror(ENAMETOOLONG)), -ENAMETOOLONG;
	for (int hop = 0; hop < 16; hop++) {
		/* /dev/stdout, /dev/fd/N: our own descriptor, written as it is (a
		 * pipe made by another user cannot be reopened by name) */
		if ((*fdnum = own_fd(cur)) >= 0) {
			if (fstat(*fdnum, st) < 0)
				return say(msg, cap, "'%s': %s", path, strerror(errno)), -errno;
			break;
		}
		if (lstat(cur, st) < 0) {
			if (errno != ENOENT)
				return say(msg, cap, "'%s': %s", cur, strerror(errno)), -errno;
			memset(st, 0, sizeof *st);
			break;
		}
		if (!S_ISLNK(st->st_mode))
			break;
		int e = check_link(cur, st, msg, cap);
		if (e < 0)
			return e;
		char to[PATH_MAX];
		ssize_t l = readlink(cur, to, sizeof to - 1);
		if (l < 0)
			return say(msg, cap, "'%s': %s", cur, strerror(errno)), -errno;
		to[l] = 0;
		if (to[0] != '/' && to[0] != 0 && strchr(to, ':') && strncmp(cur, "/proc/", 6) == 0) { // layers: a user's path
			/* a /proc/PID/fd magic link to a pipe or socket: only the kernel can open it */
			if (stat(cur, st) < 0)
				return say(msg, cap, "'%s': %s", cur, strerror(errno)), -errno;
			break;
		}
		int w;
		if (to[0] == '/') {
			w = snprintf(next, sizeof next, "%s", to);
		} else {
			if (dir_of(cur, dir, sizeof dir) < 0)
				return say(msg, cap, "'%s': %s", cur, strerror(ENAMETOOLONG)), -ENAMETOOLONG;
			w = snprintf(next, sizeof next, "%s/%s", dir, to);
		}
		if (w < 0 || (size_t)w >= sizeof next)
			return say(msg, cap, "'%s': %s", cur, strerror(ENAMETOOLONG)), -ENAMETOOLONG;
		memcpy(cur, next, (size_t)w + 1);
		if (hop == 15)
			return say(msg, cap, "'%s': %s", path, strerror(ELOOP)), -ELOOP;
	}
	if (snprintf(final, n, "%s", cur) >= (int)n)
		return say(msg, cap, "'%s': %s", path, strerror(ENAMETOOLONG)), -ENAMETOOLONG;
	return 0;
}

static int write_fd(int fd, const void *data, size_t len)
{
	if (len && sp_write_full(fd, data, len) < 0)
		return -errno;
	return 0;
}

/* Replace the regular file (or absent name) path: a fresh temp file beside it
 * (O_EXCL|O_NOFOLLOW, a new name on collision), fsync, rename. An existing
 * file keeps its permission bits (set-id bits dropped); a new one gets mode. */
static int replace_regular(const char *path, const struct stat *old, const void *data, size_t len, mode_t mode)
{
	static unsigned long seq;
	char tmp[PATH_MAX];
	int fd = -1;
	for (int i = 0; i < 100 && fd < 0; i++) {
		int w = i == 0 ? snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid())
			       : snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%lu", path, (long)getpid(), ++seq);
		if (w < 0 || (size_t)w >= sizeof tmp)
			return -ENAMETOOLONG;
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	mode_t want = old && old->st_mode ? (old->st_mode & 0777) : (mode & 0777);
	int err = 0;
	/* root replacing another user's file: the new one stays theirs (owner
	 * and group), as an editor's save does; on the file we just created */
	if (old && old->st_mode && geteuid() == 0 && (old->st_uid != 0 || old->st_gid != getegid()) &&
	    fchown(fd, old->st_uid, old->st_gid) < 0)
		err = -errno;
	/* fchmod on the file we just created, never on one we found */
	if (!err && (fchmod(fd, want) < 0 || write_fd(fd, data, len) < 0 || fsync(fd) < 0))
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

static int write_socket(const char *path, const void *data, size_t len)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof a.sun_path)
		return -ENAMETOOLONG;
	memcpy(a.sun_path, path, strlen(path) + 1);
	const int types[2] = { SOCK_STREAM, SOCK_DGRAM };
	for (int i = 0; i < 2; i++) {
		int fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
			int e = errno;
			close(fd);
			if (e == EPROTOTYPE)
				continue;
			return -e;
		}
		int err = write_fd(fd, data, len);
		close(fd);
		return err;
	}
	return -EPROTOTYPE;
}

/* Write into what is already there: a device, a FIFO, a terminal. No
 * O_CREAT/O_TRUNC; O_NONBLOCK for the open only (a FIFO without a reader is
 * ENXIO, not a hang). The opened file must still be what we looked at. */
static int write_in_place(const char *path, const struct stat *want, bool follow, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || (st.st_mode & S_IFMT) != (want->st_mode & S_IFMT) || S_ISREG(st.st_mode) ||
	    S_ISBLK(st.st_mode) || S_ISDIR(st.st_mode)) {
		close(fd);
		return -EAGAIN; /* swapped under us */
	}
	(void)sp_fd_blocking(fd);
	int err = write_fd(fd, data, len);
	if (close(fd) < 0 && !err && errno != EINTR)
		err = -errno;
	return err;
}

int sp_write_output(const char *path, const void *data, size_t len, mode_t mode, char *msg, size_t cap)
{
	if (msg && cap)
		msg[0] = 0;
	if (strcmp(path, "-") == 0) {
		int e = write_fd(STDOUT_FILENO, data, len);
		if (e < 0)
			say(msg, cap, "standard output: %s", strerror(-e));
		return e;
	}
	char final[PATH_MAX];
	struct stat st;
	int fdnum;
	int e = resolve(path, final, sizeof final, &st, &fdnum, msg, cap);
	if (e < 0)
		return e;
	if (fdnum >= 0) {
		e = write_fd(fdnum, data, len);
		if (e < 0)
			say(msg, cap, "'%s': %s", path, strerror(-e));
		return e;
	}
	bool via_link = strcmp(final, path) != 0;
	const char *at = via_link ? final : path;
	if (st.st_mode == 0 || S_ISREG(st.st_mode)) {
		e = replace_regular(at, st.st_mode ? &st : NULL, data, len, mode);
	} else if (S_ISDIR(st.st_mode)) {
		e = -EISDIR;
	} else if (S_ISBLK(st.st_mode)) {
		say(msg, cap, "'%s' is a block device: refusing to write a report onto a disk", path);
		return -ENOTSUP;
	} else if (S_ISSOCK(st.st_mode)) {
		e = write_socket(at, data, len);
	} else {
		/* a /proc magic link resolves only through the link itself */
		bool magic = via_link && strncmp(final, "/proc/", 6) == 0; // layers: a user's path
		e = write_in_place(magic ? final : at, &st, magic, data, len);
	}
	if (e == -ENXIO && S_ISFIFO(st.st_mode))
		say(msg, cap, "'%s' is a FIFO with no reader: nothing written", path);
	else if (e == -EAGAIN)
		say(msg, cap, "'%s' changed while it was being opened: nothing written", path);
	else if (e < 0)
		say(msg, cap, "'%s': %s", path, strerror(-e));
	return e;
}

int sp_write_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	return sp_write_output(path, data, len, mode, NULL, 0);
}

bool sp_same_file(const char *a, const char *b)
{
	if (!a || !b)
		return false;
	if (strcmp(a, b) == 0)
		return true;
	struct stat sa, sb;
	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	/* one does not exist yet: the same folder and the same last name */
	char da[PATH_MAX], db[PATH_MAX];
	const char *ba = strrchr(a, '/'), *bb = strrchr(b, '/');
	ba = ba ? ba + 1 : a;
	bb = bb ? bb + 1 : b;
	if (strcmp(ba, bb) != 0 || dir_of(a, da, sizeof da) < 0 || dir_of(b, db, sizeof db) < 0)
		return false;
	if (stat(da, &sa) < 0 || stat(db, &sb) < 0)
		return false;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
