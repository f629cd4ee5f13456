// SPDX-License-Identifier: MIT
/* Eviction without root. See evict.h. */
#define _FILE_OFFSET_BITS 64
#include "probe/evict.h"
#include "probe/jobtree.h"
#include "probe/pool.h"
#include "probe/unexplained.h"
#include "util/pagesize.h"
#include "util/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define WINDOW (1ULL << 30)
#define MAX_DEPTH 64

void sp_evict_init(struct sp_evict *e, bool any_owner)
{
	memset(e, 0, sizeof *e);
	e->any_owner = any_owner;
	e->uid = geteuid();
}

int64_t sp_resident_bytes(int fd, uint64_t size)
{
	static unsigned char vec[WINDOW / 4096]; /* one byte a page; 4 KiB pages at most this many */
	uint64_t page = sp_page_size();
	uint64_t resident = 0;
	for (uint64_t off = 0; off < size; off += WINDOW) {
		uint64_t len = size - off < WINDOW ? size - off : WINDOW;
		void *m = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, (off_t)off);
		if (m == MAP_FAILED)
			return -errno;
		uint64_t pages = (len + page - 1) / page;
		if (pages > sizeof vec || mincore(m, (size_t)len, vec) < 0) {
			int err = pages > sizeof vec ? -E2BIG : -errno;
			munmap(m, (size_t)len);
			return err;
		}
		for (uint64_t i = 0; i < pages; i++)
			if (vec[i] & 1)
				resident += page;
		munmap(m, (size_t)len);
	}
	return resident > size ? (int64_t)size : (int64_t)resident;
}

bool sp_residency_visible(const struct stat *st)
{
	uid_t u = geteuid();
	if (u == 0 || st->st_uid == u)
		return true;
	bool in_group = st->st_gid == getegid();
	if (!in_group) {
		gid_t gs[256];
		int n = getgroups((int)(sizeof gs / sizeof gs[0]), gs);
		for (int i = 0; i < n && !in_group; i++)
			in_group = gs[i] == st->st_gid;
	}
	return (st->st_mode & (in_group ? S_IWGRP : S_IWOTH)) != 0;
}

static bool seen(struct sp_evict *e, dev_t dev, ino_t ino)
{
	for (int i = 0; i < e->nseen; i++)
		if (e->seen_dev[i] == dev && e->seen_ino[i] == ino)
			return true;
	if (e->nseen < SP_EVICT_SEEN_MAX) {
		e->seen_dev[e->nseen] = dev;
		e->seen_ino[e->nseen] = ino;
		e->nseen++;
	}
	return false;
}

static void error(struct sp_evict *e, int err)
{
	e->errors++;
	if (!e->first_errno)
		e->first_errno = err;
}

/* An open file: judged, measured, advised, measured again. */
static void evict_fd(struct sp_evict *e, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		error(e, errno);
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		e->not_regular++;
		return;
	}
	if (seen(e, st.st_dev, st.st_ino))
		return;
	uint64_t size = (uint64_t)st.st_size;
	/* mincore on a file the caller cannot write says "all resident": no measure */
	bool visible = sp_residency_visible(&st);
	if (!e->any_owner && st.st_uid != e->uid) {
		e->not_owned++;
		if (!visible) {
			e->not_owned_unknown++;
			return;
		}
		int64_t r = size ? sp_resident_bytes(fd, size) : 0;
		if (r > 0)
			e->not_owned_resident += (uint64_t)r;
		return;
	}
	int64_t before = size && visible ? sp_resident_bytes(fd, size) : 0;
	/* dirty pages are not dropped: write them out first (as the flush's sync does) */
	if (fdatasync(fd) < 0 && errno != EINVAL && errno != EROFS)
		error(e, errno);
	int err = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (err) {
		error(e, err);
		return;
	}
	int64_t after = size && visible ? sp_resident_bytes(fd, size) : 0;
	e->files++;
	e->bytes += size;
	if (!visible) {
		e->unknown_files++;
		e->unknown_bytes += size;
	}
	if (before > 0)
		e->resident_before += (uint64_t)before;
	if (after > 0)
		e->resident_after += (uint64_t)after;
}

/* a regular file by its path (no symlink followed: O_NOFOLLOW; O_NONBLOCK so
 * a FIFO that slipped in never blocks the open) */
static void evict_at(struct sp_evict *e, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == ELOOP)
			e->symlinks++;
		else
			error(e, errno);
		return;
	}
	evict_fd(e, fd);
	close(fd);
}

static void walk(struct sp_evict *e, int dfd, int depth)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		error(e, errno);
		close(dfd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			error(e, errno);
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			e->symlinks++; /* never followed: it may lead out of the tree */
		} else if (S_ISDIR(st.st_mode)) {
			if (depth >= MAX_DEPTH) {
				error(e, ELOOP);
				continue;
			}
			int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				error(e, errno);
			else
				walk(e, sub, depth + 1);
		} else if (S_ISREG(st.st_mode)) {
			evict_at(e, dirfd(d), de->d_name);
		} else {
			e->not_regular++;
		}
	}
	closedir(d);
}

