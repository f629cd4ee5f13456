// SPDX-License-Identifier: MIT
/* cgroup files: /proc/self/cgroup (v1 and v2), memory.max /
 * memory.limit_in_bytes, and key-value files (memory.events, memory.stat,
 * memory.oom_control). The first byte picks the parser. */
#include "fuzz.h"
#include "probe/probe.h"

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
	char path[256];
	uint64_t v;
	int un;
	switch (sel) {
	case 0: {
		int ver = sp_cgroup_parse_self(buf, size, path, sizeof path);
		if (ver < 0 || ver > 2 || (ver && strnlen(path, sizeof path) == sizeof path))
			abort();
		break;
	}
	case 1:
		sp_cgroup_parse_limit(str, &v, &un);
		break;
	default: {
		static const char *const keys[] = { "oom_kill", "oom", "file", "cache", "max" };
		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
			sp_kv_lookup(buf, size, keys[i], &v);
		break;
	}
	}
	free(buf);
	free(str);
	return 0;
}
