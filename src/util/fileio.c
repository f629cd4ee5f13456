// SPDX-License-Identifier: MIT
#include "util/fileio.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <time.h>
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

static double sp_out_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

static int fail_msg(char *msg, size_t cap, const char *what, int e)
{
	say(msg, cap, "'%s': %s", what, strerror(-e));
	return e;
}

/* A symbolic link (name in the folder dfd, shown as where) is followed only
 * when it and its folder belong to the caller or root: anyone else could
 * aim it at a file root must not touch. */
/* walk_dir's "at the root": the first component is named as "/NAME" from
 * AT_FDCWD, not looked up in an open("/") (qemu-user's -L prefix maps "/"
 * itself to the target's sysroot, where /tmp is not) */
#define WALK_ROOT (-2)

static int check_link_at(int dfd, const char *where, const struct stat *lst, char *msg, size_t cap)
{
	char who[160], dir[PATH_MAX];
	struct stat dst;
	if (!trusted_uid(lst->st_uid)) {
		sp_owner_name(lst->st_uid, who, sizeof who);
		say(msg, cap, "'%s' is a symbolic link owned by %s: not following it", where, who);
		return -EPERM;
	}
	if ((dfd == WALK_ROOT ? stat("/", &dst) : fstat(dfd, &dst)) < 0)
		return fail_msg(msg, cap, where, -errno);
	if (!trusted_uid(dst.st_uid)) {
		if (dir_of(where, dir, sizeof dir) < 0)
			snprintf(dir, sizeof dir, ".");
		sp_owner_name(dst.st_uid, who, sizeof who);
		say(msg, cap, "'%s' is a symbolic link in '%s', a folder owned by %s: not following it", where, dir, who);
		return -EPERM;
	}
	return 0;
}

/* /proc/self/fd/N or /dev/fd/N: our own descriptor N, written as it is (a
 * pipe made by another user cannot be reopened by name); -1 otherwise */
static int own_fd(const char *p)
{
	const char *rest = strncmp(p, "/proc/self/fd/", 14) == 0 ? p + 14 : strncmp(p, "/dev/fd/", 8) == 0 ? p + 8 : NULL; // layers: a user's path
	if (!rest || !*rest || strspn(rest, "0123456789") != strlen(rest) || strlen(rest) > 6)
		return -1;
	return (int)strtol(rest, NULL, 10); /* at most six digits, checked above */
}

static _Atomic int no_openat2; /* the kernel said ENOSYS once */

/* The whole folder path in one call that refuses any symbolic link on the
 * way (-ELOOP then: the walk below checks each one). -ENOSYS: no openat2. */
static int open_dir_fast(const char *dir)
{
#ifdef SYS_openat2
	if (!no_openat2) {
		struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
					.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
		long r = syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof how);
		if (r >= 0)
			return (int)r;
		if (errno == ENOSYS)
			no_openat2 = 1;
		return -errno;
	}
#else
	(void)dir;
#endif
	return -ENOSYS;
}

/* The folder dir, walked one component at a time from a held descriptor
 * (O_PATH|O_DIRECTORY|O_NOFOLLOW each step); a symbolic link on the way is
 * followed only when check_link_at allows it. The fd, or -errno with msg. */
