/* SPDX-License-Identifier: MIT */
/* Private to ladder/oomlog.c (the classifier) and ladder/oomfacts.c (the
 * job's facts): the matcher (ladder/match.h) under the short names both
 * write, and the fact readers the classifier calls on each text line. */
#ifndef SP_OOMLOG_INT_H
#define SP_OOMLOG_INT_H
#include "ladder/match.h"
#include "ladder/oomlog.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HAS(s, n, lit) SP_HAS(s, n, lit)
#define number_after(s, n, lit) SP_NUMBER_AFTER(s, n, lit)
#define count_after(s, n, lit) SP_COUNT_AFTER(s, n, lit)
#define size_before(s, n, lit, out) SP_SIZE_BEFORE(s, n, lit, out)

/* the size after a needle into a figure: set (SP_OK) only when one is there */
static inline bool oom_size_after_nd(const char *s, size_t n, const struct sp_needle *key, struct sp_u64 *out)
{
	uint64_t b;
	if (!sp_size_after_nd(s, n, key, &b))
		return false;
	out->v = b;
	out->why = SP_OK;
	return true;
}
#define size_after(s, n, lit, out) (SP_MAY_HAVE(lit) && oom_size_after_nd((s), (n), SP_NEEDLE(lit), (out)))

static inline void oom_set_why(char *dst, size_t n, const char *why)
{
	snprintf(dst, n, "%s", why);
}

/* ladder/oomfacts.c, on each text line (prefixes stripped; the engine's
 * marks are looked for in the raw line, prefixes and all) */
void sp_oomlog_engine_line(struct sp_oomlog *p, const char *s, size_t n);
void sp_oomlog_facts_line(struct sp_oomlog *p, const char *s, size_t n);
#endif
