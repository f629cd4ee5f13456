/* SPDX-License-Identifier: MIT */
/* Private to the classifier's files in ladder/: oomlog.c (the stream: bytes
 * into lines, the signature, the verdict at the end), oomline.c (one text
 * line: prefixes, tracebacks, progress), oomfail.c (the failures a line
 * names) and oomfacts.c (the job's facts): the matcher (ladder/match.h)
 * under the short names they write, and the line readers each calls. */
#ifndef SP_OOMLOG_INT_H
#define SP_OOMLOG_INT_H
#include "ladder/match.h"
#include "ladder/oomlog.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HAS(s, n, lit) SP_HAS(s, n, lit)
#define ANY(s, n, table) SP_ANY(s, n, table)
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

/* a figure not (yet) read */
static inline void oom_unset(struct sp_u64 *f)
{
	f->v = 0;
	f->why = SP_MISSING;
}

/* a figure read from the log */
static inline void oom_set(struct sp_u64 *f, uint64_t v)
{
	f->v = v;
	f->why = SP_OK;
}

/* the failure's figures, none read yet (a new log, a new failure) */
static inline void oom_figs_unset(struct sp_oomlog *p)
{
	oom_unset(&p->fig.tried);
	oom_unset(&p->fig.total);
	oom_unset(&p->fig.free);
	oom_unset(&p->fig.reserved_unalloc);
	oom_unset(&p->fig.kv_needed);
	oom_unset(&p->fig.kv_available);
}

static inline void oom_set_why(char *dst, size_t n, const char *why)
{
	snprintf(dst, n, "%s", why);
}

/* ladder/oomfacts.c, on each text line (prefixes stripped; the engine's
 * marks are looked for in the raw line, prefixes and all) */
void sp_oomlog_engine_line(struct sp_oomlog *p, const char *s, size_t n);
void sp_oomlog_facts_line(struct sp_oomlog *p, const char *s, size_t n);

/* ladder/oomline.c: one text line, once it ends (oomlog.c: classify has set
 * the line's needle filter) */
void sp_oomlog_classify_line(struct sp_oomlog *p, const char *s, size_t n);

/* ladder/oomfail.c: the failure a line names, recorded with its figures
 * (the more specific kind wins); indented: a traceback's frame, not its
 * exception line */
void sp_oomlog_failures_line(struct sp_oomlog *p, const char *s, size_t n, bool indented);
#endif