static int walk_dir(const char *dir, char *msg, size_t cap)
{
	char rest[2 * PATH_MAX], where[PATH_MAX], tmp[2 * PATH_MAX];
	if (snprintf(rest, sizeof rest, "%s", dir) >= (int)sizeof rest)
		return fail_msg(msg, cap, dir, -ENAMETOOLONG);
	int dfd = rest[0] == '/' ? WALK_ROOT : open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 && dfd != WALK_ROOT)
		return fail_msg(msg, cap, dir, -errno);
	snprintf(where, sizeof where, "%s", rest[0] == '/' ? "" : ".");
	const char *p = rest;
	for (int hops = 0;;) {
		while (*p == '/')
			p++;
		if (!*p) {
			if (dfd != WALK_ROOT)
				return dfd;
			dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC); /* the folder is the root itself */
			return dfd >= 0 ? dfd : fail_msg(msg, cap, "/", -errno);
		}
		size_t l = strcspn(p, "/");
		char comp[NAME_MAX + 1];
		if (l > NAME_MAX) {
			if (dfd != WALK_ROOT)
				close(dfd);
			return fail_msg(msg, cap, dir, -ENAMETOOLONG);
		}
		memcpy(comp, p, l);
		comp[l] = 0;
		p += l;
		/* at the root the component is named whole: "/tmp" from AT_FDCWD */
		char absn[NAME_MAX + 2];
		snprintf(absn, sizeof absn, "/%s", comp);
		const int at = dfd == WALK_ROOT ? AT_FDCWD : dfd;
		const char *name = dfd == WALK_ROOT ? absn : comp;
		size_t wl = strlen(where);
		snprintf(where + wl, sizeof where - wl, "/%s", comp);
		struct stat st;
		int e = 0;
		if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			e = fail_msg(msg, cap, where, -errno);
		} else if (S_ISLNK(st.st_mode)) {
			char to[PATH_MAX];
			ssize_t tl;
			if (++hops > 40)
				e = fail_msg(msg, cap, dir, -ELOOP);
			else if ((e = check_link_at(dfd, where, &st, msg, cap)) < 0)
				;
			else if ((tl = readlinkat(at, name, to, sizeof to - 1)) < 0)
				e = fail_msg(msg, cap, where, -errno);
			else {
				to[tl] = 0;
				if (snprintf(tmp, sizeof tmp, "%s/%s", to, p) >= (int)sizeof tmp)
					e = fail_msg(msg, cap, dir, -ENAMETOOLONG);
				else {
					memcpy(rest, tmp, strlen(tmp) + 1);
					p = rest;
					if (to[0] == '/') {
						if (dfd != WALK_ROOT)
							close(dfd);
						dfd = WALK_ROOT;
						where[0] = 0;
					} else {
						where[wl] = 0;
					}
					continue;
				}
			}
		} else if (!S_ISDIR(st.st_mode)) {
			e = fail_msg(msg, cap, where, -ENOTDIR);
		} else {
			int nfd = openat(at, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (nfd < 0) {
				e = fail_msg(msg, cap, where, errno == ELOOP ? -EAGAIN : -errno);
			} else {
				if (dfd != WALK_ROOT)
					close(dfd);
				dfd = nfd;
			}
		}
		if (e < 0) {
			if (dfd != WALK_ROOT)
				close(dfd);
			return e;
		}
	}
}

static int open_dir(const char *dir, char *msg, size_t cap)
{
	int fd = open_dir_fast(dir);
	if (fd >= 0)
		return fd;
	if (fd != -ELOOP && fd != -ENOSYS && fd != -EXDEV && fd != -EAGAIN)
		return fail_msg(msg, cap, dir, fd);
	return walk_dir(dir, msg, cap);
}

static void out_init(struct sp_out *o, const char *path)
{
	o->dirfd = -1;
	o->fd = -1;
	o->stream = o->borrowed = o->owned_nb = o->cut = false;
	o->type = 0;
	o->name[0] = 0;
	snprintf(o->path, sizeof o->path, "%s", path);
	o->blen = 0;
	o->dropped = 0;
	memset(&o->st, 0, sizeof o->st);
}

