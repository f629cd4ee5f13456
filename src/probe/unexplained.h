/* SPDX-License-Identifier: MIT */
/* The memory nobody holds: what the pool has in use that no process, shmem
 * segment, kernel structure or GPU allocation explains, and where to look
 * (unexplained.c). */
#ifndef SP_UNEXPLAINED_H
#define SP_UNEXPLAINED_H
#include "probe/sample.h"

/* status shows the row, and its likely causes, from this much on */
#define SP_UNEXPLAINED_SHOW (4ULL << 30)

/* /dev/shm (under sp_host_root()): its files, largest first */
#define SP_SHM_MAX 16
struct sp_shmfile {
	char name[96];
	uint64_t size;      /* st_size */
	uint64_t resident;  /* st_blocks * 512: what it holds of the pool */
	unsigned uid;
	int holder;         /* a pid that maps it or holds it open, or 0: nobody (orphaned) */
};
struct sp_devshm {
	enum sp_why why;    /* the folder */
	bool holders_known; /* every process's maps and fds were looked at */
	int nfiles;         /* regular files in it */
	int n;              /* listed in f[] (the largest SP_SHM_MAX) */
	uint64_t orphan_resident; /* held by the listed files nobody maps or holds open (0 unless holders_known) */
	int norphans;
	struct sp_shmfile f[SP_SHM_MAX];
};
/* Lists <host root>/dev/shm (no symlink followed) and, for each file, looks for a
 * process that maps it (/proc/PID/maps) or holds it open (/proc/PID/fd);
 * reads every process's: for a one-shot status, not a sampling loop. */
void sp_devshm_read(struct sp_devshm *d);
/* <host root>/dev/shm: /dev/shm, or the folder beside a --procfs tree's proc */
void sp_devshm_path(char *buf, size_t n);
/* Who holds <host root>/dev/shm/NAME: *holder a pid that maps it or holds it
 * open, or 0 when no process does. 0; -EACCES when no holder was found but
 * some process's maps or fds could not be read (cannot tell); -ENAMETOOLONG. */
int sp_devshm_holder(const char *name, int *holder);

struct sp_unexplained {
	struct sp_u64 used;     /* MemTotal - MemFree - Buffers - Cached + Shmem */
	struct sp_u64 anon;     /* AnonPages: every process's anonymous memory, shared pages once */
	uint64_t shmem;         /* Shmem */
	uint64_t shmem_orphan;  /* of it, in /dev/shm files nobody maps or holds open */
	uint64_t kernel;        /* Slab + PageTables + KernelStack + VmallocUsed, those read */
	unsigned kernel_missing;/* bit 0 Slab, 1 PageTables, 2 KernelStack, 3 VmallocUsed: not in meminfo */
	bool gpu_in_pool;       /* the GPU shares the pool (UMA): its memory is counted; else gpu is 0 */
	uint64_t gpu;           /* the listed processes' GPU memory (NVML), on UMA */
	int gpu_known, gpu_unknown; /* processes with and without a GPU reading */
	bool gpu_overlap;       /* the GPU figure exceeds what was left: counted in the processes' memory too */
	struct sp_u64 unexplained;
	uint64_t mlocked;       /* Mlocked */
	uint64_t hugetlb;       /* Hugetlb: reserved huge pages, used or not */
	uint64_t hugetlb_free;  /* HugePages_Free * Hugepagesize */
	int driver_pids;        /* GPU processes NVML lists that /proc does not show */
	uint64_t driver_bytes;  /* their GPU memory */
};
/* Pure. unexplained = used - anon - (shmem - shmem_orphan) - kernel - gpu, never
 * under 0; why not OK when MemTotal, MemFree, Buffers, Cached, Shmem or AnonPages
 * is missing. shm may be NULL (not looked at: all shmem counted as held). */
void sp_unexplained_compute(const struct sp_sample *s, const struct sp_devshm *shm, struct sp_unexplained *u);
/* The unexplained part, with /dev/shm's files read (every process's maps)
 * only when may_scan and the part could reach SP_UNEXPLAINED_SHOW with all
 * shmem in it; shm->why is SP_MISSING when they were not. True when read. */
bool sp_unexplained_judge(const struct sp_sample *s, bool may_scan, struct sp_unexplained *u, struct sp_devshm *shm);
#endif
