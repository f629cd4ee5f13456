// SPDX-License-Identifier: MIT
/* /proc/zoneinfo: sp_zoneinfo_parse. */
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
	free(buf);
	return 0;
}
