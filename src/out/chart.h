/* SPDX-License-Identifier: MIT */
/* What report draws, gathered in one streaming pass with fixed memory:
 * - a min/max downsampler: per series and per time column, the lowest and
 *   highest value, so a one-sample spike survives any zoom-out. Columns start
 *   narrow and double in width (merging pairs) whenever a row falls past the
 *   last one, so the range need not be known in advance (one pass, works on
 *   a pipe); with --from and --to both given the width is fixed up front.
 * - throttle-reason intervals (from the reasons column and reason_on/off
 *   events), merged when their number outgrows the array;
 * - marks: guard actions, the child's exit, processes appearing, training-log
 *   lines. Everything has a cap; what is dropped is counted. */
#ifndef SP_CHART_H
#define SP_CHART_H
#include "watch/logrow.h"

#include <stdbool.h>
#include <stdint.h>

enum sp_series {
	SP_S_USED,      /* GiB: mem_total - mem_free - page_cache (the pool model's used) */
	SP_S_TOTAL,     /* GiB */
	SP_S_BUDGET,    /* GiB: budget_now */
	SP_S_GPU_TEMP,  /* C */
	SP_S_SOC_TEMP,  /* C */
	SP_S_GPU_POWER, /* W */
	SP_S_SYS_POWER, /* W */
	SP_S_PL1,       /* W */
	SP_S_PL1_CAP,   /* W */
	SP_S_SM_CLOCK,  /* MHz */
	SP_S_THROUGHPUT,
	SP_S_CONTIG,    /* GiB: free in blocks of 2 MiB or more (log format 2) */
	SP_S_PSI_MEM,   /* %: PSI memory some avg10 */
	SP_S_PSI_CPU,   /* %: PSI cpu some avg10 */
	SP_S_PSI_IO,    /* %: PSI io some avg10 */
	SP_S_N
};

#define SP_CHART_MAX_COLS 4096
#define SP_CHART_MAX_INTERVALS 512
#define SP_CHART_MAX_MARKS 128
#define SP_CHART_MAX_TRAIN 400
#define SP_CHART_LABEL 120
/* reasons worth shading: the ones that slow the GPU down */
#define SP_CHART_THROTTLE_MASK 0xECULL /* sw_power_cap hw_slowdown sw/hw thermal hw_power_brake */

#define SP_CELL_HAS 1   /* at least one value */
#define SP_CELL_BREAK 2 /* do not join this column to the one before (missing data) */

struct sp_cell {
	float min, max;
	uint8_t flags;
};

struct sp_interval {
	double start, end; /* end NAN while open */
	int reason;        /* bit number */
};

enum sp_mark_kind { SP_MARK_GUARD, SP_MARK_EXIT, SP_MARK_PROCESS, SP_MARK_GPU, SP_MARK_TRAIN };

struct sp_mark {
	double t;
	enum sp_mark_kind kind;
	char label[SP_CHART_LABEL];
};

struct sp_chart {
	int ncols;
	double from, to;       /* the window; NAN = open */
	double t0, w;          /* column i covers [t0 + i*w, t0 + (i+1)*w) */
	bool origin_set, fixed_width;
	double t_first, t_last; /* rows that fell in the window */
	double t_seen;         /* the latest row, in the window or not */
	long rows_in_window;
	struct sp_cell *cells; /* SP_S_N * ncols, series-major */
	bool pending_break[SP_S_N];
	double prev_sample_t, interval; /* sampling interval estimate */
	char throughput_unit[16];
	double guard_floor;    /* bytes: the guard's free-memory floor, from a guard event's
				* floor_bytes=N (or floor=2GiB); NAN when no event says it */
	char tz[8];            /* "+01:00" from the first row; the chart's clock */
	long tz_offset_s;
	bool tz_set;
	/* reasons */
	uint64_t reason_state;
	int open_idx[64];
	struct sp_interval iv[SP_CHART_MAX_INTERVALS];
	int n_iv;
	double iv_merge_gap;   /* grows when the array fills */
	/* marks */
	struct sp_mark marks[SP_CHART_MAX_MARKS];
	int n_marks, marks_dropped;
	struct sp_mark train[SP_CHART_MAX_TRAIN];
	int n_train, train_dropped;
};

/* ncols: columns of the time axis (the plot's width in pixels). from/to: NAN
 * for open ends. Returns 0 or -1 (out of memory). */
int sp_chart_init(struct sp_chart *c, int ncols, double from, double to);
void sp_chart_release(struct sp_chart *c);
void sp_chart_add_row(struct sp_chart *c, const struct sp_logrow *r);
/* Close open intervals at the last row. */
void sp_chart_finish(struct sp_chart *c);
/* Add a training-log mark (kept only inside the window). */
void sp_chart_add_train(struct sp_chart *c, double t, const char *label);
const struct sp_cell *sp_chart_cell(const struct sp_chart *c, enum sp_series s, int col);
/* Parse the "+HH:MM" / "Z" ending of an ISO-8601 time: 0 and seconds east, or -1. */
int sp_iso_offset(const char *iso, long *offset_s);
#endif
