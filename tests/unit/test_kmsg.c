// SPDX-License-Identifier: MIT
/* The kernel log's NVIDIA lines (src/probe/kmsg.c): kinds, prefixes, and a
 * file read across the reader's buffer boundary and appended to. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "probe/kmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

static int kind(const char *s)
{
	return sp_kmsg_classify(s, strlen(s));
}

static void classes(void **state)
{
	(void)state;
	assert_int_equal(kind("3,1202,150123456,-;NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY]"),
			 SP_DRV_NVRM_OOM);
	assert_int_equal(kind("NVRM: _iovaspaceCreateMappingDataFromMemDesc: failed to allocate 0x176028 bytes"),
			 SP_DRV_NVRM_OOM);
	assert_int_equal(kind("[  151.000001] NVRM: Xid (PCI:000f:01:00): 79, GPU has fallen off the bus."), SP_DRV_XID);
	assert_int_equal(kind("4,9,1,c;NVRM: GPU at PCI:000f:01:00: GPU-4f3e"), SP_DRV_NVRM_OTHER);
	assert_int_equal(kind("6,1300,1,-;systemd[1]: vllm.service: NVRM: Xid 79 seen"), -1);
	assert_int_equal(kind("usb 1-1: new device"), -1);
	assert_int_equal(kind(""), -1);
	assert_int_equal(kind("NVRM"), -1);
	assert_string_equal(sp_drv_kind_name(SP_DRV_XID), "xid");
}

static void file_reads(void **state)
{
	(void)state;
	char path[] = "/tmp/sp-kmsg-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	/* an NVRM line that straddles the reader's 8 KiB buffer */
	size_t pad = 8192 - 20;
	char *filler = malloc(pad + 1);
	assert_non_null(filler);
	memset(filler, 'x', pad - 1);
	filler[pad - 1] = '\n';
	filler[pad] = 0;
	fputs(filler, f);
	fputs("3,1,1,-;NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.\n", f);
	fputs(" SUBSYSTEM=pci\n", f);
	fflush(f);
	struct sp_kmsg k;
	sp_kmsg_open(&k, path);
	assert_int_equal(k.why, SP_OK);
	assert_int_equal(sp_kmsg_poll(&k), 0);
	assert_int_equal(k.count[SP_DRV_XID], 1);
	assert_int_equal(k.lines, 2);
	/* a line still being written is counted once it ends */
	fputs("[  9.1] NVRM: Out of memory", f);
	fflush(f);
	assert_int_equal(sp_kmsg_poll(&k), 0);
	assert_int_equal(k.count[SP_DRV_NVRM_OOM], 0);
	fputs(" [NV_ERR_NO_MEMORY]\n", f);
	fflush(f);
	assert_int_equal(sp_kmsg_poll(&k), 0);
	assert_int_equal(k.count[SP_DRV_NVRM_OOM], 1);
	assert_int_equal(sp_kmsg_poll(&k), 0);
	assert_int_equal(k.count[SP_DRV_NVRM_OOM], 1);
	sp_kmsg_close(&k);
	fclose(f);
	unlink(path);
	free(filler);
	sp_kmsg_open(&k, "/nonexistent/kmsg");
	assert_int_equal(k.why, SP_MISSING);
	assert_int_equal(sp_kmsg_poll(&k), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(classes), cmocka_unit_test(file_reads) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
