// SPDX-License-Identifier: MIT
/* The CSV log: header, writer and reader agree (round trip); bad rows are
 * refused with a reason; the summary tells the run's story from rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "watch/logrow.h"
#include "watch/summary.h"

static void header_roundtrip(void **st)
{
	(void)st;
	char h[1024];
	size_t n = sp_logrow_header(h, sizeof h);
	assert_true(n > 0);
	assert_true(sp_logrow_is_header(h, n));
	assert_true(strncmp(h, "time,unix_time,type,event,detail,", 33) == 0);
	assert_false(sp_logrow_is_header("a,b,c", 5));
}

static void row_roundtrip(void **st)
{
	(void)st;
	struct sp_logrow r, back;
	sp_logrow_clear(&r, SP_ROW_SAMPLE);
	r.unix_time = 1764405612.345;
	sp_iso_time(r.time_iso, sizeof r.time_iso, r.unix_time);
	r.mem_total = 128526065664.0;
	r.mem_free = 6657199104.0;
	r.gpu_temp_c = 84;
	r.gpu_power_w = 98.6;
	r.gpu_reasons_ok = true;
	r.gpu_reasons = 0x24;
	r.throughput = 3.21;
	strcpy(r.throughput_unit, "it/s");
	char line[4096], err[128];
	size_t n = sp_logrow_format(&r, line, sizeof line);
	assert_true(n > 0);
	assert_int_equal(line[n - 1], '\n');
	assert_non_null(strstr(line, ",sw_power_cap|sw_thermal_slowdown,"));
	assert_int_equal(sp_logrow_parse(line, n, &back, err, sizeof err), 0);
	assert_int_equal(back.type, SP_ROW_SAMPLE);
	assert_float_equal(back.unix_time, 1764405612.345, 1e-6);
	assert_float_equal(back.mem_free, 6657199104.0, 0.5);
	assert_float_equal(back.gpu_power_w, 98.6, 1e-9);
	assert_true(back.gpu_reasons_ok);
	assert_int_equal(back.gpu_reasons, 0x24);
	assert_true(isnan(back.psi_mem_some)); /* unknown stays unknown */
	assert_string_equal(back.throughput_unit, "it/s");

	/* no reasons active is not the same as unknown */
	r.gpu_reasons = 0;
	n = sp_logrow_format(&r, line, sizeof line);
	assert_int_equal(sp_logrow_parse(line, n, &back, err, sizeof err), 0);
	assert_true(back.gpu_reasons_ok);
	r.gpu_reasons_ok = false;
	n = sp_logrow_format(&r, line, sizeof line);
	assert_int_equal(sp_logrow_parse(line, n, &back, err, sizeof err), 0);
	assert_false(back.gpu_reasons_ok);
}

static void event_quoting(void **st)
{
	(void)st;
	struct sp_logrow r, back;
	sp_logrow_event(&r, 1764405612.0, SP_EV_START, "cmd=\"python train.py, --bs 4\"\nnext");
	char line[4096], err[128];
	size_t n = sp_logrow_format(&r, line, sizeof line);
	assert_non_null(memchr(line, '\n', n));
	assert_null(memchr(line, '\n', n - 1)); /* one row per line */
	assert_int_equal(sp_logrow_parse(line, n, &back, err, sizeof err), 0);
	assert_int_equal(back.type, SP_ROW_EVENT);
	assert_string_equal(back.event, "start");
	assert_string_equal(back.detail, "cmd=\"python train.py, --bs 4\" next");
	char v[32];
	assert_true(sp_detail_get("cause=thermal drop_pct=23.5", "drop_pct", v, sizeof v));
	assert_string_equal(v, "23.5");
	assert_false(sp_detail_get("cause=thermal", "drop", v, sizeof v));
}

static void bad_rows(void **st)
{
	(void)st;
	struct sp_logrow r;
	char err[128];
	assert_int_equal(sp_logrow_parse("a,b,c", 5, &r, err, sizeof err), -1);
	assert_non_null(strstr(err, "expected"));
	char line[4096];
	struct sp_logrow ok;
	sp_logrow_clear(&ok, SP_ROW_SAMPLE);
	ok.unix_time = 1.0;
	size_t n = sp_logrow_format(&ok, line, sizeof line);
	/* a non-numeric value in a numeric column */
	char bad[4096];
	memcpy(bad, line, n + 1);
	char *p = strstr(bad, "sample,,,");
	assert_non_null(p);
	memmove(p + 12, p + 9, strlen(p + 9) + 1);
	memcpy(p + 9, "hot", 3);
	assert_int_equal(sp_logrow_parse(bad, strlen(bad), &r, err, sizeof err), -1);
	assert_non_null(strstr(err, "is not a number"));
	/* unterminated quote (a row cut off mid-field) */
	assert_int_equal(sp_logrow_parse("2026,1.0,event,start,\"cut", 25, &r, err, sizeof err), -1);
	/* a bad type */
	memcpy(bad, line, n + 1);
	p = strstr(bad, "sample");
	memcpy(p, "sampl3", 6);
	assert_int_equal(sp_logrow_parse(bad, strlen(bad), &r, err, sizeof err), -1);
}

