// SPDX-License-Identifier: MIT
#include "util/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A number with an optional suffix; the suffix is returned through *suffix. */
static int num_prefix(const char *s, double *v, const char **suffix)
{
	while (isspace((unsigned char)*s))
		s++;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	/* refuse hex, inf and nan which strtod would take */
	if (!isdigit((unsigned char)*s) && *s != '.')
		return -1;
	errno = 0;
	char *end;
	double d = strtod(s, &end);
	if (errno || end == s || !isfinite(d) || d < 0)
		return -1;
	if (end > s + 1 && (s[1] == 'x' || s[1] == 'X'))
		return -1;
	while (isspace((unsigned char)*end))
		end++;
	*v = d;
	*suffix = end;
	return 0;
}

static int suffix_is(const char *s, const char *want)
{
	size_t n = strlen(want);
	if (strncasecmp(s, want, n) != 0)
		return 0;
	s += n;
	while (isspace((unsigned char)*s))
		s++;
	return *s == 0;
}

int sp_parse_size(const char *s, uint64_t *out)
{
	double v;
	const char *suf;
	if (!s || num_prefix(s, &v, &suf) < 0)
		return -1;
	static const struct {
		const char *sfx;
		double mul;
	} tab[] = {
		{ "", 1 },
		{ "b", 1 },
		{ "k", 1024.0 },
		{ "kib", 1024.0 },
		{ "kb", 1e3 },
		{ "m", 1048576.0 },
		{ "mib", 1048576.0 },
		{ "mb", 1e6 },
		{ "g", 1073741824.0 },
		{ "gib", 1073741824.0 },
		{ "gb", 1e9 },
		{ "t", 1099511627776.0 },
		{ "tib", 1099511627776.0 },
		{ "tb", 1e12 },
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
		if (suffix_is(suf, tab[i].sfx)) {
			/* round in double: llround() goes through long long, which
			 * silently turned every size from 2^63 to 2^64 into 2^63 */
			double b = round(v * tab[i].mul);
			if (!(b < 18446744073709551616.0)) /* 2^64 */
				return -1;
			*out = (uint64_t)b;
			return 0;
		}
	}
	return -1;
}

int sp_parse_size_unit(const char *s, uint64_t *out)
{
	double v;
	const char *suf;
	if (!s || num_prefix(s, &v, &suf) < 0)
		return -1;
	/* a bare number: bytes to the parser, but a user who types --budget 10
	 * means 10 GiB; only 0 is the same in every unit */
	if (suffix_is(suf, "") && v != 0)
		return -2;
	return sp_parse_size(s, out);
}

int sp_parse_count(const char *s, double *out)
{
	double v;
	const char *suf;
	if (!s || num_prefix(s, &v, &suf) < 0)
		return -1;
	double mul;
	if (suffix_is(suf, ""))
		mul = 1;
	else if (suffix_is(suf, "k"))
		mul = 1e3;
	else if (suffix_is(suf, "m"))
		mul = 1e6;
	else if (suffix_is(suf, "b"))
		mul = 1e9;
	else if (suffix_is(suf, "t"))
		mul = 1e12;
	else
		return -1;
	*out = v * mul;
	return isfinite(*out) ? 0 : -1;
}

int sp_parse_duration(const char *s, double *seconds)
{
	double v;
	const char *suf;
	if (!s || num_prefix(s, &v, &suf) < 0)
		return -1;
	double mul;
	if (suffix_is(suf, "") || suffix_is(suf, "s"))
		mul = 1;
	else if (suffix_is(suf, "ms"))
		mul = 1e-3;
	else if (suffix_is(suf, "m") || suffix_is(suf, "min"))
		mul = 60;
	else if (suffix_is(suf, "h"))
		mul = 3600;
	else if (suffix_is(suf, "d"))
		mul = 86400;
	else
		return -1;
	*seconds = v * mul;
	return isfinite(*seconds) ? 0 : -1;
}

