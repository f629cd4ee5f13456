/* SPDX-License-Identifier: MIT */
/* The run/watch CSV log: one row per sample, and event rows of their own, so
 * the log reads as a timeline. One column table drives the header, the writer
 * and the reader, so they cannot drift apart. Format: docs/csv-log.md. */
#ifndef SP_LOGROW_H
#define SP_LOGROW_H
#include "probe/sample.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sp_row_type { SP_ROW_SAMPLE, SP_ROW_EVENT };

/* Every numeric field is NAN when unknown (written as an empty field). */
struct sp_logrow { // NOLINT(clang-analyzer-optin.performance.Padding): column order reads better
	enum sp_row_type type;
	char time_iso[40];    /* local time, ISO-8601 with ms and offset */
	double unix_time;     /* seconds since the epoch, ms precision */
	char event[24];       /* event rows: see SP_EV_* ; "" for samples */
	char detail[256];     /* event rows: key=value words or text */
	double mem_total, mem_free, mem_available, page_cache, swap_used; /* bytes */
	double budget_now, budget_after_flush;                             /* bytes */
	double psi_mem_some, psi_mem_full, psi_cpu_some, psi_io_some, psi_io_full; /* avg10, % */
	double gpu_temp_c, gpu_power_w, gpu_sm_clock_mhz, gpu_util_pct;
	bool gpu_reasons_ok;  /* false: unknown (empty field) */
	uint64_t gpu_reasons; /* clocks event reason mask */
	double gpu_power_viol_s, gpu_thermal_viol_s; /* cumulative, NVML */
	double soc_temp_c;    /* hottest acpitz / thermal zone */
	double sys_power_w, pl1_w, pl1_cap_w; /* spbm */
	double job_rss_bytes; /* the job's whole process tree */
	double throughput;    /* latest rate from the job's output */
	char throughput_unit[16]; /* "it/s", "samples/s", ... */
	/* format version 2: appended at the end of the row, so version 1 logs still read */
	double free_2mib;     /* bytes free in blocks of 2 MiB or more (buddyinfo) */
	double largest_block; /* bytes of the largest free block */
	double job_majflt;    /* major faults of the job's process tree (cumulative) */
};

/* Event names (the `event` column). */
#define SP_EV_START "start"               /* detail: cmd=... interval=S host=... */
#define SP_EV_REASON_ON "reason_on"       /* detail: the reason name */
#define SP_EV_REASON_OFF "reason_off"
#define SP_EV_EPISODE_START "episode_start" /* detail: cause=C drop_pct=P baseline=B rate=R */
#define SP_EV_EPISODE_UPDATE "episode_update" /* detail: cause=C share_pct=P shares=C:P,C:P rate=R */
#define SP_EV_EPISODE_END "episode_end"   /* detail: as episode_update: the cause over the whole episode */
#define SP_EV_GUARD_WARN "guard_warn"
#define SP_EV_GUARD_FLUSH "guard_flush"   /* detail: freed_bytes=N ... */
#define SP_EV_GUARD_EVICT "guard_evict"   /* detail: freed_bytes=N files=N cold_files=N free_bytes=N reclaimable_bytes=N */
#define SP_EV_GUARD_HOLD "guard_hold"     /* detail: free_bytes=N reclaimable_bytes=N floor_bytes=N: not stopped */
#define SP_EV_GUARD_OK "guard_recovered"  /* detail: free_bytes=N: back above the floor */
#define SP_EV_GUARD_TERM "guard_term"
#define SP_EV_GUARD_KILL "guard_kill"
#define SP_EV_PROCESS "process_appeared"  /* detail: pid=N name=X kind=K */
#define SP_EV_GPU_LOST "gpu_unavailable"  /* detail: the reason key */
#define SP_EV_GPU_BACK "gpu_available"
#define SP_EV_EXIT "exit"                 /* detail: ended_by=exit|signal|oom_kill|guard exit_code=N [signal=N] */
#define SP_EV_STOP "stop"                 /* watch ended without a child */
#define SP_EV_LOAD_GUARD "load_guard"     /* detail: action=flush+compact|flush|evict ... (run --guard-load) */
#define SP_EV_DRIVER_ERROR "driver_error" /* detail: kind=nvrm_oom|xid|nvrm_other count=N (new kernel log lines this sample) */
#define SP_EV_LOAD_GUARD_END "load_guard_end" /* detail: reason=ready|deadline|stop_file|job_ended ... */
#define SP_EV_LADDER_TRY "ladder_try"     /* detail: try=N rung=R change=C pid=P cmd=WORDS (run --ladder) */
#define SP_EV_LADDER_SKIP "ladder_skip"   /* detail: text: a rung skipped and why */
#define SP_EV_LADDER_STOP "ladder_stop"   /* detail: reason=R tries=N [rung=R change=TEXT] */

/* The format version this build writes, and the column count of each
 * version it reads (1: up to throughput_unit; 2: + free_2mib_bytes,
 * largest_free_block_bytes, job_major_faults). */
#define SP_LOG_VERSION 2
#define SP_LOG_V1_COLUMNS 31

/* Initialise every numeric field to NAN. */
void sp_logrow_clear(struct sp_logrow *r, enum sp_row_type type);
/* Fill the sample columns from a sample (GPU 0; SoC temperature from acpitz
 * or the hottest thermal zone). Time comes from s->wall. */
void sp_logrow_from_sample(struct sp_logrow *r, const struct sp_sample *s);
/* An event row at Unix time t. */
void sp_logrow_event(struct sp_logrow *r, double t, const char *event, const char *detail);
/* "2026-11-29T09:40:12.345+01:00" in local time */
void sp_iso_time(char *buf, size_t n, double unix_time);

/* The header line (with '\n'); returns its length. */
size_t sp_logrow_header(char *buf, size_t n);
/* One CSV line (with '\n'); returns its length, or 0 if it did not fit. */
size_t sp_logrow_format(const struct sp_logrow *r, char *buf, size_t n);
/* Parse one line (without its '\n'). Returns 0, or -1 with a reason in err
 * ("expected 32 fields, got 7", "field 'gpu_temp_c': 'hot' is not a number"). */
int sp_logrow_parse(const char *line, size_t len, struct sp_logrow *r, char *err, size_t errlen);
/* The same for a log of an older version: ncolumns from
 * sp_logrow_header_columns (the columns past them stay unknown). */
int sp_logrow_parse_n(const char *line, size_t len, int ncolumns, struct sp_logrow *r, char *err, size_t errlen);
/* The common row (no quoted field, every number in the writer's own form,
 * no NUL byte) parsed where it lies, without a copy: true and *r as
 * sp_logrow_parse_n would give; false when the row is anything else (then
 * sp_logrow_parse_n has the answer or the error). */
bool sp_logrow_parse_fast(const char *line, size_t len, int ncolumns, struct sp_logrow *r);
/* Is this the header of a sparkops log this version reads (any version)? */
bool sp_logrow_is_header(const char *line, size_t len);
/* The column count of the version whose header this is, 0 when it is none. */
int sp_logrow_header_columns(const char *line, size_t len);
int sp_logrow_ncolumns(void);

/* key=value lookup in an event's detail ("cause=thermal drop_pct=23"). */
bool sp_detail_get(const char *detail, const char *key, char *out, size_t n);
#endif
