// SPDX-License-Identifier: MIT
/* /proc/meminfo: sp_meminfo_parse, then the budget derived from it. */
#include "fuzz.h"
#include "probe/probe.h"

static void one(char *buf, size_t size)
{
	struct sp_meminfo m;
	struct sp_budget b;
	if (sp_meminfo_parse(buf, size, &m) == 0) {
		/* a parsed pool must give a sane budget: after_flush never below now */
		sp_budget_compute(&b, &m, NULL, SP_DEFAULT_RESERVE);
		if (b.now.why == SP_OK && b.after_flush.why == SP_OK && b.after_flush.v < b.now.v)
			abort();
	}
}
FUZZ_ON_COPY(one)
