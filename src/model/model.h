/* SPDX-License-Identifier: MIT */
/* What the planner needs to know about a model, from whichever source:
 * a Hugging Face folder (config.json + safetensors headers), a config.json
 * alone, a GGUF file, the built-in catalog, or bare --params.
 * Readers touch headers only, never weights. */
#ifndef SP_MODEL_H
#define SP_MODEL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Storage types of real tensors (safetensors dtypes and GGUF types folded). */
enum sp_dtype {
	SP_DT_F32, SP_DT_F16, SP_DT_BF16, SP_DT_F8_E4M3, SP_DT_F8_E5M2, SP_DT_F8_E8M0,
	SP_DT_I8, SP_DT_U8, SP_DT_F4, SP_DT_F6, SP_DT_I16, SP_DT_U16, SP_DT_I32, SP_DT_U32,
	SP_DT_I64, SP_DT_U64, SP_DT_F64, SP_DT_BOOL, SP_DT_C64,
	SP_DT_GGML_QUANT, /* any GGUF block-quantized type (Q4_K, Q8_0 ...) */
	SP_DT_N
};
const char *sp_dtype_name(enum sp_dtype d);
/* The weights' precision a checkpoint's name says: 4 for 4 bits or fewer
 * ("-AWQ", "-GPTQ-Int4", "-bnb-4bit", GGUF's "Q4_K_M" ...), 8 for 8 bits
 * ("-FP8-dynamic", "-int8" ...), 0 when it says none (or name is NULL). */
int sp_name_weight_bits(const char *name);

enum sp_model_source { SP_SRC_NONE, SP_SRC_FOLDER, SP_SRC_CONFIG, SP_SRC_GGUF, SP_SRC_CATALOG, SP_SRC_PARAMS };

struct sp_model_shape {
	char name[128];
	char arch[64];          /* model_type / general.architecture: "llama", "gemma3", "mixtral" */
	enum sp_model_source source;
	char path[512];         /* the folder or file read, "" for catalog/params */

	/* architecture (0 when unknown) */
	int n_layers;
	int hidden;
	int intermediate;       /* dense MLP width */
	int n_heads;
	int n_kv_heads;         /* GQA; = n_heads without GQA */
	int head_dim;           /* explicit or hidden / n_heads */
	int vocab;
	int max_seq;            /* context length */
	bool tied_embeddings;
	int n_experts;          /* MoE: 0 for dense */
	int experts_per_tok;
	int moe_intermediate;   /* MoE expert MLP width */
	char torch_dtype[16];   /* "bfloat16" ... as the config says */

	/* parameters */
	double params;          /* total */
	double params_active;   /* per token (MoE); = params for dense */
	double embed_params;    /* input embeddings + lm_head (lm_head counted once if tied) */
	double linear_params;   /* in the transformer blocks' linear layers (LoRA/quant targets) */
	bool params_from_tensors; /* counted from real tensor shapes, not estimated */

	/* real tensors, when files were read */
	bool have_tensors;
	uint64_t tensor_count;
	uint64_t bytes_by_dtype[SP_DT_N];
	uint64_t elems_by_dtype[SP_DT_N];
	uint64_t weight_bytes;  /* sum of tensor data sizes (what a load maps) */
	bool prequantized;      /* weights already quantized (bnb 4-bit, GPTQ/AWQ, FP8, MXFP4, GGUF Q*) */
	char quant_method[32];  /* from quantization_config.quant_method or GGUF file type */

	uint64_t bytes_read;    /* bytes read from the files (headers only) */
	int files_read;

	/* added by the readers (plan-model) */
	int n_moe_layers;       /* layers with experts (MoE); 0 for dense */
	int shared_intermediate; /* shared-expert MLP width (Qwen MoE), 0 if none */
	bool one_norm;          /* one norm a layer, read by attention and MLP in parallel (Phi-1/2, Falcon-7B) */
	double vision_params;   /* vision tower + projector of a multimodal model (in params) */
	double expert_params;   /* all experts' MLP params (in params; active keeps top-k of them) */
	int quant_bits;         /* bits per weight of a prequantized model (4, 8), 0 unknown/none */
	char hf_id[128];        /* catalog: the Hugging Face repository id */
	char assumed[192];      /* what the reader assumed for an architecture it does not know by name ("" none) */
};

/* The shape of a config.json held in a buffer. label names the file in
 * messages ("'config.json': missing hidden_size"). 0 or -1 with err. */
int sp_hfconfig_parse(const char *buf, size_t len, const char *label, struct sp_model_shape *m,
		      char *err, size_t errlen);

/* The built-in catalog (data/models.json, embedded at build time;
 * SPARKOPS_CATALOG=FILE overrides). Lookup is case-insensitive on the name or
 * an alias. Returns 0 found, 1 not in the catalog, -1 with err when the
 * catalog itself is broken. */
int sp_catalog_find(const char *name, struct sp_model_shape *m, char *err, size_t errlen);
struct sp_catalog_entry {
	char name[64];
	char aliases[256];      /* comma-separated */
	char hf_id[128];
	char arch[64];
	double params, params_active;                 /* computed from the config */
	double published_params, published_params_active; /* the model card's, 0 when not given */
};
/* Every catalog model, for --list-models: a malloc'ed array (free() it). 0 or -1 with err. */
int sp_catalog_list(struct sp_catalog_entry **out, size_t *n, char *err, size_t errlen);
/* The catalog names nearest to WANT (a variant suffix such as -instruct
 * dropped; edit distance over names and aliases): "a, b, c" into out.
 * Returns how many (0: none near). */
int sp_catalog_nearest(const char *want, char *out, size_t n);
/* The catalog's raw text (embedded or SPARKOPS_CATALOG) for fuzzing and tests. */
int sp_catalog_parse(const char *buf, size_t len, const char *label, const char *want,
		     struct sp_model_shape *m, struct sp_catalog_entry **list, size_t *n,
		     char *err, size_t errlen);

/* Load a model from SPEC: a folder, a config.json, a .gguf file or a catalog
 * name. Returns 0, or -1 with a one-line message naming the file and the
 * problem in err. */
int sp_model_load(const char *spec, struct sp_model_shape *m, char *err, size_t errlen);
/* A config.json alone (--config FILE). */
int sp_model_load_config(const char *path, struct sp_model_shape *m, char *err, size_t errlen);
/* The readers sp_model_load dispatches to. */
int sp_model_load_folder(const char *dir, struct sp_model_shape *m, char *err, size_t errlen);
int sp_model_load_gguf(const char *path, struct sp_model_shape *m, char *err, size_t errlen);
/* Bare parameter count (--params N): the rest of the shape is estimated. */
void sp_model_from_params(double params, struct sp_model_shape *m);
#endif
