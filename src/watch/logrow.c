// SPDX-License-Identifier: MIT
#include "watch/logrow.h"
#include "util/text.h"
#include "util/units.h"
#include "probe/spark.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* a row's unix_time: from 1970 to 2286 (10^10 s); -1e18 or 1e18 is a
 * malformed row, not a duration of millions of hours */
#define SP_UNIX_TIME_MAX 1e10
static bool unix_ok(double t) { return t >= 0 && t <= SP_UNIX_TIME_MAX; }

enum col_kind { K_TIME, K_UNIX, K_TYPE, K_EVENT, K_DETAIL, K_NUM, K_REASONS, K_UNIT };

struct col { // NOLINT(clang-analyzer-optin.performance.Padding): a small static table
	const char *name;
	enum col_kind kind;
	size_t off;   /* offset of the double (K_NUM) */
	int decimals; /* K_NUM: digits after the point */
	double lo, hi; /* K_NUM: what a real machine can log; outside is implausible */
};

#define NUM(name, field, dec, range) { name, K_NUM, offsetof(struct sp_logrow, field), dec, range }
#define BYTES 0, 0x1p56 /* 64 PiB */
#define PCT 0, 100
#define TEMP -60, 200   /* the probes' own bounds for a die */
#define ANY -DBL_MAX, DBL_MAX /* power, clocks, seconds, rates: any finite number */
#define WATTS ANY
#define MHZ ANY
#define SECONDS ANY
#define RATE ANY
#define COUNT 0, 0x1p62
static const struct col cols[] = {
	{ "time", K_TIME, 0, 0, 0, 0 },
	{ "unix_time", K_UNIX, 0, 0, 0, 0 },
	{ "type", K_TYPE, 0, 0, 0, 0 },
	{ "event", K_EVENT, 0, 0, 0, 0 },
	{ "detail", K_DETAIL, 0, 0, 0, 0 },
	NUM("mem_total_bytes", mem_total, 0, BYTES),
	NUM("mem_free_bytes", mem_free, 0, BYTES),
	NUM("mem_available_bytes", mem_available, 0, BYTES),
	NUM("page_cache_bytes", page_cache, 0, BYTES),
	NUM("swap_used_bytes", swap_used, 0, BYTES),
	NUM("budget_now_bytes", budget_now, 0, BYTES),
	NUM("budget_after_flush_bytes", budget_after_flush, 0, BYTES),
	NUM("psi_memory_some_avg10", psi_mem_some, 2, PCT),
	NUM("psi_memory_full_avg10", psi_mem_full, 2, PCT),
	NUM("psi_cpu_some_avg10", psi_cpu_some, 2, PCT),
	NUM("psi_io_some_avg10", psi_io_some, 2, PCT),
	NUM("psi_io_full_avg10", psi_io_full, 2, PCT),
	NUM("gpu_temp_c", gpu_temp_c, 0, TEMP),
	NUM("gpu_power_w", gpu_power_w, 2, WATTS),
	NUM("gpu_sm_clock_mhz", gpu_sm_clock_mhz, 0, MHZ),
	NUM("gpu_util_pct", gpu_util_pct, 0, PCT),
	{ "gpu_clocks_event_reasons", K_REASONS, 0, 0, 0, 0 },
	NUM("gpu_power_violation_s", gpu_power_viol_s, 3, SECONDS),
	NUM("gpu_thermal_violation_s", gpu_thermal_viol_s, 3, SECONDS),
	NUM("soc_temp_c", soc_temp_c, 1, TEMP),
	NUM("sys_power_w", sys_power_w, 2, WATTS),
	NUM("pl1_w", pl1_w, 2, WATTS),
	NUM("pl1_cap_w", pl1_cap_w, 2, WATTS),
	NUM("job_rss_bytes", job_rss_bytes, 0, BYTES),
	NUM("throughput", throughput, 4, RATE),
	{ "throughput_unit", K_UNIT, 0, 0, 0, 0 },
	/* version 2 */
	NUM("free_2mib_bytes", free_2mib, 0, BYTES),
	NUM("largest_free_block_bytes", largest_block, 0, BYTES),
	NUM("job_major_faults", job_majflt, 0, COUNT),
};
#define NCOLS ((int)(sizeof cols / sizeof cols[0]))
_Static_assert(SP_LOG_V1_COLUMNS == 31, "version 1 logs have 31 columns");