int sp_evict_path(struct sp_evict *e, const char *path)
{
	struct stat st;
	/* the path given is followed (the user named it); nothing under it is */
	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode)) {
		int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		walk(e, fd, 0);
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		e->not_regular++;
		return 0;
	}
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	evict_fd(e, fd);
	close(fd);
	return 0;
}

int sp_evict_pid(struct sp_evict *e, pid_t pid)
{
	char path[128];
	snprintf(path, sizeof path, SP_LIVE_PROC "/%d/fd", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		/* opening /proc/PID/fd/N opens the file itself (for the same user) */
		int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			continue; /* a socket, a pipe, gone, or not ours */
		evict_fd(e, fd);
		close(fd);
	}
	closedir(d);
	/* mapped files (an mmapped checkpoint whose fd was closed) */
	snprintf(path, sizeof path, SP_LIVE_PROC "/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	char line[4608];
	char last[4096] = "";
	while (fgets(line, sizeof line, f)) {
		/* addr perms offset dev inode path */
		char *p = line;
		for (int k = 0; k < 5 && p; k++) {
			p = strchr(p, ' ');
			while (p && *p == ' ')
				p++;
		}
		if (!p || *p != '/')
			continue;
		p[strcspn(p, "\n")] = 0;
		size_t l = strlen(p);
		if (l > 10 && strcmp(p + l - 10, " (deleted)") == 0)
			continue;
		if (strcmp(p, last) == 0)
			continue;
		snprintf(last, sizeof last, "%s", p);
		int fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			continue;
		evict_fd(e, fd);
		close(fd);
	}
	fclose(f);
	return 0;
}

/* ---- orphaned /dev/shm files --------------------------------------------------------- */

static const struct {
	const char *key, *text;
} shm_refusals[] = {
	[SP_SHM_REMOVED] = { "removed", "removed" },
	[SP_SHM_BAD_NAME] = { "bad_name", "not a plain file name (no '/', not . or ..)" },
	[SP_SHM_NO_FOLDER] = { "no_folder", "the /dev/shm folder cannot be opened" },
	[SP_SHM_MISSING] = { "missing", "no such file in /dev/shm" },
	[SP_SHM_SYMLINK] = { "symlink", "a symlink (not followed, not removed)" },
	[SP_SHM_NOT_REGULAR] = { "not_regular", "not a regular file" },
	[SP_SHM_HELD] = { "held", "a process maps it or holds it open" },
	[SP_SHM_CANNOT_TELL] = { "cannot_tell", "cannot tell who holds it: some process's maps or open files could not be read" },
	[SP_SHM_CHANGED] = { "changed", "another file took its place while it was checked" },
	[SP_SHM_UNLINK_FAILED] = { "unlink_failed", "the removal failed" },
};

const char *sp_shm_refusal_text(enum sp_shm_refusal r)
{
	return (unsigned)r < sizeof shm_refusals / sizeof shm_refusals[0] ? shm_refusals[r].text : "?";
}

const char *sp_shm_refusal_key(enum sp_shm_refusal r)
{
	return (unsigned)r < sizeof shm_refusals / sizeof shm_refusals[0] ? shm_refusals[r].key : "?";
}

void sp_shm_remove(const char *name, struct sp_shm_removal *out)
{
	memset(out, 0, sizeof *out);
	if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	    strlen(name) >= sizeof ((struct sp_shmfile *)0)->name) {
		out->r = SP_SHM_BAD_NAME;
		return;
	}
	char dir[600];
	sp_devshm_path(dir, sizeof dir);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		out->r = SP_SHM_NO_FOLDER;
		out->err = errno;
		return;
	}
	struct stat st, again;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		out->r = errno == ENOENT ? SP_SHM_MISSING : SP_SHM_UNLINK_FAILED;
		out->err = errno;
		goto done;
	}
	out->size = (uint64_t)st.st_size;
	out->resident = (uint64_t)st.st_blocks * 512u;
	out->uid = (unsigned)st.st_uid;
	if (S_ISLNK(st.st_mode)) {
		out->r = SP_SHM_SYMLINK;
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		out->r = SP_SHM_NOT_REGULAR;
		goto done;
	}
	int holder = 0;
	int e = sp_devshm_holder(name, &holder);
	if (holder) {
		out->r = SP_SHM_HELD;
		out->holder = holder;
		goto done;
	}
	if (e < 0) {
		out->r = SP_SHM_CANNOT_TELL;
		goto done;
	}
	if (fstatat(dfd, name, &again, AT_SYMLINK_NOFOLLOW) < 0 || again.st_dev != st.st_dev ||
	    again.st_ino != st.st_ino || !S_ISREG(again.st_mode)) {
		out->r = SP_SHM_CHANGED;
		goto done;
	}
	if (unlinkat(dfd, name, 0) < 0) {
		out->r = SP_SHM_UNLINK_FAILED;
		out->err = errno;
		goto done;
	}
	out->r = SP_SHM_REMOVED;
done:
	close(dfd);
}
