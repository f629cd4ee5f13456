// SPDX-License-Identifier: MIT
/* The Prometheus exposition: escaping, the bounded writer, and "unknown is
 * left out, never exported as 0". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <math.h>

#include "out/prom.h"

static char big[1 << 18];

static void escape_label(void **st)
{
	(void)st;
	char o[64];
	assert_int_equal(sp_prom_escape(o, sizeof o, "plain", SP_PROM_ESC_LABEL), 5);
	assert_string_equal(o, "plain");
	sp_prom_escape(o, sizeof o, "a\\b\"c\nd", SP_PROM_ESC_LABEL);
	assert_string_equal(o, "a\\\\b\\\"c\\nd");
	/* tabs, CR and other control bytes can never split a line */
	sp_prom_escape(o, sizeof o, "x\ty\rz\x01", SP_PROM_ESC_LABEL);
	assert_string_equal(o, "x?y?z?");
	/* valid UTF-8 stays, invalid bytes become '?' */
	sp_prom_escape(o, sizeof o, "caf\xc3\xa9 \xe2\x82\xac", SP_PROM_ESC_LABEL);
	assert_string_equal(o, "caf\xc3\xa9 \xe2\x82\xac");
	sp_prom_escape(o, sizeof o, "a\xff" "b\xc3" "c\xed\xa0\x80" "d\xc0\xaf", SP_PROM_ESC_LABEL);
	assert_string_equal(o, "a?b?c???d??");
	sp_prom_escape(o, sizeof o, "\xf0\x9f\x98\x80", SP_PROM_ESC_LABEL);
	assert_string_equal(o, "\xf0\x9f\x98\x80");
	sp_prom_escape(o, sizeof o, "", SP_PROM_ESC_LABEL);
	assert_string_equal(o, "");
	sp_prom_escape(o, sizeof o, NULL, SP_PROM_ESC_LABEL);
	assert_string_equal(o, "");
}

static void escape_help(void **st)
{
	(void)st;
	char o[64];
	/* HELP escapes backslash and newline, not quotes */
	sp_prom_escape(o, sizeof o, "say \"hi\"\\\n", SP_PROM_ESC_HELP);
	assert_string_equal(o, "say \"hi\"\\\\\\n");
}

static void escape_bounded(void **st)
{
	(void)st;
	char o[5];
	memset(o, 'Z', sizeof o);
	/* needs 8, gets 4 + NUL, says 8 */
	assert_int_equal(sp_prom_escape(o, sizeof o, "\"\"\"\"", SP_PROM_ESC_LABEL), 8);
	assert_string_equal(o, "\\\"\\\"");
	assert_int_equal(sp_prom_escape(NULL, 0, "abc\n", SP_PROM_ESC_LABEL), 5);
}

static void writer_counts_past_the_end(void **st)
{
	(void)st;
	struct sp_prom w;
	sp_prom_init(&w, big, sizeof big);
	sp_prom_family(&w, "x_bytes", "gauge", "a help");
	sp_prom_sample_u64(&w, NULL, 42);
	size_t full = sp_prom_end(&w);
	assert_string_equal(big, "# HELP x_bytes a help\n# TYPE x_bytes gauge\nx_bytes 42\n");
	char small[10];
	sp_prom_init(&w, small, sizeof small);
	sp_prom_family(&w, "x_bytes", "gauge", "a help");
	sp_prom_sample_u64(&w, NULL, 42);
	assert_int_equal(sp_prom_end(&w), full);
	assert_false(sp_prom_fits(&w));
	assert_int_equal(strlen(small), sizeof small - 1);
}

static void family_without_samples_is_silent(void **st)
{
	(void)st;
	struct sp_prom w;
	sp_prom_init(&w, big, sizeof big);
	sp_prom_family(&w, "a_celsius", "gauge", "nothing");
	sp_prom_family(&w, "b_celsius", "gauge", "one");
	sp_prom_sample(&w, (const struct sp_prom_label[]){ { "k", "v\"" }, { NULL, NULL } }, 1.5);
	sp_prom_sample(&w, NULL, NAN); /* never written */
	sp_prom_sample(&w, NULL, INFINITY);
	sp_prom_end(&w);
	assert_null(strstr(big, "a_celsius"));
	assert_string_equal(big, "# HELP b_celsius one\n# TYPE b_celsius gauge\nb_celsius{k=\"v\\\"\"} 1.5\n");
}

static void numbers(void **st)
{
	(void)st;
	struct sp_prom w;
	sp_prom_init(&w, big, sizeof big);
	sp_prom_family(&w, "n", "gauge", "h");
	sp_prom_sample_u64(&w, NULL, 0);
	sp_prom_sample_u64(&w, NULL, UINT64_MAX);
	sp_prom_sample(&w, NULL, 128526896128.0);
	sp_prom_sample(&w, NULL, -5);
	sp_prom_sample(&w, NULL, 0.042);
	sp_prom_sample(&w, NULL, 1795944176.15305);
	sp_prom_sample(&w, NULL, 1e300);
	sp_prom_end(&w);
	assert_string_equal(big, "# HELP n h\n# TYPE n gauge\nn 0\nn 18446744073709551615\nn 128526896128\nn -5\n"
				 "n 0.042\nn 1795944176.15305\nn 1e+300\n");
}

