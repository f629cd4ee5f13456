// SPDX-License-Identifier: MIT
/* User arguments: SIZE (sp_parse_size), DURATION (sp_parse_duration) and
 * COUNT (sp_parse_count). The first byte picks the parser. */
#include "fuzz.h"
#include "util/units.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>

/* An independent reading of a SIZE (long double, no rounding tricks): the
 * oracle the parser's answer is compared with. 0 when it can read it. */
static int oracle_size(const char *s, long double *bytes)
{
	static const struct {
		const char *sfx;
		long double mul;
	} tab[] = { { "", 1 }, { "b", 1 }, { "k", 1024.0L }, { "kib", 1024.0L }, { "kb", 1e3L },
		    { "m", 1048576.0L }, { "mib", 1048576.0L }, { "mb", 1e6L }, { "g", 1073741824.0L },
		    { "gib", 1073741824.0L }, { "gb", 1e9L }, { "t", 1099511627776.0L },
		    { "tib", 1099511627776.0L }, { "tb", 1e12L } };
	char *end;
	long double v = strtold(s, &end);
	if (end == s)
		return -1;
	while (isspace((unsigned char)*end))
		end++;
	char sfx[8];
	size_t n = 0;
	while (end[n] && !isspace((unsigned char)end[n]) && n < sizeof sfx - 1) {
		sfx[n] = end[n];
		n++;
	}
	sfx[n] = 0;
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (strcasecmp(sfx, tab[i].sfx) == 0) {
			*bytes = v * tab[i].mul;
			return 0;
		}
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned sel = data[0] % 3;
	char *s = fuzz_cstr(data + 1, size - 1);
	if (!s)
		return 0;
	uint64_t b;
	double d;
	switch (sel) {
	case 0: {
		long double want;
		/* what it accepts is the number the text says (within double precision) */
		if (sp_parse_size(s, &b) == 0 && oracle_size(s, &want) == 0 &&
		    fabsl((long double)b - want) > want * 1e-9L + 1.0L)
			abort();
		break;
	}
	case 1:
		if (sp_parse_duration(s, &d) == 0 && !(isfinite(d) && d >= 0))
			abort();
		break;
	default:
		if (sp_parse_count(s, &d) == 0 && !(isfinite(d) && d >= 0))
			abort();
		break;
	}
	free(s);
	return 0;
}
