// SPDX-License-Identifier: MIT
/* Files a sample reads every time, kept open. See kept.h. */
#include "probe/kept.h"
#include "util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

/* the kernel's own files, whose every read at offset 0 is made afresh */
#define PROC_MAGIC 0x9fa0
#define SYSFS_MAGIC 0x62656572
#define CGROUP1_MAGIC 0x27e0eb
#define CGROUP2_MAGIC 0x63677270

static struct {
	pthread_mutex_t mu;
	int n;
	struct {
		uint64_t hash;
		int fd;
		char path[SP_KEPT_PATH_MAX];
	} e[SP_KEPT_MAX];
} kept = { .mu = PTHREAD_MUTEX_INITIALIZER };

static uint64_t hash(const char *s, size_t *len)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	const char *p = s;
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	*len = (size_t)(p - s);
	return h;
}

bool sp_kept_kernel_fs(int fd)
{
	struct statfs f;
	if (fstatfs(fd, &f) < 0)
		return false;
	unsigned long t = (unsigned long)f.f_type;
	return t == PROC_MAGIC || t == SYSFS_MAGIC || t == CGROUP1_MAGIC || t == CGROUP2_MAGIC;
}

/* A kernel file whose first read came back short and under half a page has
 * been read whole: procfs, sysfs and cgroupfs make a read with seq_file,
 * which fills the caller's buffer with every record that fits its own page
 * (a single-record file, such as meminfo, PSI or a cgroup's files, whole),
 * and stops short only when the next record would overflow that page. So the
 * read that would answer 0 (end of file) is skipped: half of a sample's
 * system calls. A longer answer is read on to the end as before. */
#define SHORT_IS_WHOLE 2048u

/* the whole file from offset 0, as sp_read_file reads it: 0 or -errno */
static int read_from_start(int fd, char *buf, size_t cap, size_t *len, bool kernel)
{
	size_t got = 0;
	while (got < cap - 1) {
		ssize_t r = pread(fd, buf + got, cap - 1 - got, (off_t)got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN && sp_fd_blocking(fd))
				continue;
			if (got)
				break; /* as sp_read_full: what was read */
			return -errno;
		}
		if (r == 0)
			break;
		got += (size_t)r;
		if (kernel && got == (size_t)r && got < cap - 1 && got <= SHORT_IS_WHOLE)
			break;
	}
	buf[got] = 0;
	if (len)
		*len = got;
	return 0;
}

static void drop(int i)
{
	close(kept.e[i].fd);
	kept.e[i] = kept.e[--kept.n];
}

int sp_kept_read(const char *path, char *buf, size_t cap, size_t *len)
{
	if (cap == 0)
		return -EINVAL;
	buf[0] = 0;
	if (len)
		*len = 0;
	size_t pl;
	uint64_t h = hash(path, &pl);
	if (pl >= SP_KEPT_PATH_MAX)
		return sp_read_file(path, buf, cap, len);
	pthread_mutex_lock(&kept.mu);
	for (int i = 0; i < kept.n; i++) {
		if (kept.e[i].hash != h || strcmp(kept.e[i].path, path) != 0)
			continue;
		int r = read_from_start(kept.e[i].fd, buf, cap, len, true);
		if (r == 0) {
			pthread_mutex_unlock(&kept.mu);
			return 0;
		}
		/* gone (a removed cgroup or device answers ENODEV) or failing: a
		 * fresh open below says which, and is kept again if it reads */
		drop(i);
		break;
	}
	int fd = sp_open_proc(path, O_RDONLY);
	if (fd < 0) {
		pthread_mutex_unlock(&kept.mu);
		return fd;
	}
	bool kernel = sp_kept_kernel_fs(fd);
	int r = read_from_start(fd, buf, cap, len, kernel);
	if (r == 0 && kept.n < SP_KEPT_MAX && kernel) {
		kept.e[kept.n].hash = h;
		kept.e[kept.n].fd = fd;
		memcpy(kept.e[kept.n].path, path, pl + 1);
		kept.n++;
	} else {
		close(fd);
	}
	pthread_mutex_unlock(&kept.mu);
	return r;
}

int sp_kept_i64(const char *path, int64_t *out)
{
	char buf[64];
	int r = sp_kept_read(path, buf, sizeof buf, NULL);
	if (r < 0)
		return r;
	return sp_parse_i64(buf, out);
}

int sp_kept_count(void)
{
	pthread_mutex_lock(&kept.mu);
	int n = kept.n;
	pthread_mutex_unlock(&kept.mu);
	return n;
}

void sp_kept_close(void)
{
	pthread_mutex_lock(&kept.mu);
	while (kept.n > 0)
		drop(kept.n - 1);
	pthread_mutex_unlock(&kept.mu);
}
