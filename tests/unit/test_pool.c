// SPDX-License-Identifier: MIT
/* Unit tests for probe/pool.c: buddyinfo, zoneinfo, the min_free_kbytes defaults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "probe/pool.h"

#define S(x) x, sizeof(x) - 1
#define MiB (1ULL << 20)

static void buddy_basic(void **st)
{
	(void)st;
	struct sp_contig c;
	const char buf[] = "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n"
			   "Node 0, zone   Normal   1542    263     98     23    171    710   1002    467    254    116     83 \n";
	assert_int_equal(sp_buddyinfo_parse(S(buf), 4096, &c), 0);
	assert_int_equal(c.why, SP_OK);
	/* order 9 = 2 MiB, order 10 = 4 MiB on 4 KiB pages */
	assert_int_equal(c.free_2mib, (1 + 116) * 2 * MiB + (3 + 83) * 4 * MiB);
	assert_int_equal(c.largest, 4 * MiB);
	assert_int_equal(c.largest_order, 10);
}

static void buddy_page_size(void **st)
{
	(void)st;
	struct sp_contig c;
	/* 64 KiB pages: 2 MiB is order 5 */
	const char buf[] = "Node 0, zone   Normal   10 0 0 0 0 3 0 0 0 0 0 0 0 0\n";
	assert_int_equal(sp_order_for(2 * MiB, 65536), 5);
	assert_int_equal(sp_buddyinfo_parse(S(buf), 65536, &c), 0);
	assert_int_equal(c.free_2mib, 3 * 2 * MiB);
	assert_int_equal(c.largest, 2 * MiB);
	assert_int_equal(c.free_total, 10 * 65536 + 3 * 2 * MiB);
	assert_int_equal(sp_order_for(2 * MiB, 4096), 9);
	assert_int_equal(sp_order_for(2 * MiB, 16384), 7);
}

static void buddy_fragmented_no_block(void **st)
{
	(void)st;
	struct sp_contig c;
	const char buf[] = "Node 0, zone   Normal   900000 300000 100 0 0 0 0 0 0 0 0\n";
	assert_int_equal(sp_buddyinfo_parse(S(buf), 4096, &c), 0);
	assert_int_equal(c.free_2mib, 0); /* a real 0: known, and none */
	assert_int_equal(c.largest_order, 2);
}

static void buddy_malformed(void **st)
{
	(void)st;
	struct sp_contig c;
	assert_int_equal(sp_buddyinfo_parse(S(""), 4096, &c), -1);
	assert_int_equal(c.why, SP_MALFORMED);
	assert_int_equal(sp_buddyinfo_parse(S("Node 0, zone Normal 1 2 x\n"), 4096, &c), -1);
	assert_int_equal(sp_buddyinfo_parse(S("Node 0, zone Normal\n"), 4096, &c), -1);
	assert_int_equal(sp_buddyinfo_parse(S("Node 0, Normal 1 2\n"), 4096, &c), -1);
	assert_int_equal(sp_buddyinfo_parse(S("Node 0, zone Normal 99999999999999999999999 1\n"), 4096, &c), -1);
	assert_int_equal(sp_buddyinfo_parse(S("Node 0, zone Normal 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"), 4096, &c), -1);
	assert_int_equal(sp_buddyinfo_parse(S("Node 0, zone Normal 1 2\n"), 0, &c), -1);
	assert_int_equal(sp_buddyinfo_parse(S("Node 0, zone Normal 1 2\n"), 3000, &c), -1);
	/* a count whose bytes overflow */
	assert_int_equal(sp_buddyinfo_parse(S("Node 0, zone Normal 0 0 0 0 0 0 0 0 0 0 18446744073709551 \n"), 4096, &c), -1);
}

