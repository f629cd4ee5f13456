/* SPDX-License-Identifier: MIT */
/* Small, bounded, EINTR-safe file helpers. No allocation. */
#ifndef SP_FILEIO_H
#define SP_FILEIO_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Read up to cap-1 bytes of path into buf, NUL-terminate, store the length.
 * Returns 0 or -errno (-ENOENT, -EACCES ...). A file longer than the buffer
 * is cut, and *truncated (if given) says so. */
int sp_read_file(const char *path, char *buf, size_t cap, size_t *len);
int sp_read_file_t(const char *path, char *buf, size_t cap, size_t *len, int *truncated);

/* A short file relative to a directory fd (openat), in one read(): for the
 * small one-record files of procfs (statm, comm), where a read returns the
 * whole record. 0 or -errno; NUL-terminated, *len its length. */
int sp_read_at(int dfd, const char *rel, char *buf, size_t cap, size_t *len);

/* Read a file holding one integer (sysfs style). 0, -errno, or -EINVAL for garbage. */
int sp_read_i64(const char *path, int64_t *out);
/* Read one short line, stripped of its newline. */
int sp_read_line(const char *path, char *buf, size_t cap);

/* read()/write() that retry on EINTR and short counts. */
ssize_t sp_read_full(int fd, void *buf, size_t n);
ssize_t sp_write_full(int fd, const void *buf, size_t n);

/* Write a whole file atomically: tmp file in the same folder, fsync, rename.
 * Returns 0 or -errno; on failure the old file is left untouched. */
int sp_write_atomic(const char *path, const void *data, size_t len, mode_t mode);

/* Strict integer parsing of a token: the whole token must be a number. */
int sp_parse_i64(const char *s, int64_t *out);
int sp_parse_u64(const char *s, uint64_t *out);
#endif
