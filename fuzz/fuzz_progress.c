// SPDX-License-Identifier: MIT
/* libFuzzer harness for the progress parser (and /proc/PID/stat parsing):
 * the first byte picks a chunk size, the rest is fed in chunks of that size
 * (any split must be safe), then flushed. A rate, when there is one, is a
 * finite non-negative number with a unit that fits its buffer. */
#include "fuzz.h"
#include "watch/child.h"
#include "watch/progress.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sp_progress p;
	size_t chunk = 4096;
	if (size > 0) {
		chunk = (size_t)data[0] + 1;
		data++;
		size--;
	}
	char *buf = fuzz_copy(data, size); /* exact size: ASan sees a read past it */
	if (!buf)
		return 0;
	sp_progress_init(&p, NULL);
	for (size_t o = 0; o < size; o += chunk)
		sp_progress_feed(&p, buf + o, size - o < chunk ? size - o : chunk);
	sp_progress_flush(&p);
	if (p.have_rate && (!isfinite(p.rate) || p.rate < 0))
		abort();
	if (strlen(p.unit) >= sizeof p.unit || p.len > sizeof p.line)
		abort();
	pid_t pp;
	uint64_t rss;
	if (sp_stat_parse(buf, size, &pp, &rss) == 0 && pp < 0)
		abort();
	free(buf);
	return 0;
}
