// SPDX-License-Identifier: MIT
/* libFuzzer: a whole safetensors file in a buffer (8-byte length, header,
 * data), checked the way sp_safetensors_read does before parsing. */
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "model/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 8)
		return 0;
	uint64_t n = 0;
	for (int i = 7; i >= 0; i--)
		n = n << 8 | data[i];
	if (n > SP_ST_HEADER_MAX || n > size - 8)
		return 0;
	struct sp_st_summary s = { 0 };
	char err[256];
	(void)sp_safetensors_parse_header((const char *)data + 8, (size_t)n, size - 8 - n, &s, "fuzz", err, sizeof err);
	return 0;
}
