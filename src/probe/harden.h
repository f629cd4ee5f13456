/* SPDX-License-Identifier: MIT */
/* The watcher survives the pressure it watches: run, watch and serve call
 * sp_harden_process() once, before their sampling loop. */
#ifndef SP_HARDEN_H
#define SP_HARDEN_H
#include <stddef.h>

enum {
	SP_HARDEN_MLOCK = 1 << 0, /* mlockall: our pages are never reclaimed or swapped */
	SP_HARDEN_OOM = 1 << 1,   /* root only: our own oom_score_adj to -900 */
	SP_HARDEN_STACK = 1 << 2, /* with MLOCK: this thread's stack, sp_harden_stack() */
	SP_HARDEN_ALL = 0x7,
};

/* The stack a sample and its exposition need, with room to spare. */
#define SP_HARDEN_STACK_BYTES (64u << 10)

/* Do what `flags` asks, as far as permitted. Returns the SP_HARDEN_* bits
 * that were done. When memory could not be locked, `warn` (if given) holds
 * one line for the user, e.g. "cannot lock sparkops in memory (RLIMIT_MEMLOCK
 * is 8 MiB): under pressure its pages can be reclaimed; raise `ulimit -l` or
 * run as root" -- the command prints it with sp_warn("%s", warn). Empty when
 * all went well. No heap allocation.
 *
 * What it does:
 *  - mallopt(M_ARENA_MAX, 1): one malloc arena, so threads do not each map a
 *    64 MiB arena (which mlockall(MCL_FUTURE) would then have to account);
 *  - mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT): pages are locked as
 *    they are touched (MCL_ONFAULT, Linux >= 4.4; without it on older kernels),
 *    so reserved but untouched memory costs nothing;
 *  - with SP_HARDEN_STACK and the lock in place, sp_harden_stack() on the
 *    calling thread (the one that samples);
 *  - as root only, oom_score_adj -900 for this process (never for the job:
 *    lowering the job's score is not ours to decide). Skipped when the /proc
 *    root points at a fixture tree. */
unsigned sp_harden_process(unsigned flags, char *warn, size_t warn_cap);
/* After the threads are started: lock again what exists now, where the
 * first lock could not cover later mappings (a finite RLIMIT_MEMLOCK: the
 * threads' stacks are then locked too, as far as the limit allows). */
void sp_harden_relock(void);

/* Touch SP_HARDEN_STACK_BYTES of the calling thread's stack, so that once
 * memory is locked a sample never faults a stack page in under pressure.
 * For a thread that samples but did not call sp_harden_process (serve's
 * server thread, on its first scrape). A no-op under ASan. */
void sp_harden_stack(void);

/* In a child between fork and exec: close every fd >= lowfd, so the job
 * never inherits one we (or a library we loaded: libnvidia-ml opens
 * /dev/nvidia* itself) left without O_CLOEXEC. close_range(2), else a scan
 * of /proc/self/fd. Async-signal-safe (raw syscalls only). */
void sp_close_fds_from(int lowfd);
#endif
