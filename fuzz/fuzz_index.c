// SPDX-License-Identifier: MIT
/* libFuzzer: model.safetensors.index.json */
#include <stdint.h>

#include "fuzz.h"
#include "model/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_st_index ix;
	char err[256];
	if (sp_st_index_parse((const char *)data, size, &ix, "fuzz", err, sizeof err) == 0)
		sp_st_index_free(&ix);
	return 0;
}
