// SPDX-License-Identifier: MIT
/* The built-in catalog of popular models (data/models.json, embedded by
 * catalog_data.S). Each entry holds the model's config.json keys under
 * "config", so the config.json parser reads them; SPARKOPS_CATALOG=FILE
 * replaces the embedded file. */
#include "model/model_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern const char sp_catalog_json[];
extern const char sp_catalog_json_end[];

static int entry_matches(json_t *e, const char *want)
{
	json_t *v = json_object_get(e, "name");
	if (json_is_string(v) && strcasecmp(json_string_value(v), want) == 0)
		return 1;
	v = json_object_get(e, "hf");
	if (json_is_string(v) && strcasecmp(json_string_value(v), want) == 0)
		return 1;
	json_t *al = json_object_get(e, "aliases");
	size_t i;
	json_t *a;
	json_array_foreach(al, i, a)
	{
		if (json_is_string(a) && strcasecmp(json_string_value(a), want) == 0)
			return 1;
	}
	return 0;
}

/* the shape of one entry; label names the catalog file and the entry */
static int entry_shape(json_t *e, const char *label, struct sp_model_shape *m, char *err, size_t errlen)
{
	json_t *name = json_object_get(e, "name");
	json_t *cfg = json_object_get(e, "config");
	if (!json_is_string(name))
		return sp_model_err(err, errlen, label, "a model without a name");
	char where[320];
	snprintf(where, sizeof where, "%s: %s", label, json_string_value(name));
	if (!json_is_object(cfg))
		return sp_model_err(err, errlen, where, "no config object");
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "%s", json_string_value(name));
	if (sp_hfconfig_from_json(cfg, m, where, err, errlen))
		return -1;
	json_t *hf = json_object_get(e, "hf");
	if (json_is_string(hf))
		snprintf(m->hf_id, sizeof m->hf_id, "%s", json_string_value(hf));
	m->source = SP_SRC_CATALOG;
	return 0;
}

int sp_catalog_parse(const char *buf, size_t len, const char *label, const char *want,
		     struct sp_model_shape *m, struct sp_catalog_entry **list, size_t *n,
		     char *err, size_t errlen)
{
	if (list)
		*list = NULL;
	if (n)
		*n = 0;
	json_t *root = sp_model_json(buf, len, label, err, errlen);
	if (!root)
		return -1;
	int rc = -1;
	json_t *models = json_object_get(root, "models");
	if (!json_is_array(models)) {
		sp_model_err(err, errlen, label, "no \"models\" array");
		goto out;
	}
	size_t i;
	json_t *e;
	if (want) {
		rc = 1;
		json_array_foreach(models, i, e)
		{
			if (json_is_object(e) && entry_matches(e, want)) {
				rc = entry_shape(e, label, m, err, errlen);
				break;
			}
		}
		goto out;
	}
	if (list) {
		size_t cnt = json_array_size(models);
		struct sp_catalog_entry *l = calloc(cnt ? cnt : 1, sizeof *l);
		if (!l) {
			sp_model_err(err, errlen, label, "out of memory");
			goto out;
		}
		struct sp_model_shape s;
		json_array_foreach(models, i, e)
		{
			if (!json_is_object(e) || entry_shape(e, label, &s, err, errlen)) {
				if (json_is_object(e) == 0)
					sp_model_err(err, errlen, label, "model %zu is not an object", i);
				free(l);
				goto out;
			}
			struct sp_catalog_entry *c = &l[i];
			snprintf(c->name, sizeof c->name, "%.63s", s.name);
			snprintf(c->hf_id, sizeof c->hf_id, "%s", s.hf_id);
			snprintf(c->arch, sizeof c->arch, "%s", s.arch);
			c->params = s.params;
			c->params_active = s.params_active;
			json_t *pp = json_object_get(e, "published_params");
			if (json_is_number(pp))
				c->published_params = json_number_value(pp);
			pp = json_object_get(e, "published_params_active");
			if (json_is_number(pp))
				c->published_params_active = json_number_value(pp);
			json_t *al = json_object_get(e, "aliases");
			size_t k;
			json_t *a;
			size_t used = 0;
			json_array_foreach(al, k, a)
			{
				if (!json_is_string(a))
					continue;
				int w = snprintf(c->aliases + used, sizeof c->aliases - used, "%s%s", used ? "," : "",
						 json_string_value(a));
				if (w < 0 || (size_t)w >= sizeof c->aliases - used)
					break;
				used += (size_t)w;
			}
		}
		*list = l;
		if (n)
			*n = cnt;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

/* the catalog text: SPARKOPS_CATALOG, else the embedded copy */
static int catalog_text(char **owned, const char **buf, size_t *len, const char **label, char *err, size_t errlen)
{
	*owned = NULL;
	const char *env = getenv("SPARKOPS_CATALOG");
	if (env && *env) {
		if (sp_model_slurp(env, SP_CATALOG_MAX_BYTES, owned, len, NULL, err, errlen))
			return -1;
		*buf = *owned;
		*label = env;
		return 0;
	}
	*buf = sp_catalog_json;
	/* the two symbols bound one object: catalog_data.S puts them around the file */
	// cppcheck-suppress comparePointers
	*len = (size_t)(sp_catalog_json_end - sp_catalog_json);
	*label = "built-in catalog";
	return 0;
}

int sp_catalog_find(const char *name, struct sp_model_shape *m, char *err, size_t errlen)
{
	char *owned;
	const char *buf, *label;
	size_t len;
	if (catalog_text(&owned, &buf, &len, &label, err, errlen))
		return -1;
	int rc = sp_catalog_parse(buf, len, label, name, m, NULL, NULL, err, errlen);
	free(owned);
	return rc;
}

int sp_catalog_list(struct sp_catalog_entry **out, size_t *n, char *err, size_t errlen)
{
	char *owned;
	const char *buf, *label;
	size_t len;
	if (catalog_text(&owned, &buf, &len, &label, err, errlen))
		return -1;
	int rc = sp_catalog_parse(buf, len, label, NULL, NULL, out, n, err, errlen);
	free(owned);
	return rc;
}
