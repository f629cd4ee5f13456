// SPDX-License-Identifier: MIT
/* libFuzzer harness: --cohost SPEC parsing. */
#include "account/plan.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_cohost c;
	char err[256];
	if (sp_cohost_parse((const char *)data, size, &c, err, sizeof err) == 0)
		(void)sp_cohost_bytes(&c, 128ULL << 30);
	return 0;
}
