// SPDX-License-Identifier: MIT
/* run --ladder's pure part (engine/retry.h): the flags in a command line,
 * the command with a new value, and the order of the rungs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "engine/retry.h"

static void find(void **st)
{
	(void)st;
	long v = 0;
	char *a[] = { "python", "t.py", "--max_seq_length", "2048", "--bs=4", NULL };
	assert_int_equal(sp_retry_flag_find(a, "--max_seq_length", &v), 3);
	assert_int_equal(v, 2048);
	assert_int_equal(sp_retry_flag_find(a, "--bs", &v), 4);
	assert_int_equal(v, 4);
	assert_int_equal(sp_retry_flag_find(a, "--max_seq", &v), -1);      /* a prefix is not the flag */
	assert_int_equal(sp_retry_flag_find(a, "python", &v), -1);         /* argv[0] is the program */
	char *b[] = { "p", "--s", "x", NULL };
	assert_int_equal(sp_retry_flag_find(b, "--s", &v), -2);
	char *c[] = { "p", "--s", NULL };
	assert_int_equal(sp_retry_flag_find(c, "--s", &v), -2);
	char *d[] = { "p", "--s=0", NULL };
	assert_int_equal(sp_retry_flag_find(d, "--s", &v), -2);
	char *e[] = { "p", "--s", "99999999999", NULL };
	assert_int_equal(sp_retry_flag_find(e, "--s", &v), -2);
	char *f[] = { "p", "--s", "512", "--s=1024", NULL }; /* the last one counts */
	assert_int_equal(sp_retry_flag_find(f, "--s", &v), 3);
	assert_int_equal(v, 1024);
	char *g[] = { "p", "--s", "-5", NULL };
	assert_int_equal(sp_retry_flag_find(g, "--s", &v), -2);
}

static void set(void **st)
{
	(void)st;
	char *a[] = { "python", "t.py", "--max_seq_length", "2048", "--bs=4", NULL };
	char **o = sp_retry_argv_set(a, "--max_seq_length", 1024);
	assert_non_null(o);
	assert_string_equal(o[3], "1024");
	assert_string_equal(o[4], "--bs=4");
	assert_null(o[5]);
	char **p = sp_retry_argv_set(o, "--bs", 2); /* a copy of a copy: independent of o */
	free(o);
	assert_string_equal(p[4], "--bs=2");
	assert_string_equal(p[3], "1024");
	char **q = sp_retry_argv_set(p, "--ga", 2); /* absent: appended */
	free(p);
	assert_string_equal(q[5], "--ga");
	assert_string_equal(q[6], "2");
	assert_null(q[7]);
	assert_string_equal(q[0], "python");
	free(q);
}

static void order(void **st)
{
	(void)st;
	struct sp_retry_cfg c = { true, "--seq", "--bs", "--ga", 5 };
	struct sp_retry_state s;
	memset(&s, 0, sizeof s);
	struct sp_retry_plan p;
	char *a[] = { "t", "--seq", "256", "--bs", "3", NULL };
	/* rung 1 first, once */
	assert_int_equal(sp_retry_next(&c, &s, a, NULL, &p), 0);
	assert_int_equal(p.step, SP_RS_RUNG1);
	assert_int_equal(p.rung, 1);
	assert_null(p.argv);
	/* then the sequence, to the floor */
	assert_int_equal(sp_retry_next(&c, &s, a, NULL, &p), 0);
	assert_int_equal(p.step, SP_RS_SEQ);
	assert_int_equal(p.rung, 2);
	assert_string_equal(p.change, "--seq:256->128");
	assert_string_equal(p.argv[2], "128");
	char **b = p.argv;
	/* 128 halved is under the floor: the batch, with the accumulation added */
	assert_int_equal(sp_retry_next(&c, &s, b, NULL, &p), 0);
	assert_int_equal(p.step, SP_RS_BATCH);
	assert_string_equal(p.change, "--bs:3->1+--ga:1->2");
	assert_int_equal(p.nnotes, 1);
	assert_non_null(strstr(p.notes[0], "under 128"));
	free(b);
	char **d = p.argv;
	assert_string_equal(d[4], "1");
	assert_string_equal(d[5], "--ga");
	assert_string_equal(d[6], "2");
	/* the batch is 1: rung 3 */
	assert_int_equal(sp_retry_next(&c, &s, d, NULL, &p), 0);
	assert_int_equal(p.step, SP_RS_HUMAN);
	assert_int_equal(p.rung, 3);
	assert_null(p.argv);
	assert_non_null(strstr(p.notes[0], "already 1"));
	/* a reason is given once */
	assert_int_equal(sp_retry_next(&c, &s, d, NULL, &p), 0);
	assert_int_equal(p.nnotes, 0);
	free(d);
}

static void skipped(void **st)
{
	(void)st;
	struct sp_retry_cfg c = { true, "--seq", "--bs", NULL, 5 };
	struct sp_retry_state s;
	memset(&s, 0, sizeof s);
	struct sp_retry_plan p;
	char *a[] = { "t", "--bs", "8", NULL };
	/* rung 1 not possible, the sequence flag absent: the batch, halved alone */
	assert_int_equal(sp_retry_next(&c, &s, a, "not root", &p), 0);
	assert_int_equal(p.step, SP_RS_BATCH);
	assert_string_equal(p.change, "--bs:8->4");
	assert_int_equal(p.nnotes, 2);
	assert_string_equal(p.notes[0], "rung 1 skipped: not root");
	assert_non_null(strstr(p.notes[1], "--seq is not in the command"));
	assert_string_equal(p.argv[2], "4");
	assert_null(p.argv[3]);
	free(p.argv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(find),
		cmocka_unit_test(set),
		cmocka_unit_test(order),
		cmocka_unit_test(skipped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
