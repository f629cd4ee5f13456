// SPDX-License-Identifier: MIT
/* The load guard's decisions (watch/loadguard.c) on scripted time: the
 * floors, the cooldown, unknown readings, the four ends in their order, the
 * crossings counted after the end; and the readiness matcher. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <regex.h>
#include <string.h>

#include "watch/loadguard.h"

#define GIB (1024.0 * 1024 * 1024)

static const struct sp_lg_cfg CFG = { .floor = 8ULL << 30, .contig_floor = 1ULL << 30, .deadline_s = 60 };

/* one look with the job alive, not ready, no stop file */
static enum sp_lg_act look(struct sp_lguard *g, double t, double free_b, double contig_b)
{
	return sp_lguard_step(g, t, free_b, contig_b, false, false, true);
}

static void floors_and_cooldown(void **st)
{
	(void)st;
	struct sp_lguard g;
	sp_lguard_init(&g, &CFG, 100);
	assert_int_equal(look(&g, 100, 20 * GIB, 4 * GIB), SP_LG_NONE);
	assert_false(g.below);
	/* MemFree under its floor: act, then not again within SP_LG_COOLDOWN_S */
	assert_int_equal(look(&g, 101, 7 * GIB, 4 * GIB), SP_LG_ACT);
	assert_true(g.below);
	sp_lguard_acted(&g, 101);
	assert_int_equal(g.actions, 1);
	assert_int_equal(look(&g, 101.25, 7 * GIB, 4 * GIB), SP_LG_NONE);
	assert_int_equal(look(&g, 101 + SP_LG_COOLDOWN_S - 0.01, 7 * GIB, 4 * GIB), SP_LG_NONE);
	assert_int_equal(look(&g, 101 + SP_LG_COOLDOWN_S, 7 * GIB, 4 * GIB), SP_LG_ACT);
	sp_lguard_acted(&g, 101 + SP_LG_COOLDOWN_S);
	/* the contiguous floor alone */
	assert_int_equal(look(&g, 105, 20 * GIB, 0.5 * GIB), SP_LG_ACT);
	/* exactly at a floor is not under it */
	assert_int_equal(look(&g, 110, 8 * GIB, 1 * GIB), SP_LG_NONE);
	assert_int_equal(g.actions, 2);
	assert_int_equal(g.end, SP_LG_RUNNING);
}

static void unknown_and_off(void **st)
{
	(void)st;
	struct sp_lguard g;
	sp_lguard_init(&g, &CFG, 0);
	/* an unknown reading never counts as under */
	assert_int_equal(look(&g, 1, NAN, NAN), SP_LG_NONE);
	assert_int_equal(look(&g, 2, NAN, 0.1 * GIB), SP_LG_ACT);
	assert_int_equal(look(&g, 3, 0.1 * GIB, NAN), SP_LG_ACT);
	/* a floor of 0 is off */
	struct sp_lg_cfg off = CFG;
	off.floor = 0;
	sp_lguard_init(&g, &off, 0);
	assert_int_equal(look(&g, 1, 0, 4 * GIB), SP_LG_NONE);
	assert_int_equal(look(&g, 2, 0, 0.5 * GIB), SP_LG_ACT);
	off.contig_floor = 0;
	sp_lguard_init(&g, &off, 0);
	assert_int_equal(look(&g, 1, 0, 0), SP_LG_NONE);
}

static void the_ends(void **st)
{
	(void)st;
	struct sp_lguard g;
	/* ready wins over a stop file, which wins over the job's end, which wins
	 * over the deadline */
	sp_lguard_init(&g, &CFG, 0);
	assert_int_equal(sp_lguard_step(&g, 70, 1, 1, true, true, false), SP_LG_STOP);
	assert_int_equal(g.end, SP_LG_READY);
	sp_lguard_init(&g, &CFG, 0);
	assert_int_equal(sp_lguard_step(&g, 70, 1, 1, false, true, false), SP_LG_STOP);
	assert_int_equal(g.end, SP_LG_STOP_FILE);
	sp_lguard_init(&g, &CFG, 0);
	assert_int_equal(sp_lguard_step(&g, 70, 1, 1, false, false, false), SP_LG_STOP);
	assert_int_equal(g.end, SP_LG_JOB_ENDED);
	/* the deadline counts from t0, and is reached at exactly deadline_s */
	sp_lguard_init(&g, &CFG, 1000);
	assert_int_equal(look(&g, 1059.99, 20 * GIB, 4 * GIB), SP_LG_NONE);
	assert_int_equal(look(&g, 1060, 20 * GIB, 4 * GIB), SP_LG_STOP);
	assert_int_equal(g.end, SP_LG_DEADLINE);
	/* STOP is said once; after it, nothing is acted on */
	assert_int_equal(look(&g, 1061, 1, 1), SP_LG_NONE);
	assert_int_equal(g.actions, 0);
	assert_string_equal(sp_lg_end_name(SP_LG_READY), "ready");
	assert_string_equal(sp_lg_end_name(SP_LG_DEADLINE), "deadline");
	assert_string_equal(sp_lg_end_name(SP_LG_STOP_FILE), "stop_file");
	assert_string_equal(sp_lg_end_name(SP_LG_JOB_ENDED), "job_ended");
	assert_string_equal(sp_lg_end_name(SP_LG_RUNNING), "running");
}

