// SPDX-License-Identifier: MIT
/* /proc/zoneinfo and /proc/pagetypeinfo: sp_zoneinfo_parse, sp_pagetypeinfo_pageblock. */
#include "fuzz.h"
#include "probe/pool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	if (!buf)
		return 0;
	struct sp_zoneinfo z;
	if (sp_zoneinfo_parse(buf, size, &z) == 0) {
		/* the reserve is at most what the zones manage */
		if (z.reserve_pages > z.managed_pages || z.zones <= 0)
			abort();
	}
	(void)sp_pagetypeinfo_pageblock(buf, size);
	free(buf);
	return 0;
}
