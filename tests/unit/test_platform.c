// SPDX-License-Identifier: MIT
/* The platform's fingerprint (src/probe/platform.c): the parsers over
 * buffers and the known-bad match, without a machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "probe/platform.h"

#include <stdio.h>
#include <string.h>

static void parsers(void **state)
{
	(void)state;
	char v[96];
	assert_int_equal(sp_parse_proc_version("Linux version 6.17.0-1032-nvidia (buildd@x) #32-Ubuntu SMP\n", v, sizeof v), 0);
	assert_string_equal(v, "6.17.0-1032-nvidia");
	assert_int_equal(sp_parse_proc_version("FreeBSD 14.0\n", v, sizeof v), -1);
	assert_int_equal(sp_parse_nvidia_version("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  "
						 "Release Build  (dvs-builder@U22)  Wed Sep 24 2025\nGCC version: 13.3.0\n",
						 v, sizeof v),
			 0);
	assert_string_equal(v, "580.95.05");
	assert_int_equal(sp_parse_nvidia_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22\n",
						 v, sizeof v),
			 0);
	assert_string_equal(v, "550.54.14");
	/* the GCC line's version is not the driver's */
	assert_int_equal(sp_parse_nvidia_version("NVRM version: garbled\nGCC version:  gcc version 13.3.0\n", v, sizeof v), -1);
	const char *rel = "DGX_SWBUILD_VERSION=\"7.2.3\"\nDGX_OTA_VERSION=\"7.4.0\"\nDGX_OTA_VERSION='7.5.0'\nEMPTY=\n";
	assert_int_equal(sp_parse_release_key(rel, "DGX_OTA_VERSION", true, v, sizeof v), 0);
	assert_string_equal(v, "7.5.0");
	assert_int_equal(sp_parse_release_key(rel, "DGX_OTA_VERSION", false, v, sizeof v), 0);
	assert_string_equal(v, "7.4.0");
	assert_int_equal(sp_parse_release_key(rel, "DGX_SWBUILD_VERSION", false, v, sizeof v), 0);
	assert_string_equal(v, "7.2.3");
	/* a key is matched whole, at a line's start; an empty value is none */
	assert_int_equal(sp_parse_release_key(rel, "DGX_OTA", false, v, sizeof v), -1);
	assert_int_equal(sp_parse_release_key(rel, "EMPTY", false, v, sizeof v), -1);
	assert_int_equal(sp_parse_release_key(rel, "SWBUILD_VERSION", false, v, sizeof v), -1);
}

static void set(struct sp_platform *p, enum sp_pfield f, const char *v)
{
	snprintf(p->f[f].v, sizeof p->f[f].v, "%s", v);
	p->f[f].why = SP_OK;
}

static void known_bad(void **state)
{
	(void)state;
	struct sp_platform p;
	memset(&p, 0, sizeof p);
	for (int i = 0; i < SP_PF_N; i++)
		p.f[i].why = SP_MISSING;
	sp_platform_match(&p);
	assert_int_equal(p.nwarn, 0);
	set(&p, SP_PF_KERNEL, "6.17.0-1008-nvidia");
	sp_platform_match(&p);
	assert_int_equal(p.nwarn, 1);
	assert_int_equal(p.warn[0]->field, SP_PF_KERNEL);
	assert_non_null(strstr(p.warn[0]->source, "https://"));
	set(&p, SP_PF_KERNEL, "6.17.0-1008");
	sp_platform_match(&p);
	assert_int_equal(p.nwarn, 1);
	set(&p, SP_PF_KERNEL, "6.17.0-10081-nvidia");
	sp_platform_match(&p);
	assert_int_equal(p.nwarn, 0);
	set(&p, SP_PF_KERNEL, "7.0.0-1019-nvidia-64k");
	set(&p, SP_PF_DRIVER, "590.44.01");
	sp_platform_match(&p);
	assert_int_equal(p.nwarn, 2);
	/* a version that is unknown matches nothing, whatever its text */
	p.f[SP_PF_DRIVER].why = SP_TIMEOUT;
	sp_platform_match(&p);
	assert_int_equal(p.nwarn, 1);
	set(&p, SP_PF_DRIVER, "5901.1");
	sp_platform_match(&p);
	assert_int_equal(p.nwarn, 1);
	assert_string_equal(sp_pfield_name(SP_PF_DGX_OS), "dgx_os");
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(parsers), cmocka_unit_test(known_bad) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
