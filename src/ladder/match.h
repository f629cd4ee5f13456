/* SPDX-License-Identifier: MIT */
/* Fixed needles searched in one bounded line at a time, and the numbers
 * beside them. A generic utility: it knows no log format.
 *
 * Each needle is a string literal or a static table's string (its address is
 * its identity) and is measured once: its length, the set of its bytes and
 * the set of its adjacent byte pairs (bigrams, hashed into 256 bits). While
 * a line's own two sets are installed (sp_match_filter, per thread), a
 * needle with a byte or a bigram the line lacks is rejected before any
 * search: a classifier that asks a few hundred needles of every line of a
 * long log pays for almost no memmem. Without a filter installed each search
 * is a plain memmem (or a case-blind scan): the answer never depends on the
 * filter, only the time.
 *
 * The caches are per thread (_Thread_local) and fixed in size; nothing is
 * allocated. A needle that finds no slot in sp_has's cache is measured on
 * every call: correct, only slower. SP_HAS measures a literal once at its
 * call site. */
#ifndef SP_MATCH_H
#define SP_MATCH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* the bigram bit of the pair (a, b) */
static inline unsigned sp_bigram_bit(unsigned char a, unsigned char b)
{
	return ((unsigned)a * 31u + (unsigned)b) & 255u;
}

/* a needle, measured */
struct sp_needle {
	const char *s;
	size_t len;
	uint64_t set[4], bg[4];
	unsigned key_word; /* the word of bg with the most bits: the first, cheapest test */
	uint64_t key;
};

void sp_needle_init(struct sp_needle *nd, const char *s);

/* The byte set and the bigram set of l[0..n), for sp_match_filter. */
void sp_match_sets(const unsigned char *l, size_t n, uint64_t set[4], uint64_t bigrams[4]);

/* The filter of the line being searched (NULL: none). Set by sp_match_filter
 * for the duration of one line: the sets must describe the very bytes every
 * later search is given (a search in other text, a join of two lines, needs
 * sp_match_filter(NULL, NULL) first). */
#define SP_MATCH_TLS _Thread_local __attribute__((tls_model("initial-exec"))) /* no call to reach it */
extern SP_MATCH_TLS const uint64_t *sp_match_bytes;
extern SP_MATCH_TLS const uint64_t *sp_match_bigrams;

static inline void sp_match_filter(const uint64_t *bytes, const uint64_t *bigrams)
{
	sp_match_bytes = bytes;
	sp_match_bigrams = bigrams;
}

/* The first occurrence of nd in s[0..n), NULL for none. */
static inline __attribute__((always_inline)) const char *sp_has_nd(const char *s, size_t n, const struct sp_needle *nd)
{
	if (nd->len > n)
		return NULL;
	const uint64_t *lg = sp_match_bigrams, *lb = sp_match_bytes;
	if (lg && ((nd->key & ~lg[nd->key_word]) ||
		   ((nd->set[0] & ~lb[0]) | (nd->set[1] & ~lb[1]) | (nd->set[2] & ~lb[2]) | (nd->set[3] & ~lb[3]) |
		    (nd->bg[0] & ~lg[0]) | (nd->bg[1] & ~lg[1]) | (nd->bg[2] & ~lg[2]) | (nd->bg[3] & ~lg[3]))))
		return NULL;
	return memmem(s, n, nd->s, nd->len);
}

/* The same for a needle from a table or a parameter (a small per-thread
 * cache keyed by its address). */
const char *sp_has(const char *s, size_t n, const char *needle);
/* ASCII case-blind (the filter tests each pair in its four cases). */
const char *sp_has_ci(const char *s, size_t n, const char *needle);

/* the needle of a literal, measured on its first use at this call site */
#define SP_NEEDLE(lit)                                     \
	({                                                 \
		static _Thread_local struct sp_needle nd_; \
		if (!nd_.s)                                \
			sp_needle_init(&nd_, lit);         \
		(const struct sp_needle *)&nd_;            \
	})
