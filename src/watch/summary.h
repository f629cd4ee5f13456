/* SPDX-License-Identifier: MIT */
/* The end-of-run summary, built from log rows: `run` feeds it the rows it
 * writes, `report` the rows it reads back, so both print the same story.
 * Fixed size: a week of 1 s samples costs nothing extra. */
#ifndef SP_SUMMARY_H
#define SP_SUMMARY_H
#include "watch/logrow.h"

#include <jansson.h>
#include <stdio.h>

#define SP_SUM_MAX_EPISODES 64
#define SP_SUM_MAX_GUARD 32
#define SP_SUM_REASONS 9

struct sp_episode {
	double start, end;  /* unix time; end NAN while open */
	char cause[24];
	double drop_pct;    /* NAN when not said */
	int share_pct;      /* the cause's share of the episode, %; -1 not said (a log from before) */
	char shares[48];    /* the other causes: "power_cap:9,thermal:2"; "" none */
	char evidence[128]; /* the start row's evidence, as the log has it; "" none */
};

struct sp_guard_action {
	double t;
	char action[16];    /* warn, flush, term, kill */
	char detail[96];
};

struct sp_summary {
	double t_first, t_last; /* unix time of the first and last row */
	long samples, events;
	double mem_total;
	double peak_pool_used; /* max(total - free - page cache), bytes: the pool model's 'used' */
	double peak_page_cache; /* bytes, for people: what the peak above leaves out */
	double peak_pool_used_t;
	double lowest_budget, lowest_budget_t;
	double peak_gpu_temp, peak_soc_temp;
	double power_sum, peak_power; /* the GPU's own power sensor (NVML) only */
	long power_n;
	double sys_power_sum, peak_sys_power; /* the system's (spbm): a series of its own */
	long sys_power_n;
	/* the GPU lost or hung mid-run (gpu_unavailable .. gpu_available events) */
	int gpu_gone_n;           /* how many times */
	double gpu_gone_s;        /* for how long in all (one still open counts to the end) */
	double gpu_gone_since;    /* the open one's start; NAN: it answers */
	double gpu_gone_first;    /* when it first stopped answering */
	char gpu_gone_reason[24]; /* the first one's reason key (gpu_lost, timeout, ...) */
	bool gpu_gone_open;       /* it had not come back at the end of the log */
	double reason_seconds[SP_SUM_REASONS]; /* time under each clocks event reason */
	double prev_t;
	uint64_t prev_reasons;
	bool prev_reasons_ok;
	int n_episodes, episodes_dropped;
	struct sp_episode episodes[SP_SUM_MAX_EPISODES];
	int n_guard, guard_dropped;
	struct sp_guard_action guard[SP_SUM_MAX_GUARD];
	bool ended;          /* an exit event was seen */
	char ended_by[16];   /* exit, signal, oom_kill, guard */
	int exit_code;       /* -1 unknown */
	int signal;          /* 0 none */
	double throughput_first, throughput_last; /* first and last rate seen */
	char throughput_unit[16];
	double peak_job_rss, peak_job_rss_t; /* the job tree's highest RSS logged, bytes; NAN none */
	double peak_job_majflt;     /* major faults of the job's tree (the highest count logged) */
	double lowest_contig, lowest_contig_t; /* bytes free in 2 MiB blocks, the lowest sample */
	int load_guard_actions;     /* run --guard-load: flushes/compactions/evictions done */
	char load_guard_end[24];    /* why the load guard stopped acting ("" none) */
	bool last_row_incomplete; /* set by the reader */
	long rows_skipped;        /* set by the reader (--lenient) */
	long rows_dropped;        /* set by run/watch: log rows a stalled reader of a FIFO, device or '-' cost */
};

void sp_summary_init(struct sp_summary *s);
void sp_summary_add(struct sp_summary *s, const struct sp_logrow *r);
/* Close open episodes at the last row's time. */
void sp_summary_finish(struct sp_summary *s);
/* The JSON object; keys promised: exit_code, ended_by, peak_pool_used_bytes,
 * episodes [{start, end, cause}], guard_actions []. */
json_t *sp_summary_json(const struct sp_summary *s);
/* Human lines, for stderr at the end of run or stdout in report. */
void sp_summary_print(FILE *f, const struct sp_summary *s);
/* A log detail for people: "free_bytes=21468246016 floor_bytes=8589934592"
 * -> "free=20.0 GiB floor=8.0 GiB", "flush:freed_bytes=N" -> "flush:freed=22.2
 * GiB" (the log keeps the bytes). Into buf; returns buf. */
const char *sp_detail_human(char *buf, size_t n, const char *d);
#endif
