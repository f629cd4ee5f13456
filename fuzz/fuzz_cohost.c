// SPDX-License-Identifier: MIT
/* libFuzzer harness: --cohost SPEC parsing (sp_cohost_parse takes a buffer
 * that need not be NUL-terminated: an exact-size copy lets ASan see any read
 * past it). */
#include "account/budget.h"
#include "fuzz.h"

static void one(char *buf, size_t size)
{
	struct sp_cohost c;
	char err[256];
	if (sp_cohost_parse(buf, size, &c, err, sizeof err) == 0)
		(void)sp_cohost_bytes(&c, 128ULL << 30);
}
FUZZ_ON_COPY(one)