/* the checks on what is there, once resolved */
static int out_judge(struct sp_out *o, char *msg, size_t cap)
{
	const struct stat *st = &o->st;
	o->type = st->st_mode & S_IFMT;
	if (S_ISBLK(st->st_mode)) {
		say(msg, cap, "'%s' is a block device: refusing to write onto a disk", o->path);
		return -ENOTSUP;
	}
	if (S_ISDIR(st->st_mode))
		return fail_msg(msg, cap, o->path, -EISDIR);
	/* a hard link: only where we open by name (a descriptor we were handed,
	 * standard output, was opened by the caller's shell, not by us) */
	if (S_ISREG(st->st_mode) && st->st_nlink > 1 && o->dirfd >= 0) {
		struct stat dst;
		bool open_dir_w = o->dirfd >= 0 && fstat(o->dirfd, &dst) == 0 && (dst.st_mode & (S_IWGRP | S_IWOTH));
		if (st->st_uid != geteuid() || open_dir_w) {
			char who[160];
			sp_owner_name(st->st_uid, who, sizeof who);
			say(msg, cap, "'%s' is a hard link (%lu names) to a file owned by %s%s: not writing through it",
			    o->path, (unsigned long)st->st_nlink, who, open_dir_w ? " in a folder others may write" : "");
			return -EMLINK;
		}
	}
	o->stream = o->type && !S_ISREG(st->st_mode);
	return 0;
}