/* The first and last bigrams of a literal are constants: two bit tests on the
 * line's bigrams reject most lines before the needle is even looked up. */
#define SP_LIT_BG_(lit, i) ((((unsigned)(unsigned char)(lit)[i] * 31u) + (unsigned char)(lit)[(i) + 1]) & 255u)
#define SP_LINE_BG_(k) ((sp_match_bigrams[(k) >> 6] >> ((k) & 63)) & 1)
#define SP_MAY_HAVE(lit)                         \
	(sizeof(lit) < 3 || !sp_match_bigrams || \
	 (SP_LINE_BG_(SP_LIT_BG_(lit, 0)) && SP_LINE_BG_(SP_LIT_BG_(lit, sizeof(lit) - 3))))
/* sp_has_nd of a string literal */
#define SP_HAS(s, n, lit) (SP_MAY_HAVE(lit) ? sp_has_nd((s), (n), SP_NEEDLE(lit)) : (const char *)NULL)

/* Any of a table of needles in s[0..n) (the first that is found, NULL for
 * none): the table's needles are measured once, per thread, into nd
 * (count of them), the first call setting *ready. SP_ANY declares both for
 * a static table at its call site. One call instead of a long chain of
 * SP_HAS || SP_HAS: the same answer, each needle tested by the same filter. */
const char *sp_any_nd(const char *s, size_t n, const char *const *table, struct sp_needle *nd, size_t count,
		      bool *ready);
#define SP_ANY(s, n, table)                                                                                     \
	({                                                                                                      \
		static _Thread_local struct sp_needle any_nd_[sizeof(table) / sizeof((table)[0])];              \
		static _Thread_local bool any_ready_;                                                           \
		sp_any_nd((s), (n), (table), any_nd_, sizeof(table) / sizeof((table)[0]), &any_ready_);          \
	})

/* ---- the numbers beside a needle ----
 * s is NUL-terminated past n (the scans after a needle stop at a byte that
 * is not part of the number, NUL included). */

/* "2.00 GiB", "512 MiB", "1.5GB", "123 bytes" at s: plain decimals (no sign,
 * no exponent, no hex), binary and decimal units. The characters used, 0 for
 * no size (or one of 1.8e19 bytes or more). */
size_t sp_match_size(const char *s, uint64_t *bytes);
/* the size that follows the needle, after spaces */
bool sp_size_after_nd(const char *s, size_t n, const struct sp_needle *key, uint64_t *out);
/* the size that ends right before the needle ("14.56 GiB already allocated") */
bool sp_size_before_nd(const char *s, size_t n, const struct sp_needle *key, uint64_t *out);
/* the decimal number (at most 12 digits) after the needle and any of
 * ' ', '=', ':', '"', '\''; 0 for none */
uint64_t sp_number_after_nd(const char *s, size_t n, const struct sp_needle *key);
/* a count with thousands separators ("6,742,609,920") at p, after any of
 * ' ', '=', ':'; 0 for none */
uint64_t sp_count_at(const char *p);
uint64_t sp_count_after_nd(const char *s, size_t n, const struct sp_needle *key);
/* a percentage ("0.0622", "100") at p, after any of ' ', '=', ':', '(';
 * -1 for none or one over 100 */
double sp_pct_at(const char *p);

/* the same after (before) a literal, measured once at each call site */
#define SP_SIZE_AFTER(s, n, lit, out) (SP_MAY_HAVE(lit) && sp_size_after_nd((s), (n), SP_NEEDLE(lit), (out)))
#define SP_SIZE_BEFORE(s, n, lit, out) (SP_MAY_HAVE(lit) && sp_size_before_nd((s), (n), SP_NEEDLE(lit), (out)))
#define SP_NUMBER_AFTER(s, n, lit) (SP_MAY_HAVE(lit) ? sp_number_after_nd((s), (n), SP_NEEDLE(lit)) : 0)
#define SP_COUNT_AFTER(s, n, lit) (SP_MAY_HAVE(lit) ? sp_count_after_nd((s), (n), SP_NEEDLE(lit)) : 0)
#endif
