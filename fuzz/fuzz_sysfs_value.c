// SPDX-License-Identifier: MIT
/* One-number sysfs files (thermal zone temp, hwmon temp*_input, power*_input,
 * powerN_cap, energy) and other integer fields: sp_parse_i64, sp_parse_u64. */
#include "fuzz.h"
#include "util/fileio.h"

#include <stdio.h>

static void one(char *s)
{
	int64_t i;
	uint64_t u;
	int ri = sp_parse_i64(s, &i);
	int ru = sp_parse_u64(s, &u);
	/* what parses as both is the same number */
	if (ri == 0 && ru == 0 && i >= 0 && (uint64_t)i != u)
		abort();
	/* a parsed value prints back and parses to itself */
	if (ri == 0) {
		char back[32];
		int64_t j;
		snprintf(back, sizeof back, "%lld", (long long)i);
		if (sp_parse_i64(back, &j) != 0 || j != i)
			abort();
	}
}
FUZZ_ON_CSTR(one)
