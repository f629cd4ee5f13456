// SPDX-License-Identifier: MIT
#include "watch/trainlog.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 10000-01-01T00:00:00Z: the first instant a 4-digit year cannot write */
#define SP_WHEN_MAX 253402300800.0

/* days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant) */
static long days_from_civil(long y, long m, long d)
{
	y -= m <= 2;
	long era = (y >= 0 ? y : y - 399) / 400;
	long yoe = y - era * 400;
	long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* n digits at *p into *v */
static bool digits(const char **p, int n, long *v)
{
	long x = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return false;
		x = x * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*v = x;
	return true;
}

/* "HH:MM[:SS[.,fff]]" */
static bool clock(const char **pp, double *secs)
{
	const char *p = *pp;
	long hh, mm, ss = 0;
	if (!digits(&p, 2, &hh) || *p++ != ':' || !digits(&p, 2, &mm))
		return false;
	double frac = 0;
	if (*p == ':') {
		p++;
		if (!digits(&p, 2, &ss))
			return false;
		if (*p == '.' || *p == ',') {
			p++;
			double scale = 0.1;
			if (!isdigit((unsigned char)*p))
				return false;
			while (isdigit((unsigned char)*p)) {
				frac += (*p - '0') * scale;
				scale /= 10;
				p++;
			}
		}
	}
	if (hh > 23 || mm > 59 || ss > 60)
		return false;
	*secs = (double)(hh * 3600 + mm * 60 + ss) + frac;
	*pp = p;
	return true;
}

/* "Z", "+HH:MM", "+HHMM", "+HH" or nothing */
static bool zone(const char **pp, long *off, bool *given)
{
	const char *p = *pp;
	*given = false;
	if (*p == 'Z' || *p == 'z') {
		*off = 0;
		*given = true;
		*pp = p + 1;
		return true;
	}
	if (*p != '+' && *p != '-')
		return true;
	int sign = *p == '-' ? -1 : 1;
	p++;
	long hh, mm = 0;
	if (!digits(&p, 2, &hh))
		return false;
	if (*p == ':')
		p++;
	if (isdigit((unsigned char)*p) && !digits(&p, 2, &mm))
		return false;
	if (hh > 23 || mm > 59)
		return false;
	*off = sign * (hh * 3600 + mm * 60);
	*given = true;
	*pp = p;
	return true;
}

int sp_parse_when(const char *s, long offset_s, double day_ref, double *out)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == 0 || n > 64)
		return -1;
	char b[72];
	memcpy(b, s, n);
	b[n] = 0;
	const char *p = b;

	/* Unix seconds (up to the end of year 9999, as the dates below) */
	if (strspn(b, "0123456789.") == n && isdigit((unsigned char)b[0]) && n >= 5) {
		char *end;
		double v = strtod(b, &end);
		if (*end || !isfinite(v) || v >= SP_WHEN_MAX)
			return -1;
		*out = v;
		return 0;
	}
	long y, mo, d;
	double secs = 0;
	if (n >= 10 && b[4] == '-') { /* YYYY-MM-DD... */
		if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' || !digits(&p, 2, &d))
			return -1;
		if (*p == 'T' || *p == 't' || *p == ' ') {
			p++;
			if (!clock(&p, &secs))
				return -1;
		} else if (*p) {
			return -1;
		}
	} else if (n >= 10 && b[2] == '/') { /* MM/DD/YYYY HH:MM:SS */
		if (!digits(&p, 2, &mo) || *p++ != '/' || !digits(&p, 2, &d) || *p++ != '/' || !digits(&p, 4, &y))
			return -1;
		if (*p == ' ') {
			p++;
			if (!clock(&p, &secs))
				return -1;
		}
	} else { /* HH:MM on the log's first day */
		if (!isfinite(day_ref) || !clock(&p, &secs) || *p)
			return -1;
		double local = day_ref + (double)offset_s;
		double day0 = floor(local / 86400.0) * 86400.0;
		*out = day0 + secs - (double)offset_s;
		return 0;
	}
	static const int mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap))
		return -1;
	long off = offset_s;
	bool given;
	if (!zone(&p, &off, &given) || *p)
		return -1;
	*out = (double)days_from_civil(y, mo, d) * 86400.0 + secs - (double)off;
	return 0;
}

int sp_trainlog_init(struct sp_trainlog *tl, const char *regex, long offset_s, sp_train_fn fn, void *ctx,
		     char *err, size_t errlen)
{
	memset(tl, 0, sizeof *tl);
	tl->offset_s = offset_s;
	tl->fn = fn;
	tl->ctx = ctx;
	int rc = regcomp(&tl->re, regex ? regex : SP_TRAIN_DEFAULT_RE, REG_EXTENDED);
	if (rc) {
		regerror(rc, &tl->re, err, errlen);
		return -1;
	}
	tl->re_ok = true;
	if (tl->re.re_nsub < 1) {
		snprintf(err, errlen, "the regex has no capture group for the timestamp");
		sp_trainlog_release(tl);
		return -1;
	}
	return 0;
}

static void line_done(struct sp_trainlog *tl)
{
	tl->lines++;
	if (tl->overlong)
		return;
	tl->line[tl->len] = 0;
	if (memchr(tl->line, 0, tl->len))
		return; /* binary junk; regexec would stop at the NUL anyway */
	/* tqdm redraws with '\r': the text after the last one is what was shown */
	char *s = tl->line;
	size_t end = tl->len;
	while (end && tl->line[end - 1] == '\r') /* a CRLF line end */
		tl->line[--end] = 0;
	char *cr = strrchr(s, '\r');
	if (cr)
		s = cr + 1;
	regmatch_t m[2];
	if (regexec(&tl->re, s, 2, m, 0) != 0 || m[1].rm_so < 0)
		return;
	tl->matched++;
	char ts[72];
	size_t l = (size_t)(m[1].rm_eo - m[1].rm_so);
	if (l >= sizeof ts) {
		tl->unparsed++;
		return;
	}
	memcpy(ts, s + m[1].rm_so, l);
	ts[l] = 0;
	double t;
	if (sp_parse_when(ts, tl->offset_s, NAN, &t) < 0) {
		tl->unparsed++;
		return;
	}
	/* the label is the line without its timestamp (the mark's position says
	 * when), and without the separators and brackets around it */
	memmove(s + m[1].rm_so, s + m[1].rm_eo, strlen(s + m[1].rm_eo) + 1);
	while (*s && (isspace((unsigned char)*s) || strchr("-:|>[],", *s)))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	if (tl->fn)
		tl->fn(tl->ctx, t, s);
}

void sp_trainlog_feed(struct sp_trainlog *tl, const char *buf, size_t len)
{
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t take = nl ? (size_t)(nl - (buf + i)) : len - i;
		if (!tl->overlong) {
			if (tl->len + take < sizeof tl->line) {
				memcpy(tl->line + tl->len, buf + i, take);
				tl->len += take;
			} else {
				tl->overlong = true;
			}
		}
		i += take;
		if (!nl)
			break;
		i++;
		line_done(tl);
		tl->len = 0;
		tl->overlong = false;
	}
}

void sp_trainlog_end(struct sp_trainlog *tl)
{
	if (tl->len > 0 || tl->overlong)
		line_done(tl);
	tl->len = 0;
	tl->overlong = false;
}

void sp_trainlog_release(struct sp_trainlog *tl)
{
	if (tl->re_ok)
		regfree(&tl->re);
	tl->re_ok = false;
}
