/* SPDX-License-Identifier: MIT */
/* Rung 1 of the ladder, performed: sync, then 3 into <procfs>/sys/vm/drop_caches,
 * with the page cache measured before and after. */
#ifndef SP_FLUSH_H
#define SP_FLUSH_H
#include "probe/sample.h"

struct sp_flush_result {
	struct sp_meminfo before, after;
	uint64_t cache_before, cache_after; /* Buffers + Cached, bytes */
	uint64_t freed_bytes;               /* how far the page cache fell (0 if it grew) */
	int64_t mem_free_gain;              /* MemFree after - before (may be negative) */
};
/* 0, or -errno: -EACCES/-EPERM/-EROFS mean not permitted; nothing is written
 * unless drop_caches could be opened for writing first. */
int sp_flush_page_cache(struct sp_flush_result *r);
#endif
