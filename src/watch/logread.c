// SPDX-License-Identifier: MIT
#include "watch/logread.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sp_logread_init(struct sp_logread *rd, sp_logread_fn fn, void *ctx, bool lenient)
{
	memset(rd, 0, sizeof *rd);
	rd->on_row = fn;
	rd->ctx = ctx;
	rd->lenient = lenient;
	rd->lineno = 1;
	rd->last_t = NAN;
}

/* A bad row: fail, or (lenient) count it and go on. The header is never
 * lenient: a file that is not a sparkops log is not one row gone wrong. */
static int bad(struct sp_logread *rd, const char *why)
{
	if (rd->lenient && rd->header_seen) {
		rd->rows_skipped++;
		if (!rd->first_bad_line)
			rd->first_bad_line = rd->lineno;
		return 0;
	}
	snprintf(rd->err, sizeof rd->err, "line %ld: %s", rd->lineno, why);
	rd->failed = true;
	return -1;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

/* One whole line, s[0..n): in the caller's buffer, or gathered in rd->line */
static int line_done(struct sp_logread *rd, const char *s, size_t n)
{
	if (!rd->header_seen) {
		/* a UTF-8 byte order mark from an editor is not a different format */
		if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
			s += 3;
			n -= 3;
		}
		rd->ncols = rd->overlong ? 0 : sp_logrow_header_columns(s, n);
		if (rd->ncols == 0)
			return bad(rd, "not a sparkops log (the header is not the run/watch CSV header, format version 1 or 2)");
		rd->header_seen = true;
		return 0;
	}
	if (rd->overlong) {
		char why[80];
		snprintf(why, sizeof why, "longer than %d bytes", SP_LOGREAD_LINE_MAX);
		return bad(rd, why);
	}
	if (blank(s, n))
		return 0; /* an empty line carries nothing; not worth failing a log for */
	char err[200], why[260];
	/* the common row in one pass (a row it takes has no NUL byte); any
	 * other through the checks and the general parser */
	if (sp_logrow_parse_fast(s, n, rd->ncols, &rd->row)) {
	} else if (memchr(s, 0, n)) {
		return bad(rd, "a NUL byte in the row");
	} else if (sp_logrow_parse_n(s, n, rd->ncols, &rd->row, err, sizeof err) < 0) {
		/* the writer ends a row it could not finish (disk full) with '\n' and
		 * goes on: a short row that starts like a row is most likely that */
		const char *g = strncmp(err, "expected ", 9) == 0 ? strstr(err, ", got ") : NULL;
		long got = g ? strtol(g + 6, NULL, 10) : -1;
		bool cut = g && got < rd->ncols && !strstr(g, "or more") && n > 11 && s[4] == '-' &&
			   s[10] == 'T';
		snprintf(why, sizeof why, "%s%s", err, cut ? " (a row cut short, as a failed write leaves it)" : "");
		return bad(rd, why);
	}
	double t = rd->row.unix_time;
	if (isfinite(rd->last_t) && t < rd->last_t - SP_LOGREAD_BACKSTEP_S) {
		snprintf(why, sizeof why, "time %.3f is earlier than the row before (%.3f): rows out of order", t,
			 rd->last_t);
		return bad(rd, why);
	}
	if (!isfinite(rd->last_t) || t > rd->last_t)
		rd->last_t = t;
	rd->rows++;
	if (rd->on_row && rd->on_row(rd->ctx, &rd->row, rd->lineno)) {
		rd->stopped = true;
		return -1;
	}
	return 0;
}

int sp_logread_feed(struct sp_logread *rd, const char *buf, size_t len)
{
	if (rd->failed || rd->stopped)
		return -1;
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t take = nl ? (size_t)(nl - (buf + i)) : len - i;
		if (nl && rd->len == 0 && !rd->overlong && take <= sizeof rd->line) {
			/* the whole line is in buf: read it there, no copy */
			int rc = line_done(rd, buf + i, take);
			i += take + 1;
			rd->lineno++;
			if (rc < 0)
				return -1;
			continue;
		}
		if (!rd->overlong) {
			if (rd->len + take <= sizeof rd->line) {
				memcpy(rd->line + rd->len, buf + i, take);
				rd->len += take;
			} else {
				rd->overlong = true;
			}
		}
		i += take;
		if (!nl)
			break;
		i++; /* the '\n' */
		int rc = line_done(rd, rd->line, rd->len);
		rd->len = 0;
		rd->overlong = false;
		rd->lineno++;
		if (rc < 0)
			return -1;
	}
	return 0;
}

int sp_logread_end(struct sp_logread *rd)
{
	if (rd->failed || rd->stopped)
		return -1;
	if (rd->len > 0 || rd->overlong) {
		if (!rd->header_seen) {
			snprintf(rd->err, sizeof rd->err, "line 1: not a sparkops log (%s)",
				 rd->overlong ? "the first line is too long for a header" : "no complete header line");
			rd->failed = true;
			return -1;
		}
		/* a row cut off mid-line: the machine stopped while it was written */
		rd->last_row_incomplete = true;
		rd->len = 0;
		rd->overlong = false;
	}
	if (!rd->header_seen) {
		snprintf(rd->err, sizeof rd->err, "not a sparkops log (empty)");
		rd->failed = true;
		return -1;
	}
	return 0;
}
