// SPDX-License-Identifier: MIT
/* serve's live page. See webpage.h. */
#include "out/webpage.h"

#include <stdio.h>
#include <string.h>

extern const char sp_webpage_html[];
extern const char sp_webpage_html_end[];

#define NONCE_MARK "@NONCE@"

size_t sp_webpage_render(char *buf, size_t cap, const char *nonce)
{
	const char *p = sp_webpage_html;
	const char *end = sp_webpage_html_end;
	const size_t ml = sizeof NONCE_MARK - 1, nl = strlen(nonce);
	size_t o = 0;
	while (p < end) {
		const char *m = memmem(p, (size_t)(end - p), NONCE_MARK, ml);
		size_t run = m ? (size_t)(m - p) : (size_t)(end - p);
		if (o + run < cap)
			memcpy(buf + o, p, run);
		o += run;
		if (!m)
			break;
		if (o + nl < cap)
			memcpy(buf + o, nonce, nl);
		o += nl;
		p = m + ml;
	}
	if (cap)
		buf[o < cap ? o : cap - 1] = 0;
	return o;
}

size_t sp_webpage_csp(char *buf, size_t cap, const char *nonce)
{
	/* the page's own inline script and style, its own origin's JSON, and
	 * nothing else: no other script, no frame, no form, no base, no plugin */
	int k = snprintf(buf, cap,
			 "default-src 'none'; script-src 'nonce-%s'; style-src 'nonce-%s'; connect-src 'self'; "
			 "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
			 nonce, nonce);
	return k < 0 ? 0 : (size_t)k;
}
