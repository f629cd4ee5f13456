// SPDX-License-Identifier: MIT
/* sp_model_load: a folder, a config.json, a .gguf file or a catalog name. */
#include "model/model_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
	char near[200];
	if (sp_catalog_nearest(spec, near, sizeof near) > 0) {
		char why[300];
		snprintf(why, sizeof why, "not a folder, file or catalog model; nearest catalog names: %s "
			 "(see sparkops plan --list-models)", near);
		return sp_model_err(err, errlen, spec, "%s", why);
	}
	return sp_model_err(err, errlen, spec, "not a folder, file or catalog model (see sparkops plan --list-models)");
}

/* edit distance of two short names, case folded; '.' '_' ' ' count as '-' */
static int fold(int c)
{
	return c == '.' || c == '_' || c == ' ' ? '-' : tolower(c);
}

static int distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 1000;
	int d[64], prev;
	for (size_t j = 0; j <= lb; j++)
		d[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		prev = d[0];
		d[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int t = d[j];
			int sub = prev + (fold((unsigned char)a[i - 1]) != fold((unsigned char)b[j - 1]));
			int del = d[j] + 1, ins = d[j - 1] + 1;
			d[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			prev = t;
		}
	}
	return d[lb];
}

/* a variant suffix the catalog does not list separately (the same weights' shape) */
static void strip_variant(char *s)
{
	static const char *const sfx[] = { "-instruct", "-chat", "-it", "-hf", "-base" };
	size_t n = strlen(s);
	for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
		size_t k = strlen(sfx[i]);
		if (n > k && strcasecmp(s + n - k, sfx[i]) == 0) {
			s[n - k] = 0;
			return;
		}
	}
}

int sp_catalog_nearest(const char *want, char *out, size_t n)
{
	struct sp_catalog_entry *e = NULL;
	size_t cnt = 0;
	char err[64];
	out[0] = 0;
	if (sp_catalog_list(&e, &cnt, err, sizeof err) < 0)
		return 0;
	char w[64];
	snprintf(w, sizeof w, "%s", want);
	strip_variant(w);
	int best[3] = { 1000, 1000, 1000 };
	size_t who[3] = { 0, 0, 0 };
	for (size_t i = 0; i < cnt; i++) {
		int d = distance(w, e[i].name);
		char al[256];
		snprintf(al, sizeof al, "%s", e[i].aliases);
		for (char *save = NULL, *t = strtok_r(al, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			int da = distance(w, t);
			if (da < d)
				d = da;
		}
		for (int k = 0; k < 3; k++)
			if (d < best[k]) {
				for (int m = 2; m > k; m--) {
					best[m] = best[m - 1];
					who[m] = who[m - 1];
				}
				best[k] = d;
				who[k] = i;
				break;
			}
	}
	/* near: at most a third of the name's letters apart */
	int lim = (int)strlen(w) / 3 + 1, found = 0;
	for (int k = 0; k < 3; k++)
		if (best[k] <= lim) {
			size_t l = strlen(out);
			snprintf(out + l, n - l, "%s%s", found ? ", " : "", e[who[k]].name);
			found++;
		}
	free(e);
	return found;
}
