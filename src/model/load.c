// SPDX-License-Identifier: MIT
/* sp_model_load: a folder, a config.json, a .gguf file or a catalog name. */
#include "model/model_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

int sp_model_load(const char *spec, struct sp_model_shape *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof *m);
	if (!spec || !*spec)
		return sp_model_err(err, errlen, NULL, "no model given");
	struct stat st;
	if (stat(spec, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return sp_model_load_folder(spec, m, err, errlen);
		if (ends_with(spec, ".gguf"))
			return sp_model_load_gguf(spec, m, err, errlen);
		if (ends_with(spec, ".json"))
			return sp_model_load_config(spec, m, err, errlen);
		if (ends_with(spec, ".safetensors"))
			return sp_model_err(err, errlen, spec, "one shard alone; give the model folder (config.json and the shards)");
		return sp_model_err(err, errlen, spec, "not a model folder, config.json or .gguf file");
	}
	int rc = sp_catalog_find(spec, m, err, errlen);
	if (rc <= 0)
		return rc;
	return sp_model_err(err, errlen, spec, "not a folder, file or catalog model (see sparkops plan --list-models)");
}
