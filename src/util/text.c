// SPDX-License-Identifier: MIT
#include "util/text.h"

#include <string.h>

size_t sp_text_clean(char *s)
{
	size_t n = 0;
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c > 0x7e) {
			*s = '?';
			n++;
		}
	}
	return n;
}

size_t sp_text_copy(char *dst, size_t cap, const char *src)
{
	size_t l = strnlen(src, cap - 1);
	memcpy(dst, src, l);
	dst[l] = 0;
	return l;
}
