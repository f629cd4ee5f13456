/* SPDX-License-Identifier: MIT */
/* Files a user names as input (a run log, a training log, a failed job's
 * log): opened without hanging, checked to be text.
 *
 * sp_input_open never blocks: a FIFO or socket named as a file is refused
 * (stdin, '-', is the way to pipe), a folder is refused, a symlink loop says
 * so. The text check refuses a stream whose first 64 KiB hold no line end
 * ('\n' or '\r', which tqdm's bars redraw with) -- a sparse file, /dev/zero,
 * a binary -- or that holds only NUL bytes, at once rather than after
 * reading it through. */
#ifndef SP_UTIL_INPUT_H
#define SP_UTIL_INPUT_H
#include <stdbool.h>
#include <stddef.h>

#define SP_TEXT_PROBE (64u << 10) /* the first bytes that must hold a line end */

/* refusal codes, as -errno values, said in words by sp_input_strerror */
#define SP_EINPUT_NOTTEXT EILSEQ /* no line end in the first 64 KiB, or only NULs */
#define SP_EINPUT_FIFO ESPIPE    /* a FIFO or socket named as a file */
#define SP_EINPUT_SHRANK ESTALE  /* cut shorter while it was read (mapped) */

/* open PATH to read: a regular file or a character device ("/dev/stdin"),
 * O_CLOEXEC, blocking once open. fd, or -errno (-EISDIR, -SP_EINPUT_FIFO,
 * -ELOOP, ...). */
int sp_input_open(const char *path);

struct sp_text_check {
	size_t seen;   /* bytes looked at, up to SP_TEXT_PROBE */
	bool line_end; /* a '\n' among them */
	bool non_nul;  /* a byte other than NUL among them */
};
/* Look at the next LEN bytes of the stream: 0, or -SP_EINPUT_NOTTEXT once
 * 64 KiB were seen with no line end or only NULs. */
int sp_text_check_feed(struct sp_text_check *c, const char *buf, size_t len);
/* At the end of the stream: -SP_EINPUT_NOTTEXT when every byte was NUL. */
int sp_text_check_end(const struct sp_text_check *c);

/* A file to be followed (watch --follow), checked once at the start: 0 when
 * it does not exist yet or is a regular file whose first 64 KiB (or all of
 * it, when shorter) pass the text check; else -errno: a folder, a FIFO, a
 * device (-SP_EINPUT_NOTREG), not text. Never blocks. */
int sp_input_check_follow(const char *path);
#define SP_EINPUT_NOTREG ENODEV /* a device where a growing file is wanted */

/* strerror for what these return (and any other -errno) */
const char *sp_input_strerror(int e);
#endif
