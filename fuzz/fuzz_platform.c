// SPDX-License-Identifier: MIT
/* libFuzzer harness: the platform fingerprint's parsers (src/probe/platform.c)
 * over one NUL-terminated input: /proc/version, the NVRM version line, and
 * the KEY="value" files of /etc (first and last match). */
#include "fuzz.h"
#include "probe/platform.h"

static void one(char *s)
{
	char v[96];
	(void)sp_parse_proc_version(s, v, sizeof v);
	(void)sp_parse_nvidia_version(s, v, sizeof v);
	(void)sp_parse_release_key(s, "DGX_OTA_VERSION", true, v, sizeof v);
	(void)sp_parse_release_key(s, "PRETTY_NAME", false, v, sizeof v);
	(void)sp_parse_release_key(s, "X", false, v, 2);
}
FUZZ_ON_CSTR(one)
