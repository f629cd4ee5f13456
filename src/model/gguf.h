/* SPDX-License-Identifier: MIT */
/* GGUF (llama.cpp) files: the header, the metadata key/values and the tensor
 * infos, read through a bounded buffered reader; the tensor data never. */
#ifndef SP_GGUF_H
#define SP_GGUF_H
#include "model/model_int.h"

#define SP_GGML_NTYPES 40

struct sp_gguf_info {
	uint32_t version;
	uint64_t tensor_count, kv_count;
	char arch[64];
	char name[128];
	/* [arch].* numbers, -1 when absent */
	int64_t block_count, embedding_length, head_count, head_count_kv, feed_forward_length,
		context_length, expert_count, expert_used_count, expert_ff_length, key_length, vocab;
	int64_t file_type;       /* general.file_type (llama_ftype), -1 absent */
	uint32_t alignment;      /* general.alignment, default 32 */
	uint64_t data_offset;    /* where the tensor data starts */
	uint64_t bytes_by_type[SP_GGML_NTYPES];
	uint64_t elems_by_type[SP_GGML_NTYPES];
	uint64_t data_bytes;
	double params, embed_params, linear_params, expert_params;
	bool has_output;         /* an output.weight tensor (lm_head not tied) */
	bool quantized;          /* any block-quantized tensor */
	uint64_t bytes_read;
};

/* ggml type -> name, block size (elements) and block bytes; 0 when unknown */
int sp_ggml_type(uint32_t type, const char **name, uint32_t *blk, uint32_t *bytes);
/* llama_ftype (general.file_type) -> "Q4_K_M" ..., NULL when unknown */
const char *sp_gguf_ftype_name(int64_t ft);

/* Parse a whole GGUF file held in a buffer (tests, fuzzing). 0 or -1 with err. */
int sp_gguf_parse(const unsigned char *buf, size_t len, struct sp_gguf_info *g, const char *label, char *err,
		  size_t errlen);
/* Read a GGUF file's header, metadata and tensor infos (never the data). */
int sp_gguf_read(const char *path, struct sp_gguf_info *g, char *err, size_t errlen);
/* Fill a model shape from the info. 0 or -1 (missing keys) with err. */
int sp_gguf_shape(const struct sp_gguf_info *g, struct sp_model_shape *m, const char *label, char *err,
		  size_t errlen);
#endif
