// SPDX-License-Identifier: MIT
/* libFuzzer: a whole GGUF file in a buffer, then its shape */
#include <stdint.h>

#include "fuzz.h"
#include "model/gguf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_gguf_info g;
	char err[256];
	if (sp_gguf_parse(data, size, &g, "fuzz", err, sizeof err) == 0) {
		struct sp_model_shape m = { 0 };
		(void)sp_gguf_shape(&g, &m, "fuzz", err, sizeof err);
	}
	return 0;
}
