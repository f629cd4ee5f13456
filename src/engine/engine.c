// SPDX-License-Identifier: MIT
/* The long-job engine behind `sparkops run` and `sparkops watch`: its public
 * entry. The engine's files and its state are in engine/engine_int.h.
 *
 * Its threads (and one process):
 *  - the loop, on the caller's thread (try.c): one poll on the signalfd, the
 *    relay's pipes, the guards' row queue and --pid's pidfd; every --interval
 *    a sample (sample.c: the probes, the job's process tree, the log, the
 *    events, attribution, the progress copied from the relay), then what is
 *    published (publish.c);
 *  - the GPU thread (probe/gpuwatch.c): every NVML call, behind a deadline,
 *    so a hung driver costs a sample at most its timeout;
 *  - the guard thread (guard.c), only when a guard is asked for: MemFree and
 *    PSI on its own short clock; it never waits for the loop or the GPU, so
 *    a hung driver cannot stop it;
 *  - the load-guard thread (loadguard.c), run --guard-load only: from the
 *    launch until the job is ready, the pool's dips answered with a flush and
 *    compaction (root) or an eviction of the job's own files;
 *  - with --metrics-listen, the endpoint's server and reaper threads
 *    (out/serve_http.c), which read only the metrics copy, under its lock;
 *  - the relay, a process (watch/child.c): it copies the job's output to the
 *    terminal and to the loop.
 * The threads share with the loop only atomics and the two locked copies in
 * struct eng_run (the guards' row queue, the metrics copy). */
#include "engine/engine.h"
#include "engine/engine_int.h"
#include "util/msg.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void sp_engine_opts_init(struct sp_engine_opts *o)
{
	memset(o, 0, sizeof *o);
	o->interval_s = 30;
	o->fsync_s = SP_DEFAULT_FSYNC_S;
	o->baseline_window_s = SP_ATTR_DEFAULT_WINDOW_S;
	o->slowdown_pct = SP_ATTR_DEFAULT_SLOWDOWN_PCT;
	o->guard.grace_s = SP_GUARD_DEFAULT_GRACE_S;
	o->guard.confirm_s = SP_GUARD_DEFAULT_CONFIRM_S;
	o->guard.can_evict = true; /* the job's own files: costs nothing, needs no root */
	o->reserve = SP_DEFAULT_RESERVE;
	o->load_deadline_s = SP_LG_DEFAULT_DEADLINE_S;
	o->ladder.max_tries = SP_RETRY_DEFAULT_MAX_TRIES;
}

int sp_engine_run(const struct sp_engine_opts *o)
{
	struct eng_run *w = malloc(sizeof *w);
	if (!w)
		return sp_error("out of memory"), SP_EXIT_TROUBLE;
	eng_init(w, o);
	if (!eng_series_open(w)) {
		free(w);
		return sp_error("out of memory"), SP_EXIT_TROUBLE;
	}
	int rc = eng_start(w);
	if (rc == 0) {
		eng_series_run(w);
		rc = eng_finish(w);
		eng_close(w);
	}
	eng_series_free(w);
	if (w->gthread_stuck)
		return rc; /* the blocked guard thread still holds w: kept until the process exits */
	pthread_mutex_destroy(&w->metrics.lock);
	free(w);
	return rc;
}
