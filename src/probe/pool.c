// SPDX-License-Identifier: MIT
/* Contiguous free memory, watermarks, compaction. See pool.h. */
#include "probe/pool.h"
#include "probe/kept.h"
#include "probe/sysctl.h"
#include "util/pagesize.h"
#include "util/fileio.h"
#include "util/paths.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int sp_order_for(uint64_t block, uint64_t page_size)
{
	int k = 0;
	while (k < 63 && (page_size << k) < block)
		k++;
	return k;
}

/* a whole number at *pp (after blanks); false when there is none or it overflows */
static bool num_at(const char **pp, const char *end, uint64_t *v)
{
	const char *p = *pp;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p >= end || !isdigit((unsigned char)*p))
		return false;
	uint64_t x = 0;
	while (p < end && isdigit((unsigned char)*p)) {
		unsigned d = (unsigned)(*p - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
		p++;
	}
	*pp = p;
	*v = x;
	return true;
}

static bool add_ok(uint64_t *acc, uint64_t x)
{
	if (*acc > UINT64_MAX - x)
		return false;
	*acc += x;
	return true;
}

/* "Node 0, zone   Normal   1 2 3 ...": the counts after the zone's name */
static int buddy_line(const char *p, const char *end, uint64_t page_size, int min_order, struct sp_contig *c)
{
	if (end - p < 5 || memcmp(p, "Node ", 5) != 0)
		return 0; /* not a zone line: ignored */
	const char *z = p;
	while (z + 5 <= end && memcmp(z, "zone ", 5) != 0)
		z++;
	if (z + 5 > end)
		return -1;
	z += 5;
	while (z < end && *z == ' ')
		z++;
	while (z < end && *z != ' ' && *z != '\t')
		z++; /* the zone's name */
	int order = 0;
	for (;;) {
		uint64_t n;
		const char *q = z;
		while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q >= end)
			break;
		if (!num_at(&z, end, &n))
			return -1;
		if (order >= SP_BUDDY_MAX_ORDER)
			return -1;
		if (n > 0) {
			uint64_t block = page_size << order;
			if (n > UINT64_MAX / block)
				return -1;
			uint64_t bytes = n * block;
			if (!add_ok(&c->free_total, bytes))
				return -1;
			if (order >= min_order && !add_ok(&c->free_2mib, bytes))
				return -1;
			if (order > c->largest_order) {
				c->largest_order = order;
				c->largest = block;
			}
		}
		order++;
	}
	return order > 0 ? 1 : -1;
}

int sp_buddyinfo_parse(const char *buf, size_t len, uint64_t page_size, struct sp_contig *c)
{
	memset(c, 0, sizeof *c);
	c->largest_order = -1;
	c->why = SP_MALFORMED;
	if (page_size == 0 || (page_size & (page_size - 1)) || page_size > (1ULL << 30))
		return -1;
	int min_order = sp_order_for(SP_CONTIG_BLOCK, page_size);
	const char *p = buf, *end = buf + len;
	int zones = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		int r = buddy_line(p, le, page_size, min_order, c);
		if (r < 0) {
			memset(c, 0, sizeof *c);
			c->largest_order = -1;
			c->why = SP_MALFORMED;
			return -1;
		}
		zones += r;
		p = nl ? nl + 1 : end;
	}
	if (zones == 0)
		return -1;
	c->why = SP_OK;
	return 0;
}

void sp_buddyinfo_read(struct sp_contig *c)
{
	char path[600], buf[4096];
	size_t len;
	if (sp_proc_path(path, sizeof path, "buddyinfo") < 0) {
		memset(c, 0, sizeof *c);
		c->why = SP_MISSING;
		return;
	}
	int r = sp_kept_read(path, buf, sizeof buf, &len);
	if (r < 0) {
		memset(c, 0, sizeof *c);
		c->largest_order = -1;
		c->why = sp_why_from_errno(r);
		return;
	}
	sp_buddyinfo_parse(buf, len, sp_page_size(), c);
}

/* ---- zoneinfo ------------------------------------------------------------------ */

struct zacc {
	bool in_zone, populated_ok;
	uint64_t high, managed, present, prot_max;
	bool have_high, have_managed;
};

