// SPDX-License-Identifier: MIT
/* Word tables of enums (words.h). */
#include "util/words.h"

#include <stdio.h>
#include <strings.h>

bool sp_word_find(const struct sp_word *w, const char *s, int *value)
{
	if (!w || !s)
		return false;
	for (; w->word; w++)
		if (strcasecmp(s, w->word) == 0) {
			*value = w->value;
			return true;
		}
	return false;
}

int sp_word_parse(const struct sp_word *w, const char *s)
{
	int v;
	return sp_word_find(w, s, &v) ? v : -1;
}

const char *sp_word_name(const struct sp_word *w, int v)
{
	for (; w && w->word; w++)
		if (w->value == v)
			return w->word;
	return "?";
}

const char *sp_word_list(const struct sp_word *w, char *buf, size_t n)
{
	int total = 0, k = 0;
	if (!n)
		return buf;
	buf[0] = 0;
	for (const struct sp_word *e = w; e && e->word; e++)
		total += !(e->flags & SP_WORD_UNLISTED);
	size_t at = 0;
	for (const struct sp_word *e = w; e && e->word && at < n; e++) {
		if (e->flags & SP_WORD_UNLISTED)
			continue;
		const char *sep = k == 0 ? "" : k == total - 1 ? " or " : ", ";
		int r = e->note ? snprintf(buf + at, n - at, "%s%s (%s)", sep, e->word, e->note)
				: snprintf(buf + at, n - at, "%s%s", sep, e->word);
		if (r < 0)
			break;
		at += (size_t)r;
		k++;
	}
	return buf;
}
