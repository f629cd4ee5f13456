// SPDX-License-Identifier: MIT
/* /proc/PID: statm (sp_statm_parse) and the program recognised from comm and
 * the NUL-separated cmdline (sp_proc_classify). Input: "comm\nstatm\ncmdline". */
#include "fuzz.h"
#include "probe/probe.h"

#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl1 = memchr(data, '\n', size);
	if (!nl1)
		return 0;
	const uint8_t *rest = nl1 + 1;
	size_t rest_len = size - (size_t)(rest - data);
	const uint8_t *nl2 = memchr(rest, '\n', rest_len);
	if (!nl2)
		return 0;
	char comm[20];
	size_t cl = (size_t)(nl1 - data);
	if (cl >= sizeof comm)
		cl = sizeof comm - 1;
	memcpy(comm, data, cl);
	comm[cl] = 0;
	char *statm = fuzz_cstr(rest, (size_t)(nl2 - rest));
	size_t argv_len = rest_len - (size_t)(nl2 + 1 - rest);
	char *argv = fuzz_copy(nl2 + 1, argv_len);
	if (statm && argv) {
		uint64_t pages;
		unsigned long long size_o, res_o;
		char tail;
		/* what it accepts, sscanf reads the same way: "size resident ..." */
		if (sp_statm_parse(statm, &pages) == 0 &&
		    (sscanf(statm, "%llu %llu%c", &size_o, &res_o, &tail) < 2 || res_o != pages))
			abort();
		struct sp_proc p;
		memset(&p, 0, sizeof p);
		if (sp_proc_classify(comm, argv, argv_len, &p)) {
			if (strnlen(p.name, sizeof p.name) == sizeof p.name)
				abort();
			if (p.has_cap && !(p.cap_frac > 0 && p.cap_frac <= 1.0))
				abort();
		}
	}
	free(statm);
	free(argv);
	return 0;
}
