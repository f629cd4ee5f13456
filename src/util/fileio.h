/* SPDX-License-Identifier: MIT */
/* Small, bounded, EINTR-safe file helpers, and the one door every written
 * file goes through (struct sp_out). No allocation but sp_write_output's
 * one struct sp_out. */
#ifndef SP_FILEIO_H
#define SP_FILEIO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
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

/* ---- the one door for every file sparkops creates, writes or truncates ----
 *
 * Every output (logs, receipts, summaries, charts, textfiles, status files)
 * goes through struct sp_out; scripts/check-writes.sh fails the build on an
 * open for writing anywhere else. Safe when run as root beside other users:
 * - the path is resolved component by component from a held directory
 *   descriptor (openat2 with RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS where
 *   the kernel has it, else an O_NOFOLLOW|O_DIRECTORY walk); a symbolic link,
 *   in the folders or at the end, is followed only when the link and the
 *   folder holding it belong to the caller or root; otherwise -EPERM;
 * - the folder's descriptor is kept for the life of the output: every
 *   create, rename and rewrite is relative to it, so a parent swapped for a
 *   link later cannot redirect the file;
 * - a block device or a folder is refused (-ENOTSUP, -EISDIR);
 * - a regular file with more than one name that the caller did not make
 *   (st_nlink > 1 and owned by someone else, or in a folder others may
 *   write) is refused (-EMLINK): a hard link planted by another user;
 * - a character device, FIFO, socket, terminal or "-" (standard output) is
 *   written in place (no O_CREAT/O_TRUNC, never replaced) and never blocks:
 *   non-blocking writes through a bounded buffer; a reader that stops
 *   reading costs records (counted in dropped), never a hang;
 * - a FIFO without a reader is -ENXIO at once.
 * Errors come with a one-line message naming the path (msg). */
#define SP_OUT_BUF 32768
enum sp_out_how {
	SP_OUT_TRUNC,  /* an existing regular file is emptied (in place: the same inode) */
	SP_OUT_APPEND, /* an existing regular file is appended to */
	SP_OUT_EXCL,   /* a new name only: -EEXIST when taken */
	SP_OUT_NOLINK = 8, /* or'ed in: a symbolic link as the last component is refused (-ELOOP), even one of our own */
};
struct sp_out {
	int dirfd;           /* the folder holding the file, held (-1: "-" or a descriptor of ours) */
	int fd;              /* the open file, -1 when not open */
	bool stream;         /* written in place without blocking: FIFO, char device, socket, "-" */
	bool borrowed;       /* fd is not ours to close (standard output, /dev/fd/N) */
	bool owned_nb;       /* fd is our own open file description, O_NONBLOCK */
	bool cut;            /* the last write ended inside its record */
	mode_t type;         /* S_IFMT of what is there (0: nothing yet) */
	struct stat st;      /* what was there when resolved (st_mode 0: nothing) */
	char name[256];      /* the last component, relative to dirfd */
	char path[1024];     /* as the caller named it, for messages */
	size_t blen;         /* stream: bytes in buf the reader has not taken */
	long dropped;        /* stream: records a stalled reader cost */
	char buf[SP_OUT_BUF];
};
/* Resolve path and hold its folder; nothing is written. 0 or -errno with msg. */
int sp_out_resolve(struct sp_out *o, const char *path, char *msg, size_t msgcap);
/* Resolve and open for records (a log, receipts). 0 or -errno with msg. */
int sp_out_open(struct sp_out *o, const char *path, int how, mode_t mode, char *msg, size_t msgcap);
/* Append one record: whole to a regular file; to a stream into the bounded
 * buffer and on as far as the reader takes without waiting. A record that
 * does not fit the buffer is dropped (counted): -EAGAIN. 0 or -errno. */
int sp_out_write(struct sp_out *o, const void *rec, size_t len);
/* Replace the whole content (resolved o): a regular file or an absent name
 * atomically (a temp file beside it, O_EXCL|O_NOFOLLOW, fsync, renameat in
 * the held folder; an existing file keeps its permission bits, set-id bits
 * dropped, and its owner when root replaces another user's file; a new one
 * gets mode); a stream in place, waiting at most stall_s for a reader that
 * stopped reading (-ETIMEDOUT), returning at once on a signal (-EINTR).
 * keep: the new file stays open as o->fd for sp_out_rewrite. 0 or -errno. */
int sp_out_replace(struct sp_out *o, const void *data, size_t len, mode_t mode, double stall_s, bool keep, char *msg,
		   size_t msgcap);
/* Rewrite a kept file in place (pwrite at 0, cut to length). 0 or -errno. */
int sp_out_rewrite(struct sp_out *o, const void *data, size_t len);
/* Remove the name (relative to the held folder). */
void sp_out_unlink(struct sp_out *o);
/* Flush what a stream still holds (waiting at most wait_s), close the file
 * and the folder; records still unwritten count as dropped. */
void sp_out_close(struct sp_out *o, double wait_s);
/* How many records were dropped; 0 for files. */
long sp_out_dropped(const struct sp_out *o);
/* For tests: resolve as on a kernel without openat2 (the component walk). */
void sp_out_walk_only(bool on);

/* One write of a whole file the user named (report --svg/--html, run/watch
 * --summary, metrics --textfile, the ladder's state): sp_out_resolve then
 * sp_out_replace, a stalled stream reader given SP_OUT_STALL_S. */
#define SP_OUT_STALL_S 5.0
int sp_write_output(const char *path, const void *data, size_t len, mode_t mode, char *msg, size_t msgcap);
/* The same, without the message (kept for older callers). */
int sp_write_atomic(const char *path, const void *data, size_t len, mode_t mode);

/* Two paths that must not be the same file: 0, or -1 with a message when a
 * and b are the same file (see sp_same_file), character devices excepted
 * (/dev/null twice is harmless). what_a/what_b name them ("--svg"). */
int sp_out_distinct(const char *what_a, const char *a, const char *what_b, const char *b, char *msg, size_t msgcap);

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
