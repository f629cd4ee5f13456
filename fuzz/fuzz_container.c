// SPDX-License-Identifier: MIT
/* A process's cgroup file read for its container (probe/container.c), the
 * kubelet's pod-log folder names and a pod's hosts file. The first byte picks
 * the parser. */
#include "fuzz.h"
#include "probe/container.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned sel = data[0] % 3;
	data++;
	size--;
	char *buf = fuzz_copy(data, size);
	char *str = fuzz_cstr(data, size);
	if (!buf || !str) {
		free(buf);
		free(str);
		return 0;
	}
	switch (sel) {
	case 0: {
		struct sp_container c;
		if (sp_container_parse(buf, size, &c) == 0) {
			/* what it fills is bounded, and an id is 64 hex digits or none */
			if (strnlen(c.cg_path, sizeof c.cg_path) == sizeof c.cg_path ||
			    strnlen(c.unit, sizeof c.unit) == sizeof c.unit ||
			    (c.runtime != SP_CT_NONE && (strlen(c.id) != 64 || strlen(c.short_id) != 12)))
				abort();
			char l[64], w[112];
			sp_container_label(&c, l, sizeof l);
			sp_container_word(&c, w, sizeof w);
		}
		break;
	}
	case 1: {
		char ns[64], name[64];
		sp_pod_logdir_parse(str, "0a1b2c3d-0000-4000-8000-00000000a001", ns, sizeof ns, name, sizeof name);
		break;
	}
	default: {
		char name[64];
		if (sp_pod_hosts_parse(buf, size, name, sizeof name) == 0 && strnlen(name, sizeof name) == sizeof name)
			abort();
		break;
	}
	}
	free(buf);
	free(str);
	return 0;
}
