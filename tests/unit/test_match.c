// SPDX-License-Identifier: MIT
/* The needle matcher (ladder/match.c): the line's filter changes the time,
 * never the answer (checked against memmem and a case-blind scan over
 * generated lines and needles, through the per-call-site and the per-address
 * caches, past the address cache's 64 slots); the numbers beside a needle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ladder/match.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* a small alphabet, so that needles often occur and often nearly occur */
static const char alpha[] = "abcAB :.=%0129";

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static unsigned next(unsigned mod)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % mod);
}

static void gen(char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = alpha[next(sizeof alpha - 1)];
	buf[n] = 0;
}

static const char *ci_scan(const char *s, size_t n, const char *needle)
{
	size_t m = strlen(needle);
	if (m == 0)
		return NULL;
	for (size_t i = 0; i + m <= n; i++)
		if (strncasecmp(s + i, needle, m) == 0)
			return s + i;
	return NULL;
}

/* Needles from a table (sp_has's address cache): 200 of them, so that most
 * find no slot and are measured on each call; the filter of the line on or
 * off, the answer is memmem's. */
static void filter_never_changes_the_answer(void **st)
{
	(void)st;
	static char needles[200][6];
	for (int i = 0; i < 200; i++)
		gen(needles[i], 1 + (size_t)next(5));
	char line[80];
	uint64_t set[4], bg[4];
	int found = 0;
	for (int round = 0; round < 400; round++) {
		size_t n = (size_t)next(sizeof line);
		gen(line, n);
		sp_match_sets((const unsigned char *)line, n, set, bg);
		for (int i = 0; i < 200; i++) {
			const char *want = memmem(line, n, needles[i], strlen(needles[i]));
			const char *want_ci = ci_scan(line, n, needles[i]);
			sp_match_filter(NULL, NULL);
			assert_ptr_equal(sp_has(line, n, needles[i]), want);
			assert_ptr_equal(sp_has_ci(line, n, needles[i]), want_ci);
			sp_match_filter(set, bg);
			assert_ptr_equal(sp_has(line, n, needles[i]), want);
			assert_ptr_equal(sp_has_ci(line, n, needles[i]), want_ci);
			found += want != NULL;
		}
	}
	sp_match_filter(NULL, NULL);
	assert_true(found > 1000); /* the generator makes hits, not only misses */
}

/* SP_HAS: a literal measured once at its call site, the same answers */
static void literal_needles(void **st)
{
	(void)st;
	const char *s = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB";
	size_t n = strlen(s);
	uint64_t set[4], bg[4];
	sp_match_sets((const unsigned char *)s, n, set, bg);
	for (int pass = 0; pass < 2; pass++) {
		sp_match_filter(pass ? set : NULL, pass ? bg : NULL);
		assert_ptr_equal(SP_HAS(s, n, "CUDA out of memory"), strstr(s, "CUDA out of memory"));
		assert_null(SP_HAS(s, n, "CUDA error: out of memory"));
		assert_null(SP_HAS(s, n, "memory. Tried to allocate 20.00 MiB!"));
		assert_ptr_equal(SP_HAS(s, n, "MiB"), s + n - 3);
		assert_ptr_equal(SP_HAS(s, n, "t"), strchr(s, 't'));
		/* a needle longer than the text, or the text cut before the needle's end */
		assert_null(SP_HAS(s, 10, "OutOfMemoryError"));
		assert_ptr_equal(sp_has_ci(s, n, "cuda OUT of MEMORY"), strstr(s, "CUDA out of memory"));
		assert_null(sp_has_ci(s, n, ""));
	}
	sp_match_filter(NULL, NULL);
}

/* a table of needles: the first of the table found (in the table's order,
 * not the line's), NULL for none, filtered or not, the same on a later call */
static void needle_tables(void **st)
{
	(void)st;
	static const char *const marks[] = { "Tried to allocate", "absent mark", "CUDA out", "MiB" };
	static const char *const none[] = { "absent mark", "CUDA error", "Tried to allocate 21" };
	const char *s = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB";
	size_t n = strlen(s);
	uint64_t set[4], bg[4];
	sp_match_sets((const unsigned char *)s, n, set, bg);
	for (int pass = 0; pass < 4; pass++) {
		sp_match_filter(pass & 1 ? set : NULL, pass & 1 ? bg : NULL);
		assert_ptr_equal(SP_ANY(s, n, marks), strstr(s, "Tried to allocate"));
		/* the line cut before the first mark: the next one found */
		assert_ptr_equal(SP_ANY(s, 40, marks), strstr(s, "CUDA out"));
		assert_null(SP_ANY(s, n, none));
		assert_null(SP_ANY(s, 3, marks));
	}
	sp_match_filter(NULL, NULL);
}

