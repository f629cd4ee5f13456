// SPDX-License-Identifier: MIT
/* /proc/zoneinfo: sp_zoneinfo_parse. */
#include "fuzz.h"
#include "probe/pool.h"

static void one(char *buf, size_t size)
{
	struct sp_zoneinfo z;
	if (sp_zoneinfo_parse(buf, size, &z) == 0) {
		/* the reserve is at most what the zones manage */
		if (z.reserve_pages > z.managed_pages || z.zones <= 0)
			abort();
	}
}
FUZZ_ON_COPY(one)