int sp_logrow_ncolumns(void)
{
	return NCOLS;
}

static double *numf(struct sp_logrow *r, const struct col *c)
{
	return (double *)(void *)((char *)r + c->off);
}

static double numv(const struct sp_logrow *r, const struct col *c)
{
	return *(const double *)(const void *)((const char *)r + c->off);
}

void sp_logrow_clear(struct sp_logrow *r, enum sp_row_type type)
{
	memset(r, 0, sizeof *r);
	r->type = type;
	for (int i = 0; i < NCOLS; i++)
		if (cols[i].kind == K_NUM)
			*numf(r, &cols[i]) = NAN;
	r->unix_time = NAN;
}

/* The local time of a row, to the millisecond, with its UTC offset. A
 * sample a second makes one: localtime_r (the zone's transitions searched)
 * and two formatted prints cost more than the row's other columns together,
 * so each thread keeps the minute it formatted last (its "YYYY-MM-DDTHH:MM:"
 * and offset, as localtime_r gave them for that minute) and writes the
 * seconds and milliseconds itself; a new minute asks localtime_r again, so a
 * change of the offset (summer time) is seen on the minute it happens. */
struct iso_minute {
	bool valid;
	time_t from;     /* the minute's first second */
	char head[24];   /* "2026-12-07T20:42:" */
	char off[8];     /* "+00:00" */
};
static _Thread_local struct iso_minute iso_kept;

static void iso_minute_fill(struct iso_minute *k, time_t sec)
{
	struct tm tm;
	k->valid = localtime_r(&sec, &tm) != NULL;
	if (!k->valid)
		return;
	k->from = sec - tm.tm_sec;
	long off = tm.tm_gmtoff / 60;
	strftime(k->head, sizeof k->head, "%Y-%m-%dT%H:%M:", &tm);
	snprintf(k->off, sizeof k->off, "%c%02ld:%02ld", off < 0 ? '-' : '+', labs(off) / 60 % 100, labs(off) % 60);
}

void sp_iso_time(char *buf, size_t n, double t)
{
	if (n == 0)
		return;
	if (!isfinite(t) || fabs(t) > 1e15) {
		buf[0] = 0;
		return;
	}
	time_t sec = (time_t)floor(t);
	int ms = (int)((t - (double)sec) * 1000.0);
	if (ms > 999)
		ms = 999;
	if (ms < 0)
		ms = 0;
	struct iso_minute *k = &iso_kept;
	if (!k->valid || sec < k->from || sec - k->from >= 60)
		iso_minute_fill(k, sec);
	if (!k->valid) {
		buf[0] = 0;
		return;
	}
	int s = (int)(sec - k->from);
	char tail[8] = { (char)('0' + s / 10), (char)('0' + s % 10), '.', (char)('0' + ms / 100),
			 (char)('0' + ms / 10 % 10), (char)('0' + ms % 10), 0 };
	size_t a = strlen(k->head), b = strlen(tail), c = strlen(k->off);
	if (a + b + c >= n) {
		snprintf(buf, n, "%s%s%s", k->head, tail, k->off); /* cut short, as before */
		return;
	}
	memcpy(buf, k->head, a);
	memcpy(buf + a, tail, b);
	memcpy(buf + a + b, k->off, c + 1);
}

static double u64d(struct sp_u64 f, double scale)
{
	return sp_ok(f.why) ? (double)f.v / scale : NAN;
}