/* The in-place parser takes the writer's common row, with the same values
 * the general one gives, and leaves everything else to it */
static void fast_path(void **st)
{
	(void)st;
	struct sp_logrow r, fast;
	sp_logrow_clear(&r, SP_ROW_SAMPLE);
	r.unix_time = 1764405612.345;
	sp_iso_time(r.time_iso, sizeof r.time_iso, r.unix_time);
	r.mem_total = 128526065664.0;
	r.mem_free = 6657199104.0;
	r.psi_mem_some = 1.25;
	r.gpu_temp_c = 84;
	r.gpu_power_w = -0.5; /* any finite power */
	r.gpu_reasons_ok = true;
	r.gpu_reasons = 0x24;
	r.throughput = 3.21;
	strcpy(r.throughput_unit, "it/s");
	char line[4096], err[128];
	size_t n = sp_logrow_format(&r, line, sizeof line);
	int nc = sp_logrow_ncolumns();
	assert_true(sp_logrow_parse_fast(line, n, nc, &fast));
	assert_float_equal(fast.unix_time, 1764405612.345, 1e-6);
	assert_string_equal(fast.time_iso, r.time_iso);
	assert_float_equal(fast.mem_free, 6657199104.0, 0.5);
	assert_float_equal(fast.psi_mem_some, 1.25, 1e-12);
	assert_float_equal(fast.gpu_power_w, -0.5, 1e-12);
	assert_true(fast.gpu_reasons_ok);
	assert_int_equal(fast.gpu_reasons, 0x24);
	assert_true(isnan(fast.psi_cpu_some));
	assert_string_equal(fast.throughput_unit, "it/s");
	/* the same row, one field at a time in forms the fast path leaves to the
	 * general parser, which still reads them (or refuses them) */
	char v[4096];
	memcpy(v, line, n + 1);
	char *p = strstr(v, ",1.25,");
	assert_non_null(p);
	memcpy(p + 1, "1e-2", 4); /* an exponent: strtod's */
	assert_false(sp_logrow_parse_fast(v, n, nc, &fast));
	assert_int_equal(sp_logrow_parse(v, n, &fast, err, sizeof err), 0);
	assert_float_equal(fast.psi_mem_some, 0.01, 1e-12);
	memcpy(p + 1, "1000", 4); /* out of range */
	assert_false(sp_logrow_parse_fast(v, n, nc, &fast));
	assert_int_equal(sp_logrow_parse(v, n, &fast, err, sizeof err), -1);
	assert_non_null(strstr(err, "implausible"));
	memcpy(p + 1, "1\0002", 3); /* a NUL byte */
	assert_false(sp_logrow_parse_fast(v, n, nc, &fast));
	/* fields short, one too many */
	assert_false(sp_logrow_parse_fast(line, (size_t)(strrchr(line, ',') - line), nc, &fast));
	char more[4200];
	snprintf(more, sizeof more, "%.*s,1\n", (int)(n - 1), line);
	assert_false(sp_logrow_parse_fast(more, strlen(more), nc, &fast));
	assert_int_equal(sp_logrow_parse(more, strlen(more), &fast, err, sizeof err), -1);
	/* a quoted field: the general parser's */
	sp_logrow_event(&r, 1764405612.0, SP_EV_START, "cmd=\"a, b\"");
	n = sp_logrow_format(&r, line, sizeof line);
	assert_false(sp_logrow_parse_fast(line, n, nc, &fast));
	assert_int_equal(sp_logrow_parse(line, n, &fast, err, sizeof err), 0);
	assert_string_equal(fast.detail, "cmd=\"a, b\"");
	/* an event without quotes: taken, and an event without a name is not */
	sp_logrow_event(&r, 1764405612.0, SP_EV_START, "pid=7");
	n = sp_logrow_format(&r, line, sizeof line);
	assert_true(sp_logrow_parse_fast(line, n, nc, &fast));
	assert_int_equal(fast.type, SP_ROW_EVENT);
	assert_string_equal(fast.event, "start");
	assert_string_equal(fast.detail, "pid=7");
	p = strstr(line, ",start,");
	memmove(p + 1, p + 6, strlen(p + 6) + 1);
	assert_false(sp_logrow_parse_fast(line, strlen(line), nc, &fast));
	assert_int_equal(sp_logrow_parse(line, strlen(line), &fast, err, sizeof err), -1);
}

