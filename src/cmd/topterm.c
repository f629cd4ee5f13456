// SPDX-License-Identifier: MIT
/* The terminal side of `sparkops top` (topterm.h): ncursesw. */
#include "cmd/topterm.h"

#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t quit_sig;
static volatile sig_atomic_t curses_on;

static void on_quit(int sig)
{
	quit_sig = sig;
}

/* A crash: give the terminal back, then die of the same signal (the
 * handler was reset on entry, SA_RESETHAND, and is not blocked, SA_NODEFER). */
static void on_crash(int sig)
{
	if (curses_on)
		endwin();
	raise(sig);
}

static const int quit_sigs[] = { SIGTERM, SIGINT, SIGHUP };
static const int crash_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };

static void handlers(bool on)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof quit_sigs / sizeof quit_sigs[0]; i++) {
		sa.sa_handler = on ? on_quit : SIG_DFL;
		sa.sa_flags = 0; /* no SA_RESTART: the loop's poll returns at once */
		sigaction(quit_sigs[i], &sa, NULL);
	}
	for (size_t i = 0; i < sizeof crash_sigs / sizeof crash_sigs[0]; i++) {
		sa.sa_handler = on ? on_crash : SIG_DFL;
		sa.sa_flags = SA_RESETHAND | SA_NODEFER;
		sigaction(crash_sigs[i], &sa, NULL);
	}
}

int sp_topterm_open(struct sp_topterm *t, bool want_color, char *err, size_t n)
{
	memset(t, 0, sizeof *t);
	/* the user's locale for the terminal's characters, the C locale for
	 * numbers: every parser reads "4.20" with strtod, and a decimal-comma
	 * locale would make it stop at the point */
	setlocale(LC_ALL, "");
	setlocale(LC_NUMERIC, "C");
	const char *cs = nl_langinfo(CODESET);
	t->utf8 = cs && strcmp(cs, "UTF-8") == 0;
	const char *term = getenv("TERM");
	SCREEN *scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		snprintf(err, n, "cannot drive the terminal (TERM=%s)", term ? term : "unset");
		return -1;
	}
	set_term(scr);
	handlers(true);
	curses_on = 1;
	t->open = true;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	t->color = want_color && has_colors() && start_color() == OK;
	int mono[SP_TVA_N] = {
		[SP_TVA_NONE] = A_NORMAL, [SP_TVA_BOLD] = A_BOLD, [SP_TVA_DIM] = A_DIM,
		[SP_TVA_TITLE] = A_REVERSE, [SP_TVA_ALERT] = A_BOLD | A_UNDERLINE, [SP_TVA_WARN] = A_BOLD,
		[SP_TVA_GOOD] = A_BOLD, [SP_TVA_USED] = A_NORMAL, [SP_TVA_SHMEM] = A_NORMAL,
		[SP_TVA_CACHE] = A_NORMAL, [SP_TVA_FREE] = A_NORMAL, [SP_TVA_SPARK] = A_NORMAL,
	};
	memcpy(t->look, mono, sizeof mono);
	if (t->color) {
		use_default_colors();
		static const struct { int tva, fg, extra; } pairs[] = {
			{ SP_TVA_ALERT, COLOR_RED, A_BOLD }, { SP_TVA_WARN, COLOR_YELLOW, 0 },
			{ SP_TVA_GOOD, COLOR_GREEN, A_BOLD }, { SP_TVA_USED, COLOR_CYAN, 0 },
			{ SP_TVA_SHMEM, COLOR_MAGENTA, 0 }, { SP_TVA_CACHE, COLOR_YELLOW, 0 },
			{ SP_TVA_FREE, COLOR_GREEN, 0 }, { SP_TVA_SPARK, COLOR_CYAN, 0 },
		};
		for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
			init_pair((short)(i + 1), (short)pairs[i].fg, -1);
			t->look[pairs[i].tva] = (int)COLOR_PAIR(i + 1) | pairs[i].extra;
		}
	}
	return 0;
}

void sp_topterm_paint(struct sp_topterm *t, const struct sp_tv_grid *g)
{
	char run[SP_TV_COLS_MAX * 4 + 1];
	erase();
	for (int r = 0; r < g->rows && r < LINES; r++) {
		int c = 0;
		while (c < g->cols && c < COLS) {
			int a = g->c[r][c].attr, c0 = c;
			size_t len = 0;
			while (c < g->cols && c < COLS && g->c[r][c].attr == a) {
				size_t l = strlen(g->c[r][c].g);
				memcpy(run + len, g->c[r][c].g, l);
				len += l;
				c++;
			}
			run[len] = 0;
			attrset(a < SP_TVA_N ? t->look[a] : (int)A_NORMAL);
			mvaddstr(r, c0, run); /* the last cell of the last row returns ERR and is drawn */
		}
	}
	attrset(A_NORMAL);
	refresh();
}

void sp_topterm_redraw(void)
{
	clearok(curscr, TRUE);
}

void sp_topterm_size(int *rows, int *cols)
{
	*rows = LINES;
	*cols = COLS;
}

int sp_topterm_key(void)
{
	int ch = getch();
	return ch == ERR ? -1 : ch;
}

int sp_topterm_signal(void)
{
	return quit_sig;
}

void sp_topterm_close(struct sp_topterm *t)
{
	if (!t->open)
		return;
	curs_set(1);
	endwin();
	curses_on = 0;
	t->open = false;
	handlers(false);
	fflush(stdout);
}
