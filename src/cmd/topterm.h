/* SPDX-License-Identifier: MIT */
/* The terminal side of `sparkops top`: ncursesw opened on stdout, the
 * screen model's grid (out/topview.h) painted into it, keys read without
 * waiting, and the terminal given back on every way out: a normal end, a
 * termination signal (SIGTERM, SIGINT, SIGHUP: noted, the loop ends, the
 * caller restores and re-raises) and a crash (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGABRT: endwin() in the handler, then the signal again, with
 * its default action, so a core dump still happens). */
#ifndef SP_TOPTERM_H
#define SP_TOPTERM_H
#include "out/topview.h"

#include <stdbool.h>
#include <stddef.h>

struct sp_topterm {
	bool open, color, utf8;
	int look[SP_TVA_N]; /* curses attributes per cell meaning */
};

/* Open the terminal (newterm on stdout/stdin, cbreak, no echo, keypad,
 * cursor hidden). want_color: colours when the terminal has them. 0, or -1
 * with the reason in err (an unknown TERM). */
int sp_topterm_open(struct sp_topterm *t, bool want_color, char *err, size_t n);
/* Paint the grid and show it (curses sends only what changed). */
void sp_topterm_paint(struct sp_topterm *t, const struct sp_tv_grid *g);
/* Force a full repaint at the next paint (Ctrl-L). */
void sp_topterm_redraw(void);
/* The screen's size now. */
void sp_topterm_size(int *rows, int *cols);
/* The next key without waiting; -1 when none. KEY_RESIZE comes as a key. */
int sp_topterm_key(void);
/* A termination signal that arrived (SIGTERM, SIGINT, SIGHUP), or 0. */
int sp_topterm_signal(void);
/* Give the terminal back (endwin) and put the signal actions back. */
void sp_topterm_close(struct sp_topterm *t);
#endif
