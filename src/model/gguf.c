// SPDX-License-Identifier: MIT
/* GGUF reader (header, metadata and tensor infos only). */
#include "model/model_int.h"

#include <string.h>

int sp_model_load_gguf(const char *path, struct sp_model_shape *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof *m);
	return sp_model_err(err, errlen, path, "gguf files are not supported yet");
}
