/* SPDX-License-Identifier: MIT */
/* watch --follow FILE: a training log read as `tail -F` does. It starts at
 * the file's end (what was there is history), reads what was appended on
 * each call, and survives rotation (the name now names another inode: the
 * new file is read from its start) and truncation (the size fell below what
 * was read: read again from the start). A file that does not exist yet is
 * waited for and read from its start once it appears. */
#ifndef SP_FOLLOW_H
#define SP_FOLLOW_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sp_follow {
	const char *path;
	int fd;          /* -1: not open (not there yet, or gone) */
	dev_t dev;
	ino_t ino;
	off_t off;       /* bytes of the current file already read */
	unsigned long reopened; /* rotations and truncations seen */
};

/* Open path at its end (or wait for it). */
void sp_follow_open(struct sp_follow *f, const char *path);
/* Up to cap appended bytes into buf; 0 when nothing new. Call until 0. */
size_t sp_follow_read(struct sp_follow *f, char *buf, size_t cap);
void sp_follow_close(struct sp_follow *f);
#endif
