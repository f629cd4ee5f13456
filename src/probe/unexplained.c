// SPDX-License-Identifier: MIT
/* The memory nobody holds, and /dev/shm's files nobody maps. */
#include "probe/unexplained.h"
#include "probe/container.h"
#include "util/dirscan.h"
#include "util/paths.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void sp_unexplained_compute(const struct sp_sample *s, const struct sp_devshm *shm, struct sp_unexplained *u)
{
	memset(u, 0, sizeof *u);
	u->used.why = u->anon.why = u->unexplained.why = SP_MISSING;
	const struct sp_meminfo *m = &s->mem;
	if (m->why != SP_OK) {
		u->used.why = u->anon.why = u->unexplained.why = m->why;
		return;
	}
	/* a discrete GPU's memory is its own, not the pool's */
	u->gpu_in_pool = sp_sample_is_uma(s);
	for (int i = 0; i < s->nprocs && u->gpu_in_pool; i++) {
		const struct sp_proc *p = &s->procs[i];
		if (sp_ok(p->gpu_mem.why)) {
			u->gpu += p->gpu_mem.v;
			u->gpu_known++;
			if (p->kind == SP_PROC_GPU && !p->comm[0]) { /* sp_proc_ensure found no /proc entry */
				u->driver_pids++;
				u->driver_bytes += p->gpu_mem.v;
			}
		} else {
			u->gpu_unknown++;
		}
	}
	u->mlocked = sp_mi_has(m, SP_MI_MLOCKED) ? m->v[SP_MI_MLOCKED] : 0;
	u->hugetlb = sp_mi_has(m, SP_MI_HUGETLB) ? m->v[SP_MI_HUGETLB] : 0;
	if (sp_mi_has(m, SP_MI_HUGE_FREE) && sp_mi_has(m, SP_MI_HUGE_SIZE))
		u->hugetlb_free = m->v[SP_MI_HUGE_FREE] * m->v[SP_MI_HUGE_SIZE];
	static const enum sp_mi need[] = { SP_MI_TOTAL, SP_MI_FREE, SP_MI_BUFFERS, SP_MI_CACHED, SP_MI_SHMEM };
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
		if (!sp_mi_has(m, need[i]))
			return;
	uint64_t out = m->v[SP_MI_FREE] + m->v[SP_MI_BUFFERS] + m->v[SP_MI_CACHED];
	u->shmem = m->v[SP_MI_SHMEM];
	if (out - u->shmem > m->v[SP_MI_TOTAL] || u->shmem > out) {
		u->used.why = u->unexplained.why = SP_IMPLAUSIBLE;
		return;
	}
	u->used.v = m->v[SP_MI_TOTAL] - (out - u->shmem);
	u->used.why = SP_OK;
	if (!sp_mi_has(m, SP_MI_ANON_PAGES))
		return;
	u->anon.v = m->v[SP_MI_ANON_PAGES];
	u->anon.why = SP_OK;
	if (sp_mi_has(m, SP_MI_SRECLAIMABLE) && sp_mi_has(m, SP_MI_SUNRECLAIM))
		u->kernel += m->v[SP_MI_SRECLAIMABLE] + m->v[SP_MI_SUNRECLAIM];
	else
		u->kernel_missing |= 1u;
	static const enum sp_mi kern[] = { SP_MI_PAGE_TABLES, SP_MI_KERNEL_STACK, SP_MI_VMALLOC_USED };
	for (size_t i = 0; i < sizeof kern / sizeof kern[0]; i++) {
		if (sp_mi_has(m, kern[i]))
			u->kernel += m->v[kern[i]];
		else
			u->kernel_missing |= 2u << i;
	}
	if (shm && shm->why == SP_OK && shm->holders_known)
		u->shmem_orphan = shm->orphan_resident < u->shmem ? shm->orphan_resident : u->shmem;
	uint64_t held = u->anon.v + (u->shmem - u->shmem_orphan) + u->kernel;
	uint64_t left = u->used.v > held ? u->used.v - held : 0;
	u->gpu_overlap = u->gpu > left;
	u->unexplained.v = u->gpu_overlap ? 0 : left - u->gpu;
	u->unexplained.why = SP_OK;
}