int sp_out_resolve(struct sp_out *o, const char *path, char *msg, size_t cap)
{
	if (msg && cap)
		msg[0] = 0;
	out_init(o, path);
	if (strcmp(path, "-") == 0 || own_fd(path) >= 0) {
		o->fd = strcmp(path, "-") == 0 ? STDOUT_FILENO : own_fd(path);
		o->borrowed = true;
		if (fstat(o->fd, &o->st) < 0) {
			int e = -errno;
			o->fd = -1;
			return fail_msg(msg, cap, strcmp(path, "-") == 0 ? "standard output" : path, e);
		}
		int e = out_judge(o, msg, cap);
		o->stream = true; /* a shared description: written in place, never reopened */
		if (e < 0)
			o->fd = -1;
		return e;
	}
	char cur[PATH_MAX], dir[PATH_MAX];
	if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
		return fail_msg(msg, cap, path, -ENAMETOOLONG);
	for (int hop = 0;; hop++) {
		if (hop == 40)
			return fail_msg(msg, cap, path, -ELOOP);
		int n = own_fd(cur);
		if (n >= 0) {
			o->fd = n;
			o->borrowed = o->stream = true;
			if (fstat(n, &o->st) < 0) {
				o->fd = -1;
				return fail_msg(msg, cap, path, -errno);
			}
			int e = out_judge(o, msg, cap);
			o->stream = true;
			if (e < 0)
				o->fd = -1;
			return e;
		}
		const char *base = strrchr(cur, '/');
		base = base ? base + 1 : cur;
		if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
			return fail_msg(msg, cap, path, -EISDIR);
		if (strlen(base) >= sizeof o->name)
			return fail_msg(msg, cap, path, -ENAMETOOLONG);
		if (dir_of(cur, dir, sizeof dir) < 0)
			return fail_msg(msg, cap, path, -ENAMETOOLONG);
		if (o->dirfd >= 0)
			close(o->dirfd);
		o->dirfd = open_dir(dir, msg, cap);
		if (o->dirfd < 0) {
			int e = o->dirfd;
			if (e != -EPERM && e != -EAGAIN)
				fail_msg(msg, cap, path, e); /* named as the caller named it */
			return e;
		}
		snprintf(o->name, sizeof o->name, "%s", base);
		if (fstatat(o->dirfd, o->name, &o->st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				return fail_msg(msg, cap, cur, -errno);
			memset(&o->st, 0, sizeof o->st);
			return out_judge(o, msg, cap);
		}
		if (!S_ISLNK(o->st.st_mode))
			return out_judge(o, msg, cap);
		int e = check_link_at(o->dirfd, cur, &o->st, msg, cap);
		if (e < 0)
			return e;
		char to[PATH_MAX], next[2 * PATH_MAX];
		ssize_t l = readlinkat(o->dirfd, o->name, to, sizeof to - 1);
		if (l < 0)
			return fail_msg(msg, cap, cur, -errno);
		to[l] = 0;
		if (to[0] != '/' && strchr(to, ':') && strncmp(cur, "/proc/", 6) == 0) { // layers: a user's path
			/* a /proc/PID/fd magic link to a pipe or socket: only the
			 * kernel can open it, through the link itself */
			int fd = openat(o->dirfd, o->name, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
			if (fd < 0)
				return fail_msg(msg, cap, path, -errno);
			o->fd = fd;
			o->owned_nb = true;
			if (fstat(fd, &o->st) < 0 || S_ISREG(o->st.st_mode) || S_ISBLK(o->st.st_mode)) {
				close(fd);
				o->fd = -1;
				return fail_msg(msg, cap, path, S_ISBLK(o->st.st_mode) ? -ENOTSUP : -EPERM);
			}
			o->type = o->st.st_mode & S_IFMT;
			o->stream = true;
			return 0;
		}
		int w = to[0] == '/' ? snprintf(next, sizeof next, "%s", to) : snprintf(next, sizeof next, "%s/%s", dir, to);
		if (w < 0 || (size_t)w >= sizeof cur)
			return fail_msg(msg, cap, path, -ENAMETOOLONG);
		memcpy(cur, next, (size_t)w + 1);
	}
}

/* sp_out_resolve, a symbolic link at the end refused (-ELOOP) */
static int resolve_nolink(struct sp_out *o, const char *path, char *msg, size_t cap)
{
	out_init(o, path);
	if (strcmp(path, "-") != 0 && own_fd(path) < 0) {
		char dir[PATH_MAX];
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		struct stat st;
		if (dir_of(path, dir, sizeof dir) == 0 && *base && strlen(base) < sizeof o->name) {
			int dfd = open_dir(dir, msg, cap);
			int r = dfd >= 0 ? fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) : -1;
			if (dfd >= 0)
				close(dfd);
			if (r == 0 && S_ISLNK(st.st_mode)) {
				say(msg, cap, "'%s' is a symbolic link: not following it (name the file itself)", path);
				return -ELOOP;
			}
		}
	}
	return sp_out_resolve(o, path, msg, cap);
}

/* what a stream's reader takes now (or within wait_ms, -1: no limit) of
 * data: bytes written, or -errno (-EINTR: a signal came while waiting) */
static ssize_t push(struct sp_out *o, const char *data, size_t n, int wait_ms)
{
	size_t done = 0;
	double until = wait_ms > 0 ? sp_out_now() + wait_ms / 1000.0 : 0;
	while (done < n) {
		size_t chunk = n - done;
		bool ready = o->owned_nb || S_ISREG(o->type);
		if (!ready) {
			/* a shared description (standard output): its flags are not
			 * ours to change; poll, then at most PIPE_BUF, which a pipe
			 * that says writable takes without blocking */
			struct pollfd pf = { .fd = o->fd, .events = POLLOUT };
			int r = poll(&pf, 1, 0);
			if (r < 0 && errno != EINTR)
				return -errno;
			if (r > 0 && (pf.revents & (POLLERR | POLLNVAL)))
				return -EPIPE;
			ready = r > 0;
			if (chunk > PIPE_BUF)
				chunk = PIPE_BUF;
		}
		if (ready) {
			ssize_t w = write(o->fd, data + done, chunk);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0 && errno != EAGAIN)
				return done ? (ssize_t)done : -errno;
			if (w > 0) {
				done += (size_t)w;
				if (wait_ms > 0)
					until = sp_out_now() + wait_ms / 1000.0; /* progress: the reader reads */
				continue;
			}
		}
		/* the reader is not taking more */
		double left = until - sp_out_now();
		if (wait_ms <= 0 || left <= 0)
			break;
		struct pollfd pf = { .fd = o->fd, .events = POLLOUT };
		int r = poll(&pf, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			return done ? (ssize_t)done : -EINTR;
	}
	return (ssize_t)done;
}

/* a stream opened in place: no O_CREAT, no O_TRUNC, never a hang */
static int open_stream(struct sp_out *o, char *msg, size_t cap)
{
	int fd;
	if (S_ISSOCK(o->type)) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		/* connect by the held folder, not by the path a user may swap */
		int w = snprintf(a.sun_path, sizeof a.sun_path, "/proc/self/fd/%d/%s", o->dirfd, o->name); // layers: a user's path
		if (w < 0 || (size_t)w >= sizeof a.sun_path)
			return fail_msg(msg, cap, o->path, -ENAMETOOLONG);
		fd = -1;
		int e = -EPROTOTYPE;
		const int types[2] = { SOCK_STREAM, SOCK_DGRAM };
		for (int i = 0; i < 2 && fd < 0; i++) {
			fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
			if (fd < 0)
				return fail_msg(msg, cap, o->path, -errno);
			if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
				e = -errno;
				close(fd);
				fd = -1;
				if (e != -EPROTOTYPE)
					return fail_msg(msg, cap, o->path, e);
			}
		}
		if (fd < 0)
			return fail_msg(msg, cap, o->path, e);
	} else {
		fd = openat(o->dirfd, o->name, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
		if (fd < 0) {
			int e = -errno;
			if (e == -ENXIO && S_ISFIFO(o->type))
				say(msg, cap, "'%s' is a FIFO with no reader: nothing written", o->path);
			else
				fail_msg(msg, cap, o->path, e);
			return e;
		}
		struct stat st;
		if (fstat(fd, &st) < 0 || (st.st_mode & S_IFMT) != o->type || st.st_rdev != o->st.st_rdev) {
			close(fd);
			say(msg, cap, "'%s' changed while it was being opened: nothing written", o->path);
			return -EAGAIN;
		}
	}
	o->fd = fd;
	o->owned_nb = true;
	return 0;
}

