// SPDX-License-Identifier: MIT
/* safetensors headers: the 8-byte little-endian length, then a JSON object
 * {name: {"dtype", "shape", "data_offsets": [begin, end)}, "__metadata__": {...}}.
 * Only the header is read; the data buffer is never touched. The checks are
 * the reference implementation's: length capped at 100,000,000 and within the
 * file, duplicate keys rejected, known dtypes, shapes whose byte size matches
 * the offsets, and offsets that tile the data buffer exactly. */
#include "model/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
	const char *name;
	enum sp_dtype dt;
	unsigned bits;
} dtypes[] = {
	{ "BOOL", SP_DT_BOOL, 8 },       { "U8", SP_DT_U8, 8 },           { "I8", SP_DT_I8, 8 },
	{ "F8_E5M2", SP_DT_F8_E5M2, 8 }, { "F8_E4M3", SP_DT_F8_E4M3, 8 }, { "F8_E8M0", SP_DT_F8_E8M0, 8 },
	{ "I16", SP_DT_I16, 16 },        { "U16", SP_DT_U16, 16 },        { "F16", SP_DT_F16, 16 },
	{ "BF16", SP_DT_BF16, 16 },      { "I32", SP_DT_I32, 32 },        { "U32", SP_DT_U32, 32 },
	{ "F32", SP_DT_F32, 32 },        { "F64", SP_DT_F64, 64 },        { "I64", SP_DT_I64, 64 },
	{ "U64", SP_DT_U64, 64 },        { "C64", SP_DT_C64, 64 },        { "F4", SP_DT_F4, 4 },
	{ "F6_E2M3", SP_DT_F6, 6 },      { "F6_E3M2", SP_DT_F6, 6 },
};

int sp_st_dtype(const char *name, enum sp_dtype *dt, unsigned *bits)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (strcmp(dtypes[i].name, name) == 0) {
			*dt = dtypes[i].dt;
			*bits = dtypes[i].bits;
			return 0;
		}
	return -1;
}

static int ends(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);
	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

/* Quantization side tensors: scales, zeros, code books. They take bytes but
 * are not parameters of the model. */
static int is_aux(const char *name, size_t n)
{
	static const char *const suffixes[] = {
		".absmax", ".quant_map", ".nested_absmax", ".nested_quant_map",
		".quant_state.bitsandbytes__nf4", ".quant_state.bitsandbytes__fp4",
		".qzeros", ".scales", ".g_idx", "_scales", ".weight_scale", ".weight_scale_2",
		".weight_scale_inv", ".input_scale", ".SCB", ".weight_format", ".k_scale", ".v_scale",
		".weight_zero_point", ".weight_global_scale", ".input_global_scale", ".weight_shape",
		".weight_g_idx", ".output_scale",
	};
	for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
		if (ends(name, n, suffixes[i]))
			return 1;
	return 0;
}

static int has(const char *name, const char *part)
{
	return strstr(name, part) != NULL;
}

static int is_embed(const char *name)
{
	return has(name, "embed_tokens") || has(name, "lm_head") || has(name, "wte.") || has(name, "wpe.") ||
	       has(name, "word_embeddings") || has(name, "tok_embeddings") || has(name, "embed_out") ||
	       has(name, "token_embd") || has(name, "embedding.weight");
}

static int is_vision(const char *name)
{
	return has(name, "vision") || has(name, "visual") || has(name, "multi_modal_projector") ||
	       has(name, "mm_projector");
}

struct span {
	uint64_t begin, end;
};

/* by begin, then end: a zero-size tensor sorts before the tensor that starts
 * where it stands (the reference sorts by the (begin, end) pair too) */