static struct sp_sample *gb10_sample(void)
{
	struct sp_sample *s = calloc(1, sizeof *s);
	s->wall = 1.7e9;
	s->mem.why = SP_OK;
	s->mem.v[SP_MI_TOTAL] = 128526896128ULL;
	s->mem.v[SP_MI_FREE] = 6657199104ULL;
	s->mem.have = (1ULL << SP_MI_TOTAL) | (1ULL << SP_MI_FREE);
	s->budget.reserve = 4ULL << 30;
	s->budget.now = (struct sp_u64){ 2362231808ULL, SP_OK };
	s->budget.reclaimable.why = SP_MISSING;
	s->budget.after_flush.why = SP_MISSING;
	for (int r = 0; r < SP_PSI_N; r++)
		s->psi[r].why = SP_MISSING;
	s->gpu_status = SP_OK;
	s->ngpu = 1;
	struct sp_gpu *g = &s->gpus[0];
	strcpy(g->name, "NVIDIA GB10");
	g->integrated = true;
	g->temp_c = (struct sp_u64){ 84, SP_OK };
	g->power_mw = (struct sp_u64){ 98600, SP_OK };
	g->power_limit_mw.why = SP_NOT_SUPPORTED;
	g->sm_clock_mhz.why = SP_NOT_SUPPORTED;
	g->sm_clock_max_mhz.why = SP_NOT_SUPPORTED;
	g->util_gpu_pct.why = SP_NOT_SUPPORTED;
	g->util_mem_pct.why = SP_NOT_SUPPORTED;
	g->reasons = (struct sp_u64){ 0x20, SP_OK };
	g->viol_power_ns.why = SP_NOT_SUPPORTED;
	g->viol_thermal_ns = (struct sp_u64){ 725000000000ULL, SP_OK };
	g->energy_mj.why = SP_NOT_SUPPORTED;
	g->mem_total.why = g->mem_free.why = g->mem_used.why = SP_NOT_SUPPORTED;
	return s;
}

static const char *render(const struct sp_sample *s)
{
	struct sp_prom w;
	struct sp_prom_info info = { "9.9.9", -1, false };
	sp_prom_init(&w, big, sizeof big);
	sp_prom_write_sample(&w, s, &info);
	size_t n = sp_prom_end(&w);
	assert_true(n < sizeof big);
	return big;
}

static void unknown_is_left_out(void **st)
{
	(void)st;
	struct sp_sample *s = gb10_sample();
	const char *t = render(s);
	/* GB10: NVML memory NOT_SUPPORTED -> no memory series at all, never a 0 */
	assert_null(strstr(t, "sparkops_gpu_memory_total_bytes"));
	assert_null(strstr(t, "sparkops_gpu_memory_used_bytes"));
	assert_null(strstr(t, "sparkops_gpu_power_limit_watts"));
	assert_null(strstr(t, "sparkops_gpu_utilization_ratio"));
	assert_null(strstr(t, "policy=\"power\""));
	/* ... but visible as unknown, with the reason */
	assert_non_null(strstr(t, "sparkops_gpu_reading_ok{gpu=\"0\",name=\"NVIDIA GB10\",field=\"memory\",status=\"not_supported\"} 0\n"));
	assert_non_null(strstr(t, "sparkops_gpu_temp_celsius{gpu=\"0\",name=\"NVIDIA GB10\"} 84\n"));
	assert_non_null(strstr(t, "sparkops_gpu_power_watts{gpu=\"0\",name=\"NVIDIA GB10\"} 98.6\n"));
	assert_non_null(strstr(t, "sparkops_gpu_violation_seconds_total{gpu=\"0\",name=\"NVIDIA GB10\",policy=\"thermal\"} 725\n"));
	assert_non_null(strstr(t, "reason=\"sw_thermal_slowdown\"} 1\n"));
	assert_non_null(strstr(t, "reason=\"sw_power_cap\"} 0\n"));
	assert_non_null(strstr(t, "sparkops_build_info{version=\"9.9.9\"} 1\n"));
	/* meminfo had no MemAvailable: no available series; no PSI: no PSI series */
	assert_null(strstr(t, "sparkops_pool_available_bytes"));
	assert_null(strstr(t, "sparkops_psi_avg_ratio"));
	assert_null(strstr(t, "sparkops_budget_after_flush_bytes"));
	assert_non_null(strstr(t, "sparkops_source_ok{source=\"psi_memory\",status=\"missing\"} 0\n"));
	assert_null(strstr(t, "sparkops_read_duration_seconds")); /* < 0: left out */

	/* the reasons mask unreadable: no reason series at all (not nine zeros) */
	s->gpus[0].reasons.why = SP_GPU_LOST;
	t = render(s);
	assert_null(strstr(t, "sparkops_gpu_clocks_event_reason_active"));
	assert_non_null(strstr(t, "field=\"clocks_event_reasons\",status=\"gpu_lost\"} 0\n"));

	/* no meminfo: no pool or budget series, the source says why */
	s->mem.why = SP_NOACCESS;
	s->budget.now.why = SP_NOACCESS;
	t = render(s);
	assert_null(strstr(t, "sparkops_pool_"));
	assert_null(strstr(t, "sparkops_budget_now_bytes"));
	assert_non_null(strstr(t, "sparkops_source_ok{source=\"meminfo\",status=\"permission_denied\"} 0\n"));

	/* no driver: no GPU series, no GPU count */
	s->gpu_status = SP_NO_DRIVER;
	s->ngpu = 0;
	t = render(s);
	assert_null(strstr(t, "sparkops_gpu"));
	assert_non_null(strstr(t, "sparkops_source_ok{source=\"nvml\",status=\"no_driver\"} 0\n"));
	free(s);
}

