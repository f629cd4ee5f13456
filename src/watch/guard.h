/* SPDX-License-Identifier: MIT */
/* The pool guard's decisions, pure (scripted time in tests), in the ladder's
 * order, on the pool model (probe/poolmodel.h). Each look gives MemFree, what
 * the page cache would give back (the model's reclaimable) and PSI memory
 * `full`. Below the free-memory floor it warns, then frees what costs nothing
 * (a flush with --guard-flush as root, else an eviction of the job's own
 * files), at most once per confirmation window, and again only when the last
 * one gave something back. It stops the job (SIGTERM, SIGKILL
 * after the grace) only when the pool is short: MemFree plus everything
 * reclaimable is under the floor (nothing left to take: the kernel reclaims
 * the rest on its own when the job asks), or PSI full stays above its
 * threshold (the box is stalling), confirmed over a window: --guard-confirm
 * (default 3 s), cut short when the pool keeps falling (SP_GUARD_FALL: a fast
 * allocator is caught within it). The actions live in engine/guard.c.
 * Rules: docs/run.md "Guard". */
#ifndef SP_GUARD_H
#define SP_GUARD_H
#include <stdbool.h>
#include <stdint.h>

/* Why 3 s: a flush or an eviction takes up to a second or two to show in
 * MemFree (sync, then the drop, then the kernel's counters), and a dip under
 * the floor that the next look no longer sees is no reason to stop a job.
 * The window cannot let a fast allocator through: a pool still falling by
 * SP_GUARD_FALL within it ends the wait at once. */
#define SP_GUARD_DEFAULT_CONFIRM_S 3.0
#define SP_GUARD_PSI_CONFIRM_S 5.0 /* PSI full above the threshold this long */
#define SP_GUARD_DEFAULT_GRACE_S 10.0
#define SP_GUARD_FALL (256.0 * 1024 * 1024) /* bytes the short pool may still fall before the window ends */
#define SP_GUARD_TAKE_MIN (256.0 * 1024 * 1024) /* reclaimable under this: nothing to take */
#define SP_GUARD_FAST_RATE (2.0 * 1024 * 1024 * 1024) /* bytes/s an allocator may take */
#define SP_GUARD_MIN_SLEEP_MS 10
#define SP_GUARD_MAX_SLEEP_MS 1000

struct sp_guard_cfg {
	uint64_t min_free;   /* bytes of MemFree; 0: no floor */
	double psi_full_pct; /* PSI memory full avg10; <= 0: off */
	bool can_flush;      /* --guard-flush given and we are root */
	bool can_evict;      /* evict the job's own files when a flush is not allowed */
	double grace_s;      /* SIGTERM -> SIGKILL */
	double confirm_s;    /* --guard-confirm; <= 0: SP_GUARD_DEFAULT_CONFIRM_S */
};

enum sp_guard_state { SP_GUARD_OK, SP_GUARD_WARNED, SP_GUARD_TERMED, SP_GUARD_KILLED };
enum sp_guard_act {
	SP_GA_NONE,
	SP_GA_WARN,      /* under the floor (or PSI): said */
	SP_GA_RECOVERED, /* back above it */
	SP_GA_FREE,      /* free what costs nothing: flush (can_flush) or evict; then sp_guard_freed */
	SP_GA_HOLD,      /* under the floor, but the reclaimable cache covers it: the job is left alone */
	SP_GA_TERM,
	SP_GA_KILL,
};

struct sp_guard {
	struct sp_guard_cfg cfg;
	enum sp_guard_state state;
	double bad_since, term_t;
	double freed_t;       /* the last free action (NAN: none this episode) */
	double short_since;   /* the pool short since (NAN: not short) */
	double short_pool;    /* MemFree + reclaimable then */
	double psi_since;     /* PSI full above the threshold since (NAN: not) */
	int frees;            /* free actions, since the guard started */
	double freed_bytes;   /* what they gave back, summed */
	bool held;            /* SP_GA_HOLD said this episode */
	bool futile;          /* a free action this episode gave back under SP_GUARD_TAKE_MIN: not repeated */
	bool by_psi;          /* the current trouble is PSI, not the floor */
	bool short_now;       /* the last look found the pool short */
	double lowest_free;   /* bytes, since the guard started */
};

/* One look at time t (seconds). */
struct sp_guard_look {
	double free_bytes;  /* MemFree; NAN unknown */
	double reclaimable; /* what a flush gives back (the pool model's); NAN unknown: counted as 0 */
	double psi_full;    /* PSI memory full avg10; NAN unknown */
	bool job_alive;     /* there is still a job to stop */
};

bool sp_guard_enabled(const struct sp_guard_cfg *c);
void sp_guard_init(struct sp_guard *g, const struct sp_guard_cfg *c);
/* The confirmation window in force (cfg, or the default). */
double sp_guard_confirm_s(const struct sp_guard *g);
enum sp_guard_act sp_guard_step(struct sp_guard *g, double t, const struct sp_guard_look *l);
/* After SP_GA_FREE: what it gave back (bytes; <= 0 or NAN: nothing). Under
 * SP_GUARD_TAKE_MIN the action is not repeated this episode. */
void sp_guard_freed(struct sp_guard *g, double gained);
/* How long to sleep before the next look: short near the floor, so an
 * allocator taking SP_GUARD_FAST_RATE cannot cross it between two looks.
 * pool_bytes: MemFree plus what is reclaimable (or MemFree alone). */
int sp_guard_sleep_ms(const struct sp_guard *g, double pool_bytes);
#endif
