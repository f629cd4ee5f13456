// SPDX-License-Identifier: MIT
/* Names of the storage types (safetensors spelling). */
#include "model/model.h"

#include <ctype.h>
#include <string.h>

static const char *const names[SP_DT_N] = {
	[SP_DT_F32] = "F32",         [SP_DT_F16] = "F16",         [SP_DT_BF16] = "BF16",
	[SP_DT_F8_E4M3] = "F8_E4M3", [SP_DT_F8_E5M2] = "F8_E5M2", [SP_DT_F8_E8M0] = "F8_E8M0",
	[SP_DT_I8] = "I8",           [SP_DT_U8] = "U8",           [SP_DT_F4] = "F4",
	[SP_DT_F6] = "F6",           [SP_DT_I16] = "I16",         [SP_DT_U16] = "U16",
	[SP_DT_I32] = "I32",         [SP_DT_U32] = "U32",         [SP_DT_I64] = "I64",
	[SP_DT_U64] = "U64",         [SP_DT_F64] = "F64",         [SP_DT_BOOL] = "BOOL",
	[SP_DT_C64] = "C64",         [SP_DT_GGML_QUANT] = "GGML_QUANT",
};

const char *sp_dtype_name(enum sp_dtype d)
{
	if ((unsigned)d < SP_DT_N && names[d])
		return names[d];
	return "?";
}

/* the marks a published checkpoint's name carries for its weights'
 * precision: "-AWQ", "-GPTQ-Int4", "-bnb-4bit", "-FP8-dynamic", GGUF's
 * "Q4_K_M" ... */
static const char *const bits4[] = { "awq",  "gptq", "nvfp4", "mxfp4", "fp4", "int4", "w4a16", "4bit",
				     "4-bit", "q4_",  "q3_",   "q2_",   "iq4", "iq3",  "iq2",   "bnb-4" };
static const char *const bits8[] = { "fp8", "int8", "w8a8", "8bit", "8-bit" };

static bool has_mark(const char *low, const char *const *marks, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (strstr(low, marks[k]))
			return true;
	return false;
}

int sp_name_weight_bits(const char *name)
{
	if (!name)
		return 0;
	char low[128];
	size_t i = 0;
	for (; name[i] && i + 1 < sizeof low; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[i] = 0;
	if (has_mark(low, bits4, sizeof bits4 / sizeof bits4[0]))
		return 4;
	if (has_mark(low, bits8, sizeof bits8 / sizeof bits8[0]))
		return 8;
	return 0;
}
