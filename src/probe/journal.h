/* SPDX-License-Identifier: MIT */
/* The systemd journal, read through libsystemd's sd-journal (loaded with
 * dlopen when first needed, like NVML: the binary does not depend on
 * libsystemd.so.0, and no other command pays for loading it). The local
 * machine's journal, or a journal file or folder named by the caller. */
#ifndef SP_JOURNAL_H
#define SP_JOURNAL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sp_journal;

/* One boot as the journal holds it: its id (32 hex digits) and the times of
 * its first and last entries (Unix seconds). */
struct sp_jboot {
	char id[33];
	double first, last;
};

/* One entry handed to the caller (valid during the callback only). */
struct sp_jentry {
	double t;             /* __REALTIME_TIMESTAMP, Unix seconds */
	bool kernel;          /* _TRANSPORT=kernel */
	char ident[64];       /* SYSLOG_IDENTIFIER, else _COMM ("" when neither) */
	const char *msg;      /* MESSAGE (not NUL-terminated: msglen bytes) */
	size_t msglen;
};

/* Open path (a journal file, or a folder of them), or the local machine's
 * journal when path is NULL. 0, or -1 with the reason in err ("cannot load
 * libsystemd.so.0: ...", "'PATH': No such file or directory"). */
int sp_journal_open(struct sp_journal **j, const char *path, char *err, size_t errlen);
void sp_journal_close(struct sp_journal *j);

/* The boots in the journal, oldest first (at most max). -1 with err. */
int sp_journal_boots(struct sp_journal *j, struct sp_jboot *out, int max, char *err, size_t errlen);

/* Every entry of one boot, oldest first, to fn (non-zero stops). 0, or -1
 * with err. */
int sp_journal_each(struct sp_journal *j, const char *boot_id, int (*fn)(void *ctx, const struct sp_jentry *e),
		    void *ctx, char *err, size_t errlen);

/* The running kernel's boot id (<procfs>/sys/kernel/random/boot_id) without
 * its dashes: 0, or -errno. */
int sp_boot_id_current(char *out, size_t n);
#endif
