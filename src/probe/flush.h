/* SPDX-License-Identifier: MIT */
/* The page-cache flush (the ladder's rung 1 and the guard's --guard-flush):
 * the one write to <procfs>/sys/vm/drop_caches, with the page cache measured
 * before and after. */
#ifndef SP_FLUSH_H
#define SP_FLUSH_H
#include "probe/sample.h"

struct sp_flush_result {
	char path[4200];                    /* <procfs>/sys/vm/drop_caches, for messages */
	struct sp_meminfo before, after;
	uint64_t cache_before, cache_after; /* Buffers + Cached, bytes */
	uint64_t freed_bytes;               /* how far the page cache fell (0 if it grew) */
	int64_t mem_free_gain;              /* MemFree after - before (may be negative) */
};
/* Opens drop_caches for writing first (no permission: nothing happens, not
 * even the sync), reads meminfo, sync()s, writes 3, reads meminfo again.
 * 0, or -errno: -EACCES/-EPERM/-EROFS mean not permitted; -EIO: meminfo could
 * not be read (before: nothing was written; after: the flush happened). */
int sp_flush_page_cache(struct sp_flush_result *r);
#endif
