// SPDX-License-Identifier: MIT
/* libFuzzer harness: Prometheus escaping (sp_prom_escape). Whatever the
 * input, the escaped label value never holds a raw newline, an unescaped
 * quote or a control byte, and the reported length matches what was written. */
#include "fuzz.h"
#include "out/prom.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1);
	if (!in)
		return 0;
	memcpy(in, data, size);
	in[size] = 0;
	size_t cap = 4 * size + 1;
	char *out = malloc(cap);
	for (int mode = 0; mode < 2 && out; mode++) {
		size_t n = sp_prom_escape(out, cap, in, mode ? SP_PROM_ESC_HELP : SP_PROM_ESC_LABEL);
		if (n >= cap || strlen(out) != n)
			abort();
		for (size_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)out[i];
			if (c < 0x20 || c == 0x7f)
				abort();
			if (c == '\\') {
				char e = out[++i];
				if (e != '\\' && e != 'n' && !(e == '"' && !mode))
					abort();
			} else if (c == '"' && !mode) {
				abort();
			}
		}
		/* a cut buffer still reports the full length and stays terminated */
		char small[8];
		if (sp_prom_escape(small, sizeof small, in, SP_PROM_ESC_LABEL) != sp_prom_escape(NULL, 0, in, SP_PROM_ESC_LABEL) ||
		    strlen(small) >= sizeof small)
			abort();
	}
	free(out);
	free(in);
	return 0;
}