void sp_logrow_from_sample(struct sp_logrow *r, const struct sp_sample *s)
{
	sp_logrow_clear(r, SP_ROW_SAMPLE);
	r->unix_time = floor(s->wall * 1000.0) / 1000.0;
	sp_iso_time(r->time_iso, sizeof r->time_iso, r->unix_time);
	const struct sp_meminfo *m = &s->mem;
	if (m->why == SP_OK) {
		r->mem_total = (double)m->v[SP_MI_TOTAL];
		r->mem_free = (double)m->v[SP_MI_FREE];
		if (sp_mi_has(m, SP_MI_AVAILABLE))
			r->mem_available = (double)m->v[SP_MI_AVAILABLE];
		if (sp_mi_has(m, SP_MI_BUFFERS) && sp_mi_has(m, SP_MI_CACHED))
			r->page_cache = (double)(m->v[SP_MI_BUFFERS] + m->v[SP_MI_CACHED]);
		if (sp_mi_has(m, SP_MI_SWAP_TOTAL) && sp_mi_has(m, SP_MI_SWAP_FREE))
			r->swap_used = (double)(m->v[SP_MI_SWAP_TOTAL] - m->v[SP_MI_SWAP_FREE]);
	}
	r->budget_now = u64d(s->budget.now, 1);
	r->budget_after_flush = u64d(s->budget.after_flush, 1);
	const struct sp_psi *p = s->psi;
	if (p[SP_PSI_MEMORY].why == SP_OK) {
		r->psi_mem_some = p[SP_PSI_MEMORY].some.avg10;
		if (p[SP_PSI_MEMORY].full.ok)
			r->psi_mem_full = p[SP_PSI_MEMORY].full.avg10;
	}
	if (p[SP_PSI_CPU].why == SP_OK)
		r->psi_cpu_some = p[SP_PSI_CPU].some.avg10;
	if (p[SP_PSI_IO].why == SP_OK) {
		r->psi_io_some = p[SP_PSI_IO].some.avg10;
		if (p[SP_PSI_IO].full.ok)
			r->psi_io_full = p[SP_PSI_IO].full.avg10;
	}
	if (s->ngpu > 0) {
		const struct sp_gpu *g = &s->gpus[0];
		r->gpu_temp_c = u64d(g->temp_c, 1);
		r->gpu_power_w = u64d(g->power_mw, 1e3);
		r->gpu_sm_clock_mhz = u64d(g->sm_clock_mhz, 1);
		r->gpu_util_pct = u64d(g->util_gpu_pct, 1);
		r->gpu_reasons_ok = sp_ok(g->reasons.why);
		r->gpu_reasons = r->gpu_reasons_ok ? g->reasons.v : 0;
		r->gpu_power_viol_s = u64d(g->viol_power_ns, 1e9);
		r->gpu_thermal_viol_s = u64d(g->viol_thermal_ns, 1e9);
	}
	struct sp_spark k;
	sp_spark_derive(s, &k);
	if (k.die_temp_ok) {
		r->soc_temp_c = k.die_temp_c;
	} else {
		for (int i = 0; i < s->nzones; i++)
			if (sp_ok(s->zones[i].temp_mc.why) &&
			    (isnan(r->soc_temp_c) || (double)s->zones[i].temp_mc.v / 1e3 > r->soc_temp_c))
				r->soc_temp_c = (double)s->zones[i].temp_mc.v / 1e3;
	}
	if (k.sys_power_ok)
		r->sys_power_w = k.sys_power_w;
	if (k.pl1_ok)
		r->pl1_w = k.pl1_w;
	if (k.pl1_cap_ok)
		r->pl1_cap_w = k.pl1_cap_w;
	if (s->contig.why == SP_OK) {
		r->free_2mib = (double)s->contig.free_2mib;
		if (s->contig.largest_order >= 0)
			r->largest_block = (double)s->contig.largest;
	}
}

