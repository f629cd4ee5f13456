// SPDX-License-Identifier: MIT
/* The ladder's checks, pure: the facts read from a log's lines (a server's
 * printed hint and its direction, the share it ran with, SGLang's CUDA-graph
 * capture, Ray's memory monitor and its table, the last error line), and the
 * memory share the ladder may advise (never below the weights plus the
 * runtime's overhead, in the direction of the server's own hint). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ladder/facts.h"
#include "ladder/ladder.h"
#include "ladder/oomlog.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define GiB (1024.0 * 1024 * 1024)

static void feed(struct sp_log_facts *f, const char *const *lines)
{
	memset(f, 0, sizeof *f);
	for (uint64_t i = 0; lines[i]; i++)
		sp_log_facts_line(f, lines[i], strlen(lines[i]), i + 1);
}

static void hint_directions(void **state)
{
	(void)state;
	struct sp_log_facts f;
	static const char *const sglang[] = {
		"server_args=ServerArgs(model_path='m', mem_fraction_static=0.88, max_running_requests=None)",
		"Possible solutions:",
		"1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
		"2. set --cuda-graph-max-bs to a smaller value (e.g., 16)",
		NULL,
	};
	feed(&f, sglang);
	assert_int_equal(f.frac_hint, -1);
	assert_string_equal(f.frac_hint_flag, "--mem-fraction-static");
	assert_int_equal(f.frac_hint_line, 3);
	assert_true(f.frac_used > 0.879 && f.frac_used < 0.881);
	assert_true(f.cuda_graph_bs_hint);
	assert_int_equal(f.cuda_graph_bs_example, 16);
	/* "increasing `gpu_memory_utilization` or decreasing `max_model_len`": the nearer word is the flag's */
	static const char *const vllm_kv[] = {
		"ValueError: ... estimated maximum model length is 30496. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
		NULL,
	};
	feed(&f, vllm_kv);
	assert_int_equal(f.frac_hint, 1);
	assert_string_equal(f.frac_hint_flag, "--gpu-memory-utilization");
	static const char *const vllm_start[] = {
		"ValueError: Free memory on device (2.77/119.7 GiB) on startup is less than desired GPU memory utilization (0.9, 107.73 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
		NULL,
	};
	feed(&f, vllm_start);
	assert_int_equal(f.frac_hint, -1);
	assert_true(f.frac_used > 0.899 && f.frac_used < 0.901);
	static const char *const sglang_up[] = { "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.", NULL };
	feed(&f, sglang_up);
	assert_int_equal(f.frac_hint, 1);
	assert_string_equal(f.last_error, "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.");
}

static void ray_monitor(void **state)
{
	(void)state;
	struct sp_log_facts f;
	static const char *const ray[] = {
		"ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
		"Memory on the node (IP: 10.0.0.2, ID: ab) where the task (task ID: cd, name=f, pid=1, memory used=1.25GB) was running was 27.71GB / 28.80GB (0.962273), which exceeds the memory usage threshold of 0.95. Ray killed",
		"Top 10 memory users:",
		"PID\tMEM(GB)\tCOMMAND",
		"11362\t1.25\tray::allocate_memory",
		"3101\t8.47\t/usr/local/bin/ollama serve",
		"Refer to the documentation on how to address the out of memory issue",
		NULL,
	};
	memset(&f, 0, sizeof f);
	bool rows[8] = { false };
	for (int i = 0; ray[i]; i++)
		rows[i] = sp_log_facts_line(&f, ray[i], strlen(ray[i]), (uint64_t)i + 1);
	assert_true(f.ray_oom);
	assert_int_equal(f.ray_line, 1);
	assert_int_equal(f.ray_used, 27710000000ULL);
	assert_int_equal(f.ray_total, 28800000000ULL);
	assert_true(f.ray_threshold > 0.949 && f.ray_threshold < 0.951);
	assert_int_equal(f.ray_rows, 2);
	assert_string_equal(f.ray_top, "/usr/local/bin/ollama serve");
	/* the table's rows (and its header) are Ray's report: the classifier skips them */
	assert_false(rows[2]);
	assert_true(rows[3] && rows[4] && rows[5]);
	assert_false(rows[6]);
	assert_false(f.ray_in_table);
}

