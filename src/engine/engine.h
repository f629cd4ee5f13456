/* SPDX-License-Identifier: MIT */
/* The engine `run` and `watch` share: it samples the machine every
 * --interval into the CSV log, derives events, feeds attribution from the
 * job's progress lines, guards the memory pool on a thread of its own,
 * serves --metrics-listen, and prints the end summary.
 *
 *   struct sp_engine_opts o;
 *   sp_engine_opts_init(&o);          // the defaults
 *   o.interval_s = 1; o.argv = job;   // what the command's options said
 *   return sp_engine_run(&o);         // until the job (or the watch) ends
 *
 * With argv, the engine starts the job (watch/child.c) and its exit status
 * is the exit code; without, it watches the machine (and --pid's process)
 * until a signal, --duration, --count or the process's end. With
 * o.ladder.on (run --ladder) a job that ends in an OOM is run again down the
 * ladder's rungs (engine/retry.h), in the same log. Messages go
 * to stderr through util/msg.h; the engine never parses options. */
#ifndef SP_WATCH_ENGINE_H
#define SP_WATCH_ENGINE_H
#include "engine/retry.h"
#include "watch/guard.h"
#include "watch/loadguard.h"

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct sp_serve_opts;

struct sp_engine_opts {
	double interval_s;
	const char *log_path;     /* NULL: sparkops-YYYYmmdd-HHMMSS.csv */
	const char *summary_path; /* NULL: none */
	double fsync_s;
	double baseline_window_s, slowdown_pct;
	const regex_t *progress_re; /* the caller's, compiled; NULL: tqdm and Trainer only */
	struct sp_guard_cfg guard;
	bool guard_flush_asked;
	const char *guard_evict_path; /* --guard-evict: the user's cold files under it are freed too */
	uint64_t reserve;
	const char *metrics_listen; /* --metrics-listen ADDR:PORT, NULL none */
	bool metrics_allow_remote;  /* --allow-remote: an address other machines can reach */
	const char *metrics_web_config; /* --web-config FILE, NULL none */
	const struct sp_serve_opts *metrics_web; /* what it says: TLS and users (set by the command) */
	/* run --guard-load: from launch to readiness (docs/run.md "Surviving a model load") */
	bool guard_load;
	uint64_t load_floor;        /* MemFree floor; 0: min(8 GiB, MemTotal/8) */
	uint64_t load_contig_floor; /* floor of free memory in 2 MiB blocks; 0: min(1 GiB, MemTotal/64) */
	double load_deadline_s;     /* default 45 min */
	const regex_t *ready_re;    /* --ready; NULL: the known servers' lines (or a trainer's first progress) */
	const char *load_stop_file; /* --guard-stop-file */
	/* run */
	char **argv;              /* the job; NULL for watch */
	struct sp_retry_cfg ladder; /* run --ladder: retry an OOM down the ladder (docs/run.md "Automatic retry") */
	/* watch */
	pid_t pid;                /* --pid, 0 none */
	double duration_s;        /* --duration, 0 none */
	long count;               /* --count: stop after this many samples, 0 none */
	const char *follow_path;  /* --follow FILE: the job's log, read as tail -F does, NULL none */
	bool quiet;               /* --quiet: no live status line on a terminal */
	bool force;               /* --force: the guard may signal pid 1 and other users' processes */
	const char *kmsg_path;    /* --kmsg FILE: the kernel log read each sample; NULL: /dev/kmsg when
				   * the roots are the machine's and it is readable, else none */
};

/* The defaults: every 30 s, the default log name, fsync every 60 s, the
 * attribution's window and threshold, no guard, a 4 GiB reserve. */
void sp_engine_opts_init(struct sp_engine_opts *o);

/* Run until the job ends (run) or the watch stops. Returns the exit code:
 * the job's status (128+N for signal N, 127 not found, 126 not runnable);
 * for watch 0, 2 when --pid names no process, 5 when --summary could not be
 * written; 1 when the engine could not start (signalfd, the endpoint). */
int sp_engine_run(const struct sp_engine_opts *o);
#endif
