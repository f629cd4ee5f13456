/* SPDX-License-Identifier: MIT */
/* Small reads of <procfs>/sys: the files under /proc/sys other than the
 * page-cache flush (probe/flush.h), and the flush's path for messages. */
#ifndef SP_SYSCTL_H
#define SP_SYSCTL_H
#include <stddef.h>

/* "<procfs>/sys/vm/drop_caches" into out; 0, or -1 when it does not fit. */
int sp_drop_caches_path(char *out, size_t n);
/* The kernel's hostname, <procfs>/sys/kernel/hostname (a fixture's own name
 * under --procfs); 0, or -errno (the caller may fall back to gethostname). */
int sp_hostname_read(char *buf, size_t n);

/* The one way to open a file under <procfs>/sys for writing (drop_caches,
 * compact_memory, a vm setting put back): REL is relative to the procfs
 * root ("sys/vm/drop_caches"). Only on the real /proc (a procfs mount):
 * under --procfs (a fixture tree) -EXDEV, unless the test switch
 * SPARKOPS_TEST_PROCFS_WRITES=1 is set and the caller owns the file; every
 * component is opened without following a symbolic link (-ELOOP), and the
 * file must be a regular one (-EINVAL), opened without blocking on a FIFO.
 * A blocking write descriptor, or -errno. */
int sp_procsys_open_write(const char *rel);
/* strerror for those answers: -EXDEV and -ELOOP said in words */
const char *sp_procsys_strerror(int e);
#endif