static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static int get_u64(json_t *v, uint64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

/* The logical parameters of one tensor of elems elements: packed 4-bit
 * weights hold more than one value per element; counted by class (vision,
 * embedding, linear, expert). Buffers (is_aux) count as bytes only. */
static void count_params(const char *key, enum sp_dtype dt, unsigned bits, uint64_t elems, size_t ndims,
			 unsigned qbits, uint64_t bytes, struct sp_st_summary *t)
{
	size_t kl = strlen(key);
	if (is_aux(key, kl)) {
		t->aux_bytes += bytes;
		return;
	}
	double p = (double)elems;
	int packed = 0;
	if (ends(key, kl, ".qweight") || ends(key, kl, ".weight_packed")) {
		unsigned qb = qbits ? qbits : 4;
		p *= (double)bits / qb; /* I32 holding 32/qb values (GPTQ, AWQ, compressed-tensors) */
		packed = 1;
	} else if (dt == SP_DT_U8 && (ends(key, kl, ".weight") || ends(key, kl, "_blocks"))) {
		p *= 2; /* two 4-bit values per byte: bitsandbytes nf4/fp4, MXFP4, NVFP4 */
		packed = 1;
	} else if (dt == SP_DT_F4 || dt == SP_DT_F6) {
		packed = 1;
	} else if (dt == SP_DT_F8_E4M3 || dt == SP_DT_F8_E5M2) {
		t->f8_params += p;
	} else if (dt == SP_DT_I8 && ends(key, kl, ".weight")) {
		t->int8_params += p;
	}
	if (packed)
		t->packed_params += p;
	t->params += p;
	if (is_vision(key))
		t->vision_params += p;
	else if (is_embed(key))
		t->embed_params += p;
	else if (ndims >= 2) /* bnb's packed [n/2, 1] and MXFP4's blocks are >= 2-D too */
		t->linear_params += p;
	if (has(key, ".experts."))
		t->expert_params += p;
}

/* One tensor's entry: its dtype, shape and data_offsets, checked against
 * each other and the data buffer; counted into t, its span kept. */
static int read_tensor(const char *key, json_t *v, uint64_t data_len, unsigned qbits, struct sp_st_summary *t,
		       struct span *span, const char *label, char *err, size_t errlen)
{
	if (!json_is_object(v))
		return sp_model_err(err, errlen, label, "tensor '%.80s' is not an object", key);
	json_t *jd = json_object_get(v, "dtype"), *js = json_object_get(v, "shape"),
	       *jo = json_object_get(v, "data_offsets");
	if (!json_is_string(jd) || !json_is_array(js) || !json_is_array(jo) || json_array_size(jo) != 2)
		return sp_model_err(err, errlen, label, "tensor '%.80s' lacks dtype, shape or data_offsets", key);
	enum sp_dtype dt;
	unsigned bits;
	if (sp_st_dtype(json_string_value(jd), &dt, &bits))
		return sp_model_err(err, errlen, label, "tensor '%.80s' has an unknown dtype '%.20s'", key,
				    json_string_value(jd));
	uint64_t elems = 1;
	size_t i;
	json_t *d;
	size_t ndims = json_array_size(js);
	json_array_foreach(js, i, d)
	{
		uint64_t dim;
		if (get_u64(d, &dim))
			return sp_model_err(err, errlen, label, "tensor '%.80s' has a negative or non-integer dimension",
					    key);
		if (__builtin_mul_overflow(elems, dim, &elems))
			return sp_model_err(err, errlen, label, "tensor '%.80s': shape overflows", key);
	}
	uint64_t b, e, nbits;
	if (get_u64(json_array_get(jo, 0), &b) || get_u64(json_array_get(jo, 1), &e) || e < b)
		return sp_model_err(err, errlen, label, "tensor '%.80s' has bad data_offsets", key);
	if (__builtin_mul_overflow(elems, (uint64_t)bits, &nbits))
		return sp_model_err(err, errlen, label, "tensor '%.80s': shape overflows", key);
	if (nbits % 8 != 0 || nbits / 8 != e - b)
		return sp_model_err(err, errlen, label, "tensor '%.80s': %llu bytes of data for a shape of %llu bytes",
				    key, (unsigned long long)(e - b), (unsigned long long)(nbits / 8));
	if (e > data_len)
		return sp_model_err(err, errlen, label, "tensor '%.80s' ends at %llu, past the %llu-byte data buffer",
				    key, (unsigned long long)e, (unsigned long long)data_len);
	*span = (struct span){ b, e };
	t->tensor_count++;
	t->bytes_by_dtype[dt] += e - b;
	t->elems_by_dtype[dt] += elems;
	t->data_bytes += e - b;
	count_params(key, dt, bits, elems, ndims, qbits, e - b, t);
	return 0;
}

/* the offsets must tile [0, data_len) with no gap and no overlap */
static int check_tiling(struct span *spans, size_t ns, uint64_t data_len, const char *label, char *err,
			size_t errlen)
{
	qsort(spans, ns, sizeof *spans, cmp_span);
	uint64_t at = 0;
	for (size_t i = 0; i < ns; i++) {
		if (spans[i].begin != at)
			return sp_model_err(err, errlen, label, "data_offsets leave %s at byte %llu",
					    spans[i].begin > at ? "a gap" : "an overlap", (unsigned long long)at);
		at = spans[i].end;
	}
	if (at != data_len)
		return sp_model_err(err, errlen, label, "tensors cover %llu of the %llu data bytes",
				    (unsigned long long)at, (unsigned long long)data_len);
	return 0;
}

static void merge(struct sp_st_summary *s, const struct sp_st_summary *t)
{
	s->tensor_count += t->tensor_count;
	for (int i = 0; i < SP_DT_N; i++) {
		s->bytes_by_dtype[i] += t->bytes_by_dtype[i];
		s->elems_by_dtype[i] += t->elems_by_dtype[i];
	}
	s->data_bytes += t->data_bytes;
	s->aux_bytes += t->aux_bytes;
	s->params += t->params;
	s->packed_params += t->packed_params;
	s->f8_params += t->f8_params;
	s->int8_params += t->int8_params;
	s->embed_params += t->embed_params;
	s->linear_params += t->linear_params;
	s->vision_params += t->vision_params;
	s->expert_params += t->expert_params;
}

int sp_safetensors_parse_header(const char *buf, size_t len, uint64_t data_len, struct sp_st_summary *s,
				const char *label, char *err, size_t errlen)
{
	if (len == 0 || buf[0] != '{')
		return sp_model_err(err, errlen, label, "header is not a JSON object");
	json_t *root = sp_model_json(buf, len, label, err, errlen);
	if (!root)
		return -1;
	int rc = -1;
	size_t n = json_object_size(root);
	struct span *spans = malloc((n ? n : 1) * sizeof *spans);
	size_t ns = 0;
	if (!spans) {
		sp_model_err(err, errlen, label, "out of memory");
		goto out;
	}
	/* a local copy, merged into s only when the whole header is good */
	struct sp_st_summary t = { 0 };
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v)
	{
		if (strcmp(key, "__metadata__") == 0) {
			if (!json_is_object(v)) {
				sp_model_err(err, errlen, label, "__metadata__ is not an object");
				goto out;
			}
			continue;
		}
		if (read_tensor(key, v, data_len, s->qbits, &t, &spans[ns], label, err, errlen))
			goto out;
		ns++;
	}
	if (check_tiling(spans, ns, data_len, label, err, errlen))
		goto out;
	merge(s, &t);
	rc = 0;
out:
	free(spans);
	json_decref(root);
	return rc;
}

