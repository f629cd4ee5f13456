/* SPDX-License-Identifier: MIT */
/* The memory footprint of one training or inference job: every term in bytes,
 * the steady-state peak, the load-time peak, split into what the GPU
 * allocates (device side) and what the training process keeps in host memory
 * (host side). Pure arithmetic over a struct sp_model_shape: no I/O.
 * Formulas and their sources: docs/plan.md. */
#ifndef SP_FOOTPRINT_H
#define SP_FOOTPRINT_H
#include "model/model.h"
#include "util/words.h"

#include <stdbool.h>
#include <stdint.h>

enum sp_method { SP_METHOD_FULL, SP_METHOD_LORA, SP_METHOD_QLORA, SP_METHOD_INFER, SP_METHOD_N };
enum sp_cdtype { SP_CDT_BF16, SP_CDT_FP16, SP_CDT_FP32, SP_CDT_N };
enum sp_quant { SP_QUANT_NONE, SP_QUANT_INT8, SP_QUANT_NF4, SP_QUANT_FP4, SP_QUANT_N };
enum sp_optim { SP_OPTIM_ADAMW, SP_OPTIM_ADAMW8BIT, SP_OPTIM_PAGED_ADAMW8BIT, SP_OPTIM_SGD, SP_OPTIM_ADAFACTOR, SP_OPTIM_N };
/* what the training stack keeps: HF Trainer + PEFT, Unsloth, torchtune,
 * Megatron-core (+ TransformerEngine: fp32 main grads and main params, fused
 * Adam, the vocab-parallel cross-entropy) */
enum sp_framework { SP_FW_HF, SP_FW_UNSLOTH, SP_FW_TORCHTUNE, SP_FW_MEGATRON, SP_FW_N };
enum sp_attn { SP_ATTN_SDPA, SP_ATTN_EAGER, SP_ATTN_MATH };
/* how the job spreads over --nodes N Sparks: none (one node), data parallel
 * (a full replica per node), fully sharded data parallel (parameters,
 * gradients and optimizer state sharded), tensor or pipeline parallel
 * (serving only) */
enum sp_strategy { SP_STRAT_NONE, SP_STRAT_DDP, SP_STRAT_FSDP, SP_STRAT_TP, SP_STRAT_PP, SP_STRAT_N };
/* the loss: the framework's own (default), HF's fp32 upcast, bf16, chunked */
enum sp_loss { SP_LOSS_DEFAULT, SP_LOSS_FP32, SP_LOSS_BF16, SP_LOSS_CHUNKED, SP_LOSS_N };
/* generate's KV cache (transformers): a static cache allocated once; the
 * dynamic cache (DynamicCache, the default since 4.36) concatenating one
 * layer at a time; the legacy tuple cache (<= 4.35 and models' own remote
 * code), whose new tuple is built while the old one is still held */
enum sp_kv_cache { SP_KV_DYNAMIC, SP_KV_STATIC, SP_KV_LEGACY, SP_KV_N };
/* the counter a figure is read from: torch's max_memory_allocated, its
 * max_memory_reserved (allocated + the caching allocator's slack), or the
 * process as NVML / nvidia-smi / the pool sees it (+ the CUDA context) */
enum sp_measure { SP_MEASURE_PROCESS, SP_MEASURE_RESERVED, SP_MEASURE_ALLOCATED, SP_MEASURE_N };
/* training batches: every one padded (or packed) to --seq, the same shapes
 * every step; or each padded to its own longest sample, shapes that vary
 * from step to step up to --seq (the caching allocator keeps the segments
 * of earlier shapes: reserved memory at the longest shape holds more) */
enum sp_padding { SP_PAD_MAX, SP_PAD_LONGEST, SP_PAD_N };

/* LoRA target modules (bit mask) */
enum {
	SP_LT_Q = 1 << 0, SP_LT_K = 1 << 1, SP_LT_V = 1 << 2, SP_LT_O = 1 << 3,
	SP_LT_GATE = 1 << 4, SP_LT_UP = 1 << 5, SP_LT_DOWN = 1 << 6,
	SP_LT_ALL = 0x7f,
	/* q, k and v as one fused linear (c_attn, qkv_proj, Wqkv,
	 * query_key_value): one adapter of r x (h + q + 2kv) */
	SP_LT_QKV_FUSED = 1 << 7,
};

/* The words of each enum (util/words.h): what plan's options take (aliases
 * such as bfloat16, adamw_torch; any case) and the value's name back, for
 * the output and the JSON. One table each: the option table parses with it
 * (SP_OPT_ENUM) and a bad word's error lists it. */
extern const struct sp_word sp_method_words[], sp_cdtype_words[], sp_quant_words[], sp_optim_words[],
	sp_framework_words[], sp_attn_words[], sp_strategy_words[], sp_loss_words[], sp_kv_cache_words[],
	sp_measure_words[], sp_padding_words[];