static void last_error(void **state)
{
	(void)state;
	struct sp_log_facts f;
	static const char *const imp[] = {
		"Traceback (most recent call last):",
		"    raise ValueError(x)",
		"ImportError: cannot import name 'x' from 'y'",
		NULL,
	};
	feed(&f, imp);
	assert_string_equal(f.last_error, "ImportError: cannot import name 'x' from 'y'");
	assert_int_equal(f.last_error_line, 3);
	static const char *const none[] = { "ErrorHandler: set", "note: Error: fine", "  KeyError: indented", NULL };
	feed(&f, none);
	assert_int_equal(f.last_error_line, 0); /* not a name ending in Error/Exception, not unindented */
	static const char *const cli[] = { "Error: pull model manifest: file does not exist", NULL };
	feed(&f, cli);
	assert_int_equal(f.last_error_line, 1); /* a CLI's own "Error: ..." (Ollama's) is the last error too */
}

/* a server's facts on a 119.7 GiB pool with a given after-flush figure */
static void server(struct sp_job_facts *f, struct sp_log_facts *m, double after_gib, double weights_gib)
{
	memset(f, 0, sizeof *f);
	memset(m, 0, sizeof *m);
	f->kind = SP_OOM_VLLM_KV;
	f->engine = SP_ENGINE_VLLM;
	f->total.v = (uint64_t)(119.7 * GiB);
	f->total.why = SP_OK;
	f->budget_after_flush.v = (uint64_t)(after_gib * GiB);
	f->budget_after_flush.why = SP_OK;
	f->weights = (uint64_t)(weights_gib * GiB);
	f->more = m;
}

static void share(void **state)
{
	(void)state;
	struct sp_job_facts f;
	struct sp_log_facts m;
	char why[400];
	/* 65.7 GiB of weights need 0.60 at least: 46.8 GiB after a flush (0.35) gives none */
	server(&f, &m, 46.8, 65.7);
	assert_true(sp_ladder_share(&f, why, sizeof why) == 0);
	assert_non_null(strstr(why, "at least 0.60"));
	/* 110.3 GiB after a flush: 0.90, at least the floor */
	server(&f, &m, 110.3, 65.7);
	double s = sp_ladder_share(&f, why, sizeof why);
	assert_true(s > 0.899 && s < 0.901);
	/* a hint to go lower than 0.88: 0.80, never 0.90 */
	m.frac_hint = -1;
	m.frac_used = 0.88;
	s = sp_ladder_share(&f, why, sizeof why);
	assert_true(s > 0.799 && s < 0.801);
	/* a lower share than the weights need: none */
	server(&f, &m, 110.3, 100);
	m.frac_hint = -1;
	m.frac_used = 0.88;
	assert_true(sp_ladder_share(&f, why, sizeof why) == 0);
	assert_non_null(strstr(why, "no lower share holds them"));
	/* a hint to go higher than 0.65 with only 0.35 free */
	server(&f, &m, 46.8, 20);
	m.frac_hint = 1;
	m.frac_used = 0.65;
	assert_true(sp_ladder_share(&f, why, sizeof why) == 0);
	assert_non_null(strstr(why, "above the 0.65"));
	/* weights above the pool: no share at all */
	server(&f, &m, 110.3, 135.4);
	assert_true(sp_ladder_share(&f, why, sizeof why) == 0);
	assert_non_null(strstr(why, "more than the whole pool"));
	/* unknown pool: nothing advised */
	server(&f, &m, 110.3, 65.7);
	f.total.why = SP_MISSING;
	assert_true(sp_ladder_share(&f, why, sizeof why) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hint_directions),
		cmocka_unit_test(ray_monitor),
		cmocka_unit_test(last_error),
		cmocka_unit_test(share),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
