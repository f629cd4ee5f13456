/* SPDX-License-Identifier: MIT */
/* The job's throughput, parsed from its output as it streams past: tqdm bars
 * (it/s, s/it, unit prefixes, custom units, \r redraws, ANSI colours),
 * Hugging Face Trainer log dicts, or a user regex with one capture group.
 * Pure and bounded: feed it any bytes in any chunking; it never allocates
 * per chunk and never looks further back than one line (SP_PROGRESS_LINE). */
#ifndef SP_PROGRESS_H
#define SP_PROGRESS_H
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#define SP_PROGRESS_LINE 1024

struct sp_progress { // NOLINT(clang-analyzer-optin.performance.Padding): one per job, grouped by purpose
	/* the line being assembled (bytes after the last \r or \n) */
	char line[SP_PROGRESS_LINE];
	size_t len;
	bool overflow;      /* the current line was longer than the buffer: skip it */
	const regex_t *re;  /* --progress-regex, or NULL */
	/* results */
	bool have_rate;     /* a rate was ever seen */
	double rate;        /* latest rate, in unit (base units: prefixes applied, s/it inverted) */
	char unit[16];      /* "it/s", "samples/s", "rate" (regex) */
	unsigned long updates; /* how many rates were parsed (a new one bumps it) */
	bool have_loss, have_epoch;
	double loss, epoch; /* from Trainer log dicts */
	/* Trainer log dicts without a bar: a rate from successive dicts' epoch
	 * over the wall time between them, in "epoch/h" (set now before feeding) */
	double now;         /* the caller's monotonic seconds for the bytes fed; NAN: unknown */
	bool bar_seen;      /* a tqdm bar (or the regex) gave a rate: dicts give none */
	bool have_dict0;
	double dict_t0, dict_epoch0; /* the last training dict's time and epoch */
	bool have_train_summary;
	double train_samples_per_second; /* the end-of-training train_* line: the
					  * run's mean; the rate only when nothing live gave one */
	double train_runtime_s;
};

void sp_progress_init(struct sp_progress *p, const regex_t *re);
/* The time (monotonic seconds) of the bytes fed next: a Trainer's log dicts
 * give a rate from the epoch's progress between two of them. */
static inline void sp_progress_set_time(struct sp_progress *p, double now) { p->now = now; }
/* Feed output bytes (any chunking; binary-safe). */
void sp_progress_feed(struct sp_progress *p, const char *buf, size_t len);
/* Parse the bytes after the last line end as if the line ended (a tqdm bar
 * sits there between redraws); keeps them for the next feed. */
void sp_progress_flush(struct sp_progress *p);

/* One line, without its terminator (exposed for tests and the fuzzer).
 * Returns true when it yielded a rate. */
bool sp_progress_line(struct sp_progress *p, const char *s, size_t n);
#endif
