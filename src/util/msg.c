// SPDX-License-Identifier: MIT
#include "util/msg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *sp_progname = "sparkops";
/* the hook and its context (sp_msg_before); atomics, as any thread reads them */
static _Atomic(sp_msg_hook *) before_fn;
static void *_Atomic before_ctx;

void sp_msg_before(sp_msg_hook *fn, void *ctx)
{
	if (fn) { /* the context first: a reader that sees fn sees its ctx */
		atomic_store(&before_ctx, ctx);
		atomic_store(&before_fn, fn);
	} else {
		atomic_store(&before_fn, NULL);
		atomic_store(&before_ctx, NULL);
	}
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	char buf[1024];
	sp_msg_hook *fn = atomic_load(&before_fn);
	if (fn)
		fn(atomic_load(&before_ctx));
	int n = snprintf(buf, sizeof buf, "%s: %s", sp_progname, prefix);
	if (n < 0 || (size_t)n >= sizeof buf)
		n = 0;
	/* the analyzer loses track of a va_list passed down as a parameter (an
	 * array type on x86-64); ap was started by every caller */
	vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	size_t len = strlen(buf);
	/* a message may quote a process name, a log line or a model file: no
	 * control character of theirs reaches the terminal */
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	if (len + 1 < sizeof buf) {
		buf[len++] = '\n';
		buf[len] = 0;
	}
	/* one write so lines from several threads or the child do not interleave */
	const char *p = buf;
	while (len > 0) {
		ssize_t w = write(STDERR_FILENO, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		p += w;
		len -= (size_t)w;
	}
}

void sp_die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	exit(code);
}

int sp_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	return -1;
}

void sp_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void sp_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

bool sp_color(int fd)
{
	const char *nc = getenv("NO_COLOR");
	if (nc && *nc)
		return false;
	const char *term = getenv("TERM");
	if (term && strcmp(term, "dumb") == 0)
		return false;
	return isatty(fd);
}

int sp_finish_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno == EPIPE)
			return 0; /* the reader went away: not our failure */
		sp_error("writing output failed: %s", strerror(errno));
		return SP_EXIT_IO;
	}
	return 0;
}
