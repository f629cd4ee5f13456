/* SPDX-License-Identifier: MIT */
/* Directory listing without heap allocation (getdents64 into the caller's
 * buffer), so the sampling loop can scan /proc and /sys at a steady state
 * with no malloc. */
#ifndef SP_DIRSCAN_H
#define SP_DIRSCAN_H
#include <stddef.h>

struct sp_dir {
	int fd;
	_Alignas(8) char buf[4096]; /* getdents64 records are 8-byte aligned */
	size_t len, pos;
	unsigned long long ino; /* the inode number of the entry sp_dir_next returned last */
};
/* 0 or -errno */
int sp_dir_open(struct sp_dir *d, const char *path);
/* next entry name (skips "." and ".."), or NULL at the end */
const char *sp_dir_next(struct sp_dir *d);
/* how many records the buffer holds past the entry sp_dir_next returned
 * last (an upper bound of the names it returns before its next read) */
size_t sp_dir_left(const struct sp_dir *d);
void sp_dir_close(struct sp_dir *d);
#endif
