// SPDX-License-Identifier: MIT
/* User arguments: SIZE (sp_parse_size), DURATION (sp_parse_duration) and
 * COUNT (sp_parse_count). The first byte picks the parser. */
#include "fuzz.h"
#include "util/units.h"

#include <math.h>

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
	case 0:
		sp_parse_size(s, &b);
		break;
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
