/* SPDX-License-Identifier: MIT */
/* Streaming reader for the run/watch CSV log: bytes in (any chunking), rows
 * out through a callback. Fixed memory: one line buffer; a line longer than
 * it is a bad row, never a reason to grow. A push parser over buffers, so the
 * fuzzer and the tests drive it without files. */
#ifndef SP_LOGREAD_H
#define SP_LOGREAD_H
#include "watch/logrow.h"

#include <stdbool.h>
#include <stddef.h>

#define SP_LOGREAD_LINE_MAX 4096
/* a row may step back this much (event and sample times interleave);
 * further back is an out-of-order row */
#define SP_LOGREAD_BACKSTEP_S 1.0

/* Called for each good row; return non-zero to stop reading. */
typedef int (*sp_logread_fn)(void *ctx, const struct sp_logrow *r, long lineno);

struct sp_logread {
	sp_logread_fn on_row;
	void *ctx;
	bool lenient;        /* skip and count bad rows instead of failing */
	/* state */
	char line[SP_LOGREAD_LINE_MAX];
	size_t len;
	bool overlong;       /* the current line did not fit */
	bool header_seen;
	int ncols;           /* the columns of the header's format version */
	long lineno;         /* of the line being assembled (1-based) */
	double last_t;
	struct sp_logrow row;
	/* results */
	long rows;           /* good rows handed out */
	long rows_skipped;   /* bad rows skipped (lenient) */
	long first_bad_line; /* first skipped line, 0 none */
	bool last_row_incomplete;
	bool failed;         /* stop: err holds "line N: why" */
	bool stopped;        /* the callback asked to stop */
	char err[320];
};

void sp_logread_init(struct sp_logread *rd, sp_logread_fn fn, void *ctx, bool lenient);
/* Feed bytes. Returns 0, or -1 once failed (err says why) or stopped. */
int sp_logread_feed(struct sp_logread *rd, const char *buf, size_t len);
/* End of input: a last line without its '\n' is a row cut off (the writer
 * always ends rows), so it is dropped and last_row_incomplete is set.
 * Returns 0 or -1 (failed: e.g. no header at all). */
int sp_logread_end(struct sp_logread *rd);
#endif