static void hostile_process_name(void **st)
{
	(void)st;
	struct sp_sample *s = gb10_sample();
	s->procs_seen = 10;
	s->nprocs = 1;
	s->procs[0].pid = 7;
	strcpy(s->procs[0].name, "x\"}\nevil 1\n\\");
	s->procs[0].kind = SP_PROC_SERVER;
	s->procs[0].rss_bytes = 1024;
	const char *t = render(s);
	assert_non_null(strstr(t, "sparkops_process_resident_bytes{pid=\"7\",name=\"x\\\"}\\nevil 1\\n\\\\\",kind=\"inference_server\"} 1024\n"));
	assert_null(strstr(t, "\nevil"));
	free(s);
}

static void job_families(void **st)
{
	(void)st;
	struct sp_prom w;
	struct sp_prom_job job = { .pid = 4242, .command = "python", .start_unix = -1, .rate_ok = true, .rate = 2.5,
				   .rate_unit = "it", .baseline_ok = true, .baseline = 3.125, .cause_ok = true,
				   .cause = SP_CAUSE_POWER_CAP, .episodes = 2 };
	sp_prom_init(&w, big, sizeof big);
	sp_prom_job_append(&w, &job);
	sp_prom_end(&w);
	assert_non_null(strstr(big, "sparkops_job_info{pid=\"4242\",command=\"python\"} 1\n"));
	assert_non_null(strstr(big, "sparkops_job_throughput_per_second{unit=\"it\"} 2.5\n"));
	assert_non_null(strstr(big, "sparkops_job_baseline_throughput_per_second{unit=\"it\"} 3.125\n"));
	assert_non_null(strstr(big, "sparkops_job_throughput_ratio 0.8\n"));
	assert_non_null(strstr(big, "sparkops_job_slowdown_cause{cause=\"power_cap\"} 1\n"));
	assert_non_null(strstr(big, "sparkops_job_slowdown_cause{cause=\"thermal\"} 0\n"));
	assert_non_null(strstr(big, "# TYPE sparkops_job_slowdown_episodes_total counter\nsparkops_job_slowdown_episodes_total 2\n"));
	assert_null(strstr(big, "sparkops_job_start_time_seconds"));
	assert_null(strstr(big, "sparkops_job_progress_total"));
	/* no throughput parsed yet: no rate, no ratio, no cause series */
	job.rate_ok = job.baseline_ok = job.cause_ok = false;
	sp_prom_init(&w, big, sizeof big);
	sp_prom_job_append(&w, &job);
	sp_prom_end(&w);
	assert_null(strstr(big, "sparkops_job_throughput"));
	assert_null(strstr(big, "sparkops_job_slowdown_cause"));
	assert_string_equal(sp_prom_cause_name(SP_CAUSE_COMPETING_PROCESS), "competing_process");
	/* the same cause names as the CSV log and the summary (docs/csv-log.md) */
	assert_string_equal(sp_prom_cause_name(SP_CAUSE_IO_CONTENTION), "io_stall");
	assert_string_equal(sp_prom_cause_name(SP_CAUSE_MEMORY_PRESSURE), "memory_pressure");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(escape_label),
		cmocka_unit_test(escape_help),
		cmocka_unit_test(escape_bounded),
		cmocka_unit_test(writer_counts_past_the_end),
		cmocka_unit_test(family_without_samples_is_silent),
		cmocka_unit_test(numbers),
		cmocka_unit_test(unknown_is_left_out),
		cmocka_unit_test(hostile_process_name),
		cmocka_unit_test(job_families),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
