/* SPDX-License-Identifier: MIT */
/* The options run and watch share, declared once as option-table entries
 * (util/opt.h) into a struct sp_engine_opts: the sampling, the log, the
 * attribution, the guard, the budget and the metrics endpoint. Each command
 * puts SP_OPT_RUNWATCH(&o) in its table beside its own options. */
#ifndef SP_RUNWATCH_H
#define SP_RUNWATCH_H
#include "engine/engine.h"
#include "util/opt.h"

/* --guard-flush: asked for, and possible only as root (target: the opts) */
const char *sp_opt_guard_flush(void *opts, const char *unused);
/* --metrics-listen ADDR:PORT, checked (target: a const char *) */
const char *sp_opt_metrics_listen(void *addr, const char *value);

/* The checks between options that need both (--log X --summary X, a
 * planted symlink as --log): a usage error of cmd, or nothing. */
void sp_runwatch_check(struct sp_engine_opts *o, const char *cmd);

/* the help column of run and watch */
#define SP_RUNWATCH_HELP_COL 26

#define SP_OPT_RUNWATCH(o)                                                                                     \
	SP_OPT_DURATION("interval", &(o)->interval_s, "S", 0.05, 0, 0,                                         \
			"sample every S seconds (default 30; 1 is cheap)"),                                    \
	SP_OPT_OUT_PATH("log", &(o)->log_path, "FILE", "the CSV log (default sparkops-YYYYmmdd-HHMMSS.csv here)"), \
	SP_OPT_OUT_PATH("summary", &(o)->summary_path, "FILE", "also write the end summary as JSON to FILE"),      \
	SP_OPT_DURATION("fsync-interval", &(o)->fsync_s, "S", 0, 0, 0,                                         \
			"fsync the log at most every S seconds (default 60)"),                                 \
	SP_OPT_DURATION("baseline-window", &(o)->baseline_window_s, "S", 0, 0, 0,                              \
			"throughput over the first S seconds after the first\n"                                \
			"progress line is the baseline (default 300)"),                                        \
	SP_OPT_PERCENT("slowdown", &(o)->slowdown_pct, "PCT",                                                  \
		       "a fall of more than PCT% below the baseline for 3\n"                                   \
		       "samples is a slowdown episode (default 15)"),                                          \
	SP_OPT_SIZE_POS("guard-min-free", &(o)->guard.min_free, "SIZE",                                        \
			"guard: MemFree under SIZE: warn, free what costs\n"                                   \
			"nothing (evict the job's files; flush with\n"                                         \
			"--guard-flush), stop the job only when the page\n"                                   \
			"cache cannot lift it back over SIZE"),                                                \
	SP_OPT_DURATION("guard-confirm", &(o)->guard.confirm_s, "DURATION", 0, 3600, SP_OPTF_LO_OPEN,          \
			"guard: the pool short this long before the job is\n"                                  \
			"stopped (default 3s: a flush takes time to show; a\n"                                 \
			"pool still falling by 256 MiB ends the wait)"),                                       \
	SP_OPT_PERCENT("guard-psi-full", &(o)->guard.psi_full_pct, "PCT",                                      \
		       "guard: act when PSI memory full avg10 stays above PCT"),                               \
	SP_OPT_CALLBACK_NOARG("guard-flush", (o), sp_opt_guard_flush,                                          \
			      "guard: flush the page cache first (root; it drops\n"                                  \
			      "every user's cache), not only the job's files"),                           \
	SP_OPT_PATH("guard-evict", &(o)->guard_evict_path, "PATH",                                              \
		    "guard: when freeing, also evict your own files under\n"                                \
		    "PATH (a model cache the job does not have open)"),                                     \
	SP_OPT_DURATION("guard-grace", &(o)->guard.grace_s, "S", 0, 0, 0,                                      \
			"guard: SIGKILL S seconds after SIGTERM (default 10)"),                                \
	SP_OPT_FLAG(0, "force", &(o)->force,                                                                   \
		    "guard: also signal (or evict for) pid 1 and other users'\n"                           \
		    "processes in the job's tree (refused without it)"),                                    \
	SP_OPT_SIZE("reserve", &(o)->reserve, "SIZE", "memory kept back for the OS in the budget (default 4GiB)"), \
	SP_OPT_PATH("kmsg", &(o)->kmsg_path, "FILE",                                                            \
		    "read the NVIDIA driver's new lines (NVRM out of memory,\n"                           \
		    "Xid) from this kernel log each sample (default /dev/kmsg\n"                        \
		    "when readable and the roots are the machine's)"),                                     \
	SP_OPT_FLAG(0, "quiet", &(o)->quiet, "no live status line on the terminal (stderr)"),                  \
	SP_OPT_CALLBACK("metrics-listen", &(o)->metrics_listen, "ADDR:PORT", sp_opt_metrics_listen,            \
			"also serve the latest sample and the job's\n"                                         \
			"throughput and slowdown cause at http://ADDR:PORT/metrics;\n"                        \
			"not a loopback address needs --allow-remote"),                                        \
	SP_OPT_FLAG(0, "allow-remote", &(o)->metrics_allow_remote,                                             \
		    "let --metrics-listen take an address other machines can\n"                           \
		    "reach: they can then read process names, pids and cgroups"),                          \
	SP_OPT_PATH("web-config", &(o)->metrics_web_config, "FILE",                                            \
		    "TLS and basic authentication for --metrics-listen, as\n"                             \
		    "'sparkops serve --web-config'")
#endif
