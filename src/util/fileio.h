/* SPDX-License-Identifier: MIT */
/* Small, bounded, EINTR-safe file helpers. No allocation. */
#ifndef SP_FILEIO_H
#define SP_FILEIO_H
#include <stdbool.h>
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

/* read()/write() that retry on EINTR and short counts; a read that answers
 * EAGAIN clears the fd's O_NONBLOCK and blocks from then on. */
ssize_t sp_read_full(int fd, void *buf, size_t n);
/* Clear a non-blocking fd's O_NONBLOCK: true when it was set and is now cleared. */
bool sp_fd_blocking(int fd);
ssize_t sp_write_full(int fd, const void *buf, size_t n);

/* Open a file under /proc or /sys (or a fixture standing in for them):
 * O_NONBLOCK|O_CLOEXEC|O_NOCTTY added to flags, so a FIFO or other
 * blocking file planted under a moved root cannot hang the caller; anything
 * but a regular file (procfs and sysfs files are regular) is refused with
 * -EINVAL, which callers report as malformed (unknown), never as 0.
 * Returns the fd or -errno: for writing with O_NONBLOCK cleared again; for
 * reading with it still set (regular files ignore it; read it with
 * sp_read_full, which clears it should a read answer EAGAIN). The sp_read_*
 * helpers above open through it. */
int sp_open_proc(const char *path, int flags);

/* The one way to write a file the user named (report --svg/--html,
 * run/watch --summary, metrics --textfile, the ladder's state), safe when
 * run as root beside other users:
 * - "-": standard output.
 * - a regular file, or no file yet: written atomically (a temp file beside
 *   it made with O_EXCL|O_NOFOLLOW under a fresh name, fsync, rename); an
 *   existing file keeps its permission bits (set-id bits dropped), a new one
 *   gets mode; on failure the old file is left untouched.
 * - a character device, FIFO or socket: written in place, never replaced
 *   (no O_CREAT/O_TRUNC; a FIFO without a reader fails with -ENXIO at once).
 *   A block device or a folder is refused.
 * - a symbolic link is followed only when each link of the chain and its
 *   folder belong to the caller or root; otherwise -EPERM.
 * Returns 0 or -errno (-ENOSPC from /dev/full); msg (if given) gets a
 * one-line message naming the path, and the owner for a refused link. */
int sp_write_output(const char *path, const void *data, size_t len, mode_t mode, char *msg, size_t msgcap);
/* The same, without the message (kept for older callers). */
int sp_write_atomic(const char *path, const void *data, size_t len, mode_t mode);

/* True when a and b name the same file: the same string, the same inode, or
 * (when one does not exist yet) the same last name in the same folder. */
bool sp_same_file(const char *a, const char *b);

/* Strict integer parsing of a token: the whole token must be a number. */
int sp_parse_i64(const char *s, int64_t *out);
int sp_parse_u64(const char *s, uint64_t *out);
/* "alice (uid 1000)", or "uid 1000" when the name is unknown: who owns a
 * file that was refused */
void sp_owner_name(uid_t uid, char *out, size_t n);
#endif
