/* SPDX-License-Identifier: MIT */
/* run/watch's live status line on a terminal (stderr), one line redrawn in
 * place once per sample: the elapsed time, the pool's free memory and the
 * budget, the GPU's temperature and power, the job's throughput, and the
 * current slowdown episode's cause. Pure: the engine fills the input and
 * writes what this returns ("\r\033[K" first, no newline). */
#ifndef SP_STATUSLINE_H
#define SP_STATUSLINE_H
#include <stddef.h>

struct sp_status_in {
	double elapsed_s;
	double pool_free, budget;   /* bytes; NAN unknown */
	double gpu_temp_c, gpu_power_w; /* NAN unknown */
	double rate;                /* NAN: no throughput yet */
	const char *unit;
	const char *cause;          /* the open episode's cause, NULL or "" when none */
	int width;                  /* the terminal's columns; the line is cut to width-1 (0: 80) */
};

/* The line, with the redraw prefix "\r\033[K", into buf; returns its length. */
size_t sp_statusline(char *buf, size_t cap, const struct sp_status_in *in);
#endif
