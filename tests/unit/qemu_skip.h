/* SPDX-License-Identifier: MIT */
/* Cases that cannot run under qemu-user (scripts/check-arm64.sh sets
 * SPARKOPS_UNDER_QEMU=1): qemu-aarch64 7.2 hangs in pthread_create, and it
 * fakes /proc/self/stat (rss 0). The case is skipped with its reason
 * printed; cmocka counts it as [  SKIPPED ]. */
#ifndef SP_QEMU_SKIP_H
#define SP_QEMU_SKIP_H
#include <stdlib.h>
#define SKIP_UNDER_QEMU(why)                                              \
	do {                                                              \
		if (getenv("SPARKOPS_UNDER_QEMU")) {                      \
			print_message("[  SKIP    ] under qemu-user: %s\n", why); \
			skip();                                           \
		}                                                         \
	} while (0)
#define QEMU_THREADS "starts a thread (qemu-user 7.2 hangs in pthread_create)"
#define QEMU_MLOCK "mlockall under qemu-user locks the emulator's whole guest address space"
#define QEMU_SELFEXE "compares /proc/PID/exe with its own (under qemu-user, /proc/self/exe is the emulator)"
#define QEMU_SELFFD "writes /dev/stdout through /proc/self/fd in a forked child (qemu-user 7.2 hangs there)"
#define QEMU_PROCSTAT "reads its own /proc/PID/stat (qemu-user fakes it: rss 0)"
#endif