static void out_drop_dir(struct sp_out *o)
{
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->dirfd = -1;
}

int sp_out_open(struct sp_out *o, const char *path, int how, mode_t mode, char *msg, size_t cap)
{
	bool nolink = how & SP_OUT_NOLINK;
	how &= ~SP_OUT_NOLINK;
	for (int tries = 0;; tries++) {
		int e = nolink ? resolve_nolink(o, path, msg, cap) : sp_out_resolve(o, path, msg, cap);
		if (e < 0) {
			out_drop_dir(o);
			return e;
		}
		if (o->fd >= 0)
			return 0; /* standard output, a descriptor of ours, a magic link */
		if (o->stream) {
			e = open_stream(o, msg, cap);
			if (e < 0)
				out_drop_dir(o);
			return e;
		}
		if (how == SP_OUT_EXCL && o->type) {
			out_drop_dir(o);
			return -EEXIST;
		}
		/* a new name: O_EXCL (it is ours); an old one: the very inode looked at */
		int fl = O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (o->type ? 0 : O_CREAT | O_EXCL);
		int fd = openat(o->dirfd, o->name, fl, mode);
		if (fd < 0 && errno == EEXIST && how != SP_OUT_EXCL && tries < 3) {
			out_drop_dir(o);
			continue; /* made meanwhile: look again */
		}
		if (fd < 0) {
			e = -errno;
			if (how != SP_OUT_EXCL || e != -EEXIST)
				fail_msg(msg, cap, path, e == -ELOOP ? -EAGAIN : e);
			out_drop_dir(o);
			return e;
		}
		struct stat st;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
		    (o->type && (st.st_dev != o->st.st_dev || st.st_ino != o->st.st_ino))) {
			close(fd);
			out_drop_dir(o);
			say(msg, cap, "'%s' changed while it was being opened: nothing written", path);
			return -EAGAIN;
		}
		if (how == SP_OUT_TRUNC && o->type && ftruncate(fd, 0) < 0) {
			e = -errno;
			close(fd);
			out_drop_dir(o);
			return fail_msg(msg, cap, path, e);
		}
		o->st = st;
		o->type = S_IFREG;
		o->fd = fd;
		return 0;
	}
}

