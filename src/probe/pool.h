/* SPDX-License-Identifier: MIT */
/* The pool's shape beyond /proc/meminfo: contiguous free memory from
 * /proc/buddyinfo (what the GPU driver's large allocations need), the zones'
 * watermarks from /proc/zoneinfo and the vm sysctls that set them, the page
 * block size (derived: /proc/pagetypeinfo is never read), and the one write to
 * <procfs>/sys/vm/compact_memory. Parsers take buffers (fuzzed by
 * fuzz/fuzz_buddyinfo.c and fuzz/fuzz_zoneinfo.c); readers go through the
 * roots. Why it matters: docs/run.md "Surviving a model load". */
#ifndef SP_POOL_H
#define SP_POOL_H
#include "probe/sample.h"

#define SP_CONTIG_BLOCK (2ULL << 20) /* the block size that counts: 2 MiB (order 9 on 4 KiB pages) */
#define SP_BUDDY_MAX_ORDER 16

/* The smallest order whose blocks hold `block` bytes with pages of page_size. */
int sp_order_for(uint64_t block, uint64_t page_size);

/* /proc/buddyinfo: "Node 0, zone   Normal  1542 263 98 ..." (free block
 * counts per order, summed over nodes and zones). Returns 0 with c->why
 * SP_OK, or -1 with c->why SP_MALFORMED (no zone line, a non-number, more
 * orders than SP_BUDDY_MAX_ORDER, a count that overflows). page_size 0 is
 * malformed too. */
int sp_buddyinfo_parse(const char *buf, size_t len, uint64_t page_size, struct sp_contig *c);
void sp_buddyinfo_read(struct sp_contig *c);

/* /proc/zoneinfo, summed over zones: the min/low/high watermarks, managed
 * pages, and the kernel's totalreserve (per zone: high + its largest
 * lowmem protection, at most managed), which MemAvailable leaves out. */
struct sp_zoneinfo {
	uint64_t min_pages, low_pages, high_pages, managed_pages, reserve_pages;
	int zones;           /* zones with a "pages free" block */
	int populated;       /* zones up to Normal with present pages (khugepaged's count) */
	enum sp_why why;
};
int sp_zoneinfo_parse(const char *buf, size_t len, struct sp_zoneinfo *z);

/* The watermark picture status shows. Bytes unless named otherwise. */
struct sp_watermarks {
	struct sp_i64 min_free_kbytes, boost_factor, scale_factor; /* the sysctls */
	struct sp_zoneinfo zi;
	struct sp_u64 low_bytes;       /* the zones' low watermarks */
	struct sp_u64 reserve_bytes;   /* what MemAvailable leaves out for them (totalreserve) */
	struct sp_u64 default_kbytes;  /* the kernel's default for this memory size */
	struct sp_u64 thp_kbytes;      /* khugepaged's recommendation (THP on), or why not */
	bool raised;                   /* min_free_kbytes far above both */
};
/* The kernel's default min_free_kbytes: int_sqrt(lowmem_kb * 16) in [128, 262144]. */
uint64_t sp_min_free_default_kb(uint64_t lowmem_kb);
/* khugepaged's: pageblock pages x populated zones x (2 + 3 x 3), at most 5%
 * of lowmem, in kB. */
uint64_t sp_min_free_thp_kb(uint64_t pageblock_pages, int populated, uint64_t lowmem_kb, uint64_t page_size);
/* The kernel's page block in pages (pageblock_nr_pages), derived from
 * /sys/kernel/mm/transparent_hugepage/hpage_pmd_size (pmd_bytes; 0 when
 * absent) and the page size, never from /proc/pagetypeinfo (pool.c says
 * why). 0 for a page size the kernel does not have. */
uint64_t sp_pageblock_pages(uint64_t pmd_bytes, uint64_t page_size);
/* Read all of it (mem_total from meminfo, for the defaults). */
void sp_watermarks_read(struct sp_watermarks *w, uint64_t mem_total);

/* Write 1 to <procfs>/sys/vm/compact_memory. 0, or -errno (-ENOENT: the
 * kernel has no compaction; -EACCES/-EPERM: not root). */
int sp_compact_memory(void);
/* The vm sysctls a guard must leave as it found them (read only). */
#define SP_VM_GUARDED_N 5
extern const char *const sp_vm_guarded[SP_VM_GUARDED_N];
/* Read each of sp_vm_guarded (values as text, "" when unreadable). */
void sp_vm_snapshot(char vals[SP_VM_GUARDED_N][32]);
/* Write one back (name from sp_vm_guarded). 0 or -errno. */
int sp_vm_restore(const char *name, const char *val);
#endif
