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
/* The same text as the terminal's title (OSC 2: "\033]2;...\007", control
 * bytes replaced), for while the job's own line (a tqdm bar) is open on the
 * terminal: the title never touches the job's line. Returns its length. */
size_t sp_statusline_title(char *buf, size_t cap, const struct sp_status_in *in);
/* Around the titles: xterm's title stack (push the user's title first, pop
 * it back at the end); terminals without the stack ignore both. */
#define SP_TITLE_PUSH "\033[22;2t"
#define SP_TITLE_POP "\033[23;2t"
#endif
