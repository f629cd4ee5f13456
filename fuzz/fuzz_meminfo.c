// SPDX-License-Identifier: MIT
/* /proc/meminfo: sp_meminfo_parse, then the budget derived from it. */
#include "fuzz.h"
#include "probe/probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	if (!buf)
		return 0;
	struct sp_meminfo m;
	struct sp_budget b;
	if (sp_meminfo_parse(buf, size, &m) == 0) {
		/* a parsed pool must give a sane budget: after_flush never below now */
		sp_budget_compute(&b, &m, NULL, SP_DEFAULT_RESERVE);
		if (b.now.why == SP_OK && b.after_flush.why == SP_OK && b.after_flush.v < b.now.v)
			abort();
	}
	free(buf);
	return 0;
}
