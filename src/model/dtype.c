// SPDX-License-Identifier: MIT
/* Names of the storage types (safetensors spelling). */
#include "model/model.h"

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
