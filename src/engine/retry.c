// SPDX-License-Identifier: MIT
/* run --ladder: the command line's flags and the next rung (retry.h). */
#include "engine/retry.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a whole number 1..INT_MAX, nothing else */
static bool parse_count(const char *s, long *v)
{
	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	char *end;
	long x = strtol(s, &end, 10);
	if (errno || *end || x < 1 || x > INT_MAX)
		return false;
	*v = x;
	return true;
}

int sp_retry_flag_find(char *const *argv, const char *flag, long *value)
{
	size_t fl = strlen(flag);
	int at = -1;
	const char *val = NULL;
	if (!argv[0])
		return -1;
	for (int i = 1; argv[i]; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, flag) == 0) {
			const char *next = argv[i + 1];
			if (!next) {
				at = -2;
				break;
			}
			at = i + 1;
			val = next;
			i++; /* the value is not a flag */
		} else if (strncmp(arg, flag, fl) == 0 && arg[fl] == '=') {
			at = i;
			val = arg + fl + 1;
		}
	}
	if (at < 0)
		return at;
	long v;
	if (!parse_count(val, &v))
		return -2;
	*value = v;
	return at;
}

char **sp_retry_argv_set(char *const *argv, const char *flag, long value)
{
	long old;
	int at = sp_retry_flag_find(argv, flag, &old);
	int n = 0;
	size_t bytes = 0;
	for (; argv[n]; n++)
		bytes += strlen(argv[n]) + 1;
	char num[24];
	snprintf(num, sizeof num, "%ld", value);
	size_t fl = strlen(flag);
	bytes += fl + 1 + sizeof num + 1; /* the new value, and the flag when appended */
	size_t slots = (size_t)n + 3;
	char **out = malloc(slots * sizeof *out + bytes);
	if (!out)
		return NULL;
	char *p = (char *)(out + slots);
	int k = 0;
	for (int i = 0; i < n; i++) {
		out[k++] = p;
		if (i == at && argv[i][0] == '-' && strncmp(argv[i], flag, fl) == 0 && argv[i][fl] == '=')
			p += sprintf(p, "%s=%s", flag, num) + 1;
		else if (i == at)
			p += sprintf(p, "%s", num) + 1;
		else
			p += sprintf(p, "%s", argv[i]) + 1;
	}
	if (at < 0) {
		out[k++] = p;
		p += sprintf(p, "%s", flag) + 1;
		out[k++] = p;
		sprintf(p, "%s", num);
	}
	out[k] = NULL;
	return out;
}

/* a skip reason, given once per series (bit: which) */
__attribute__((format(printf, 4, 5))) static void note(struct sp_retry_state *st, struct sp_retry_plan *p, unsigned bit,
						       const char *fmt, ...)
{
	if ((st->said & bit) || p->nnotes >= SP_RETRY_NOTES)
		return;
	st->said |= bit;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->notes[p->nnotes++], sizeof p->notes[0], fmt, ap);
	va_end(ap);
}

enum { SAID_R1 = 1, SAID_SEQ = 2, SAID_BATCH = 4, SAID_ACCUM = 8 };

/* the value of a rung's flag in the command, or false after saying (once) why
 * that rung is skipped: the flag is missing, or its value is not a whole number */
static bool flag_value(struct sp_retry_state *st, struct sp_retry_plan *p, char *const *argv, const char *flag,
		       unsigned bit, const char *what, long *v)
{
	int at = sp_retry_flag_find(argv, flag, v);
	if (at == -1)
		note(st, p, bit, "rung 2 (%s) skipped: %s is not in the command", what, flag);
	else if (at == -2)
		note(st, p, bit, "rung 2 (%s) skipped: %s has no whole-number value in the command", what, flag);
	return at >= 0;
}

/* rung 2, the sequence: 1 planned, 0 not (said why), -1 no memory */
static int try_seq(const struct sp_retry_cfg *c, struct sp_retry_state *st, char *const *argv, struct sp_retry_plan *p)
{
	if (!c->seq_flag)
		return 0;
	long v;
	if (!flag_value(st, p, argv, c->seq_flag, SAID_SEQ, "sequence length", &v))
		return 0;
	if (v / 2 < SP_RETRY_SEQ_FLOOR) {
		note(st, p, SAID_SEQ, "rung 2 (sequence length) done: %s %ld halved would be under %d", c->seq_flag, v,
		     SP_RETRY_SEQ_FLOOR);
		return 0;
	}
	p->argv = sp_retry_argv_set(argv, c->seq_flag, v / 2);
	if (!p->argv)
		return -1;
	p->step = SP_RS_SEQ;
	p->rung = 2;
	snprintf(p->change, sizeof p->change, "%s:%ld->%ld", c->seq_flag, v, v / 2);
	return 1;
}

/* rung 2, the micro-batch (and the accumulation): as try_seq */
static int try_batch(const struct sp_retry_cfg *c, struct sp_retry_state *st, char *const *argv, struct sp_retry_plan *p)
{
	if (!c->batch_flag)
		return 0;
	long b;
	if (!flag_value(st, p, argv, c->batch_flag, SAID_BATCH, "micro-batch", &b))
		return 0;
	if (b < 2) {
		note(st, p, SAID_BATCH, "rung 2 (micro-batch) done: %s is already 1", c->batch_flag);
		return 0;
	}
	long a = 1; /* not in the command: the frameworks' default accumulation */
	if (c->accum_flag) {
		int aa = sp_retry_flag_find(argv, c->accum_flag, &a);
		if (aa == -2) {
			note(st, p, SAID_ACCUM, "rung 2 (micro-batch) skipped: %s has no whole-number value in the command",
			     c->accum_flag);
			return 0;
		}
		if (a > INT_MAX / 2) {
			note(st, p, SAID_ACCUM, "rung 2 (micro-batch) skipped: %s %ld cannot be doubled", c->accum_flag, a);
			return 0;
		}
	}
	char **one = sp_retry_argv_set(argv, c->batch_flag, b / 2);
	if (!one)
		return -1;
	if (c->accum_flag) {
		p->argv = sp_retry_argv_set(one, c->accum_flag, a * 2);
		free(one);
		if (!p->argv)
			return -1;
		snprintf(p->change, sizeof p->change, "%s:%ld->%ld+%s:%ld->%ld", c->batch_flag, b, b / 2, c->accum_flag, a,
			 a * 2);
	} else {
		p->argv = one;
		snprintf(p->change, sizeof p->change, "%s:%ld->%ld", c->batch_flag, b, b / 2);
	}
	p->step = SP_RS_BATCH;
	p->rung = 2;
	return 1;
}

int sp_retry_next(const struct sp_retry_cfg *c, struct sp_retry_state *st, char *const *argv,
		  const char *rung1_why_not, struct sp_retry_plan *p)
{
	memset(p, 0, sizeof *p);
	if (!st->rung1_done) {
		st->rung1_done = true;
		if (!rung1_why_not) {
			p->step = SP_RS_RUNG1;
			p->rung = 1;
			snprintf(p->change, sizeof p->change, "rung1");
			return 0;
		}
		note(st, p, SAID_R1, "rung 1 skipped: %s", rung1_why_not);
	}
	int r = try_seq(c, st, argv, p);
	if (r == 0)
		r = try_batch(c, st, argv, p);
	if (r < 0)
		return -1;
	if (r == 0) {
		p->step = SP_RS_HUMAN;
		p->rung = 3;
		snprintf(p->change, sizeof p->change, "none");
	}
	return 0;
}
