// SPDX-License-Identifier: MIT
/* libFuzzer harness for the ladder's state file parser: whatever it accepts
 * must format back and parse to the same state; the decision made from it
 * proposes the lowest rung not tried and keeps every rung tried. */
#include "fuzz.h"
#include "ladder/decide.h"
#include "ladder/ladder.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_ladder_state a, b;
	if (sp_ladder_state_parse((const char *)data, size, "job", &a) < 0)
		return 0;
	if (a.tried & ~0x1eu || a.proposed < 0 || a.proposed > SP_RUNGS)
		abort();
	char buf[1024];
	size_t n = sp_ladder_state_format(&a, "job", buf, sizeof buf);
	if (!n || sp_ladder_state_parse(buf, n, "job", &b) < 0)
		abort();
	if (a.tried != b.tried || a.proposed != b.proposed || a.log_sig != b.log_sig || a.updated != b.updated)
		abort();

	static struct sp_sample s;
	static struct sp_ladder_decision d;
	struct sp_ladder_in in = { NULL, &s, a, 0, size & 1 };
	sp_ladder_decide(&in, &d);
	/* the next rung is the lowest neither tried nor skipped (a skip is never a tried rung) */
	if (d.next != sp_ladder_next(d.st.tried | d.skipped) || d.st.proposed != d.next || (d.st.tried & a.tried) != a.tried ||
	    (d.skipped & d.st.tried) || d.skipped & ~0x1eu)
		abort();
	if (d.st.log_sig != a.log_sig || (size & 1 && !(d.st.tried & 2u)) || d.counted_tried)
		abort();
	if (strlen(d.advice) >= sizeof d.advice || (d.next && d.st.tried >> d.next & 1))
		abort();
	return 0;
}