const char *sp_method_name(enum sp_method v);
const char *sp_cdtype_name(enum sp_cdtype v);
const char *sp_quant_name(enum sp_quant v);
const char *sp_optim_name(enum sp_optim v);
const char *sp_framework_name(enum sp_framework v);
const char *sp_attn_name(enum sp_attn v);
const char *sp_strategy_name(enum sp_strategy v);
const char *sp_loss_name(enum sp_loss v);
const char *sp_kv_cache_name(enum sp_kv_cache v);
const char *sp_measure_name(enum sp_measure v);
/* name -> value; -1 when unknown */
int sp_method_parse(const char *s);
int sp_cdtype_parse(const char *s);
int sp_quant_parse(const char *s);
int sp_optim_parse(const char *s);
int sp_framework_parse(const char *s);
int sp_strategy_parse(const char *s);
int sp_loss_parse(const char *s);
int sp_kv_cache_parse(const char *s);
int sp_measure_parse(const char *s);
const char *sp_padding_name(enum sp_padding v);
int sp_padding_parse(const char *s);
/* "q,k,v,o,gate,up,down" (also q_proj ..., "all", "all-linear", "attn", "mlp");
 * returns the mask, or -1 naming nothing valid / an unknown module. */
int sp_lora_targets_parse(const char *s);
/* "q,v" for a mask, into buf */
const char *sp_lora_targets_str(unsigned mask, char *buf, size_t n);

struct sp_plan_opts {
	enum sp_method method;
	enum sp_cdtype dtype;     /* compute / unquantized weights */
	enum sp_quant quant;      /* base-weight quantization (qlora implies nf4) */
	enum sp_optim optim;
	enum sp_framework framework;
	enum sp_attn attn;
	int batch;                /* micro-batch */
	int seq;                  /* sequence / packing length */
	bool grad_ckpt;
	int lora_rank;
	unsigned lora_targets;
	bool master_weights;      /* an fp32 copy of 16-bit trainable weights (DeepSpeed/Megatron style) */
	bool uma;                 /* host and device share one pool */
	enum sp_loss loss;        /* default: the framework's */
	bool offload_activations; /* checkpoints (or all saved activations) to the host */
	bool no_double_quant;     /* 4-bit base without double quantization (bnb load_in_4bit's default) */
	bool bnb_legacy;          /* bitsandbytes < 0.43.2: every 4-bit linear keeps its input for backward */
	int nodes;                /* Sparks the job spreads over (1) */
	enum sp_strategy strategy;/* SP_STRAT_NONE on one node */
	enum sp_kv_cache kv_cache;/* infer: generate's cache (dynamic) */
	int prompt;               /* infer: the prompt's tokens, prefilled at once (0: the whole --seq) */
	enum sp_measure measure;  /* the counter measure_bytes estimates (process) */
	bool quant_lm_head;       /* a 4/8-bit base quantizes the (untied) output projection too */
	enum sp_padding padding;  /* training: batches of one length (max) or varying (longest) */
};
void sp_plan_opts_init(struct sp_plan_opts *o);

enum sp_term {
	SP_T_WEIGHTS,        /* base weights on the device, per real dtype */
	SP_T_KBIT_UPCAST,    /* HF prepare_model_for_kbit_training: unquantized params to fp32 */
	SP_T_ADAPTER,        /* LoRA A/B matrices */
	SP_T_GRADIENTS,      /* of trainable params only */
	SP_T_OPTIMIZER,      /* optimizer state of trainable params */
	SP_T_MASTER,         /* fp32 master copy of trainable params */
	SP_T_ACTIVATIONS,    /* saved for backward (device side) */
	SP_T_ACT_OFFLOADED,  /* checkpoints offloaded to host (Unsloth) */
	SP_T_LOGITS,         /* logits and loss buffers */
	SP_T_KV_CACHE,       /* inference */
	SP_T_DEQUANT,        /* transient dequantization buffers (4/8-bit base) */
	SP_T_CUDA_CONTEXT,   /* CUDA context, cuBLAS/cuDNN workspaces */
	SP_T_ALLOCATOR,      /* caching-allocator slack (reserved but unused) */
	SP_T_HOST_PROCESS,   /* Python, torch, tokenizer, dataloader workers, pinned buffers */
	SP_T_COMM,           /* multi-node: FSDP all-gather buffers, TP/PP communication buffers */
	SP_T_N
};
/* JSON key ("weights", "kv_cache" ...) */
const char *sp_term_key(enum sp_term t);
/* a + b, held at SP_BYTES_SAT */
uint64_t sp_bytes_add(uint64_t a, uint64_t b);
/* true for the host-side terms */
bool sp_term_is_host(enum sp_term t);

/* A term this large (4 EiB) is no machine's: the arithmetic saturated there
 * (a sequence of 16M tokens times a batch of 512, a config of 1e8 layers),
 * and every sum that holds it stays there instead of wrapping. */
#define SP_BYTES_SAT (1ULL << 62)

