/* SPDX-License-Identifier: MIT */
/* What the commands share: the reading options of the commands that take a
 * sample (--reserve, --min-rss, --no-processes) as option-table entries, the
 * one read loop of the commands that stream a file, and one timed reading
 * for the Prometheus exposition. */
#ifndef SP_CMDUTIL_H
#define SP_CMDUTIL_H
#include "out/sample_json.h" /* sp_json_text */
#include "probe/sample.h"
#include "util/opt.h"

#include <jansson.h>

/* The reading options as option-table entries (util/opt.h), into *ro:
 * --reserve SIZE, --min-rss SIZE, --no-processes. */
const char *sp_opt_no_processes(void *ro, const char *unused);
#define SP_OPT_READ(ro)                                                                                  \
	SP_OPT_SIZE("reserve", &(ro)->reserve, "SIZE", "memory kept back for the OS and driver (default 4GiB)"), \
	SP_OPT_SIZE("min-rss", &(ro)->proc_min_rss, "SIZE",                                              \
		    "also list unrecognised processes above SIZE (default 2GiB)"),                       \
	SP_OPT_CALLBACK_NOARG("no-processes", (ro), sp_opt_no_processes,                                 \
			      "skip the scan of /proc for servers and trainers")

/* The same for the exporters (metrics, serve): their help says "export". */
#define SP_OPT_READ_EXPORT(ro)                                                                           \
	SP_OPT_SIZE("reserve", &(ro)->reserve, "SIZE", "memory kept back for the OS and driver (default 4GiB)"), \
	SP_OPT_SIZE("min-rss", &(ro)->proc_min_rss, "SIZE",                                              \
		    "also export unrecognised processes above SIZE (default 2GiB)"),                     \
	SP_OPT_CALLBACK_NOARG("no-processes", (ro), sp_opt_no_processes,                                 \
			      "skip the scan of /proc for servers and trainers (the costliest\n"         \
			      "reading on a busy machine; the process series are left out)"),            \
	SP_OPT_PATH("kmsg", &(ro)->kmsg_path, "FILE",                                                    \
		    "count the NVIDIA driver's lines (NVRM out of memory, Xid) of this\n"               \
		    "kernel log (default /dev/kmsg when readable and the roots are the machine's)")

/* The exporters' kernel-log reader (--kmsg, else /dev/kmsg): opened once,
 * before the first exposition; an unreadable --kmsg FILE is a usage error
 * of cmd (exit 2). Each sp_prom_read then counts what was added. */
void sp_kmsg_start(const char *cmd, const struct sp_read_opts *ro);

/* Read fd to its end in 64 KiB chunks (EINTR retried), handing each chunk to
 * feed, which returns non-zero to stop early: the one read loop of the
 * commands that stream a file through a push parser (ladder's log, report's
 * log and training log). A regular file is mapped a window at a time, and a
 * file cut shorter under a window fails with -SP_EINPUT_SHRANK (no SIGBUS);
 * every stream must pass the text check (util/input.h: -SP_EINPUT_NOTTEXT).
 * 0, or -errno of the failed read (sp_input_strerror says it). */
int sp_feed_fd(int fd, int (*feed)(void *ctx, const char *buf, size_t len), void *ctx);


/* Read the machine into s and fill what the exposition says about itself
 * (the version, the read's duration, whether processes were skipped). */
struct sp_prom_info;
void sp_prom_read(struct sp_sample *s, const struct sp_read_opts *ro, struct sp_prom_info *info);
#endif
