/* SPDX-License-Identifier: MIT */
/* Eviction without root: the page cache of given files dropped with
 * posix_fadvise(POSIX_FADV_DONTNEED) (clean pages only; as their owner, or
 * any file with any_owner), resident pages measured before and after with
 * mincore (the file mapped PROT_READ in 1 GiB windows; vmtouch -e is the
 * anchor). mincore tells the truth only about files the caller owns or may
 * write (or as root): for any other file the kernel (since 5.2) reports every
 * page as resident, so their residency is counted as unknown, never as a
 * figure (sp_residency_visible). Files come from paths (a model folder, the HF cache: walked
 * without following symlinks) or from a process's open files and mappings
 * (/proc/PID/fd, /proc/PID/maps: the load guard's non-root mode). Each file
 * once (device and inode). */
#ifndef SP_EVICT_H
#define SP_EVICT_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define SP_EVICT_SEEN_MAX 4096

struct sp_evict {
	bool any_owner;
	uid_t uid;                 /* whose files may be evicted (geteuid) */
	long files;                /* regular files evicted */
	long not_owned;            /* regular files of other users: skipped */
	long not_regular;          /* FIFOs, sockets, devices: skipped */
	long symlinks;             /* symlinks: not followed */
	long errors;               /* could not be opened or advised */
	uint64_t bytes;            /* size of the files evicted */
	uint64_t resident_before;  /* bytes of them in the page cache before */
	uint64_t resident_after;   /* and after */
	uint64_t not_owned_resident; /* cached bytes of the skipped files (untouched), those measurable */
	long not_owned_unknown;    /* skipped files whose residency the kernel does not tell us */
	long unknown_files;        /* evicted files whose residency the kernel does not tell us */
	uint64_t unknown_bytes;    /* their size */
	int first_errno;
	int nseen;
	dev_t seen_dev[SP_EVICT_SEEN_MAX];
	ino_t seen_ino[SP_EVICT_SEEN_MAX];
};

void sp_evict_init(struct sp_evict *e, bool any_owner);
/* Whether mincore's answer on this file is a residency measure: as root,
 * as its owner, or with write permission (the kernel's own rule, mode bits;
 * an ACL granting write is not seen: unknown, never a made-up figure). */
bool sp_residency_visible(const struct stat *st);
/* Bytes of the open regular file fd (size bytes) resident in the page
 * cache, or -errno (meaningful only when sp_residency_visible). */
int64_t sp_resident_bytes(int fd, uint64_t size);
/* A file, or a folder walked (symlinks neither followed nor left through).
 * 0, or -errno when path itself cannot be looked at (the caller says it). */
int sp_evict_path(struct sp_evict *e, const char *path);
/* The files pid has open (fd) or mapped (maps), under the live /proc. 0 or -errno. */
int sp_evict_pid(struct sp_evict *e, pid_t pid);

/* Removing an orphaned /dev/shm file (root; sparkops evict --shm NAME): the
 * file NAME directly in <host root>/dev/shm (the folder beside a --procfs
 * tree's proc, else /dev/shm), removed only when NAME is a plain name (no
 * '/', not "." or ".."), it is a regular file (fstatat AT_SYMLINK_NOFOLLOW
 * on a held O_DIRECTORY fd of the folder: a symlink is refused, never
 * followed) and no process maps it or holds it open (every process's maps
 * and fds read; one that cannot be read: refused, cannot tell). The file is
 * looked at again just before unlinkat, relative to the same folder fd: a
 * different inode there is refused. A process that opens it between the
 * check and the unlink keeps its pages (an unlinked file lives while held). */
enum sp_shm_refusal {
	SP_SHM_REMOVED = 0,
	SP_SHM_BAD_NAME,     /* '/', ".", "..", empty or too long */
	SP_SHM_NO_FOLDER,    /* the /dev/shm folder cannot be opened */
	SP_SHM_MISSING,      /* no such file */
	SP_SHM_SYMLINK,
	SP_SHM_NOT_REGULAR,
	SP_SHM_HELD,         /* a process maps it or holds it open */
	SP_SHM_CANNOT_TELL,  /* some process's maps or fds could not be read */
	SP_SHM_CHANGED,      /* another file took its place between the checks */
	SP_SHM_UNLINK_FAILED,
};
struct sp_shm_removal {
	enum sp_shm_refusal r;
	int err;             /* errno, for NO_FOLDER and UNLINK_FAILED */
	int holder;          /* SP_SHM_HELD: the pid */
	uint64_t size;       /* st_size */
	uint64_t resident;   /* st_blocks * 512 */
	unsigned uid;
};
void sp_shm_remove(const char *name, struct sp_shm_removal *out);
/* a few words: "a process maps it or holds it open", ... */
const char *sp_shm_refusal_text(enum sp_shm_refusal r);
/* the JSON key: "held", "symlink", ... */
const char *sp_shm_refusal_key(enum sp_shm_refusal r);
#endif
