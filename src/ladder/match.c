// SPDX-License-Identifier: MIT
/* Needles in a bounded line, and the numbers beside them. See match.h. */
#include "ladder/match.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>

SP_MATCH_TLS const uint64_t *sp_match_bytes;
SP_MATCH_TLS const uint64_t *sp_match_bigrams;

void sp_needle_init(struct sp_needle *nd, const char *s)
{
	nd->len = strlen(s);
	memset(nd->set, 0, sizeof nd->set);
	memset(nd->bg, 0, sizeof nd->bg);
	for (size_t i = 0; i < nd->len; i++) {
		unsigned char c = (unsigned char)s[i];
		nd->set[c >> 6] |= 1ULL << (c & 63);
		if (i > 0) {
			unsigned b = sp_bigram_bit((unsigned char)s[i - 1], c);
			nd->bg[b >> 6] |= 1ULL << (b & 63);
		}
	}
	nd->key_word = 0;
	for (unsigned w = 1; w < 4; w++)
		if (__builtin_popcountll(nd->bg[w]) > __builtin_popcountll(nd->bg[nd->key_word]))
			nd->key_word = w;
	nd->key = nd->bg[nd->key_word];
	nd->s = s;
}

/* Two sets of accumulators, even and odd bytes, keep the updates off one
 * chain. */
void sp_match_sets(const unsigned char *l, size_t n, uint64_t set[4], uint64_t bigrams[4])
{
	uint64_t s0[4] = { 0 }, s1[4] = { 0 }, g0[4] = { 0 }, g1[4] = { 0 };
	if (n)
		s0[l[0] >> 6] |= 1ULL << (l[0] & 63);
	size_t i = 1;
	for (; i + 2 <= n; i += 2) {
		unsigned char a = l[i - 1], c0 = l[i], c1 = l[i + 1];
		s0[c0 >> 6] |= 1ULL << (c0 & 63);
		s1[c1 >> 6] |= 1ULL << (c1 & 63);
		unsigned ga = sp_bigram_bit(a, c0), gb = sp_bigram_bit(c0, c1);
		g0[ga >> 6] |= 1ULL << (ga & 63);
		g1[gb >> 6] |= 1ULL << (gb & 63);
	}
	for (; i < n; i++) {
		unsigned char c = l[i];
		s0[c >> 6] |= 1ULL << (c & 63);
		unsigned g = sp_bigram_bit(l[i - 1], c);
		g0[g >> 6] |= 1ULL << (g & 63);
	}
	for (int w = 0; w < 4; w++) {
		set[w] = s0[w] | s1[w];
		bigrams[w] = g0[w] | g1[w];
	}
}

/* Needles from tables and parameters, keyed by address (open addressing,
 * eight probes; needles are string literals and static tables, so an
 * address names one string for the life of the process). */
#define NEEDLE_SLOTS 64
static _Thread_local struct sp_needle needles[NEEDLE_SLOTS];

static const struct sp_needle *needle_of(const char *s, struct sp_needle *tmp)
{
	size_t h = ((uintptr_t)s >> 3) * 0x9E3779B97F4A7C15ULL >> 58; /* 6 bits: NEEDLE_SLOTS */
	for (size_t k = 0; k < 8; k++) {
		struct sp_needle *e = &needles[(h + k) & (NEEDLE_SLOTS - 1)];
		if (e->s == s)
			return e;
		if (!e->s) {
			tmp = e;
			break;
		}
	}
	sp_needle_init(tmp, s);
	return tmp;
}

const char *sp_has(const char *s, size_t n, const char *needle)
{
	struct sp_needle spare;
	return sp_has_nd(s, n, needle_of(needle, &spare));
}

const char *sp_any_nd(const char *s, size_t n, const char *const *table, struct sp_needle *nd, size_t count,
		      bool *ready)
{
	if (!*ready) {
		for (size_t i = 0; i < count; i++)
			sp_needle_init(&nd[i], table[i]);
		*ready = true;
	}
	for (size_t i = 0; i < count; i++) {
		const char *k = sp_has_nd(s, n, &nd[i]);
		if (k)
			return k;
	}
	return NULL;
}

static bool line_has_byte(unsigned char c)
{
	return sp_match_bytes[c >> 6] >> (c & 63) & 1;
}

