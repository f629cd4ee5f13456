// SPDX-License-Identifier: MIT
/* PSI files (/proc/pressure/{memory,cpu,io}, cgroup v2 memory.pressure): sp_psi_parse. */
#include "fuzz.h"
#include "probe/probe.h"

#include <math.h>

static void one(char *buf, size_t size)
{
	struct sp_psi p;
	if (sp_psi_parse(buf, size, &p) == 0) {
		/* what parses is a percentage */
		if (!(p.some.avg10 >= 0 && p.some.avg10 <= 100.0 + 1e-9) || !isfinite(p.some.avg300))
			abort();
	}
}
FUZZ_ON_COPY(one)