size_t sp_u64_digits(char *out, uint64_t v)
{
	char rev[20];
	size_t n = 0;
	do {
		rev[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = rev[n - 1 - i];
	return n;
}

int sp_fmt_fixed(char *buf, size_t n, int decimals, double v)
{
	static const double p10[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6 };
	if (decimals < 0 || decimals > 6 || !(fabs(v) < 1e12))
		return snprintf(buf, n, "%.*f", decimals, v);
	double scaled = fabs(v) * p10[decimals];
	double fl = floor(scaled), frac = scaled - fl;
	/* the product's rounding error is half an ulp of scaled: far enough
	 * from a half, rounding it rounds the exact value the same way */
	if (scaled >= 4e15 || fabs(frac - 0.5) <= scaled * 1e-15 + 1e-12)
		return snprintf(buf, n, "%.*f", decimals, v);
	uint64_t q = (uint64_t)fl + (frac > 0.5);
	if (q == 0 && signbit(v))
		return snprintf(buf, n, "%.*f", decimals, v); /* "-0.0" */
	char tmp[40];
	int len = 0;
	uint64_t div = (uint64_t)p10[decimals], fp = q % div;
	if (v < 0)
		tmp[len++] = '-';
	len += (int)sp_u64_digits(tmp + len, q / div);
	if (decimals) {
		tmp[len++] = '.';
		for (int d = decimals - 1; d >= 0; d--) {
			tmp[len + d] = (char)('0' + fp % 10);
			fp /= 10;
		}
		len += decimals;
	}
	tmp[len] = 0;
	if (n) {
		size_t c = (size_t)len < n ? (size_t)len : n - 1;
		memcpy(buf, tmp, c);
		buf[c] = 0;
	}
	return len;
}

const char *sp_fmt_gib(char *buf, size_t n, double bytes)
{
	if (!isfinite(bytes)) {
		snprintf(buf, n, "unknown");
		return buf;
	}
	if (bytes != 0 && fabs(bytes) < 0.05 * (double)SP_GiB)
		return sp_fmt_bytes(buf, n, bytes);
	snprintf(buf, n, "%.1f GiB", bytes / (double)SP_GiB);
	return buf;
}

const char *sp_fmt_bytes(char *buf, size_t n, double bytes)
{
	static const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	if (!isfinite(bytes)) {
		snprintf(buf, n, "unknown");
		return buf;
	}
	int i = 0;
	double v = bytes < 0 ? -bytes : bytes;
	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, n, "%s%.0f B", bytes < 0 ? "-" : "", v);
	else
		snprintf(buf, n, "%s%.1f %s", bytes < 0 ? "-" : "", v, u[i]);
	return buf;
}

const char *sp_fmt_duration(char *buf, size_t n, double s)
{
	if (!(s >= 0))
		s = 0;
	long t = (long)(s + 0.5);
	if (t >= 3600)
		snprintf(buf, n, "%ldh%02ldm", t / 3600, (t / 60) % 60);
	else if (t >= 60)
		snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
	else if (s < 10 && s != (double)t)
		snprintf(buf, n, "%.1fs", s);
	else
		snprintf(buf, n, "%lds", t);
	return buf;
}

/* ---- bounded numbers -------------------------------------------------------- */

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static int only_blanks_left(const char *end)
{
	while (*end == ' ' || *end == '\t' || *end == '\n')
		end++;
	return *end == 0;
}

int sp_parse_long_range(const char *s, long lo, long hi, long *out)
{
	if (!s)
		return -EINVAL;
	s = skip_blanks(s);
	/* strtol would skip other white space and take a sign after it: refuse */
	if (!*s || !(isdigit((unsigned char)*s) || *s == '-' || *s == '+'))
		return -EINVAL;
	errno = 0;
	char *end;
	long v = strtol(s, &end, 10);
	if (end == s || !only_blanks_left(end))
		return -EINVAL;
	if (errno == ERANGE || v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}

int sp_parse_double_range(const char *s, double lo, double hi, double *out)
{
	if (!s)
		return -EINVAL;
	s = skip_blanks(s);
	/* digits, a sign or a point first: no "nan", "inf" or hex through strtod */
	if (!*s || !(isdigit((unsigned char)*s) || *s == '-' || *s == '+' || *s == '.'))
		return -EINVAL;
	const char *p = s + (*s == '-' || *s == '+');
	if (*p == '0' && (p[1] == 'x' || p[1] == 'X'))
		return -EINVAL;
	if (!(isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))))
		return -EINVAL;
	errno = 0;
	char *end;
	double v = strtod(s, &end);
	if (end == s || !only_blanks_left(end))
		return -EINVAL;
	if (errno == ERANGE || !isfinite(v) || v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}
