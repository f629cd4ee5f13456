// SPDX-License-Identifier: MIT
/* /proc/buddyinfo: sp_buddyinfo_parse at the page sizes Linux uses. */
#include "fuzz.h"
#include "probe/pool.h"

static void one(char *buf, size_t size)
{
	static const uint64_t pages[] = { 4096, 16384, 65536 };
	for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
		struct sp_contig c;
		if (sp_buddyinfo_parse(buf, size, pages[i], &c) == 0) {
			/* what sits in 2 MiB blocks is part of what is free; a largest block is one of them */
			if (c.free_2mib > c.free_total || (c.largest_order >= 0 && c.largest > c.free_total))
				abort();
			if (c.free_2mib > 0 && c.largest < SP_CONTIG_BLOCK)
				abort();
		} else if (c.why != SP_MALFORMED) {
			abort();
		}
	}
}
FUZZ_ON_COPY(one)
