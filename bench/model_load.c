// SPDX-License-Identifier: MIT
/* Bench driver: load a model spec N times the way `sparkops plan` does and
 * print what one load read. Used by bench_plan.sh when the plan command is
 * not in the build. */
#include <stdio.h>
#include <stdlib.h>

#include "model/model.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: model_load SPEC [N]\n");
		return 2;
	}
	int n = argc > 2 ? atoi(argv[2]) : 1;
	struct sp_model_shape m;
	char err[512];
	for (int i = 0; i < n; i++)
		if (sp_model_load(argv[1], &m, err, sizeof err)) {
			fprintf(stderr, "model_load: %s\n", err);
			return 2;
		}
	printf("{\"params\": %.0f, \"weight_bytes\": %llu, \"tensor_count\": %llu, \"files_read\": %d, "
	       "\"bytes_read\": %llu}\n",
	       m.params, (unsigned long long)m.weight_bytes, (unsigned long long)m.tensor_count, m.files_read,
	       (unsigned long long)m.bytes_read);
	return 0;
}