static bool zone_upto_normal(const char *name, size_t l)
{
	static const char *const ok[] = { "DMA", "DMA32", "Normal" };
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (strlen(ok[i]) == l && memcmp(ok[i], name, l) == 0)
			return true;
	return false;
}

static int zone_close(struct zacc *a, struct sp_zoneinfo *z)
{
	if (!a->in_zone)
		return 0;
	if (!a->have_high || !a->have_managed)
		return -1;
	uint64_t r = a->high + a->prot_max;
	if (r > a->managed)
		r = a->managed;
	if (!add_ok(&z->reserve_pages, r) || !add_ok(&z->high_pages, a->high) ||
	    !add_ok(&z->managed_pages, a->managed))
		return -1;
	if (a->populated_ok && a->present > 0)
		z->populated++;
	memset(a, 0, sizeof *a);
	return 0;
}

/* "        low      8511" -> key "low", value */
static bool key_num(const char *p, const char *end, const char *key, uint64_t *v)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	size_t kl = strlen(key);
	/* cppcheck follows the loop above as if p always reached end */
	// cppcheck-suppress knownConditionTrueFalse
	if ((size_t)(end - p) <= kl || memcmp(p, key, kl) != 0 || (p[kl] != ' ' && p[kl] != '\t'))
		return false;
	p += kl;
	const char *q = p;
	if (!num_at(&q, end, v))
		return false;
	while (q < end && (*q == ' ' || *q == '\r'))
		q++;
	return q == end;
}

int sp_zoneinfo_parse(const char *buf, size_t len, struct sp_zoneinfo *z)
{
	memset(z, 0, sizeof *z);
	struct zacc a;
	memset(&a, 0, sizeof a);
	const char *p = buf, *end = buf + len;
	bool bad = false;
	while (p < end && !bad) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		uint64_t v;
		if (le - p >= 5 && memcmp(p, "Node ", 5) == 0) {
			if (zone_close(&a, z) < 0) {
				/* a zone without watermarks (a "per-node stats" block comes first) */
				memset(&a, 0, sizeof a);
			}
			const char *zn = p;
			while (zn + 5 <= le && memcmp(zn, "zone ", 5) != 0)
				zn++;
			if (zn + 5 <= le) {
				zn += 5;
				while (zn < le && *zn == ' ')
					zn++;
				size_t l = 0;
				while (zn + l < le && zn[l] != ' ' && zn[l] != '\r')
					l++;
				a.in_zone = true;
				a.populated_ok = zone_upto_normal(zn, l);
			}
		} else if (a.in_zone && key_num(p, le, "min", &v)) {
			if (!add_ok(&z->min_pages, v))
				bad = true;
		} else if (a.in_zone && key_num(p, le, "low", &v)) {
			if (!add_ok(&z->low_pages, v))
				bad = true;
		} else if (a.in_zone && key_num(p, le, "high", &v)) {
			a.high = v;
			a.have_high = true;
			z->zones++;
		} else if (a.in_zone && key_num(p, le, "managed", &v)) {
			a.managed = v;
			a.have_managed = true;
		} else if (a.in_zone && key_num(p, le, "present", &v)) {
			a.present = v;
		} else if (a.in_zone) {
			const char *q = p;
			while (q < le && *q == ' ')
				q++;
			// cppcheck-suppress knownConditionTrueFalse ; the same loop-bound confusion
			if (le - q > 12 && memcmp(q, "protection:", 11) == 0) {
				const char *r = memchr(q, '(', (size_t)(le - q));
				while (r && r < le && *r != ')') {
					r++;
					uint64_t x;
					if (!num_at(&r, le, &x)) {
						bad = true;
						break;
					}
					if (x > a.prot_max)
						a.prot_max = x;
					while (r < le && *r == ' ')
						r++;
					if (r < le && *r != ',' && *r != ')') {
						bad = true;
						break;
					}
				}
			}
		}
		p = nl ? nl + 1 : end;
	}
	if (!bad && a.in_zone && (a.have_high || a.have_managed) && zone_close(&a, z) < 0)
		bad = true;
	if (bad || z->zones == 0) {
		memset(z, 0, sizeof *z);
		z->why = SP_MALFORMED;
		return -1;
	}
	z->why = SP_OK;
	return 0;
}

