/* SPDX-License-Identifier: MIT */
/* The engine `run` and `watch` share: sampling, the log, events,
 * attribution, the guard and the end summary. Internal to src/cmd/. */
#ifndef SP_WATCH_ENGINE_H
#define SP_WATCH_ENGINE_H
#include "watch/guard.h"

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct sp_wl_opts {
	const char *cmdname;      /* "run" or "watch" */
	double interval_s;
	const char *log_path;     /* NULL: sparkops-YYYYmmdd-HHMMSS.csv */
	const char *summary_path; /* NULL: none */
	double fsync_s;
	double baseline_window_s, slowdown_pct;
	const regex_t *progress_re;
	struct sp_guard_cfg guard;
	bool guard_flush_asked;
	uint64_t reserve;
	const char *metrics_listen; /* --metrics-listen ADDR:PORT, NULL none */
	/* run */
	char **argv;              /* the job; NULL for watch */
	/* watch */
	pid_t pid;                /* --pid, 0 none */
	double duration_s;        /* --duration, 0 none */
	long count;               /* --count: stop after this many samples, 0 none */
};
void sp_wl_opts_init(struct sp_wl_opts *o, const char *cmdname);
/* Returns the command's exit code. */
int sp_watchloop(const struct sp_wl_opts *o);
#endif
