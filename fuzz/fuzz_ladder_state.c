// SPDX-License-Identifier: MIT
/* libFuzzer harness for the ladder's state file parser: whatever it accepts
 * must format back and parse to the same state. */
#include "ladder/ladder.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_ladder_state a, b;
	if (sp_ladder_state_parse((const char *)data, size, "job", &a) < 0)
		return 0;
	if (a.tried & ~0x1eu || a.proposed < 0 || a.proposed > SP_RUNGS)
		abort();
	char buf[1024];
	size_t n = sp_ladder_state_format(&a, "job", buf, sizeof buf);
	if (!n || sp_ladder_state_parse(buf, n, "job", &b) < 0)
		abort();
	if (a.tried != b.tried || a.proposed != b.proposed || a.log_sig != b.log_sig || a.updated != b.updated)
		abort();
	return 0;
}
