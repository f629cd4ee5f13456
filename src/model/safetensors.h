/* SPDX-License-Identifier: MIT */
/* safetensors headers and model.safetensors.index.json: buffer parsers and
 * the thin readers that feed them (headers only, never the data). */
#ifndef SP_SAFETENSORS_H
#define SP_SAFETENSORS_H
#include "model/model_int.h"

/* What the headers of one or more shards add up to. */
struct sp_st_summary {
	unsigned qbits;          /* in: bits of a GPTQ/AWQ qweight value (config's bits), 0 = 4 */
	uint64_t tensor_count;
	uint64_t bytes_by_dtype[SP_DT_N];
	uint64_t elems_by_dtype[SP_DT_N];
	uint64_t data_bytes;     /* sum of tensor sizes */
	uint64_t aux_bytes;      /* quantization scales, zeros, code books */
	double params;           /* logical parameters (packed 4-bit unpacked, aux left out) */
	double packed_params;    /* of which stored packed 4-bit (U8/I32) or F4/F6 */
	double f8_params;        /* of which stored F8 */
	double int8_params;      /* of which stored I8 weights */
	double embed_params;     /* embed_tokens, lm_head, wte/wpe ... */
	double linear_params;    /* 2-D weights outside the embeddings and the vision tower */
	double vision_params;    /* vision tower and projector */
	double expert_params;    /* MoE experts (".experts." in the name) */
};

/* safetensors dtype name -> enum and bits per element; -1 when unknown */
int sp_st_dtype(const char *name, enum sp_dtype *dt, unsigned *bits);

/* Check one header (the JSON text, len bytes; data_len = the data buffer's
 * size) and add its tensors to s. s is untouched on error. label names the
 * file in err. 0 or -1. */
int sp_safetensors_parse_header(const char *buf, size_t len, uint64_t data_len, struct sp_st_summary *s,
				const char *label, char *err, size_t errlen);
/* Read one shard's header (8 + N bytes, pread) and parse it. */
int sp_safetensors_read(const char *path, struct sp_st_summary *s, uint64_t *bytes_read, char *err, size_t errlen);

/* model.safetensors.index.json: the distinct shard files of weight_map, in
 * sorted order (a malloc'ed array of malloc'ed names; sp_st_index_free).
 * Names must be plain relative paths (no "..", not absolute). total_size is
 * metadata.total_size or 0. *n_weights counts the weight_map entries. */
struct sp_st_index {
	char **files;
	size_t n_files;
	size_t n_weights;
	uint64_t total_size;
};
int sp_st_index_parse(const char *buf, size_t len, struct sp_st_index *ix, const char *label, char *err,
		      size_t errlen);
void sp_st_index_free(struct sp_st_index *ix);
#endif
