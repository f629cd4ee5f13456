/* SPDX-License-Identifier: MIT */
/* The engine `run` and `watch` share: sampling, the log, events,
 * attribution, the guard and the end summary. Internal to src/cmd/. */
#ifndef SP_WATCHLOOP_H
#define SP_WATCHLOOP_H
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

/* Options run and watch share: codes, the getopt_long entries, the help lines. */
enum {
	SP_WL_INTERVAL = 2001, SP_WL_LOG, SP_WL_SUMMARY, SP_WL_FSYNC, SP_WL_BASEWIN, SP_WL_SLOWDOWN,
	SP_WL_GMINFREE, SP_WL_GPSI, SP_WL_GFLUSH, SP_WL_GGRACE, SP_WL_RESERVE, SP_WL_METRICS,
};
#define SP_WL_LONGOPTS                                                       \
	{ "interval", required_argument, NULL, SP_WL_INTERVAL },             \
	{ "log", required_argument, NULL, SP_WL_LOG },                       \
	{ "summary", required_argument, NULL, SP_WL_SUMMARY },               \
	{ "fsync-interval", required_argument, NULL, SP_WL_FSYNC },          \
	{ "baseline-window", required_argument, NULL, SP_WL_BASEWIN },       \
	{ "slowdown", required_argument, NULL, SP_WL_SLOWDOWN },             \
	{ "guard-min-free", required_argument, NULL, SP_WL_GMINFREE },       \
	{ "guard-psi-full", required_argument, NULL, SP_WL_GPSI },           \
	{ "guard-flush", no_argument, NULL, SP_WL_GFLUSH },                  \
	{ "guard-grace", required_argument, NULL, SP_WL_GGRACE },            \
	{ "reserve", required_argument, NULL, SP_WL_RESERVE },               \
	{ "metrics-listen", required_argument, NULL, SP_WL_METRICS }
#define SP_WL_HELP \
	"      --interval S        sample every S seconds (default 30; 1 is cheap)\n" \
	"      --log FILE          the CSV log (default sparkops-YYYYmmdd-HHMMSS.csv here)\n" \
	"      --summary FILE      also write the end summary as JSON to FILE\n" \
	"      --fsync-interval S  fsync the log at most every S seconds (default 60)\n" \
	"      --baseline-window S throughput over the first S seconds after the first\n" \
	"                          progress line is the baseline (default 300)\n" \
	"      --slowdown PCT      a fall of more than PCT% below the baseline for 3\n" \
	"                          samples is a slowdown episode (default 15)\n" \
	"      --guard-min-free SIZE  guard: keep MemFree above SIZE (warn, flush, stop)\n" \
	"      --guard-psi-full PCT   guard: act when PSI memory full avg10 stays above PCT\n" \
	"      --guard-flush       guard: flush the page cache before stopping (root)\n" \
	"      --guard-grace S     guard: SIGKILL S seconds after SIGTERM (default 10)\n" \
	"      --reserve SIZE      memory kept back for the OS in the budget (default 4GiB)\n" \
	"      --metrics-listen ADDR:PORT  also serve the latest sample and the job's\n" \
	"                          throughput and slowdown cause at http://ADDR:PORT/metrics\n"
/* Handle a shared option; returns 1 when it was one (usage errors exit). */
int sp_wl_opt(struct sp_wl_opts *o, int c, const char *arg);
#endif
