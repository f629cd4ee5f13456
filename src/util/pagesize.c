// SPDX-License-Identifier: MIT
#include "util/pagesize.h"
#include "util/paths.h"

#include <stdlib.h>
#include <unistd.h>

static uint64_t forced;

void sp_page_size_set(uint64_t bytes)
{
	forced = bytes;
}

static int plausible(uint64_t v)
{
	return v >= 1024 && v <= (1u << 20) && (v & (v - 1)) == 0;
}

uint64_t sp_page_size(void)
{
	static uint64_t sys;
	if (forced)
		return forced;
	if (sp_paths_is_fixture()) {
		const char *e = getenv("SPARKOPS_PAGE_SIZE");
		if (e && *e) {
			char *end;
			unsigned long long v = strtoull(e, &end, 10);
			if (*end == 0 && plausible(v))
				return v;
		}
	}
	if (!sys) {
		long v = sysconf(_SC_PAGESIZE);
		sys = v > 0 ? (uint64_t)v : 4096; /* sysconf cannot fail for this name */
	}
	return sys;
}
