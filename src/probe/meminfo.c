// SPDX-License-Identifier: MIT
/* /proc/meminfo — the pool. */
#include "probe/kept.h"
#include "probe/probe.h"
#include "util/fileio.h"
#include "util/paths.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

static const char *const mi_names[SP_MI_N] = {
	[SP_MI_TOTAL] = "MemTotal",
	[SP_MI_FREE] = "MemFree",
	[SP_MI_AVAILABLE] = "MemAvailable",
	[SP_MI_BUFFERS] = "Buffers",
	[SP_MI_CACHED] = "Cached",
	[SP_MI_SWAP_CACHED] = "SwapCached",
	[SP_MI_ACTIVE_FILE] = "Active(file)",
	[SP_MI_INACTIVE_FILE] = "Inactive(file)",
	[SP_MI_UNEVICTABLE] = "Unevictable",
	[SP_MI_MLOCKED] = "Mlocked",
	[SP_MI_SWAP_TOTAL] = "SwapTotal",
	[SP_MI_SWAP_FREE] = "SwapFree",
	[SP_MI_DIRTY] = "Dirty",
	[SP_MI_WRITEBACK] = "Writeback",
	[SP_MI_ANON_PAGES] = "AnonPages",
	[SP_MI_MAPPED] = "Mapped",
	[SP_MI_SHMEM] = "Shmem",
	[SP_MI_SRECLAIMABLE] = "SReclaimable",
	[SP_MI_SUNRECLAIM] = "SUnreclaim",
	[SP_MI_HUGE_TOTAL] = "HugePages_Total",
	[SP_MI_HUGE_FREE] = "HugePages_Free",
	[SP_MI_HUGE_SIZE] = "Hugepagesize",
	[SP_MI_HUGETLB] = "Hugetlb",
	[SP_MI_PAGE_TABLES] = "PageTables",
	[SP_MI_KERNEL_STACK] = "KernelStack",
	[SP_MI_VMALLOC_USED] = "VmallocUsed",
};

/* One line: "Key:   123 kB". The key must match from the line start up to ':'. */
static void parse_line(const char *p, const char *end, struct sp_meminfo *m)
{
	const char *colon = memchr(p, ':', (size_t)(end - p));
	if (!colon)
		return;
	size_t klen = (size_t)(colon - p);
	int key = -1;
	for (int i = 0; i < SP_MI_N; i++) {
		if (strlen(mi_names[i]) == klen && memcmp(mi_names[i], p, klen) == 0) {
			key = i;
			break;
		}
	}
	if (key < 0)
		return;
	const char *q = colon + 1;
	while (q < end && (*q == ' ' || *q == '\t'))
		q++;
	if (q >= end || !isdigit((unsigned char)*q))
		return;
	uint64_t v = 0;
	while (q < end && isdigit((unsigned char)*q)) {
		unsigned d = (unsigned)(*q - '0');
		if (v > (UINT64_MAX - d) / 10)
			return; /* overflow: garbage, not a value */
		v = v * 10 + d;
		q++;
	}
	while (q < end && (*q == ' ' || *q == '\t'))
		q++;
	uint64_t mul = 1;
	/* cppcheck's value flow thinks q == end here; the loop above stops at
	 * the first non-blank, which may well leave "kB" */
	// cppcheck-suppress knownConditionTrueFalse
	if (end - q >= 2 && (q[0] == 'k' || q[0] == 'K') && (q[1] == 'B' || q[1] == 'b')) {
		mul = 1024;
		q += 2;
	}
	while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
		q++;
	if (q != end)
		return; /* trailing garbage */
	if (mul > 1 && v > UINT64_MAX / mul)
		return;
	m->v[key] = v * mul;
	m->have |= 1ULL << key;
}

int sp_meminfo_parse(const char *buf, size_t len, struct sp_meminfo *m)
{
	memset(m, 0, sizeof *m);
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		parse_line(p, le, m);
		p = nl ? nl + 1 : end;
	}
	if (!sp_mi_has(m, SP_MI_TOTAL) || !sp_mi_has(m, SP_MI_FREE) || m->v[SP_MI_TOTAL] == 0) {
		m->why = SP_MALFORMED;
		return -1;
	}
	/* a pool with more free (or available, or cached) than it holds is not
	 * a reading to plan on */
	static const enum sp_mi part[] = { SP_MI_FREE, SP_MI_AVAILABLE, SP_MI_CACHED };
	for (size_t i = 0; i < sizeof part / sizeof part[0]; i++)
		if (sp_mi_has(m, part[i]) && m->v[part[i]] > m->v[SP_MI_TOTAL]) {
			m->why = SP_IMPLAUSIBLE;
			return -1;
		}
	m->why = SP_OK;
	return 0;
}

void sp_meminfo_read(struct sp_meminfo *m)
{
	char path[600], buf[8192];
	size_t len;
	sp_proc_path(path, sizeof path, "meminfo");
	int r = sp_kept_read(path, buf, sizeof buf, &len);
	if (r < 0) {
		memset(m, 0, sizeof *m);
		m->why = sp_why_from_errno(r);
		return;
	}
	sp_meminfo_parse(buf, len, m);
}