static void zoneinfo_sums(void **st)
{
	(void)st;
	struct sp_zoneinfo z;
	const char buf[] = "Node 0, zone      DMA\n  per-node stats\n      nr_inactive_anon 5693\n"
			   "  pages free     3840\n        min      49\n        low      61\n        high     73\n"
			   "        spanned  4095\n        present  3998\n        managed  3840\n"
			   "        protection: (0, 3018, 5066, 5066, 5066)\n  pagesets\n    cpu: 0\n"
			   "              count: 0\n              high:  0\n"
			   "Node 0, zone   Normal\n  pages free     359573\n        min      6809\n        low      8511\n"
			   "        high     10213\n        spanned  5505024\n        present  5505024\n"
			   "        managed  524288\n        protection: (0, 0, 0, 0, 0)\n"
			   "Node 0, zone  Movable\n  pages free     0\n        min      32\n        low      32\n"
			   "        high     32\n        spanned  0\n        present  0\n        managed  0\n"
			   "        protection: (0, 0, 0, 0, 0)\n";
	assert_int_equal(sp_zoneinfo_parse(S(buf), &z), 0);
	assert_int_equal(z.zones, 3);
	assert_int_equal(z.low_pages, 61 + 8511 + 32);
	assert_int_equal(z.min_pages, 49 + 6809 + 32);
	/* DMA: min(73 + 5066, 3840) = 3840; Normal 10213; Movable min(32, 0) = 0 */
	assert_int_equal(z.reserve_pages, 3840 + 10213);
	assert_int_equal(z.managed_pages, 3840 + 524288);
	assert_int_equal(z.populated, 2);
	assert_int_equal(sp_zoneinfo_parse(S("Node 0, zone Normal\n  pages free 1\n"), &z), -1);
	assert_int_equal(sp_zoneinfo_parse(S("garbage"), &z), -1);
	assert_int_equal(z.why, SP_MALFORMED);
}

static void min_free_defaults(void **st)
{
	(void)st;
	/* int_sqrt(lowmem_kb * 16), clamped to [128, 262144] */
	assert_int_equal(sp_min_free_default_kb(0), 128);
	assert_int_equal(sp_min_free_default_kb(1024 * 1024), 4096); /* 1 GiB: 4 MiB */
	assert_int_equal(sp_min_free_default_kb(16ULL << 30), 262144);
	/* 121,200,000 kB (a GB10): int_sqrt(1,939,200,000) = 44036 */
	assert_int_equal(sp_min_free_default_kb(121200000), 44036);
	/* khugepaged on this test machine's shape: 512-page blocks, 3 zones: 67584 kB */
	assert_int_equal(sp_min_free_thp_kb(512, 3, 24000000, 4096), 67584);
	/* at most 5% of lowmem */
	assert_int_equal(sp_min_free_thp_kb(8192, 3, 1000000, 65536), 1000000 / 64 / 20 * 64);
	/* the page block, derived: hpage_pmd_size / page size, capped at the max order */
	assert_int_equal(sp_pageblock_pages(2ULL << 20, 4096), 512);
	assert_int_equal(sp_pageblock_pages(32ULL << 20, 16384), 2048);
	assert_int_equal(sp_pageblock_pages(512ULL << 20, 65536), 8192);
	assert_int_equal(sp_pageblock_pages(1ULL << 30, 4096), 1024); /* never above MAX_PAGE_ORDER */
	/* no (or a nonsense) THP file: the page size's known pageblock order */
	assert_int_equal(sp_pageblock_pages(0, 4096), 512);
	assert_int_equal(sp_pageblock_pages(0, 65536), 8192);
	assert_int_equal(sp_pageblock_pages(3000000, 4096), 512);
	assert_int_equal(sp_pageblock_pages(4096, 4096), 512);
	assert_int_equal(sp_pageblock_pages(2ULL << 20, 8192), 0); /* no such page size */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(buddy_basic),
		cmocka_unit_test(buddy_page_size),
		cmocka_unit_test(buddy_fragmented_no_block),
		cmocka_unit_test(buddy_malformed),
		cmocka_unit_test(zoneinfo_sums),
		cmocka_unit_test(min_free_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