struct sp_footprint {
	double params;            /* total */
	double trainable_params;
	double lora_params;       /* adapter params (0 for full / infer) */
	double quantized_params;  /* params stored quantized on the device */
	uint64_t term[SP_T_N];
	uint64_t device_bytes;    /* the device side at its peak: its terms less overlap_bytes */
	uint64_t host_bytes;      /* sum of host-side terms */
	uint64_t peak_bytes;      /* UMA: device + host; discrete: device */
	uint64_t load_peak_bytes; /* the load-time peak, same convention */
	/* training: what is never live at once. Gradients grow in backward as
	 * the activations and loss buffers are freed; the optimizer step comes
	 * after both. The device side peaks at the larger of the two phases:
	 * overlap_bytes = the smaller one (gradients, or activations + logits
	 * + their slack + dequantization buffers), left out of device_bytes. */
	uint64_t overlap_bytes;
	uint64_t backward_phase_bytes; /* saved activations freed in backward + logits */
	double act_freed_bytes;   /* of the activations, what backward frees layer by layer */
	uint64_t step_phase_bytes;     /* gradients + the optimizer step's temporary */
	uint64_t step_tmp_bytes;  /* of the optimizer term, the step's own copy (foreach AdamW: one state's size) */
	double kv_per_token_bytes;/* infer: the KV cache of one token of one sequence */
	uint64_t measure_bytes;   /* the peak as o->measure's counter reads it (discrete: no host side) */
	bool prefill_peak;        /* infer: the prefill is the peak, not the last decode step */
	/* per node (sp_footprint_nodes; = the single-node figures on one node) */
	int nodes;
	enum sp_strategy strategy;
	uint64_t term_node[SP_T_N];
	uint64_t node_overlap_bytes;
	uint64_t node_peak_bytes;
	uint64_t node_load_peak_bytes;
	double link_bytes;        /* bytes each node sends per optimizer step (infer: per decode step) */
	uint64_t load_file_bytes; /* bytes of weight files a load reads (left behind as page cache) */
	uint64_t load_mapped_bytes; /* of them, mapped at the worst moment (one shard, or the whole file) */
	double act_layer_bytes;   /* one layer's saved activations (no recompute) */
	double layer_weight_bytes;/* one layer's 16-bit weights (the dequant buffer) */
	bool gated_mlp;
	int saturated;            /* the first term that saturated + 1 (SP_T_N + 1: the load); 0 none */
	char note[256];           /* what the model assumed, for people */
};

/* Fill the parameter counts of a shape from its architecture numbers when
 * they are missing (params == 0): dense or MoE, gated or plain MLP, GQA,
 * tied or untied embeddings. Returns 0, or -1 when the shape lacks layers,
 * hidden size or vocabulary. */
int sp_shape_complete(struct sp_model_shape *m);
/* true when the MLP has a gate projection (Llama-style SwiGLU/GeGLU) */
bool sp_shape_gated(const struct sp_model_shape *m);

/* LoRA parameters PEFT creates: r*(in+out) per targeted linear per layer. */
double sp_lora_params(const struct sp_model_shape *m, int rank, unsigned targets);
/* the part of targets that sp_lora_params counts on this shape (what plan prints) */
unsigned sp_lora_targets_counted(const struct sp_model_shape *m, unsigned targets);

/* The footprint of the job. m must be complete (sp_shape_complete). A
 * term past SP_BYTES_SAT (or not a number) is SP_BYTES_SAT, the sums
 * saturate, and f->saturated names the term: never a total below a term. */
void sp_footprint_compute(const struct sp_model_shape *m, const struct sp_plan_opts *o, struct sp_footprint *f);

/* The per-node terms and peaks of f for o->nodes and o->strategy (called by
 * sp_footprint_compute; exposed for tests). DDP: every term on every node.
 * FSDP: weights (and the k-bit upcast), adapter, gradients, optimizer state
 * and master weights / N, plus SP_T_COMM = two layers' full 16-bit weights
 * (the unit being computed and the one prefetched). TP: weights / N, the KV
 * cache / min(N, kv_heads), SP_T_COMM = the all-reduce buffers (in and out of
 * one layer's T x h activations). PP: weights and KV cache / N, SP_T_COMM =
 * the activations handed to the next stage (send and receive). link_bytes:
 * FSDP (2 x weights + gradients) x (N-1)/N; DDP 2 x gradients x (N-1)/N
 * (ring all-reduce); TP per decode step 2 all-reduces per layer of
 * batch x h x 2 bytes, x 2(N-1)/N; PP batch x h x 2 bytes per stage boundary. */
void sp_footprint_nodes(const struct sp_model_shape *m, const struct sp_plan_opts *o, struct sp_footprint *f);
/* what one node needs: the larger of its steady and load-time peak */
uint64_t sp_node_need(const struct sp_footprint *f);
/* true when training is asked to use tensor or pipeline parallelism over the
 * link, or serving asked for ddp/fsdp: a one-line reason in why */
bool sp_strategy_refused(const struct sp_plan_opts *o, char *why, size_t n);
#endif
