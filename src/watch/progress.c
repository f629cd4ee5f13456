// SPDX-License-Identifier: MIT
/* Throughput from the job's own output. See progress.h. */
#include "watch/progress.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sp_progress_init(struct sp_progress *p, const regex_t *re)
{
	memset(p, 0, sizeof *p);
	p->re = re;
	p->rate = NAN;
	p->loss = p->epoch = NAN;
	p->train_samples_per_second = p->train_runtime_s = NAN;
	p->now = NAN;
}

/* Copy s without ANSI escape sequences (CSI "ESC [ ... final", and ESC x). */
static size_t strip_ansi(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == 0x1b) {
			if (i + 1 < n && s[i + 1] == '[') {
				i += 2;
				while (i < n && !((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7e))
					i++;
			} else {
				i++; /* ESC and the next byte */
			}
			continue;
		}
		out[o++] = c ? (char)c : ' ';
	}
	out[o] = 0;
	return o;
}

/* Bounded decimal number at s[i..n): digits[.digits]; returns the end index or i. */
static size_t scan_number(const char *s, size_t i, size_t n, double *v)
{
	size_t j = i;
	double x = 0;
	int digits = 0;
	while (j < n && isdigit((unsigned char)s[j]) && digits < 15) {
		x = x * 10 + (s[j] - '0');
		j++;
		digits++;
	}
	if (!digits || (j < n && isdigit((unsigned char)s[j])))
		return i;
	if (j + 1 < n && s[j] == '.' && isdigit((unsigned char)s[j + 1])) {
		double f = 0.1;
		j++;
		int fd = 0;
		while (j < n && isdigit((unsigned char)s[j])) {
			if (fd++ < 9)
				x += (s[j] - '0') * f;
			f /= 10;
			j++;
		}
	}
	*v = x;
	return j;
}

static bool unit_char(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool ends_token(const char *s, size_t j, size_t n)
{
	return j >= n || s[j] == ' ' || s[j] == ',' || s[j] == ']' || s[j] == ')' || s[j] == '|' ||
	       s[j] == '\t' || s[j] == ';';
}

/* Base units tqdm's unit_scale may put a k/M/G/T prefix on. */
static bool prefixable(const char *u, size_t n, const char *seen)
{
	static const char *const base[] = { "it", "B", "b", "samples", "sample", "tokens", "token", "tok",
					    "steps", "step", "img", "ex", "seq", "batches", NULL };
	for (int i = 0; base[i]; i++)
		if (strlen(base[i]) == n && memcmp(base[i], u, n) == 0)
			return true;
	/* the same unit was seen without a prefix earlier ("950samples/s") */
	size_t sl = strlen(seen);
	return sl > 2 && sl - 2 == n && memcmp(seen, u, n) == 0;
}

static double prefix_mul(char c)
{
	switch (c) {
	case 'k': return 1e3;
	case 'M': return 1e6;
	case 'G': return 1e9;
	case 'T': return 1e12;
	case 'P': return 1e15;
	default: return 0;
	}
}

/* The last "<num><unit>/s" or "<num>s/<unit>" token of a line. */
static bool parse_rate(struct sp_progress *p, const char *s, size_t n)
{
	bool found = false;
	double best = 0;
	char best_unit[16] = "";
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			continue;
		if (i > 0 && !(s[i - 1] == ' ' || s[i - 1] == ',' || s[i - 1] == '[' || s[i - 1] == '(' ||
			       s[i - 1] == '|' || s[i - 1] == '=' || s[i - 1] == ':' || s[i - 1] == '\t'))
			continue;
		double v;
		size_t j = scan_number(s, i, n, &v);
		if (j == i)
			continue;
		size_t k = j;
		if (k < n && s[k] == ' ')
			k++; /* "45.2 tokens/s" */
		/* "3.33s/it" */
		if (k + 2 < n && s[k] == 's' && s[k + 1] == '/' && unit_char(s[k + 2])) {
			size_t u0 = k + 2, u1 = u0;
			while (u1 < n && unit_char(s[u1]) && u1 - u0 < 12)
				u1++;
			if (ends_token(s, u1, n) && v > 0) {
				best = 1.0 / v;
				snprintf(best_unit, sizeof best_unit, "%.*s/s", (int)(u1 - u0), s + u0);
				found = true;
			}
			i = u1;
			continue;
		}
		/* "3.00it/s", "1.02kit/s", "12.5samples/s" */
		size_t u0 = k, u1 = k;
		while (u1 < n && unit_char(s[u1]) && u1 - u0 < 13)
			u1++;
		if (u1 == u0 || u1 + 1 >= n || s[u1] != '/' || s[u1 + 1] != 's' ||
		    !ends_token(s, u1 + 2, n)) {
			i = j > i ? j - 1 : i;
			continue;
		}
		const char *u = s + u0;
		size_t un = u1 - u0;
		double mul = 1;
		if (un > 1 && prefix_mul(u[0]) > 0 && prefixable(u + 1, un - 1, p->unit)) {
			mul = prefix_mul(u[0]);
			u++;
			un--;
		}
		best = v * mul;
		snprintf(best_unit, sizeof best_unit, "%.*s/s", (int)un, u);
		found = true;
		i = u1 + 1;
	}
	if (!found || !isfinite(best))
		return false;
	p->rate = best;
	snprintf(p->unit, sizeof p->unit, "%s", best_unit);
	p->have_rate = true;
	p->updates++;
	return true;
}