/* a filter that describes the line: a byte or a pair the line lacks rejects */
static void sets_of_a_line(void **st)
{
	(void)st;
	uint64_t set[4], bg[4];
	const char *s = "ab";
	sp_match_sets((const unsigned char *)s, 2, set, bg);
	assert_true(set['a' >> 6] >> ('a' & 63) & 1);
	assert_true(set['b' >> 6] >> ('b' & 63) & 1);
	assert_false(set['c' >> 6] >> ('c' & 63) & 1);
	unsigned g = sp_bigram_bit('a', 'b');
	assert_true(bg[g >> 6] >> (g & 63) & 1);
	int bits = 0;
	for (int w = 0; w < 4; w++)
		bits += __builtin_popcountll(bg[w]);
	assert_int_equal(bits, 1);
	/* an odd length and a single byte go through the tail of the loop */
	sp_match_sets((const unsigned char *)"abc", 3, set, bg);
	g = sp_bigram_bit('b', 'c');
	assert_true(bg[g >> 6] >> (g & 63) & 1);
	sp_match_sets((const unsigned char *)"z", 1, set, bg);
	assert_true(set['z' >> 6] >> ('z' & 63) & 1);
	for (int w = 0; w < 4; w++)
		assert_int_equal(bg[w], 0);
}

static void sizes(void **st)
{
	(void)st;
	uint64_t v = 7;
	assert_int_equal(sp_match_size("2.00 GiB.", &v), 8);
	assert_int_equal(v, 2ULL << 30);
	assert_int_equal(sp_match_size("1.5GB", &v), 5);
	assert_int_equal(v, 1500000000ULL);
	assert_true(sp_match_size("8 kB", &v) && v == 8000);
	assert_true(sp_match_size("3 B", &v) && v == 3);
	v = 7;
	assert_false(sp_match_size("1e9 GiB", &v));
	assert_false(sp_match_size("5 Gigawatts", &v));
	assert_false(sp_match_size("20000000 TiB", &v)); /* 2.2e19 bytes: past uint64 */
	assert_int_equal(v, 7); /* untouched on failure */

	const char *t = "GPU 0; 15.78 GiB total capacity; 14.56 GiB already allocated; free: 1073741824";
	size_t n = strlen(t);
	assert_true(SP_SIZE_BEFORE(t, n, "total capacity", &v));
	assert_int_equal(v, (uint64_t)(15.78 * 1073741824.0 + 0.5));
	assert_true(SP_SIZE_BEFORE(t, n, "already allocated", &v));
	assert_int_equal(v, (uint64_t)(14.56 * 1073741824.0 + 0.5));
	assert_true(SP_SIZE_AFTER(t, n, "GPU 0;", &v));
	assert_int_equal(v, (uint64_t)(15.78 * 1073741824.0 + 0.5));
	v = 7;
	assert_false(SP_SIZE_AFTER(t, n, "free:", &v)); /* a bare number is no size */
	assert_false(SP_SIZE_AFTER(t, n, "reserved", &v));
	assert_int_equal(v, 7);
}

static void numbers(void **st)
{
	(void)st;
	const char *t = "max_model_len=\"4096\" trainable params: 4,194,304 || all params: 6,742,609,920 "
			"|| trainable%: 0.0622 digits: 1234567890123456";
	size_t n = strlen(t);
	assert_int_equal(SP_NUMBER_AFTER(t, n, "max_model_len"), 4096);
	assert_int_equal(SP_NUMBER_AFTER(t, n, "params:"), 4); /* stops at the separator */
	assert_int_equal(SP_NUMBER_AFTER(t, n, "digits:"), 123456789012ULL); /* at most 12 digits */
	assert_int_equal(SP_NUMBER_AFTER(t, n, "absent"), 0);
	assert_int_equal(SP_COUNT_AFTER(t, n, "trainable params:"), 4194304);
	assert_int_equal(SP_COUNT_AFTER(t, n, "all params:"), 6742609920ULL);
	assert_int_equal(sp_count_at(" = 12,"), 12); /* a trailing comma is not a separator */
	assert_int_equal(sp_count_at("x"), 0);
	const char *pc = strstr(t, "trainable%") + strlen("trainable%");
	assert_true(sp_pct_at(pc) > 0.0621 && sp_pct_at(pc) < 0.0623);
	assert_true(sp_pct_at("(100") == 100.0);
	assert_true(sp_pct_at("100.5") < 0);
	assert_true(sp_pct_at("n/a") < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(filter_never_changes_the_answer),
		cmocka_unit_test(literal_needles),
		cmocka_unit_test(needle_tables),
		cmocka_unit_test(sets_of_a_line),
		cmocka_unit_test(sizes),
		cmocka_unit_test(numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
