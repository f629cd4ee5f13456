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
#endif