/* pread until n bytes, the end of the file, or an error (EINTR retried):
 * the bytes read, or -1 with errno */
static ssize_t pread_full(int fd, void *buf, size_t n, off_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int sp_safetensors_read(const char *path, struct sp_st_summary *s, uint64_t *bytes_read, char *err, size_t errlen)
{
	uint64_t size;
	int fd = sp_model_open(path, &size, err, errlen);
	if (fd < 0)
		return -1;
	int rc = -1;
	char *hdr = NULL;
	unsigned char lenb[8];
	ssize_t r = size >= 8 ? pread_full(fd, lenb, 8, 0) : 0;
	if (r < 0) {
		sp_model_err(err, errlen, path, "%s", strerror(errno));
		goto out;
	}
	if (r != 8) {
		sp_model_err(err, errlen, path, "truncated: %llu bytes, too short for the 8-byte header length",
			     (unsigned long long)size);
		goto out;
	}
	*bytes_read += 8;
	uint64_t n = 0;
	for (int i = 7; i >= 0; i--)
		n = n << 8 | lenb[i];
	if (n > SP_ST_HEADER_MAX) {
		sp_model_err(err, errlen, path, "header length %llu exceeds the 100000000-byte limit",
			     (unsigned long long)n);
		goto out;
	}
	if (n > size - 8) {
		sp_model_err(err, errlen, path, "header length %llu exceeds the file size (%llu bytes)",
			     (unsigned long long)n, (unsigned long long)size);
		goto out;
	}
	hdr = malloc(n ? n : 1);
	if (!hdr) {
		sp_model_err(err, errlen, path, "out of memory for a %llu-byte header", (unsigned long long)n);
		goto out;
	}
	r = pread_full(fd, hdr, (size_t)n, 8);
	if (r < 0) {
		sp_model_err(err, errlen, path, "%s", strerror(errno));
		goto out;
	}
	size_t got = (size_t)r;
	*bytes_read += got;
	if (got != n) {
		sp_model_err(err, errlen, path, "truncated header: read %zu of %llu bytes", got, (unsigned long long)n);
		goto out;
	}
	rc = sp_safetensors_parse_header(hdr, n, size - 8 - n, s, path, err, errlen);
out:
	free(hdr);
	close(fd);
	return rc;
}