static void summary_story(void **st)
{
	(void)st;
	struct sp_summary s;
	sp_summary_init(&s);
	struct sp_logrow r;
	for (int i = 0; i < 10; i++) {
		sp_logrow_clear(&r, SP_ROW_SAMPLE);
		r.unix_time = 1000.0 + 30.0 * i;
		r.mem_total = 100.0;
		r.mem_free = 50.0 - i;
		r.page_cache = 10.0;
		r.budget_now = 40.0 - i;
		r.gpu_temp_c = 70 + i;
		r.gpu_power_w = 100;
		r.gpu_reasons_ok = true;
		r.gpu_reasons = i >= 5 ? 0x20 : 0; /* thermal from sample 5 on */
		sp_summary_add(&s, &r);
		if (i == 6) {
			sp_logrow_event(&r, 1000.0 + 30.0 * i + 1, SP_EV_EPISODE_START, "cause=thermal drop_pct=22");
			sp_summary_add(&s, &r);
		}
	}
	sp_logrow_event(&r, 1300.0, SP_EV_GUARD_TERM, "free 1.0 GiB under the 2.0 GiB floor");
	sp_summary_add(&s, &r);
	sp_logrow_event(&r, 1301.0, SP_EV_EXIT, "ended_by=guard exit_code=143 signal=15");
	sp_summary_add(&s, &r);
	sp_summary_finish(&s);
	assert_int_equal(s.samples, 10);
	assert_float_equal(s.peak_pool_used, 49.0, 1e-9); /* used: total - free - page cache */
	assert_float_equal(s.lowest_budget, 31.0, 1e-9);
	assert_float_equal(s.peak_gpu_temp, 79.0, 1e-9);
	assert_float_equal(s.reason_seconds[5], 4 * 30.0, 1e-9); /* samples 5..9: 4 intervals */
	assert_int_equal(s.n_episodes, 1);
	assert_string_equal(s.episodes[0].cause, "thermal");
	assert_float_equal(s.episodes[0].end, 1301.0, 1e-9); /* closed at the end */
	assert_int_equal(s.n_guard, 1);
	assert_string_equal(s.guard[0].action, "term");
	assert_true(s.ended);
	assert_string_equal(s.ended_by, "guard");
	assert_int_equal(s.exit_code, 143);
	json_t *j = sp_summary_json(&s);
	assert_int_equal(json_integer_value(json_object_get(j, "exit_code")), 143);
	assert_string_equal(json_string_value(json_object_get(j, "ended_by")), "guard");
	assert_int_equal(json_array_size(json_object_get(j, "episodes")), 1);
	assert_int_equal(json_array_size(json_object_get(j, "guard_actions")), 1);
	json_decref(j);
}

/* The row's time as localtime_r and strftime write it, second by second:
 * sp_iso_time keeps the minute it formatted last, so the cases cross a
 * summer-time change (the offset moves within the kept minute's hour), a
 * half-hour zone, a minute's and a day's end, and go back in time. */
static void iso_ref(char *buf, size_t n, double t)
{
	time_t sec = (time_t)floor(t);
	int ms = (int)((t - (double)sec) * 1000.0);
	struct tm tm;
	localtime_r(&sec, &tm);
	long off = tm.tm_gmtoff / 60;
	char base[32];
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	int oh = (int)(labs(off) / 60 % 100), om = (int)(labs(off) % 60); /* zones are within ±14 h */
	if (snprintf(buf, n, "%s.%03d%c%02d:%02d", base, ms % 1000, off < 0 ? '-' : '+', oh, om) >= (int)n)
		buf[0] = 0; /* cannot happen: 29 bytes, the callers hold 40 */
}

static void iso_time_is_localtime(void **st)
{
	(void)st;
	static const char *zones[] = { "UTC", "Europe/Berlin", "America/St_Johns", "Asia/Kolkata",
				       "Australia/Lord_Howe" };
	const char *was = getenv("TZ");
	char keep[128] = "";
	if (was)
		snprintf(keep, sizeof keep, "%s", was);
	int differ = 0;
	for (size_t z = 0; z < sizeof zones / sizeof zones[0]; z++) {
		setenv("TZ", zones[z], 1);
		tzset();
		/* 2024-03-31 01:00 UTC: Europe's clocks go forward */
		for (double t = 1711846800.0 - 3600; t < 1711846800.0 + 3600; t += 0.7) {
			char a[40], b[40];
			sp_iso_time(a, sizeof a, t);
			iso_ref(b, sizeof b, t);
			differ += strcmp(a, b) != 0;
		}
		for (double t = 1.9e9; t > 1e9; t -= 7654321.123) {
			char a[40], b[40];
			sp_iso_time(a, sizeof a, t);
			iso_ref(b, sizeof b, t);
			differ += strcmp(a, b) != 0;
		}
	}
	char small[12];
	sp_iso_time(small, sizeof small, 1764405612.345); /* cut short, still a string */
	assert_int_equal(strlen(small), sizeof small - 1);
	if (was)
		setenv("TZ", keep, 1);
	else
		unsetenv("TZ");
	tzset();
	assert_int_equal(differ, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(header_roundtrip), cmocka_unit_test(row_roundtrip), cmocka_unit_test(iso_time_is_localtime),
		cmocka_unit_test(event_quoting), cmocka_unit_test(bad_rows),
		cmocka_unit_test(summary_story), cmocka_unit_test(fast_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
