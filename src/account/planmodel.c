// SPDX-License-Identifier: MIT
/* The model a plan is of (planmodel.h). */
#include "account/planmodel.h"
#include "account/fit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sp_model_shape *sp_plan_load_model(const char *model, const char *config, double params, char *err,
					  size_t errlen)
{
	struct sp_model_shape *m = calloc(1, sizeof *m);
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	int r = 0;
	if (params > 0)
		sp_model_from_params(params, m);
	else if (config)
		r = sp_model_load_config(config, m, err, errlen);
	else if (model)
		r = sp_model_load(model, m, err, errlen);
	else {
		snprintf(err, errlen, "which model? give MODEL, --config FILE or --params N");
		r = -1;
	}
	if (r < 0) {
		free(m);
		return NULL;
	}
	if (sp_shape_complete(m) < 0 || !(m->params > 0)) {
		snprintf(err, errlen, "'%s': the model's shape is incomplete (layers, hidden size or vocabulary missing)",
			 m->path[0] ? m->path : m->name);
		free(m);
		return NULL;
	}
	return m;
}

int sp_plan_smaller_model(const struct sp_model_shape *m, const struct sp_plan_opts *o, uint64_t budget, char *name,
			  size_t nname, uint64_t *need)
{
	struct sp_catalog_entry *e = NULL;
	size_t n = 0, k = 0;
	char err[512];
	if (sp_catalog_list(&e, &n, err, sizeof err) < 0 || n == 0) {
		free(e);
		return -1;
	}
	struct sp_model_shape *c = calloc(n, sizeof *c);
	if (!c) {
		free(e);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(e[i].arch, m->arch) != 0 || !(e[i].params < m->params))
			continue;
		if (sp_catalog_find(e[i].name, &c[k], err, sizeof err) == 0 && sp_shape_complete(&c[k]) == 0)
			k++;
	}
	int best = sp_fit_smaller(m, c, k, o, budget, need);
	if (best >= 0)
		snprintf(name, nname, "%s", c[best].name);
	free(c);
	free(e);
	return best >= 0 ? 0 : -1;
}
