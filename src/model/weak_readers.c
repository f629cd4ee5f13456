// SPDX-License-Identifier: MIT
/* Stand-ins for the model readers (branch plan-model) so that `sparkops plan`
 * builds and runs with --params before they land. Weak: the real definitions
 * win at link time. Delete this file once the readers are on main. */
#include "model/model.h"

#include <stdio.h>

__attribute__((weak)) int sp_model_load(const char *spec, struct sp_model_shape *m, char *err, size_t errlen)
{
	(void)m;
	snprintf(err, errlen, "'%s': model files cannot be read by this build (no model readers); use --params", spec);
	return -1;
}

__attribute__((weak)) int sp_model_load_config(const char *path, struct sp_model_shape *m, char *err, size_t errlen)
{
	(void)m;
	snprintf(err, errlen, "'%s': config.json cannot be read by this build (no model readers); use --params", path);
	return -1;
}