void sp_logrow_event(struct sp_logrow *r, double t, const char *event, const char *detail)
{
	sp_logrow_clear(r, SP_ROW_EVENT);
	r->unix_time = floor(t * 1000.0) / 1000.0;
	sp_iso_time(r->time_iso, sizeof r->time_iso, r->unix_time);
	snprintf(r->event, sizeof r->event, "%s", event);
	snprintf(r->detail, sizeof r->detail, "%s", detail ? detail : "");
}

/* ---- writing ---------------------------------------------------------------- */

struct out {
	char *p;
	size_t n, len;
	bool full;
};

static void put(struct out *o, const char *s, size_t l)
{
	if (o->full || o->len + l >= o->n) {
		o->full = true;
		return;
	}
	memcpy(o->p + o->len, s, l);
	o->len += l;
	o->p[o->len] = 0;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* RFC 4180: quote when the field holds a comma, quote or line break */
static void put_field(struct out *o, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		puts_(o, s);
		return;
	}
	put(o, "\"", 1);
	for (; *s; s++) {
		if (*s == '"')
			put(o, "\"\"", 2);
		else if (*s == '\r' || *s == '\n')
			put(o, " ", 1); /* keep one row per line */
		else
			put(o, s, 1);
	}
	put(o, "\"", 1);
}

static size_t header_n(char *buf, size_t n, int ncols)
{
	struct out o = { buf, n, 0, false };
	for (int i = 0; i < ncols; i++) {
		if (i)
			put(&o, ",", 1);
		puts_(&o, cols[i].name);
	}
	put(&o, "\n", 1);
	return o.full ? 0 : o.len;
}

size_t sp_logrow_header(char *buf, size_t n)
{
	return header_n(buf, n, NCOLS);
}

static void put_reasons(struct out *o, const struct sp_logrow *r)
{
	if (!r->gpu_reasons_ok)
		return;
	if (r->gpu_reasons == 0) {
		puts_(o, "none");
		return;
	}
	int n = 0;
	for (int b = 0; b < 64; b++) {
		if (!(r->gpu_reasons >> b & 1))
			continue;
		char tmp[32];
		const char *name = sp_reason_name(b);
		if (!name) {
			snprintf(tmp, sizeof tmp, "unknown_bit_%d", b);
			name = tmp;
		}
		if (n++)
			put(o, "|", 1);
		puts_(o, name);
	}
}

size_t sp_logrow_format(const struct sp_logrow *r, char *buf, size_t n)
{
	struct out o = { buf, n, 0, false };
	char tmp[64];
	for (int i = 0; i < NCOLS; i++) {
		const struct col *c = &cols[i];
		if (i)
			put(&o, ",", 1);
		switch (c->kind) {
		case K_TIME:
			puts_(&o, r->time_iso);
			break;
		case K_UNIX:
			if (isfinite(r->unix_time)) {
				sp_fmt_fixed(tmp, sizeof tmp, 3, r->unix_time);
				puts_(&o, tmp);
			}
			break;
		case K_TYPE:
			puts_(&o, r->type == SP_ROW_EVENT ? "event" : "sample");
			break;
		case K_EVENT:
			put_field(&o, r->event);
			break;
		case K_DETAIL:
			put_field(&o, r->detail);
			break;
		case K_NUM: {
			double v = numv(r, c);
			if (isfinite(v)) {
				sp_fmt_fixed(tmp, sizeof tmp, c->decimals, v);
				puts_(&o, tmp);
			}
			break;
		}
		case K_REASONS:
			put_reasons(&o, r);
			break;
		case K_UNIT:
			put_field(&o, r->throughput_unit);
			break;
		}
	}
	put(&o, "\n", 1);
	return o.full ? 0 : o.len;
}

/* ---- reading ------------------------------------------------------------------ */

int sp_logrow_header_columns(const char *line, size_t len)
{
	static const int versions[] = { NCOLS, SP_LOG_V1_COLUMNS };
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
		char h[1024];
		size_t hl = header_n(h, sizeof h, versions[v]);
		if (hl == 0)
			continue;
		hl--; /* without '\n' */
		if (len == hl && memcmp(line, h, hl) == 0)
			return versions[v];
	}
	return 0;
}

