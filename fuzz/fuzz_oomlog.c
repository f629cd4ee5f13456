// SPDX-License-Identifier: MIT
/* libFuzzer harness for the ladder's log classifier: the first byte picks a
 * chunk size, the rest is fed in chunks of that size (any split must be
 * safe). The answer must be one of the known kinds and phases, and the
 * ladder's decision from it must hold together. */
#include "fuzz.h"
#include "ladder/decide.h"
#include "ladder/oomlog.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sp_oomlog p;
	size_t chunk = 4096;
	if (size > 0) {
		chunk = (size_t)data[0] + 1;
		data++;
		size--;
	}
	sp_oomlog_init(&p);
	for (size_t o = 0; o < size; o += chunk)
		sp_oomlog_feed(&p, data + o, size - o < chunk ? size - o : chunk);
	sp_oomlog_finish(&p);
	if ((unsigned)p.kind >= SP_OOM_KIND_N || (unsigned)p.phase > SP_PHASE_SERVE)
		abort();
	if (strlen(p.evidence) >= sizeof p.evidence || p.len != 0)
		abort();
	for (const char *c = p.evidence; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			abort();
	/* the log's facts: known keys, NUL-terminated printable strings, a percentage */
	if ((unsigned)p.engine > SP_ENGINE_TGI || (unsigned)p.method > SP_LOG_METHOD_QLORA)
		abort();
	if (memchr(p.model, 0, sizeof p.model) == NULL || memchr(p.method_why, 0, sizeof p.method_why) == NULL ||
	    memchr(p.phase_why, 0, sizeof p.phase_why) == NULL)
		abort();
	for (const char *c = p.model; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			abort();
	if ((p.method != SP_LOG_METHOD_UNKNOWN) != (p.method_why[0] != 0))
		abort();
	if (!(p.trainable_pct >= 0 && p.trainable_pct <= 100.0001))
		abort();
	if (p.kind == SP_OOM_VLLM_KV && strstr(p.evidence, "Available KV cache memory: -") &&
	    (p.fig.kv_available.why != SP_OK || p.fig.kv_available.v != 0 || !p.kv_negative))
		abort();

	static struct sp_sample s;
	static struct sp_ladder_decision d;
	struct sp_ladder_in in = { &p, &s, { .tried = chunk & 0x1e, .proposed = (int)(chunk % 5), .log_sig = 1 }, 0, false };
	sp_ladder_decide(&in, &d);
	if (d.kind != p.kind || d.st.log_sig != p.sig || d.st.proposed != d.next || (d.skipped & d.st.tried))
		abort();
	/* a log with no memory failure offers no rung; any other gets the lowest not tried or skipped */
	if (d.not_memory != (d.kind == SP_OOM_UNKNOWN && !d.ray) ||
	    d.next != (d.not_memory ? 0 : sp_ladder_next(d.st.tried | d.skipped)))
		abort();
	if (d.counted_tried && (d.kind == SP_OOM_UNKNOWN || (chunk & 0x1e) >> d.counted_tried & 1))
		abort();
	return 0;
}
