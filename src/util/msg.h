/* SPDX-License-Identifier: MIT */
/* Messages to the user: lower-case, no full stop, subject in quotes (git style). */
#ifndef SP_MSG_H
#define SP_MSG_H
#include <stdbool.h>

/* Exit codes every command shares (documented in sparkops(1)). */
enum {
	SP_EXIT_OK = 0,      /* ok; the answer is "yes" */
	SP_EXIT_TROUBLE = 1, /* the answer is "no" / trouble found */
	SP_EXIT_USAGE = 2,   /* bad usage or bad input */
	SP_EXIT_NOPERM = 4,  /* an action needs privileges we lack */
	SP_EXIT_IO = 5,      /* writing output failed (full disk, closed pipe) */
};

extern const char *sp_progname;
/* A hook called before every message is written, with the ctx it was set
 * with (run/watch: the engine's state, to clear the live status line off the
 * terminal first). fn NULL: nothing. Messages come from several threads: set
 * it before the others may write one, clear it after they stopped. */
typedef void sp_msg_hook(void *ctx);
void sp_msg_before(sp_msg_hook *fn, void *ctx);

void sp_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
int sp_error(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* returns -1 */
void sp_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sp_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Colour only on a terminal and only without NO_COLOR. */
bool sp_color(int fd);

/* fflush/ferror/fclose stdout: a full disk or a broken pipe is an error. */
int sp_finish_stdout(void);
#endif