bool sp_logrow_is_header(const char *line, size_t len)
{
	return sp_logrow_header_columns(line, len) > 0;
}

/* Split one CSV line into fields (RFC 4180 quotes). Fields are copied into
 * store; returns the field count, or -1 for an unterminated quote. */
static int split(const char *line, size_t len, char *store, size_t cap, const char **fields, int maxf)
{
	int nf = 0;
	size_t si = 0;
	size_t i = 0;
	for (;;) {
		if (nf >= maxf)
			return maxf + 1;
		fields[nf++] = store + si;
		if (i < len && line[i] == '"') {
			i++;
			for (;;) {
				if (i >= len)
					return -1;
				if (line[i] == '"') {
					if (i + 1 < len && line[i + 1] == '"') {
						if (si + 1 < cap)
							store[si++] = '"';
						i += 2;
						continue;
					}
					i++;
					break;
				}
				if (si + 1 < cap)
					store[si++] = line[i];
				i++;
			}
		} else {
			/* a plain field: up to the next comma, in one copy */
			const char *comma = memchr(line + i, ',', len - i);
			size_t fl = comma ? (size_t)(comma - (line + i)) : len - i;
			size_t room = si + 1 < cap ? cap - 1 - si : 0;
			size_t cl = fl < room ? fl : room;
			memcpy(store + si, line + i, cl);
			si += cl;
			i += fl;
		}
		if (si < cap)
			store[si++] = 0;
		else
			store[cap - 1] = 0;
		if (i >= len)
			break;
		if (line[i] != ',')
			return -1; /* text after a closing quote */
		i++;
	}
	return nf;
}

/* The writer's own numbers ("123", "-4.25") with at most 15 significant
 * digits: mantissa and power of ten are exact doubles, so one division gives
 * the correctly rounded value, the same as strtod (Clinger's fast path) at a
 * fraction of the cost. Anything else goes to strtod. */
static bool is_digit(char c)
{
	return (unsigned)(c - '0') < 10u;
}

static bool fast_num(const char *s, double *out)
{
	static const double p10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15 };
	bool neg = *s == '-';
	if (neg)
		s++;
	uint64_t m = 0;
	int digits = 0, frac = 0;
	if (!is_digit(*s))
		return false;
	for (; is_digit(*s); s++, digits++)
		m = m * 10 + (uint64_t)(*s - '0');
	if (*s == '.') {
		s++;
		if (!is_digit(*s))
			return false;
		for (; is_digit(*s); s++, digits++, frac++)
			m = m * 10 + (uint64_t)(*s - '0');
	}
	if (*s || digits > 15)
		return false;
	double v = (double)m / p10[frac];
	*out = neg ? -v : v;
	return true;
}

static int parse_num(const char *s, double *out)
{
	if (!*s) {
		*out = NAN;
		return 0;
	}
	if (fast_num(s, out))
		return 0;
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(d))
		return -1;
	*out = d;
	return 0;
}

static int parse_reasons(const char *s, struct sp_logrow *r)
{
	r->gpu_reasons = 0;
	r->gpu_reasons_ok = false;
	if (!*s)
		return 0;
	r->gpu_reasons_ok = true;
	if (strcmp(s, "none") == 0)
		return 0;
	const char *p = s;
	while (*p) {
		const char *bar = strchr(p, '|');
		size_t l = bar ? (size_t)(bar - p) : strlen(p);
		int found = -1;
		for (int b = 0; b < 64 && found < 0; b++) {
			const char *name = sp_reason_name(b);
			if (name && strlen(name) == l && memcmp(name, p, l) == 0)
				found = b;
		}
		if (found < 0 && l > 12 && memcmp(p, "unknown_bit_", 12) == 0) {
			char *end;
			long b = strtol(p + 12, &end, 10);
			if (end != p + 12 && b >= 0 && b < 64)
				found = (int)b;
		}
		if (found < 0)
			return -1;
		r->gpu_reasons |= 1ULL << found;
		p += l;
		if (*p == '|')
			p++;
	}
	return 0;
}

