/* SPDX-License-Identifier: MIT */
/* The model a plan is of (planmodel.c), for 'plan' and 'ladder --plan':
 * the one the user named, loaded from whichever source and checked
 * complete, and rung 4's smaller model from the built-in catalog. */
#ifndef SP_PLANMODEL_H
#define SP_PLANMODEL_H
#include "account/footprint.h"
#include "model/model.h"

#include <stddef.h>
#include <stdint.h>

/* The shape of one of: params > 0 (a bare count, a Llama-like shape),
 * config (a config.json alone), model (a folder, a config.json, a .gguf, a
 * catalog name), complete (sp_shape_complete). Allocated (free it), or
 * NULL with the one-line reason in err. */
struct sp_model_shape *sp_plan_load_model(const char *model, const char *config, double params, char *err,
					  size_t errlen);
/* Rung 4's smaller model: of the catalog's models of m's arch smaller than
 * m, the largest whose plan with o fits budget (sp_fit_smaller: same family
 * first). 0 with its name and need, or -1 when none fits. */
int sp_plan_smaller_model(const struct sp_model_shape *m, const struct sp_plan_opts *o, uint64_t budget, char *name,
			  size_t n, uint64_t *need);
#endif