int sp_out_write(struct sp_out *o, const void *rec, size_t len)
{
	if (o->fd < 0)
		return -EBADF;
	o->cut = false;
	if (!o->stream) {
		size_t done = 0;
		while (done < len) {
			ssize_t w = write(o->fd, (const char *)rec + done, len - done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				o->cut = done > 0;
				return w < 0 ? -errno : -ENOSPC;
			}
			done += (size_t)w;
		}
		return 0;
	}
	/* a stream: what is held goes first; a record never waits */
	if (o->blen) {
		ssize_t w = push(o, o->buf, o->blen, 0);
		if (w < 0)
			return (int)w;
		memmove(o->buf, o->buf + w, o->blen - (size_t)w);
		o->blen -= (size_t)w;
	}
	size_t at = 0;
	if (o->blen == 0) {
		ssize_t w = push(o, rec, len, 0);
		if (w < 0)
			return (int)w;
		at = (size_t)w;
	}
	if (at == len)
		return 0;
	if (len - at > sizeof o->buf - o->blen) {
		/* a reader that stopped reading: the record is dropped, whole
		 * unless it was begun (then its end is cut: the next row starts
		 * on a new line, as after a failed write) */
		o->dropped++;
		o->cut = at > 0;
		return -EAGAIN;
	}
	memcpy(o->buf + o->blen, (const char *)rec + at, len - at);
	o->blen += len - at;
	return 0;
}

