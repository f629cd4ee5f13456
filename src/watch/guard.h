/* SPDX-License-Identifier: MIT */
/* The pool guard's decisions, pure (scripted time in tests): below the
 * free-memory floor (MemFree) or above the PSI memory `full` threshold it
 * warns, then flushes the page cache (when allowed and root), then stops the
 * job with SIGTERM, then SIGKILL after a grace period. The actions live in
 * watch/engine.c. Rules: docs/run.md "Guard". */
#ifndef SP_GUARD_H
#define SP_GUARD_H
#include <stdbool.h>
#include <stdint.h>

#define SP_GUARD_CONFIRM_S 0.1     /* below the floor this long before acting */
#define SP_GUARD_PSI_CONFIRM_S 5.0 /* PSI full above the threshold this long */
#define SP_GUARD_DEFAULT_GRACE_S 10.0
#define SP_GUARD_FAST_RATE (2.0 * 1024 * 1024 * 1024) /* bytes/s an allocator may take */
#define SP_GUARD_MIN_SLEEP_MS 10
#define SP_GUARD_MAX_SLEEP_MS 1000

struct sp_guard_cfg {
	uint64_t min_free;   /* bytes of MemFree; 0: no floor */
	double psi_full_pct; /* PSI memory full avg10; <= 0: off */
	bool can_flush;      /* --guard-flush given and we are root */
	double grace_s;      /* SIGTERM -> SIGKILL */
};

enum sp_guard_state { SP_GUARD_OK, SP_GUARD_WARNED, SP_GUARD_TERMED, SP_GUARD_KILLED };
enum sp_guard_act { SP_GA_NONE, SP_GA_WARN, SP_GA_RECOVERED, SP_GA_FLUSH, SP_GA_TERM, SP_GA_KILL };

struct sp_guard {
	struct sp_guard_cfg cfg;
	enum sp_guard_state state;
	double bad_since, term_t;
	bool flushed;
	bool by_psi;          /* the current trouble is PSI, not the floor */
	double lowest_free;   /* bytes, since the guard started */
};

bool sp_guard_enabled(const struct sp_guard_cfg *c);
void sp_guard_init(struct sp_guard *g, const struct sp_guard_cfg *c);
/* One look: free bytes (NAN unknown) and PSI memory full avg10 (NAN unknown)
 * at time t (seconds); job_alive says whether there is still a job to stop. */
enum sp_guard_act sp_guard_step(struct sp_guard *g, double t, double free_bytes, double psi_full, bool job_alive);
/* How long to sleep before the next look: short near the floor, so an
 * allocator taking SP_GUARD_FAST_RATE cannot cross it between two looks. */
int sp_guard_sleep_ms(const struct sp_guard *g, double free_bytes);
#endif
