/* SPDX-License-Identifier: MIT */
/* More facts from a failed job's log, for the ladder's checks (docs/ladder.md
 * "What the ladder checks"): the server's own printed hint about its memory
 * share and the direction it names, the share the server ran with, SGLang's
 * CUDA-graph capture failure, Ray's memory monitor (its figures and its "Top
 * 10 memory users" table, which is Ray's report, not the job's engine), and
 * the log's last error line (what a log with no memory failure ended on).
 * Pure and bounded: fed one line at a time by the classifier (oomlog.c calls
 * sp_log_facts_line for each text line, prefixes already stripped); all
 * zeros is the initial state. */
#ifndef SP_LADDER_FACTS_H
#define SP_LADDER_FACTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sp_log_facts {
	/* the server's hint about its memory share: -1 lower it, +1 raise it, 0 none */
	int frac_hint;
	char frac_hint_flag[32];   /* the flag as the ladder names it: "--mem-fraction-static", "--gpu-memory-utilization" */
	char frac_hint_text[160];  /* the line that said it, printable ASCII */
	uint64_t frac_hint_line;
	/* the share the server ran with (0: not said), and the flag it is */
	double frac_used;
	char frac_used_flag[32];
	/* SGLang: "Capture cuda graph failed", and the log naming --cuda-graph-max-bs */
	bool cuda_graph_failed;
	bool cuda_graph_bs_hint;
	uint64_t cuda_graph_bs_example; /* "(e.g., 16)" after it, 0: none */
	/* Ray's memory monitor: "Task was killed due to the node running low on memory" */
	bool ray_oom;
	uint64_t ray_line;
	uint64_t ray_used, ray_total; /* "was 113.52GB / 119.50GB" (bytes, Ray's GB are 10^9), 0: not said */
	double ray_threshold;         /* "exceeds the memory usage threshold of 0.95", 0: not said */
	int ray_rows;                 /* rows of Ray's "Top 10 memory users" table */
	char ray_top[64];             /* its largest row's command */
	uint64_t ray_top_bytes;
	bool ray_in_table;
	/* the last unindented "XxxError: ..." / "XxxException: ..." line */
	char last_error[200];
	uint64_t last_error_line;
	/* llama.cpp: the model file it loaded ("loading model 'PATH'", "-m PATH"
	 * on its command line) and the context it sized ("n_ctx = 131072") */
	char model_file[200];
	uint64_t n_ctx;
	/* TGI: the prefill batch its warm-up allocated ("max_batch_prefill_tokens:
	 * 4096" in its Args, or "Not enough memory to handle 4096 prefill tokens") */
	uint64_t prefill_tokens;
};

/* One line (s, n: without its newline; lineno 1-based). True when the line
 * is a row of Ray's "Top 10 memory users" table: Ray's report of what held
 * the node, which the classifier does not read as the job's own lines (an
 * "ollama serve" row does not make the job Ollama's). */
bool sp_log_facts_line(struct sp_log_facts *f, const char *s, size_t n, uint64_t lineno);

/* Ray's memory monitor's default threshold (RAY_memory_usage_threshold) */
#define SP_RAY_THRESHOLD_DEFAULT 0.95
#endif
