/* SPDX-License-Identifier: MIT */
/* Times people type (--from/--to) and times training logs print, and a
 * streaming reader that pulls timestamped lines out of a training log with a
 * POSIX extended regex whose first group is the timestamp. */
#ifndef SP_TRAINLOG_H
#define SP_TRAINLOG_H
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

/* Python logging / HF / Lightning "2026-11-29 09:40:12,345", ISO-8601 with T
 * and an offset, and the HF example scripts' "11/29/2026 09:40:12". */
#define SP_TRAIN_DEFAULT_RE                                                            \
	"([0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}([,.][0-9]+)?(Z|[+-][0-9]{2}:?[0-9]{2})?" \
	"|[0-9]{2}/[0-9]{2}/[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2})"

/* Parse a time: Unix seconds ("1764405612.5"); "YYYY-MM-DD[T| ]HH:MM[:SS[.,fff]]"
 * with an optional "Z" / "+HH:MM" / "+HHMM" (without one: at offset_s east of
 * UTC); "YYYY-MM-DD" (midnight); "MM/DD/YYYY HH:MM:SS"; or "HH:MM[:SS]" on
 * the day that contains day_ref (a Unix time; NAN refuses this form).
 * Returns 0 or -1. */
int sp_parse_when(const char *s, long offset_s, double day_ref, double *out);

#define SP_TRAIN_LINE_MAX 8192

/* line: the matched line without its timestamp, trimmed */
typedef void (*sp_train_fn)(void *ctx, double t, const char *line);

struct sp_trainlog {
	regex_t re;
	bool re_ok;
	long offset_s;
	sp_train_fn fn;
	void *ctx;
	char line[SP_TRAIN_LINE_MAX];
	size_t len;
	bool overlong;
	long lines, matched, unparsed; /* unparsed: matched, but the group is no time */
};

/* Returns 0, or -1 with the regex error (or "no capture group") in err. */
int sp_trainlog_init(struct sp_trainlog *tl, const char *regex, long offset_s, sp_train_fn fn, void *ctx,
		     char *err, size_t errlen);
void sp_trainlog_feed(struct sp_trainlog *tl, const char *buf, size_t len);
void sp_trainlog_end(struct sp_trainlog *tl);
void sp_trainlog_release(struct sp_trainlog *tl);
#endif
