// SPDX-License-Identifier: MIT
/* model.safetensors.index.json and the model folder: config.json plus the
 * header of every shard, each read once. */
#include "model/safetensors.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "util/dirscan.h"
#include "util/text.h"

#define SP_MAX_SHARDS 100000

void sp_st_index_free(struct sp_st_index *ix)
{
	for (size_t i = 0; i < ix->n_files; i++)
		free(ix->files[i]);
	free(ix->files);
	ix->files = NULL;
	ix->n_files = 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* sort and drop repeats */
static void sort_unique(char **v, size_t *n)
{
	if (*n == 0)
		return;
	qsort(v, *n, sizeof *v, cmp_str);
	size_t k = 1;
	for (size_t i = 1; i < *n; i++) {
		if (strcmp(v[i], v[k - 1]) == 0)
			free(v[i]);
		else
			v[k++] = v[i];
	}
	*n = k;
}

static int bad_shard_name(const char *f)
{
	if (!*f || f[0] == '/' || strlen(f) > 1024)
		return 1;
	/* no ".." component: a weight map must not point outside the folder */
	for (const char *p = f; (p = strstr(p, "..")) != NULL; p += 2)
		if ((p == f || p[-1] == '/') && (p[2] == 0 || p[2] == '/'))
			return 1;
	return 0;
}

int sp_st_index_parse(const char *buf, size_t len, struct sp_st_index *ix, const char *label, char *err,
		      size_t errlen)
{
	memset(ix, 0, sizeof *ix);
	json_t *root = sp_model_json(buf, len, label, err, errlen);
	if (!root)
		return -1;
	int rc = -1;
	json_t *wm = json_object_get(root, "weight_map");
	if (!json_is_object(root) || !json_is_object(wm)) {
		sp_model_err(err, errlen, label, "no weight_map object");
		goto out;
	}
	json_t *meta = json_object_get(root, "metadata");
	json_t *ts = json_is_object(meta) ? json_object_get(meta, "total_size") : NULL;
	if (json_is_integer(ts) && json_integer_value(ts) >= 0)
		ix->total_size = (uint64_t)json_integer_value(ts);
	else if (json_is_real(ts) && json_real_value(ts) >= 0 && json_real_value(ts) < 1.8e19)
		ix->total_size = (uint64_t)json_real_value(ts);
	size_t n = json_object_size(wm);
	ix->files = calloc(n ? n : 1, sizeof *ix->files);
	if (!ix->files) {
		sp_model_err(err, errlen, label, "out of memory");
		goto out;
	}
	const char *key;
	json_t *v;
	json_object_foreach(wm, key, v)
	{
		if (!json_is_string(v)) {
			sp_model_err(err, errlen, label, "weight_map entry '%.80s' is not a file name", key);
			goto out;
		}
		if (bad_shard_name(json_string_value(v))) {
			sp_model_err(err, errlen, label, "weight_map entry '%.80s' points outside the folder: '%.80s'",
				     key, json_string_value(v));
			goto out;
		}
		char *f = strdup(json_string_value(v));
		if (!f) {
			sp_model_err(err, errlen, label, "out of memory");
			goto out;
		}
		ix->files[ix->n_files++] = f;
		ix->n_weights++;
	}
	sort_unique(ix->files, &ix->n_files);
	if (ix->n_files == 0) {
		sp_model_err(err, errlen, label, "weight_map is empty");
		goto out;
	}
	if (ix->n_files > SP_MAX_SHARDS) {
		sp_model_err(err, errlen, label, "%zu shards is more than the %d allowed", ix->n_files, SP_MAX_SHARDS);
		goto out;
	}
	rc = 0;
out:
	if (rc)
		sp_st_index_free(ix);
	json_decref(root);
	return rc;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* the folder's *.safetensors when there is no index; Mistral repositories
 * carry consolidated.safetensors beside the same weights in HF shards, so
 * consolidated* counts only when it is alone */
static int list_shards(const char *dir, struct sp_st_index *ix, char *err, size_t errlen)
{
	memset(ix, 0, sizeof *ix);
	struct sp_dir d;
	int e = sp_dir_open(&d, dir);
	if (e)
		return sp_model_err(err, errlen, dir, "%s", strerror(-e));
	size_t cap = 0, n_cons = 0;
	const char *name;
	int rc = 0;
	while ((name = sp_dir_next(&d)) != NULL) {
		if (!ends_with(name, ".safetensors") || name[0] == '.')
			continue;
		if (ix->n_files == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **nv = nc <= SP_MAX_SHARDS ? realloc(ix->files, nc * sizeof *nv) : NULL;
			if (!nv) {
				rc = sp_model_err(err, errlen, dir, "too many .safetensors files");
				break;
			}
			ix->files = nv;
			cap = nc;
		}
		char *f = strdup(name);
		if (!f) {
			rc = sp_model_err(err, errlen, dir, "out of memory");
			break;
		}
		ix->files[ix->n_files++] = f;
		if (strncmp(name, "consolidated", 12) == 0)
			n_cons++;
	}
	sp_dir_close(&d);
	if (rc) {
		sp_st_index_free(ix);
		return -1;
	}
	sort_unique(ix->files, &ix->n_files);
	if (n_cons > 0 && n_cons < ix->n_files) {
		size_t k = 0;
		for (size_t i = 0; i < ix->n_files; i++) {
			if (strncmp(ix->files[i], "consolidated", 12) == 0)
				free(ix->files[i]);
			else
				ix->files[k++] = ix->files[i];
		}
		ix->n_files = k;
	}
	return 0;
}

/* dir/name into path; -1 when it does not fit */
static int join(char *path, size_t n, const char *dir, const char *name, char *err, size_t errlen)
{
	int w = snprintf(path, n, "%s/%s", dir, name);
	if (w < 0 || (size_t)w >= n)
		return sp_model_err(err, errlen, dir, "path too long");
	return 0;
}

/* A folder without config.json may hold one GGUF model (a llama.cpp
 * download): one file, or the parts of one split model. */
static int gguf_folder(const char *dir, struct sp_model_shape *m, char *err, size_t errlen)
{
	struct sp_dir d;
	int e = sp_dir_open(&d, dir);
	if (e)
		return sp_model_err(err, errlen, dir, "%s", strerror(-e));
	char first[256] = "", stems[16][256];
	int models = 0;
	const char *name;
	while ((name = sp_dir_next(&d)) != NULL) {
		size_t n = strlen(name);
		if (n < 6 || n >= sizeof first || strcmp(name + n - 5, ".gguf") != 0 || name[0] == '.')
			continue;
		/* the parts of a split model count once: compare up to "-NNNNN-of-NNNNN.gguf" */
		size_t sl = n - 5;
		const size_t tail = sizeof "-00001-of-00003" - 1;
		if (sl > tail && strncmp(name + sl - tail + 6, "-of-", 4) == 0)
			sl -= tail;
		int seen = 0;
		for (int i = 0; i < models && i < 16; i++)
			if (strlen(stems[i]) == sl && strncmp(stems[i], name, sl) == 0)
				seen = 1;
		if (!seen) {
			if (models < 16)
				snprintf(stems[models], sizeof stems[0], "%.*s", (int)sl, name);
			models++;
		}
		if (!first[0] || strcmp(name, first) < 0)
			snprintf(first, sizeof first, "%s", name);
	}
	sp_dir_close(&d);
	if (models == 0)
		return sp_model_err(err, errlen, dir, "no config.json in the folder");
	if (models > 1)
		return sp_model_err(err, errlen, dir, "no config.json and %d .gguf models in the folder; name one", models);
	char path[4096];
	if (join(path, sizeof path, dir, first, err, errlen))
		return -1;
	return sp_model_load_gguf(path, m, err, errlen);
}

static void guess_quant(struct sp_model_shape *m, const struct sp_st_summary *s)
{
	bool q = s->packed_params > 0 || s->f8_params > 0 || s->int8_params > 0;
	if (!q)
		return;
	m->prequantized = true;
	if (!m->quant_method[0]) {
		const char *g = "unknown";
		if (s->packed_params > 0 && s->elems_by_dtype[SP_DT_I32] > 0)
			g = "gptq"; /* or AWQ: I32-packed qweight */
		else if (s->packed_params > 0 && s->bytes_by_dtype[SP_DT_F4] > 0)
			g = "fp4";
		else if (s->packed_params > 0)
			g = "4bit-u8"; /* bitsandbytes nf4/fp4, MXFP4, NVFP4 */
		else if (s->f8_params > 0)
			g = "fp8";
		else if (s->int8_params > 0)
			g = "int8";
		snprintf(m->quant_method, sizeof m->quant_method, "%s", g);
		sp_text_clean(m->quant_method);
	}
	if (!m->quant_bits)
		m->quant_bits = s->packed_params > 0 ? 4 : 8;
}

/* A shard the weight map names must resolve inside the folder: a ".." is
 * refused by the parser, and a symbolic link on the way (a subfolder
 * "s -> /etc") is caught here, before a byte of it is read. */
static int outside(const char *dir, const char *path, char *err, size_t errlen)
{
	char rd[PATH_MAX], rp[PATH_MAX];
	if (!realpath(dir, rd))
		return sp_model_err(err, errlen, dir, "%s", strerror(errno));
	if (!realpath(path, rp))
		return 0; /* missing: the reader names it */
	size_t n = strlen(rd);
	if (strncmp(rp, rd, n) == 0 && (rp[n] == '/' || (n == 1 && rd[0] == '/')))
		return 0;
	return sp_model_err(err, errlen, path, "resolves outside the model folder (a symbolic link): not read");
}

int sp_model_load_folder(const char *dir, struct sp_model_shape *m, char *err, size_t errlen)
{
	char path[4096];
	memset(m, 0, sizeof *m);
	if (join(path, sizeof path, dir, "config.json", err, errlen))
		return -1;
	struct stat st;
	if (stat(path, &st) != 0)
		return gguf_folder(dir, m, err, errlen);
	if (sp_model_load_config(path, m, err, errlen))
		return -1;
	m->source = SP_SRC_FOLDER;
	snprintf(m->path, sizeof m->path, "%s", dir);
	snprintf(m->name, sizeof m->name, "%s", sp_model_basename(dir));

	struct sp_st_index ix;
	if (join(path, sizeof path, dir, "model.safetensors.index.json", err, errlen))
		return -1;
	if (stat(path, &st) == 0) {
		char *buf;
		size_t len;
		if (sp_model_slurp(path, SP_CONFIG_MAX_BYTES, &buf, &len, &m->bytes_read, err, errlen))
			return -1;
		m->files_read++;
		int rc = sp_st_index_parse(buf, len, &ix, path, err, errlen);
		free(buf);
		if (rc)
			return -1;
	} else if (list_shards(dir, &ix, err, errlen)) {
		return -1;
	}
	if (ix.n_files == 0) {
		sp_st_index_free(&ix);
		return 0; /* config.json alone: the estimate stands */
	}
	struct sp_st_summary s = { .qbits = (unsigned)m->quant_bits };
	for (size_t i = 0; i < ix.n_files; i++) {
		if (join(path, sizeof path, dir, ix.files[i], err, errlen) || outside(dir, path, err, errlen) ||
		    sp_safetensors_read(path, &s, &m->bytes_read, err, errlen)) {
			sp_st_index_free(&ix);
			return -1;
		}
		m->files_read++;
	}
	sp_st_index_free(&ix);

	m->have_tensors = true;
	m->tensor_count = s.tensor_count;
	memcpy(m->bytes_by_dtype, s.bytes_by_dtype, sizeof m->bytes_by_dtype);
	memcpy(m->elems_by_dtype, s.elems_by_dtype, sizeof m->elems_by_dtype);
	m->weight_bytes = s.data_bytes;
	if (s.params > 0) {
		m->params = s.params;
		m->params_from_tensors = true;
		m->embed_params = s.embed_params;
		m->linear_params = s.linear_params;
		m->vision_params = s.vision_params;
		if (s.expert_params > 0)
			m->expert_params = s.expert_params;
		m->params_active = m->params;
		if (m->n_experts > 0 && m->expert_params > 0)
			m->params_active -= m->expert_params * (1.0 - (double)m->experts_per_tok / m->n_experts);
	}
	guess_quant(m, &s);
	return 0;
}