const char *sp_has_ci(const char *s, size_t n, const char *needle)
{
	size_t m = strlen(needle);
	if (m == 0 || m > n)
		return NULL;
	if (sp_match_bytes)
		for (size_t i = 0; i < m; i++) {
			unsigned char c = (unsigned char)needle[i];
			if (!line_has_byte((unsigned char)tolower(c)) && !line_has_byte((unsigned char)toupper(c)))
				return NULL;
		}
	/* each adjacent pair, in one of its cases, among the line's bigrams */
	const uint64_t *lg = sp_match_bigrams;
	if (lg)
		for (size_t i = 1; i < m; i++) {
			unsigned char a = (unsigned char)needle[i - 1], b = (unsigned char)needle[i];
			unsigned char al = (unsigned char)tolower(a), au = (unsigned char)toupper(a);
			unsigned char bl = (unsigned char)tolower(b), bu = (unsigned char)toupper(b);
			unsigned g0 = sp_bigram_bit(al, bl), g1 = sp_bigram_bit(al, bu);
			unsigned g2 = sp_bigram_bit(au, bl), g3 = sp_bigram_bit(au, bu);
			if (!((lg[g0 >> 6] >> (g0 & 63)) & 1) && !((lg[g1 >> 6] >> (g1 & 63)) & 1) &&
			    !((lg[g2 >> 6] >> (g2 & 63)) & 1) && !((lg[g3 >> 6] >> (g3 & 63)) & 1))
				return NULL;
		}
	const int first = tolower((unsigned char)needle[0]);
	for (size_t i = 0; i + m <= n; i++)
		if (tolower((unsigned char)s[i]) == first && strncasecmp(s + i, needle, m) == 0)
			return s + i;
	return NULL;
}

/* ---- the numbers beside a needle ---- */

size_t sp_match_size(const char *s, uint64_t *bytes)
{
	const char *p = s;
	if (!isdigit((unsigned char)*p))
		return 0;
	char *e;
	double v = strtod(p, &e);
	if (e == p || !isfinite(v) || v < 0)
		return 0;
	/* no hex floats or exponents: sizes in logs are plain decimals */
	for (const char *q = p; q < e; q++)
		if (!isdigit((unsigned char)*q) && *q != '.')
			return 0;
	p = e;
	while (*p == ' ')
		p++;
	static const struct {
		const char *u;
		double mul;
	} units[] = {
		{ "TiB", 1099511627776.0 }, { "GiB", 1073741824.0 }, { "MiB", 1048576.0 }, { "KiB", 1024.0 },
		{ "TB", 1e12 }, { "GB", 1e9 }, { "MB", 1e6 }, { "KB", 1e3 }, { "kB", 1e3 },
		{ "bytes", 1.0 }, { "B", 1.0 },
	};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		size_t l = strlen(units[i].u);
		if (strncmp(p, units[i].u, l) == 0 && !isalpha((unsigned char)p[l])) {
			double b = v * units[i].mul;
			if (b >= 1.8e19)
				return 0;
			*bytes = (uint64_t)llround(b);
			return (size_t)(p + l - s);
		}
	}
	return 0;
}

bool sp_size_after_nd(const char *s, size_t n, const struct sp_needle *key, uint64_t *out)
{
	const char *k = sp_has_nd(s, n, key);
	if (!k)
		return false;
	const char *p = k + key->len;
	while (*p == ' ')
		p++;
	return sp_match_size(p, out) > 0;
}

bool sp_size_before_nd(const char *s, size_t n, const struct sp_needle *key, uint64_t *out)
{
	const char *k = sp_has_nd(s, n, key);
	if (!k)
		return false;
	/* walk back over spaces, the unit, spaces, the number */
	const char *p = k;
	while (p > s && p[-1] == ' ')
		p--;
	while (p > s && isalpha((unsigned char)p[-1]))
		p--;
	while (p > s && p[-1] == ' ')
		p--;
	while (p > s && (isdigit((unsigned char)p[-1]) || p[-1] == '.'))
		p--;
	return sp_match_size(p, out) > 0;
}

uint64_t sp_number_after_nd(const char *s, size_t n, const struct sp_needle *key)
{
	const char *k = sp_has_nd(s, n, key);
	if (!k)
		return 0;
	const char *p = k + key->len;
	while (*p == ' ' || *p == '=' || *p == ':' || *p == '"' || *p == '\'')
		p++;
	if (!isdigit((unsigned char)*p))
		return 0;
	uint64_t v = 0;
	for (int i = 0; isdigit((unsigned char)*p) && i < 12; i++, p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

uint64_t sp_count_at(const char *p)
{
	while (*p == ' ' || *p == '=' || *p == ':')
		p++;
	if (!isdigit((unsigned char)*p))
		return 0;
	uint64_t v = 0;
	for (int i = 0; i < 24 && (isdigit((unsigned char)*p) || (*p == ',' && isdigit((unsigned char)p[1]))); p++, i++)
		if (*p != ',' && v < UINT64_MAX / 10)
			v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

uint64_t sp_count_after_nd(const char *s, size_t n, const struct sp_needle *key)
{
	const char *k = sp_has_nd(s, n, key);
	return k ? sp_count_at(k + key->len) : 0;
}

double sp_pct_at(const char *p)
{
	while (*p == ' ' || *p == '=' || *p == ':' || *p == '(')
		p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	char tmp[24];
	size_t o = 0;
	while (o + 1 < sizeof tmp && (isdigit((unsigned char)*p) || *p == '.'))
		tmp[o++] = *p++;
	tmp[o] = 0;
	double v = strtod(tmp, NULL);
	return isfinite(v) && v >= 0 && v <= 100.0001 ? v : -1;
}
