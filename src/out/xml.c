// SPDX-License-Identifier: MIT
#include "out/xml.h"

#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
		cp = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		cp = c & 0x0F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n > avail)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0; /* overlong or out of range */
	if (cp >= 0xD800 && cp <= 0xDFFF)
		return 0; /* surrogates */
	if (cp == 0xFFFE || cp == 0xFFFF)
		return 0; /* not XML characters */
	return n;
}

size_t sp_xml_escape(char *out, size_t n, const char *s, size_t maxin)
{
	size_t o = 0;
	if (n == 0)
		return 0;
	size_t len = strnlen(s, maxin);
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < len;) {
		const char *rep;
		size_t rl = 1, adv = 1;
		unsigned char c = u[i];
		switch (c) {
		case '&': rep = "&amp;"; rl = 5; break;
		case '<': rep = "&lt;"; rl = 4; break;
		case '>': rep = "&gt;"; rl = 4; break;
		case '"': rep = "&quot;"; rl = 6; break;
		case '\'': rep = "&#39;"; rl = 5; break;
		default:
			if (c < 0x20 || c == 0x7F) {
				rep = " ";
			} else {
				size_t ul = utf8_len(u + i, len - i);
				if (ul == 0) {
					rep = "?";
				} else {
					rep = s + i;
					rl = adv = ul;
				}
			}
		}
		if (o + rl >= n)
			break;
		memcpy(out + o, rep, rl);
		o += rl;
		i += adv;
	}
	out[o] = 0;
	return o;
}

void sp_xml_fputs(FILE *f, const char *s)
{
	char buf[1024];
	size_t len = strlen(s);
	while (len > 0) {
		/* chunks of up to 128 input bytes always fit (6 bytes per byte at most);
		 * step back so a UTF-8 sequence is not split between chunks */
		size_t take = len < 128 ? len : 128;
		while (take < len && take > 1 && ((unsigned char)s[take] & 0xC0) == 0x80 && take > 124)
			take--;
		sp_xml_escape(buf, sizeof buf, s, take);
		fputs(buf, f);
		s += take;
		len -= take;
	}
}
