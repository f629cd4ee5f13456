// SPDX-License-Identifier: MIT
/* libFuzzer: config.json, and the same bytes as a catalog */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_model_shape m = { 0 };
	char err[256];
	(void)sp_hfconfig_parse((const char *)data, size, "fuzz", &m, err, sizeof err);
	struct sp_catalog_entry *l = NULL;
	size_t n;
	if (sp_catalog_parse((const char *)data, size, "fuzz", NULL, NULL, &l, &n, err, sizeof err) == 0)
		free(l);
	(void)sp_catalog_parse((const char *)data, size, "fuzz", "x", &m, NULL, NULL, err, sizeof err);
	return 0;
}