/* ---- the defaults ---------------------------------------------------------------- */

static uint64_t isqrt(uint64_t x)
{
	uint64_t r = 0, bit = 1ULL << 62;
	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

uint64_t sp_min_free_default_kb(uint64_t lowmem_kb)
{
	uint64_t v = lowmem_kb > UINT64_MAX / 16 ? UINT64_MAX : isqrt(lowmem_kb * 16);
	if (v < 128)
		v = 128;
	if (v > 262144)
		v = 262144;
	return v;
}

uint64_t sp_min_free_thp_kb(uint64_t pageblock_pages, int populated, uint64_t lowmem_kb, uint64_t page_size)
{
	if (pageblock_pages == 0 || populated <= 0 || page_size < 1024)
		return 0;
	uint64_t pages = pageblock_pages * (uint64_t)populated * 2;
	pages += pageblock_pages * (uint64_t)populated * 3 * 3; /* MIGRATE_PCPTYPES squared */
	uint64_t lowmem_pages = lowmem_kb / (page_size / 1024);
	if (pages > lowmem_pages / 20)
		pages = lowmem_pages / 20;
	return pages * (page_size / 1024);
}

/* The page block (pageblock_nr_pages) is a constant of the kernel, so it is
 * derived, never read from /proc/pagetypeinfo: generating that file walks
 * every zone's free lists under zone->lock with interrupts off (why it is
 * root-only since Linux 5.4), a stall on the machine we watch.
 * include/linux/pageblock-flags.h (Linux 6.x):
 *   pageblock_order = min(HUGETLB_PAGE_ORDER, MAX_PAGE_ORDER)
 * and HUGETLB_PAGE_ORDER = PMD_SHIFT - PAGE_SHIFT, which is what
 * hpage_pmd_size / page size measures. By page size (arm64 Kconfig
 * ARCH_FORCE_MAX_ORDER: 10 for 4K, 11 for 16K, 13 for 64K; x86 is 4K):
 *   4 KiB pages:  PMD 2 MiB,   order 9  ->  512 pages
 *   16 KiB pages: PMD 32 MiB,  order 11 -> 2048 pages
 *   64 KiB pages: PMD 512 MiB, order 13 -> 8192 pages (min(13, 13))
 * Linux 6.16+ may lower it with CONFIG_PAGE_BLOCK_ORDER; the PMD figure is
 * then the upper bound khugepaged's recommendation is computed from. */
static uint64_t max_order_pages(uint64_t page_size)
{
	switch (page_size) {
	case 4096: return 1ULL << 10;
	case 16384: return 1ULL << 11;
	case 65536: return 1ULL << 13;
	default: return 0;
	}
}

uint64_t sp_pageblock_pages(uint64_t pmd_bytes, uint64_t page_size)
{
	uint64_t cap = max_order_pages(page_size);
	if (cap == 0)
		return 0;
	if (pmd_bytes > page_size && pmd_bytes % page_size == 0) {
		uint64_t n = pmd_bytes / page_size;
		if ((n & (n - 1)) == 0)
			return n < cap ? n : cap;
	}
	switch (page_size) { /* no THP sysfs file: the page size's known order */
	case 4096: return 512;
	case 16384: return 2048;
	default: return 8192;
	}
}

static void vm_i64(const char *name, struct sp_i64 *out)
{
	char path[600];
	out->v = 0;
	if (sp_proc_path(path, sizeof path, "sys/vm/%s", name) < 0) {
		out->why = SP_MISSING;
		return;
	}
	int64_t v;
	int r = sp_read_i64(path, &v);
	out->why = r == 0 ? SP_OK : r == -EINVAL ? SP_MALFORMED : sp_why_from_errno(r);
	if (r == 0)
		out->v = v;
}

static bool thp_on(void)
{
	char path[600], line[128];
	if (sp_sys_path(path, sizeof path, "kernel/mm/transparent_hugepage/enabled") < 0)
		return false;
	if (sp_read_line(path, line, sizeof line) < 0)
		return false;
	return strstr(line, "[never]") == NULL;
}

void sp_watermarks_read(struct sp_watermarks *w, uint64_t mem_total)
{
	memset(w, 0, sizeof *w);
	vm_i64("min_free_kbytes", &w->min_free_kbytes);
	vm_i64("watermark_boost_factor", &w->boost_factor);
	vm_i64("watermark_scale_factor", &w->scale_factor);
	char path[600];
	static char buf[262144]; /* zoneinfo is long (a pageset per CPU); status reads it once */
	size_t len;
	uint64_t page = sp_page_size();
	int r = sp_proc_path(path, sizeof path, "zoneinfo") < 0 ? -ENAMETOOLONG
								: sp_read_file(path, buf, sizeof buf, &len);
	if (r < 0) {
		w->zi.why = sp_why_from_errno(r);
	} else {
		sp_zoneinfo_parse(buf, len, &w->zi);
	}
	w->low_bytes.why = w->reserve_bytes.why = w->zi.why;
	if (w->zi.why == SP_OK) {
		w->low_bytes.v = w->zi.low_pages * page;
		w->reserve_bytes.v = w->zi.reserve_pages * page;
	}
	uint64_t lowmem_kb = w->zi.why == SP_OK ? w->zi.managed_pages * (page / 1024) : mem_total / 1024;
	if (lowmem_kb == 0) {
		w->default_kbytes.why = SP_MISSING;
		w->thp_kbytes.why = SP_MISSING;
		return;
	}
	w->default_kbytes.v = sp_min_free_default_kb(lowmem_kb);
	w->default_kbytes.why = SP_OK;
	w->thp_kbytes.why = SP_MISSING;
	if (thp_on() && w->zi.why == SP_OK) {
		int64_t pmd = 0;
		if (sp_sys_path(path, sizeof path, "kernel/mm/transparent_hugepage/hpage_pmd_size") < 0 ||
		    sp_read_i64(path, &pmd) < 0 || pmd < 0)
			pmd = 0;
		uint64_t pb = sp_pageblock_pages((uint64_t)pmd, page);
		if (pb) {
			w->thp_kbytes.v = sp_min_free_thp_kb(pb, w->zi.populated, lowmem_kb, page);
			w->thp_kbytes.why = SP_OK;
		}
	}
	if (sp_ok(w->min_free_kbytes.why) && w->min_free_kbytes.v > 0) {
		uint64_t expect = w->default_kbytes.v;
		if (sp_ok(w->thp_kbytes.why) && w->thp_kbytes.v > expect)
			expect = w->thp_kbytes.v;
		/* far above: more than twice what the kernel would set, and 256 MiB over it */
		uint64_t mf = (uint64_t)w->min_free_kbytes.v;
		w->raised = mf > 2 * expect && mf - expect >= 256ULL * 1024;
	}
}

/* ---- the writes ------------------------------------------------------------------- */

int sp_compact_memory(void)
{
	char path[600];
	if (sp_proc_path(path, sizeof path, "sys/vm/compact_memory") < 0)
		return -ENAMETOOLONG;
	int fd = sp_procsys_open_write("sys/vm/compact_memory");
	if (fd < 0)
		return -errno;
	int err = 0;
	if (sp_write_full(fd, "1\n", 2) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}

const char *const sp_vm_guarded[SP_VM_GUARDED_N] = {
	"min_free_kbytes", "watermark_boost_factor", "watermark_scale_factor", "compaction_proactiveness",
	"extfrag_threshold",
};

void sp_vm_snapshot(char vals[SP_VM_GUARDED_N][32])
{
	for (int i = 0; i < SP_VM_GUARDED_N; i++) {
		char path[600];
		vals[i][0] = 0;
		if (sp_proc_path(path, sizeof path, "sys/vm/%s", sp_vm_guarded[i]) == 0 &&
		    sp_read_line(path, vals[i], 32) < 0)
			vals[i][0] = 0;
	}
}

int sp_vm_restore(const char *name, const char *val)
{
	char path[600];
	if (sp_proc_path(path, sizeof path, "sys/vm/%s", name) < 0 || strchr(name, '/'))
		return -ENAMETOOLONG;
	char rel[128];
	snprintf(rel, sizeof rel, "sys/vm/%s", name);
	int fd = sp_procsys_open_write(rel);
	if (fd < 0)
		return -errno;
	int err = 0;
	if (sp_write_full(fd, val, strlen(val)) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}