static void crossings_after_the_end(void **st)
{
	(void)st;
	struct sp_lguard g;
	sp_lguard_init(&g, &CFG, 0);
	/* under at the moment it stops: that is not a crossing after the end */
	assert_int_equal(sp_lguard_step(&g, 5, 1 * GIB, 4 * GIB, true, false, true), SP_LG_STOP);
	assert_int_equal(look(&g, 6, 1 * GIB, 4 * GIB), SP_LG_NONE);
	assert_int_equal(g.below_after, 0);
	assert_int_equal(look(&g, 7, 20 * GIB, 4 * GIB), SP_LG_NONE); /* back above */
	assert_int_equal(look(&g, 8, 1 * GIB, 4 * GIB), SP_LG_NONE);  /* crossing 1 */
	assert_int_equal(look(&g, 9, 1 * GIB, 0.1 * GIB), SP_LG_NONE); /* still under: the same one */
	assert_int_equal(look(&g, 10, NAN, NAN), SP_LG_NONE);         /* unknown: not under */
	assert_int_equal(look(&g, 11, 20 * GIB, 0.1 * GIB), SP_LG_NONE); /* crossing 2 */
	assert_int_equal(g.below_after, 2);
	assert_int_equal(g.actions, 0);
}

static void ready_known_lines(void **st)
{
	(void)st;
	struct sp_ready r;
	static const char *const lines[][2] = {
		{ "INFO:     Application startup complete.\n", "vLLM" },
		{ "The server is fired up and ready to roll!\n", "SGLang" },
		{ "main: server is listening on http://127.0.0.1:8080\n", "llama.cpp server" },
		{ "time=... level=INFO msg=\"Listening on 127.0.0.1:11434\"\n", "Ollama" },
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		sp_ready_init(&r, NULL);
		assert_false(sp_ready_feed(&r, "loading weights 50%\r", 20));
		assert_true(sp_ready_feed(&r, lines[i][0], strlen(lines[i][0])));
		assert_string_equal(r.what, lines[i][1]);
	}
	/* split across feeds, a NUL inside; a line is judged at its end only */
	sp_ready_init(&r, NULL);
	assert_false(sp_ready_feed(&r, "Application start", 17));
	assert_false(sp_ready_feed(&r, "up complete", 11));
	assert_true(sp_ready_feed(&r, "\n", 1));
	sp_ready_init(&r, NULL);
	assert_true(sp_ready_feed(&r, "Listening\0on\n", 13)); /* the NUL became a space: "Listening on" */
	assert_string_equal(r.what, "Ollama");
	/* once matched it stays matched */
	sp_ready_init(&r, NULL);
	assert_true(sp_ready_feed(&r, "Listening on x\n", 15));
	assert_true(sp_ready_feed(&r, "anything\n", 9));
}

static void ready_regex_and_overlong(void **st)
{
	(void)st;
	regex_t re;
	assert_int_equal(regcomp(&re, "^model ready in [0-9]+ s$", REG_EXTENDED | REG_NOSUB), 0);
	struct sp_ready r;
	sp_ready_init(&r, &re);
	assert_false(sp_ready_feed(&r, "Application startup complete\n", 29)); /* --ready replaces the known lines */
	assert_true(sp_ready_feed(&r, "model ready in 42 s\r\n", 21));
	assert_string_equal(r.what, "--ready");
	/* a line longer than the buffer: its start is judged, the rest skipped,
	 * and the next line is judged afresh */
	static char big[SP_READY_LINE_MAX * 2 + 32];
	memset(big, 'x', sizeof big);
	const char tail[] = "model ready in 1 s";
	memcpy(big + sizeof big - sizeof tail, tail, sizeof tail - 1);
	big[sizeof big - 1] = '\n';
	sp_ready_init(&r, &re);
	assert_false(sp_ready_feed(&r, big, sizeof big));
	assert_true(sp_ready_feed(&r, "model ready in 7 s\n", 19));
	/* the start of an overlong line can match */
	sp_ready_init(&r, NULL);
	memset(big, 'y', sizeof big);
	const char head[] = "Application startup complete ";
	memcpy(big, head, sizeof head - 1);
	big[sizeof big - 1] = '\n';
	assert_true(sp_ready_feed(&r, big, sizeof big));
	regfree(&re);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(floors_and_cooldown),     cmocka_unit_test(unknown_and_off),
		cmocka_unit_test(the_ends),                cmocka_unit_test(crossings_after_the_end),
		cmocka_unit_test(ready_known_lines),       cmocka_unit_test(ready_regex_and_overlong),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