/* 'key': 1.5  /  'key': '1.5'  /  "key": 1.5 — in a Trainer log dict */
static bool dict_num(const char *s, size_t n, const char *key, double *out)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i + kl + 2 <= n; i++) {
		if ((s[i] != '\'' && s[i] != '"') || memcmp(s + i + 1, key, kl) != 0 || s[i + 1 + kl] != s[i])
			continue;
		size_t j = i + kl + 2;
		while (j < n && s[j] == ' ')
			j++;
		if (j >= n || s[j] != ':')
			continue;
		j++;
		while (j < n && s[j] == ' ')
			j++;
		if (j < n && (s[j] == '\'' || s[j] == '"'))
			j++;
		char num[40];
		size_t m = 0;
		while (j < n && m + 1 < sizeof num && (isdigit((unsigned char)s[j]) || strchr("+-.eE", s[j])))
			num[m++] = s[j++];
		num[m] = 0;
		if (!m)
			return false;
		char *end;
		double v = strtod(num, &end);
		if (*end || !isfinite(v))
			return false;
		*out = v;
		return true;
	}
	return false;
}

static bool parse_dict(struct sp_progress *p, const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && s[i] == ' ')
		i++;
	if (i >= n || s[i] != '{')
		return false;
	double v;
	if (dict_num(s, n, "loss", &v)) {
		p->loss = v;
		p->have_loss = true;
	}
	bool train_dict = dict_num(s, n, "loss", &v) && !dict_num(s, n, "eval_loss", &v);
	if (dict_num(s, n, "epoch", &v)) {
		p->epoch = v;
		p->have_epoch = true;
	}
	if (dict_num(s, n, "train_runtime", &v))
		p->train_runtime_s = v;
	if (dict_num(s, n, "train_samples_per_second", &v) && v >= 0) {
		p->train_samples_per_second = v;
		p->have_train_summary = true;
		/* the end-of-training line is the mean over the whole run: it is
		 * kept apart, and becomes the rate only when nothing live gave one
		 * (a last rate is the last one the job showed, not the average) */
		if (p->have_rate)
			return false;
		p->rate = v;
		snprintf(p->unit, sizeof p->unit, "samples/s");
		p->have_rate = true;
		p->updates++;
		return true;
	}
	/* a training dict (loss, epoch; not an eval one): the epoch's progress
	 * since the previous one over the wall time between them, in epoch/h */
	if (!train_dict || !p->have_epoch || p->bar_seen || !isfinite(p->now))
		return false;
	bool derived = false;
	if (p->have_dict0 && p->epoch > p->dict_epoch0 && p->now > p->dict_t0) {
		p->rate = (p->epoch - p->dict_epoch0) / (p->now - p->dict_t0) * 3600.0;
		snprintf(p->unit, sizeof p->unit, "epoch/h");
		p->have_rate = true;
		p->updates++;
		derived = true;
	}
	/* the first dict, a rate taken, or a restart (the epoch went back): the
	 * next pair starts here; otherwise (the same epoch, or two dicts read at
	 * once) the older anchor stays, so the next rate spans both */
	if (!p->have_dict0 || derived || p->epoch < p->dict_epoch0) {
		p->dict_t0 = p->now;
		p->dict_epoch0 = p->epoch;
		p->have_dict0 = true;
	}
	return derived;
}

static bool parse_regex(struct sp_progress *p, const char *s)
{
	regmatch_t m[2];
	if (regexec(p->re, s, 2, m, 0) != 0 || m[1].rm_so < 0)
		return false;
	char num[48];
	size_t l = (size_t)(m[1].rm_eo - m[1].rm_so);
	if (l == 0 || l >= sizeof num)
		return false;
	memcpy(num, s + m[1].rm_so, l);
	num[l] = 0;
	char *end;
	double v = strtod(num, &end);
	if (*end || !isfinite(v) || v < 0)
		return false;
	p->rate = v;
	snprintf(p->unit, sizeof p->unit, "rate");
	p->have_rate = true;
	p->updates++;
	return true;
}

bool sp_progress_line(struct sp_progress *p, const char *s, size_t n)
{
	char buf[SP_PROGRESS_LINE + 1] = ""; /* zeroed: the analyzer cannot follow strip_ansi's bound */
	if (n > SP_PROGRESS_LINE)
		n = SP_PROGRESS_LINE;
	size_t m = strip_ansi(s, n, buf, sizeof buf);
	if (m == 0)
		return false;
	if (p->re)
		return parse_regex(p, buf);
	if (parse_dict(p, buf, m))
		return true;
	if (parse_rate(p, buf, m)) {
		p->bar_seen = true;
		return true;
	}
	return false;
}

void sp_progress_feed(struct sp_progress *p, const char *buf, size_t len)
{
	size_t i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && buf[j] != '\r' && buf[j] != '\n')
			j++;
		size_t chunk = j - i;
		if (!p->overflow) {
			if (p->len + chunk <= sizeof p->line) {
				memcpy(p->line + p->len, buf + i, chunk);
				p->len += chunk;
			} else {
				p->overflow = true;
			}
		}
		if (j < len) { /* a line end */
			if (!p->overflow && p->len)
				sp_progress_line(p, p->line, p->len);
			p->len = 0;
			p->overflow = false;
			j++;
		}
		i = j;
	}
}

void sp_progress_flush(struct sp_progress *p)
{
	if (!p->overflow && p->len)
		sp_progress_line(p, p->line, p->len);
}
