/* SPDX-License-Identifier: MIT */
/* Prometheus text exposition (format 0.0.4) of a sample, written into a
 * caller's buffer. No allocation: the writer counts what it would have
 * written past the end, so a caller can grow its buffer and write again
 * (snprintf style). Unknown readings are left out, never written as 0;
 * the *_reading_ok families say what is missing and why. */
#ifndef SP_PROM_H
#define SP_PROM_H
#include "probe/kmsg.h"
#include "probe/platform.h"
#include "probe/sample.h"
#include "watch/cause.h"

#include <stdbool.h>
#include <stddef.h>

/* The escaping rules of the text format. Label values escape \\ \" and \n;
 * HELP text escapes \\ and \n only. Both replace other control characters
 * and bytes that are not valid UTF-8 with '?', so a process name can never
 * break a line or the format. */
enum sp_prom_esc { SP_PROM_ESC_LABEL, SP_PROM_ESC_HELP };
/* Escape in into out (NUL-terminated, cut to fit cap); returns the length
 * the whole escaped text needs (without the NUL), like snprintf. */
size_t sp_prom_escape(char *out, size_t cap, const char *in, enum sp_prom_esc mode);

/* A writer over a caller's buffer. len keeps counting past cap. */
struct sp_prom {
	char *buf;
	size_t cap, len;
	/* the family whose HELP/TYPE is written before its first sample */
	const char *fam, *fam_type, *fam_help;
	bool fam_open;
};
void sp_prom_init(struct sp_prom *w, char *buf, size_t cap);
/* true when everything fitted (w->len < w->cap); the text is NUL-terminated */
bool sp_prom_fits(const struct sp_prom *w);

/* Start a family: HELP and TYPE are written with its first sample, and not
 * at all when it has none. type: "gauge" or "counter". */
void sp_prom_family(struct sp_prom *w, const char *name, const char *type, const char *help);
/* One sample of the current family: labels as key/value pairs ending in a
 * NULL key (or NULL for none); values escaped here. */
struct sp_prom_label {
	const char *k, *v;
};
void sp_prom_sample(struct sp_prom *w, const struct sp_prom_label *labels, double v);
void sp_prom_sample_u64(struct sp_prom *w, const struct sp_prom_label *labels, uint64_t v);

/* What the exposition says about itself. */
struct sp_prom_info {
	const char *version;      /* sparkops_build_info{version} */
	double read_seconds;      /* how long reading the sample took; < 0 leaves it out */
	bool procs_skipped;       /* the process scan was turned off (--no-processes) */
};

/* The platform's fingerprint for the expositions that follow
 * (sparkops_platform_info, sparkops_platform_known_bad); NULL, the start,
 * leaves them out. Set by the exporters (metrics, serve) from the thread
 * that writes the exposition. */
void sp_prom_set_platform(const struct sp_platform *p);
/* The NVIDIA driver's kernel-log lines counted so far, by enum sp_drv_kind
 * (probe/kmsg.h): sparkops_driver_errors_total{kind}; NULL leaves it out.
 * The array is read at each exposition. */
void sp_prom_set_driver_errors(const uint64_t *count);

/* The whole exposition of one sample (everything but the job families). */
void sp_prom_write_sample(struct sp_prom *w, const struct sp_sample *s, const struct sp_prom_info *info);

/* ---- the job families of `run` / `watch` --------------------------------- */
/* The slowdown causes are enum sp_cause (watch/cause.h). */
#define sp_prom_cause_name sp_cause_name /* "power_cap" */

struct sp_prom_job {
	int pid;                  /* the job's main process (0: watch without a child) */
	const char *command;      /* its argv[0] basename, for people ("python") */
	double start_unix;        /* when it started (Unix seconds); < 0: unknown */
	bool rate_ok;             /* a throughput was parsed from its output */
	double rate;              /* iterations (or steps, samples) per second */
	const char *rate_unit;    /* "it", "step", "sample": a label, not part of the name */
	bool baseline_ok;         /* the early baseline is known */
	double baseline;          /* in the same unit as rate */
	bool cause_ok;            /* attribution has a verdict */
	enum sp_cause cause;      /* the current attribution */
	uint64_t episodes;        /* slowdown episodes so far */
	bool steps_ok;
	uint64_t steps;           /* progress counter (iterations done), when parsed */
};
/* Append the job families (sparkops_job_*) to an exposition. */
void sp_prom_job_append(struct sp_prom *w, const struct sp_prom_job *job);

/* The whole exposition in one call: the sample, then the job families when
 * job is not NULL. Returns the length needed (>= cap: grow and call again),
 * which is the shape of sp_serve_fill_fn (out/serve_http.h). */
size_t sp_prom_render(char *buf, size_t cap, const struct sp_sample *s, const struct sp_prom_info *info,
		      const struct sp_prom_job *job);

/* Finish: returns the length the whole text needs (>= cap: grow and redo). */
size_t sp_prom_end(struct sp_prom *w);
#endif