int sp_logrow_parse(const char *line, size_t len, struct sp_logrow *r, char *err, size_t errlen)
{
	return sp_logrow_parse_n(line, len, NCOLS, r, err, errlen);
}

/* A number in the writer's own form (fast_num's) read where it lies, up to
 * the next ',' or end; *pp is left on that ',' or end. false: not such a
 * number (the general parser decides). An empty field is NAN. */
static bool num_here(const char **pp, const char *end, double *out)
{
	static const double p10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15 };
	const char *s = *pp;
	if (s == end || *s == ',') {
		*out = NAN;
		return true;
	}
	bool neg = *s == '-';
	if (neg)
		s++;
	uint64_t m = 0;
	int digits = 0, frac = 0;
	if (s == end || !is_digit(*s))
		return false;
	for (; s < end && is_digit(*s); s++, digits++)
		m = m * 10 + (uint64_t)(*s - '0');
	if (s < end && *s == '.') {
		s++;
		if (s == end || !is_digit(*s))
			return false;
		for (; s < end && is_digit(*s); s++, digits++, frac++)
			m = m * 10 + (uint64_t)(*s - '0');
	}
	if ((s < end && *s != ',') || digits > 15)
		return false;
	double v = (double)m / p10[frac];
	*out = neg ? -v : v;
	*pp = s;
	return true;
}

/* A text field (no quote, no NUL) into dst as sp_text_copy would put it, up
 * to the next ',' or end; *pp is left there. false on a NUL. */
static bool text_here(const char **pp, const char *end, char *dst, size_t cap)
{
	const char *s = *pp;
	size_t l = 0;
	for (; s < end && *s != ','; s++) {
		if (!*s)
			return false;
		if (l + 1 < cap)
			dst[l++] = *s;
	}
	dst[l] = 0;
	*pp = s;
	return true;
}

bool sp_logrow_parse_fast(const char *line, size_t len, int ncols, struct sp_logrow *r)
{
	if (ncols <= 0 || ncols > NCOLS)
		ncols = NCOLS;
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	sp_logrow_clear(r, SP_ROW_SAMPLE);
	const char *p = line, *end = line + len;
	for (int i = 0; i < ncols; i++) {
		if (i > 0) {
			if (p == end)
				return false; /* too few fields */
			p++;          /* the ',' */
		}
		if (p < end && *p == '"')
			return false;
		const struct col *c = &cols[i];
		switch (c->kind) {
		case K_NUM: {
			double *d = numf(r, c);
			if (!num_here(&p, end, d) || (!isnan(*d) && !(*d >= c->lo && *d <= c->hi)))
				return false;
			break;
		}
		case K_UNIX:
			if (!num_here(&p, end, &r->unix_time) || !unix_ok(r->unix_time))
				return false;
			break;
		case K_TIME:
			if (!text_here(&p, end, r->time_iso, sizeof r->time_iso))
				return false;
			break;
		case K_TYPE: {
			char v[8];
			if (!text_here(&p, end, v, sizeof v))
				return false;
			if (strcmp(v, "sample") == 0)
				r->type = SP_ROW_SAMPLE;
			else if (strcmp(v, "event") == 0)
				r->type = SP_ROW_EVENT;
			else
				return false; /* (or longer than 7: the general parser says) */
			break;
		}
		case K_EVENT:
			if (!text_here(&p, end, r->event, sizeof r->event))
				return false;
			break;
		case K_DETAIL:
			if (!text_here(&p, end, r->detail, sizeof r->detail))
				return false;
			break;
		case K_REASONS: {
			char v[512];
			const char *q = p;
			if (!text_here(&p, end, v, sizeof v) || (size_t)(p - q) >= sizeof v || parse_reasons(v, r) < 0)
				return false;
			break;
		}
		case K_UNIT:
			if (!text_here(&p, end, r->throughput_unit, sizeof r->throughput_unit))
				return false;
			break;
		}
	}
	if (p != end)
		return false; /* more fields than ncols */
	return !(r->type == SP_ROW_EVENT && !r->event[0]);
}

