/* SPDX-License-Identifier: MIT */
/* pstore: what the kernel saved of its last words across a reboot
 * (<sysfs>/fs/pstore, or a folder the caller names): dmesg-ramoops-N,
 * dmesg-efi-N, dmesg-erst-N, console-ramoops-N. */
#ifndef SP_PSTORE_H
#define SP_PSTORE_H
#include <stdbool.h>
#include <stddef.h>

struct sp_pstore {
	char dir[256];      /* the folder read */
	int records;        /* files in it */
	bool panic;         /* a record of a kernel panic */
	bool oops;          /* a record of an oops (no panic) */
	double time;        /* the deciding record's mtime (Unix seconds), 0 unknown */
	char file[64];      /* the deciding record's name */
	char line[256];     /* its deciding line ("Kernel panic - not syncing: ...") */
};

/* Read dir (NULL: <sysfs>/fs/pstore). 0, or -errno when the folder cannot
 * be listed (-ENOENT: no pstore mounted, which is no record). */
int sp_pstore_read(const char *dir, struct sp_pstore *p);

/* One record's text: true when it is a panic's, with the deciding line in
 * line (the panic line, else the oops line); *oops says an oops was seen. */
bool sp_pstore_parse(const char *buf, size_t len, char *line, size_t n, bool *oops);
#endif