/* Whole files beside the name: a temp name in the held folder. */
static int make_temp(struct sp_out *o, char *tmp, size_t n)
{
	static _Atomic unsigned long seq;
	for (int i = 0; i < 100; i++) {
		int w = strlen(o->name) + 30 <= NAME_MAX
				? (i == 0 ? snprintf(tmp, n, "%s.tmp.%ld", o->name, (long)getpid())
					  : snprintf(tmp, n, "%s.tmp.%ld.%lu", o->name, (long)getpid(), ++seq))
				: snprintf(tmp, n, ".sparkops.tmp.%ld.%lu", (long)getpid(), ++seq);
		if (w < 0 || (size_t)w >= n)
			return -ENAMETOOLONG;
		int fd = openat(o->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

static int replace_regular(struct sp_out *o, const void *data, size_t len, mode_t mode, bool keep)
{
	char tmp[NAME_MAX + 1];
	int fd = make_temp(o, tmp, sizeof tmp);
	if (fd < 0)
		return fd;
	const struct stat *old = o->type ? &o->st : NULL;
	mode_t want = old ? (old->st_mode & 0777) : (mode & 0777);
	int err = 0;
	/* root replacing another user's file: the new one stays theirs (owner
	 * and group), as an editor's save does; on the file we just created */
	if (old && geteuid() == 0 && (old->st_uid != 0 || old->st_gid != getegid()) &&
	    fchown(fd, old->st_uid, old->st_gid) < 0)
		err = -errno;
	/* fchmod on the file we just created, never on one we found */
	if (!err && (fchmod(fd, want) < 0 || (len && sp_write_full(fd, data, len) < 0) || fsync(fd) < 0))
		err = -errno;
	if (!err && renameat(o->dirfd, tmp, o->dirfd, o->name) < 0)
		err = -errno;
	if (err) {
		close(fd);
		unlinkat(o->dirfd, tmp, 0);
		return err;
	}
	if (keep) {
		o->fd = fd;
		o->type = S_IFREG;
		fstat(fd, &o->st);
		return 0;
	}
	return close(fd) < 0 && errno != EINTR ? -errno : 0;
}

int sp_out_replace(struct sp_out *o, const void *data, size_t len, mode_t mode, double stall_s, bool keep, char *msg,
		   size_t cap)
{
	if (msg && cap)
		msg[0] = 0;
	if (!o->stream) {
		if (o->dirfd < 0)
			return fail_msg(msg, cap, o->path, -EBADF);
		int e = replace_regular(o, data, len, mode, keep);
		return e < 0 ? fail_msg(msg, cap, o->path, e) : 0;
	}
	bool opened = false;
	if (o->fd < 0) {
		int e = open_stream(o, msg, cap);
		if (e < 0)
			return e;
		opened = true;
	}
	ssize_t w = push(o, data, len, (int)(stall_s * 1000));
	int e = 0;
	if (w < 0)
		e = (int)w;
	else if ((size_t)w < len)
		e = -ETIMEDOUT;
	if (opened && !keep) {
		close(o->fd);
		o->fd = -1;
	}
	const char *who = strcmp(o->path, "-") == 0 ? "standard output" : o->path;
	if (e == -ETIMEDOUT)
		say(msg, cap, "'%s': the reader stopped reading (%zu of %zu bytes taken in %gs): the rest is dropped", who,
		    (size_t)w, len, stall_s);
	else if (e == -EINTR)
		say(msg, cap, "'%s': interrupted while the reader was slow: the rest is dropped", who);
	else if (e < 0)
		fail_msg(msg, cap, who, e);
	return e;
}

int sp_out_rewrite(struct sp_out *o, const void *data, size_t len)
{
	if (o->fd < 0 || o->stream)
		return -EBADF;
	ssize_t w = pwrite(o->fd, data, len, 0);
	if (w != (ssize_t)len)
		return w < 0 ? -errno : -EIO;
	if ((off_t)len < o->st.st_size && ftruncate(o->fd, (off_t)len) < 0)
		return -errno;
	o->st.st_size = (off_t)len;
	return 0;
}

void sp_out_unlink(struct sp_out *o)
{
	if (o->dirfd >= 0 && o->name[0])
		unlinkat(o->dirfd, o->name, 0);
}

void sp_out_close(struct sp_out *o, double wait_s)
{
	if (o->fd >= 0 && o->stream && o->blen) {
		ssize_t w = push(o, o->buf, o->blen, (int)(wait_s * 1000));
		size_t from = w > 0 ? (size_t)w : 0;
		long rows = 0;
		for (size_t i = from; i < o->blen; i++)
			rows += o->buf[i] == '\n';
		o->dropped += rows ? rows : from < o->blen;
		o->blen = 0;
	}
	if (o->fd >= 0 && !o->borrowed)
		close(o->fd);
	o->fd = -1;
	out_drop_dir(o);
}

long sp_out_dropped(const struct sp_out *o)
{
	return o->dropped;
}

void sp_out_walk_only(bool on)
{
	no_openat2 = on;
}

int sp_write_output(const char *path, const void *data, size_t len, mode_t mode, char *msg, size_t cap)
{
	struct sp_out *o = malloc(sizeof *o);
	if (!o)
		return fail_msg(msg, cap, path, -ENOMEM);
	int e = sp_out_resolve(o, path, msg, cap);
	if (e == 0)
		e = sp_out_replace(o, data, len, mode, SP_OUT_STALL_S, false, msg, cap);
	sp_out_close(o, 0);
	free(o);
	return e;
}

int sp_write_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	return sp_write_output(path, data, len, mode, NULL, 0);
}

int sp_out_distinct(const char *what_a, const char *a, const char *what_b, const char *b, char *msg, size_t cap)
{
	if (!a || !b)
		return 0;
	bool da = strcmp(a, "-") == 0, db = strcmp(b, "-") == 0;
	if (da || db) {
		if (!(da && db))
			return 0;
		say(msg, cap, "%s and %s both name standard output: one would garble the other", what_a, what_b);
		return -1;
	}
	if (!sp_same_file(a, b))
		return 0;
	struct stat st;
	if (stat(a, &st) == 0 && S_ISCHR(st.st_mode))
		return 0; /* /dev/null twice: nothing is lost */
	say(msg, cap, "%s '%s' and %s '%s' are the same file: one would replace the other", what_a, a, what_b, b);
	return -1;
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