/* ---- /dev/shm ------------------------------------------------------------------------ */

static int cmp_shm(const struct sp_shmfile *a, const struct sp_shmfile *b)
{
	if (a->resident != b->resident)
		return a->resident < b->resident ? 1 : -1;
	if (a->size != b->size)
		return a->size < b->size ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* keep the largest SP_SHM_MAX, in order */
static void shm_put(struct sp_devshm *d, const struct sp_shmfile *f)
{
	int at = d->n;
	while (at > 0 && cmp_shm(f, &d->f[at - 1]) < 0)
		at--;
	if (at >= SP_SHM_MAX)
		return;
	int last = d->n < SP_SHM_MAX ? d->n : SP_SHM_MAX - 1;
	memmove(&d->f[at + 1], &d->f[at], (size_t)(last - at) * sizeof d->f[0]);
	d->f[at] = *f;
	if (d->n < SP_SHM_MAX)
		d->n++;
}

/* a maps line's path is "/dev/shm/NAME": the listed file it names, or -1 */
static int shm_index(const struct sp_devshm *d, const char *path, size_t n)
{
	static const char pre[] = "/dev/shm/";
	if (n <= sizeof pre - 1 || memcmp(path, pre, sizeof pre - 1) != 0)
		return -1;
	path += sizeof pre - 1;
	n -= sizeof pre - 1;
	for (int i = 0; i < d->n; i++)
		if (strlen(d->f[i].name) == n && memcmp(d->f[i].name, path, n) == 0)
			return i;
	return -1;
}

static void mark(struct sp_devshm *d, int i, int pid)
{
	if (i >= 0 && !d->f[i].holder)
		d->f[i].holder = pid;
}

static void map_line(struct sp_devshm *d, const char *l, size_t n, int pid)
{
	const char *slash = memchr(l, '/', n);
	if (slash)
		mark(d, shm_index(d, slash, (size_t)(l + n - slash)), pid);
}

/* one process's maps, streamed a chunk at a time (a line's path is its last
 * field); -1 when it cannot be read for want of permission */
static int scan_maps(int pdfd, const char *pid_s, int pid, struct sp_devshm *d)
{
	char rel[48];
	snprintf(rel, sizeof rel, "%s/maps", pid_s);
	int fd = openat(pdfd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno == EACCES || errno == EPERM ? -1 : 0;
	char buf[16384];
	size_t have = 0;
	for (;;) {
		ssize_t r = read(fd, buf + have, sizeof buf - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		size_t len = have + (size_t)r, start = 0;
		char *nl;
		while ((nl = memchr(buf + start, '\n', len - start))) {
			map_line(d, buf + start, (size_t)(nl - buf) - start, pid);
			start = (size_t)(nl - buf) + 1;
		}
		have = len - start;
		if (have == sizeof buf) /* a line longer than the buffer: dropped */
			have = 0;
		memmove(buf, buf + start, have);
	}
	if (have)
		map_line(d, buf, have, pid);
	close(fd);
	return 0;
}

/* one process's open files: /proc/PID/fd/N links that name /dev/shm/NAME */
static int scan_fds(int pdfd, const char *pid_s, int pid, struct sp_devshm *d)
{
	char rel[48], path[700];
	snprintf(rel, sizeof rel, "%s/fd", pid_s);
	int fdd = openat(pdfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fdd < 0)
		return errno == EACCES || errno == EPERM ? -1 : 0;
	struct sp_dir dir;
	sp_proc_path(path, sizeof path, "%s/fd", pid_s);
	if (sp_dir_open(&dir, path) == 0) {
		const char *n;
		while ((n = sp_dir_next(&dir))) {
			char t[256];
			ssize_t l = readlinkat(fdd, n, t, sizeof t - 1);
			if (l > 0)
				mark(d, shm_index(d, t, (size_t)l), pid);
		}
		sp_dir_close(&dir);
	}
	close(fdd);
	return 0;
}

/* who holds d's files: every process's maps and fds (a pid we cannot read is
 * one whose holding we do not know: false, and then no file is called an orphan) */
static bool scan_holders(struct sp_devshm *d)
{
	struct sp_dir pd;
	const char *n;
	bool complete = true;
	if (d->n > 0 && sp_dir_open(&pd, sp_procfs()) == 0) {
		while ((n = sp_dir_next(&pd))) {
			if (!isdigit((unsigned char)n[0]))
				continue;
			int pid = 0;
			for (const char *c = n; *c && pid < 100000000; c++)
				pid = isdigit((unsigned char)*c) ? pid * 10 + (*c - '0') : -1;
			if (pid <= 0)
				continue;
			if (scan_maps(pd.fd, n, pid, d) < 0 || scan_fds(pd.fd, n, pid, d) < 0)
				complete = false;
		}
		sp_dir_close(&pd);
	} else if (d->n > 0) {
		complete = false;
	}
	return complete;
}

void sp_devshm_path(char *buf, size_t n)
{
	const char *root = sp_host_root();
	snprintf(buf, n, "%s%sdev/shm", root, strcmp(root, "/") == 0 ? "" : "/");
}

void sp_devshm_read(struct sp_devshm *d)
{
	memset(d, 0, sizeof *d);
	char dir[600];
	sp_devshm_path(dir, sizeof dir);
	struct sp_dir sd;
	int r = sp_dir_open(&sd, dir);
	if (r < 0) {
		d->why = sp_why_from_errno(r);
		return;
	}
	/* the largest SP_SHM_MAX files are listed and looked up; the orphans' total is theirs */
	const char *n;
	while ((n = sp_dir_next(&sd))) {
		struct stat st;
		if (fstatat(sd.fd, n, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		d->nfiles++;
		struct sp_shmfile f = { .size = (uint64_t)st.st_size, .resident = (uint64_t)st.st_blocks * 512u,
					.uid = (unsigned)st.st_uid };
		snprintf(f.name, sizeof f.name, "%s", n);
		for (char *c = f.name; *c; c++)
			if (!isprint((unsigned char)*c))
				*c = '?';
		shm_put(d, &f);
	}
	sp_dir_close(&sd);
	bool complete = scan_holders(d);
	d->holders_known = complete;
	d->why = SP_OK;
	for (int i = 0; i < d->n && complete; i++)
		if (!d->f[i].holder) {
			d->norphans++;
			d->orphan_resident += d->f[i].resident;
		}
}

int sp_devshm_holder(const char *name, int *holder)
{
	struct sp_devshm d;
	memset(&d, 0, sizeof d);
	*holder = 0;
	if (strlen(name) >= sizeof d.f[0].name)
		return -ENAMETOOLONG;
	snprintf(d.f[0].name, sizeof d.f[0].name, "%s", name);
	d.n = 1;
	bool complete = scan_holders(&d);
	*holder = d.f[0].holder;
	return *holder || complete ? 0 : -EACCES;
}

bool sp_unexplained_judge(const struct sp_sample *s, bool may_scan, struct sp_unexplained *u, struct sp_devshm *shm)
{
	memset(shm, 0, sizeof *shm);
	shm->why = SP_MISSING;
	sp_unexplained_compute(s, NULL, u);
	if (!may_scan || !sp_ok(u->unexplained.why) || u->unexplained.v + u->shmem < SP_UNEXPLAINED_SHOW)
		return false;
	sp_devshm_read(shm);
	sp_unexplained_compute(s, shm, u);
	return true;
}
