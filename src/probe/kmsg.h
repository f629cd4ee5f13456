/* SPDX-License-Identifier: MIT */
/* The NVIDIA driver's lines in the kernel log, counted by kind: /dev/kmsg
 * (records "PRI,SEQ,USEC,FLAGS;TEXT", one a read), or a file of the same
 * records or of plain dmesg lines (--kmsg FILE: the tests' fixture, and the
 * same code path). The reader keeps its place: each poll counts only what
 * was added since the last one, so the counts only grow. No heap. */
#ifndef SP_KMSG_H
#define SP_KMSG_H
#include "probe/sample.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sp_drv_kind {
	SP_DRV_NVRM_OOM,   /* NVRM: ... Out of memory [NV_ERR_NO_MEMORY], failed to allocate */
	SP_DRV_XID,        /* NVRM: Xid (PCI:...): N, ... */
	SP_DRV_NVRM_OTHER, /* any other NVRM: line */
	SP_DRV_N
};
const char *sp_drv_kind_name(enum sp_drv_kind k); /* "nvrm_oom", "xid", "nvrm_other" */

/* One line's kind, or -1 when it is not the driver's. The kmsg prefix
 * ("6,1234,5678,-;") and a dmesg time stamp ("[  12.345678] ") are skipped. */
int sp_kmsg_classify(const char *line, size_t len);

struct sp_kmsg {
	int fd;
	bool device;          /* a character device (/dev/kmsg): a read is one record */
	enum sp_why why;      /* SP_OK once opened; why not */
	uint64_t count[SP_DRV_N];
	uint64_t lines;       /* every record or line read */
	char part[1024];      /* a file's line cut by the end of a read */
	size_t partlen;
	bool overlong;
};

/* Open path (NULL: <devroot>/dev/kmsg, the live log) for counting. */
void sp_kmsg_open(struct sp_kmsg *k, const char *path);
/* Count what was added since the last poll. 0, or -errno (the reader stays usable). */
int sp_kmsg_poll(struct sp_kmsg *k);
void sp_kmsg_close(struct sp_kmsg *k);
#endif