int sp_logrow_parse_n(const char *line, size_t len, int ncols, struct sp_logrow *r, char *err, size_t errlen)
{
	if (ncols <= 0 || ncols > NCOLS)
		ncols = NCOLS;
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	if (len < 2048 && sp_logrow_parse_fast(line, len, ncols, r))
		return 0;
	char store[2048];
	const char *f[NCOLS + 1];
	int nf = split(line, len, store, sizeof store, f, ncols);
	if (nf < 0) {
		snprintf(err, errlen, "unterminated quoted field");
		return -1;
	}
	if (nf != ncols) {
		snprintf(err, errlen, "expected %d fields, got %d%s", ncols, nf > ncols ? ncols + 1 : nf,
			 nf > ncols ? " or more" : "");
		return -1;
	}
	sp_logrow_clear(r, SP_ROW_SAMPLE);
	for (int i = 0; i < ncols; i++) {
		const struct col *c = &cols[i];
		const char *v = f[i];
		switch (c->kind) {
		case K_TIME:
			sp_text_copy(r->time_iso, sizeof r->time_iso, v);
			break;
		case K_UNIX:
			if (parse_num(v, &r->unix_time) < 0 || !unix_ok(r->unix_time)) {
				snprintf(err, errlen, "field 'unix_time': '%.40s' is not a time (1970 to 2286)", v);
				return -1;
			}
			break;
		case K_TYPE:
			if (strcmp(v, "sample") == 0)
				r->type = SP_ROW_SAMPLE;
			else if (strcmp(v, "event") == 0)
				r->type = SP_ROW_EVENT;
			else {
				snprintf(err, errlen, "field 'type': '%.40s' is neither sample nor event", v);
				return -1;
			}
			break;
		case K_EVENT:
			sp_text_copy(r->event, sizeof r->event, v);
			break;
		case K_DETAIL:
			sp_text_copy(r->detail, sizeof r->detail, v);
			break;
		case K_NUM: {
			double *d = numf(r, c);
			if (parse_num(v, d) < 0) {
				snprintf(err, errlen, "field '%s': '%.40s' is not a number", c->name, v);
				return -1;
			}
			if (!isnan(*d) && !(*d >= c->lo && *d <= c->hi)) {
				snprintf(err, errlen, "field '%s': '%.40s' is implausible (outside %g..%g)", c->name, v,
					 c->lo, c->hi);
				return -1;
			}
			break;
		}
		case K_REASONS:
			if (parse_reasons(v, r) < 0) {
				snprintf(err, errlen, "field '%s': unknown reason in '%.60s'", c->name, v);
				return -1;
			}
			break;
		case K_UNIT:
			sp_text_copy(r->throughput_unit, sizeof r->throughput_unit, v);
			break;
		}
	}
	if (r->type == SP_ROW_EVENT && !r->event[0]) {
		snprintf(err, errlen, "an event row without an event name");
		return -1;
	}
	return 0;
}

bool sp_detail_get(const char *detail, const char *key, char *out, size_t n)
{
	size_t kl = strlen(key);
	const char *p = detail;
	while (p && *p) {
		while (*p == ' ')
			p++;
		/* "evidence" is written last and is text: its value runs to the end
		 * (spaces and all; a log from before has it with underscores) */
		bool rest = strncmp(p, "evidence=", 9) == 0;
		if (rest && strcmp(key, "evidence") != 0)
			return false;
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			const char *v = p + kl + 1;
			size_t vl = rest ? strlen(v) : strcspn(v, " ");
			if (n == 0)
				return true;
			if (vl >= n)
				vl = n - 1;
			memcpy(out, v, vl);
			out[vl] = 0;
			return true;
		}
		p = strchr(p, ' ');
	}
	return false;
}
