/* SPDX-License-Identifier: MIT */
/* The screen of `sparkops top`, as a model: what to draw from a sample, its
 * history and the running jobs, rendered into a grid of cells (a glyph and a
 * meaning each). Pure: no terminal, no clock, no I/O, so every line of the
 * screen is unit-testable (tests/unit/test_topview.c); cmd/top.c paints the
 * grid with ncurses and maps each meaning to a colour or, without colour,
 * to bold / dim / reverse.
 *
 *   struct sp_top_hist h; sp_top_hist_init(&h);
 *   sp_top_hist_push(&h, s, &k);                 // once per sample
 *   struct sp_topview_in in = { .s = s, .k = &k, .h = &h, ... };
 *   sp_topview_render(grid, LINES, COLS, &in);
 *
 * The layout fits 80x24 (the pool, one GPU, GB10's sensors, four
 * sparklines, pressure, a job, a few processes and the keys) and gives a
 * wider or taller terminal to the bars, the sparklines (more history) and
 * the process list. Below 40x10 it says the terminal is too small. */
#ifndef SP_TOPVIEW_H
#define SP_TOPVIEW_H
#include "out/nodes.h"
#include "probe/sample.h"
#include "probe/spark.h"
#include "watch/jobstat.h"

#include <stdbool.h>
#include <stddef.h>

#define SP_TV_ROWS_MAX 200
#define SP_TV_COLS_MAX 400
#define SP_TV_MIN_ROWS 10
#define SP_TV_MIN_COLS 40
#define SP_TV_MIN_PROC_ROWS 2 /* process rows a short screen keeps before sparklines */

/* What a cell means; the terminal layer picks the look. */
enum sp_tv_attr {
	SP_TVA_NONE,
	SP_TVA_BOLD,    /* a section's name */
	SP_TVA_DIM,     /* secondary text, stale values, the reserve */
	SP_TVA_TITLE,   /* the top line (reverse) */
	SP_TVA_ALERT,   /* red: thermal slowdown, USB-PD safety mode, stale GPU, trouble */
	SP_TVA_WARN,    /* yellow: power capping, PL1 at its cap, pressure */
	SP_TVA_GOOD,    /* green: the budget */
	SP_TVA_USED,    /* the pool bar's segments */
	SP_TVA_SHMEM,
	SP_TVA_CACHE,
	SP_TVA_FREE,
	SP_TVA_SPARK,   /* sparklines */
	SP_TVA_N
};

struct sp_tv_cell {
	char g[4];           /* one glyph, UTF-8, NUL-terminated (at most 3 bytes) */
	unsigned char attr;  /* enum sp_tv_attr */
};
struct sp_tv_grid {
	int rows, cols;
	struct sp_tv_cell c[SP_TV_ROWS_MAX][SP_TV_COLS_MAX];
};

/* Row r as text (UTF-8, trailing blanks cut) into buf; its length in bytes. */
size_t sp_tv_line(const struct sp_tv_grid *g, int r, char *buf, size_t n);

/* ---- history ------------------------------------------------------------------ */
#define SP_TOP_HIST 600 /* samples kept: 10 minutes at the default 1 s */
/* Each series is one sensor: the GPU's temperature and power are NVML's own
 * (blank while the driver does not answer), GB10's die temperature and
 * system power are series of their own, never filling the GPU's gaps. */
enum sp_top_series { SP_TS_FREE, SP_TS_TEMP, SP_TS_POWER, SP_TS_CLOCK, SP_TS_DIE, SP_TS_SYS_POWER, SP_TS_N };
struct sp_top_hist {
	int n, head;                 /* how many, where the next goes */
	float v[SP_TS_N][SP_TOP_HIST]; /* NAN: unknown at that sample */
	double total_bytes;          /* the free series' scale */
	double power_ref_w, clock_ref_mhz; /* caps the power/clock scales start from */
};
void sp_top_hist_init(struct sp_top_hist *h);
/* One sample's points: MemFree; GPU 0's temperature, power and SM clock
 * (NVML's; unknown while it does not answer); GB10's die temperature and
 * system power (spbm), each its own series. */
void sp_top_hist_push(struct sp_top_hist *h, const struct sp_sample *s, const struct sp_spark *k);
/* The point age samples ago (0: the newest); NAN past the history. */
double sp_top_hist_get(const struct sp_top_hist *h, enum sp_top_series ser, int age);
/* One sparkline of the newest `width` points, oldest at the left, into buf
 * (glyphs ▁..█, or "_.-~=+*#" when ascii; unknown points are blanks). */
void sp_top_spark(const struct sp_top_hist *h, enum sp_top_series ser, int width, bool ascii, char *buf, size_t n);

/* ---- the view --------------------------------------------------------------------- */
/* CONTAINER groups the list: containers and pods by name, then host units, then the rest */
enum sp_top_sort { SP_TOP_SORT_RSS, SP_TOP_SORT_GPU, SP_TOP_SORT_PID, SP_TOP_SORT_KIND, SP_TOP_SORT_CONTAINER, SP_TOP_SORT_N };
const char *sp_top_sort_name(enum sp_top_sort k); /* "rss", "gpu", "pid", "kind" */

struct sp_topview_in {
	const struct sp_sample *s;   /* the latest sample */
	const struct sp_spark *k;    /* derived from it */
	const struct sp_top_hist *h;
	/* the GPU pane: when the driver stopped answering, the last answered
	 * readings (NULL: none yet) and their age in seconds, shown dimmed and
	 * marked STALE; never as current */
	bool gpu_stale;
	const struct sp_gpu *gpu_last;
	int gpu_last_n;
	double gpu_stale_s;
	const struct sp_jobstat *jobs;
	int njobs;
	const char *host;
	double now_unix;       /* the sample's time, for the clock in the title */
	long samples;          /* samples taken: the title's counter */
	double interval_s;
	enum sp_top_sort sort;
	bool paused, ascii, help;
	const char *message;   /* the bottom line instead of the keys (a prompt, a result) */
	bool message_alert;
	/* top --node: the nodes side by side (out/nodes.h's lines: a header,
	 * a row per node, a row per link), drawn under the title; a node that
	 * is not "ok" in red */
	const char (*node_lines)[SP_NODE_LINE];
	const bool *node_alert; /* per line */
	int n_node_lines;
};

void sp_topview_render(struct sp_tv_grid *g, int rows, int cols, const struct sp_topview_in *in);
#endif
