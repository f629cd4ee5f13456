// SPDX-License-Identifier: MIT
/* The footprint arithmetic. Every constant here is explained, with its
 * source, in docs/plan.md ("The terms"); keep the two in agreement. */
#include "account/footprint.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- names ------------------------------------------------------------------ */

/* The words of each enum (util/words.h): what --method etc. take, in the
 * order a bad word's error lists them, aliases after the word that names
 * the value. */
#define U SP_WORD_UNLISTED
const struct sp_word sp_method_words[] = {
	{ "full", SP_METHOD_FULL, 0, NULL }, { "lora", SP_METHOD_LORA, 0, NULL },
	{ "qlora", SP_METHOD_QLORA, 0, NULL }, { "infer", SP_METHOD_INFER, 0, NULL },
	{ NULL, 0, 0, NULL },
};
const struct sp_word sp_cdtype_words[] = {
	{ "bf16", SP_CDT_BF16, 0, NULL }, { "fp16", SP_CDT_FP16, 0, NULL }, { "fp32", SP_CDT_FP32, 0, NULL },
	{ "bfloat16", SP_CDT_BF16, U, NULL }, { "float16", SP_CDT_FP16, U, NULL }, { "half", SP_CDT_FP16, U, NULL },
	{ "float32", SP_CDT_FP32, U, NULL },
	{ NULL, 0, 0, NULL },
};
const struct sp_word sp_quant_words[] = {
	{ "none", SP_QUANT_NONE, 0, NULL }, { "int8", SP_QUANT_INT8, 0, NULL },
	{ "nf4", SP_QUANT_NF4, 0, NULL }, { "fp4", SP_QUANT_FP4, 0, NULL },
	{ NULL, 0, 0, NULL },
};
const struct sp_word sp_optim_words[] = {
	{ "adamw", SP_OPTIM_ADAMW, 0, NULL }, { "adamw8bit", SP_OPTIM_ADAMW8BIT, 0, NULL },
	{ "paged_adamw8bit", SP_OPTIM_PAGED_ADAMW8BIT, 0, NULL }, { "sgd", SP_OPTIM_SGD, 0, NULL },
	{ "adafactor", SP_OPTIM_ADAFACTOR, 0, NULL },
	/* the spellings HF TrainingArguments uses */
	{ "adamw_torch", SP_OPTIM_ADAMW, U, NULL }, { "adamw_torch_fused", SP_OPTIM_ADAMW, U, NULL },
	{ "adam", SP_OPTIM_ADAMW, U, NULL }, { "adamw_8bit", SP_OPTIM_ADAMW8BIT, U, NULL },
	{ "adamw_bnb_8bit", SP_OPTIM_ADAMW8BIT, U, NULL }, { "paged_adamw_8bit", SP_OPTIM_PAGED_ADAMW8BIT, U, NULL },
	{ NULL, 0, 0, NULL },
};
const struct sp_word sp_framework_words[] = {
	{ "hf", SP_FW_HF, 0, NULL }, { "unsloth", SP_FW_UNSLOTH, 0, NULL }, { "torchtune", SP_FW_TORCHTUNE, 0, NULL },
	{ "megatron", SP_FW_MEGATRON, 0, NULL },
	{ NULL, 0, 0, NULL },
};
const struct sp_word sp_attn_words[] = {
	{ "sdpa", SP_ATTN_SDPA, 0, NULL }, { "eager", SP_ATTN_EAGER, 0, NULL },
	{ "flash", SP_ATTN_SDPA, 0, NULL }, { "math", SP_ATTN_MATH, 0, NULL },
	{ NULL, 0, 0, NULL },
};
/* "none" names one node's strategy; --strategy none is refused by plan */
const struct sp_word sp_strategy_words[] = {
	{ "none", SP_STRAT_NONE, U, NULL }, { "ddp", SP_STRAT_DDP, 0, NULL }, { "fsdp", SP_STRAT_FSDP, 0, "training" },
	{ "tp", SP_STRAT_TP, 0, NULL }, { "pp", SP_STRAT_PP, 0, "serving" },
	{ NULL, 0, 0, NULL },
};
/* "default": the framework's own, what --loss left out means */
const struct sp_word sp_loss_words[] = {
	{ "default", SP_LOSS_DEFAULT, U, NULL }, { "fp32", SP_LOSS_FP32, 0, NULL }, { "bf16", SP_LOSS_BF16, 0, NULL },
	{ "chunked", SP_LOSS_CHUNKED, 0, NULL },
	{ NULL, 0, 0, NULL },
};
const struct sp_word sp_kv_cache_words[] = {
	{ "static", SP_KV_STATIC, 0, NULL }, { "dynamic", SP_KV_DYNAMIC, 0, NULL }, { "legacy", SP_KV_LEGACY, 0, NULL },
	{ NULL, 0, 0, NULL },
};
const struct sp_word sp_measure_words[] = {
	{ "allocated", SP_MEASURE_ALLOCATED, 0, NULL }, { "reserved", SP_MEASURE_RESERVED, 0, NULL },
	{ "process", SP_MEASURE_PROCESS, 0, NULL },
	{ NULL, 0, 0, NULL },
};
const struct sp_word sp_padding_words[] = {
	{ "max", SP_PAD_MAX, 0, NULL }, { "longest", SP_PAD_LONGEST, 0, NULL },
	{ NULL, 0, 0, NULL },
};
#undef U
static const char *const term_keys[SP_T_N] = {
	"weights", "kbit_upcast", "adapter", "gradients", "optimizer", "master_weights",
	"activations", "activations_offloaded", "logits", "kv_cache", "dequant_buffers",
	"cuda_context", "allocator_slack", "host_process", "comm_buffers",
};

const char *sp_method_name(enum sp_method v) { return sp_word_name(sp_method_words, (int)v); }
const char *sp_cdtype_name(enum sp_cdtype v) { return sp_word_name(sp_cdtype_words, (int)v); }
const char *sp_quant_name(enum sp_quant v) { return sp_word_name(sp_quant_words, (int)v); }
const char *sp_optim_name(enum sp_optim v) { return sp_word_name(sp_optim_words, (int)v); }
const char *sp_framework_name(enum sp_framework v) { return sp_word_name(sp_framework_words, (int)v); }
const char *sp_attn_name(enum sp_attn v) { return sp_word_name(sp_attn_words, (int)v); }
const char *sp_term_key(enum sp_term t) { return (unsigned)t < SP_T_N ? term_keys[t] : "?"; }
const char *sp_strategy_name(enum sp_strategy v) { return sp_word_name(sp_strategy_words, (int)v); }
const char *sp_loss_name(enum sp_loss v) { return sp_word_name(sp_loss_words, (int)v); }
const char *sp_kv_cache_name(enum sp_kv_cache v) { return sp_word_name(sp_kv_cache_words, (int)v); }
const char *sp_measure_name(enum sp_measure v) { return sp_word_name(sp_measure_words, (int)v); }
const char *sp_padding_name(enum sp_padding v) { return sp_word_name(sp_padding_words, (int)v); }

bool sp_term_is_host(enum sp_term t)
{
	return t == SP_T_HOST_PROCESS || t == SP_T_ACT_OFFLOADED;
}

int sp_method_parse(const char *s) { return sp_word_parse(sp_method_words, s); }
int sp_cdtype_parse(const char *s) { return sp_word_parse(sp_cdtype_words, s); }
int sp_quant_parse(const char *s) { return sp_word_parse(sp_quant_words, s); }
int sp_optim_parse(const char *s) { return sp_word_parse(sp_optim_words, s); }
int sp_framework_parse(const char *s) { return sp_word_parse(sp_framework_words, s); }
int sp_strategy_parse(const char *s) { return sp_word_parse(sp_strategy_words, s); }
int sp_loss_parse(const char *s) { return sp_word_parse(sp_loss_words, s); }
int sp_kv_cache_parse(const char *s) { return sp_word_parse(sp_kv_cache_words, s); }
int sp_measure_parse(const char *s) { return sp_word_parse(sp_measure_words, s); }
int sp_padding_parse(const char *s) { return sp_word_parse(sp_padding_words, s); }

static const struct {
	const char *name;
	unsigned mask;
} target_names[] = {
	{ "q", SP_LT_Q }, { "q_proj", SP_LT_Q }, { "k", SP_LT_K }, { "k_proj", SP_LT_K },
	{ "v", SP_LT_V }, { "v_proj", SP_LT_V }, { "o", SP_LT_O }, { "o_proj", SP_LT_O },
	{ "gate", SP_LT_GATE }, { "gate_proj", SP_LT_GATE }, { "w1", SP_LT_GATE },
	{ "up", SP_LT_UP }, { "up_proj", SP_LT_UP }, { "w3", SP_LT_UP },
	{ "down", SP_LT_DOWN }, { "down_proj", SP_LT_DOWN }, { "w2", SP_LT_DOWN },
	{ "all", SP_LT_ALL }, { "all-linear", SP_LT_ALL }, { "all_linear", SP_LT_ALL },
	{ "attn", SP_LT_Q | SP_LT_K | SP_LT_V | SP_LT_O },
	/* fused projections: q, k and v in one linear (GPT-2, Qwen 1, Falcon,
	 * GPT-NeoX, Phi-3, MPT), and GPT-2/Qwen 1's c_proj, the name of both
	 * the attention output and the MLP's down projection */
	{ "c_attn", SP_LT_QKV_FUSED }, { "qkv_proj", SP_LT_QKV_FUSED }, { "wqkv", SP_LT_QKV_FUSED },
	{ "query_key_value", SP_LT_QKV_FUSED }, { "qkv", SP_LT_QKV_FUSED },
	{ "c_proj", SP_LT_O | SP_LT_DOWN },
	{ "mlp", SP_LT_GATE | SP_LT_UP | SP_LT_DOWN },
};

int sp_lora_targets_parse(const char *s)
{
	if (!s)
		return -1;
	unsigned mask = 0;
	const char *p = s;
	for (;;) {
		const char *e = p + strcspn(p, ",");
		size_t n = (size_t)(e - p);
		while (n && (*p == ' ')) {
			p++;
			n--;
		}
		while (n && p[n - 1] == ' ')
			n--;
		if (n == 0)
			return -1;
		bool found = false;
		for (size_t i = 0; i < sizeof target_names / sizeof target_names[0]; i++) {
			if (strlen(target_names[i].name) == n && strncasecmp(p, target_names[i].name, n) == 0) {
				mask |= target_names[i].mask;
				found = true;
				break;
			}
		}
		if (!found)
			return -1;
		if (!*e)
			break;
		p = e + 1;
	}
	return (int)mask;
}

const char *sp_lora_targets_str(unsigned mask, char *buf, size_t n)
{
	static const char *short_names[] = { "q", "k", "v", "o", "gate", "up", "down", "qkv" };
	size_t l = 0;
	if (n)
		buf[0] = 0;
	for (int i = 0; i < 8; i++) {
		if (!(mask >> i & 1))
			continue;
		int w = snprintf(buf + l, n > l ? n - l : 0, "%s%s", l ? "," : "", short_names[i]);
		if (w > 0)
			l += (size_t)w;
		if (l >= n)
			break;
	}
	return buf;
}

void sp_plan_opts_init(struct sp_plan_opts *o)
{
	memset(o, 0, sizeof *o);
	o->method = SP_METHOD_LORA;
	o->dtype = SP_CDT_BF16;
	o->quant = SP_QUANT_NONE;
	o->optim = SP_OPTIM_ADAMW;
	o->framework = SP_FW_HF;
	o->attn = SP_ATTN_SDPA;
	o->batch = 1;
	o->seq = 2048;
	o->grad_ckpt = true;
	o->lora_rank = 16;
	o->lora_targets = SP_LT_ALL;
	o->uma = true;
	o->loss = SP_LOSS_DEFAULT;
	o->nodes = 1;
	o->strategy = SP_STRAT_NONE;
	o->kv_cache = SP_KV_DYNAMIC;
	o->prompt = 0;
	o->measure = SP_MEASURE_PROCESS;
	o->padding = SP_PAD_MAX;
}

/* ---- the shape ----------------------------------------------------------------- */

/* Architectures with a plain two-matrix MLP (fc1, act, fc2): GPT-2 and its
 * relatives. Everything else (Llama, Mistral, Qwen, Gemma, Phi-3, Mixtral,
 * DeepSeek, gpt-oss) has a gated MLP (gate, up, down). */
bool sp_shape_gated(const struct sp_model_shape *m)
{
	static const char *plain[] = { "gpt2", "gpt_neox", "gptj", "gpt_bigcode", "phi", "falcon", "bloom",
				       "opt", "mpt", "starcoder2", "stablelm_alpha", "gpt_neo", "RefinedWeb", "RefinedWebModel" };
	for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
		if (strcasecmp(m->arch, plain[i]) == 0)
			return false;
	return true;
}

static bool has_abs_positions(const struct sp_model_shape *m)
{
	return strcasecmp(m->arch, "gpt2") == 0 || strcasecmp(m->arch, "gpt_bigcode") == 0 ||
	       strcasecmp(m->arch, "opt") == 0 || strcasecmp(m->arch, "gpt_neo") == 0;
}

static int head_dim(const struct sp_model_shape *m)
{
	if (m->head_dim > 0)
		return m->head_dim;
	return m->n_heads > 0 ? m->hidden / m->n_heads : m->hidden;
}

static double q_dim(const struct sp_model_shape *m)
{
	return m->n_heads > 0 ? (double)m->n_heads * head_dim(m) : (double)m->hidden;
}

static double kv_dim(const struct sp_model_shape *m)
{
	int kv = m->n_kv_heads > 0 ? m->n_kv_heads : m->n_heads;
	return kv > 0 ? (double)kv * head_dim(m) : (double)m->hidden;
}

/* the width of one expert's MLP (or the dense MLP) */
static double mlp_width(const struct sp_model_shape *m)
{
	if (m->n_experts > 0 && m->moe_intermediate > 0)
		return m->moe_intermediate;
	if (m->intermediate > 0)
		return m->intermediate;
	return 4.0 * m->hidden;
}

int sp_shape_complete(struct sp_model_shape *m)
{
	if (m->n_layers <= 0 || m->hidden <= 0 || m->vocab <= 0) {
		if (m->params > 0)
			return 0; /* counted from tensors: the planner falls back where needed */
		return -1;
	}
	if (m->n_heads <= 0)
		m->n_heads = m->hidden / 128 > 0 ? m->hidden / 128 : 1;
	if (m->n_kv_heads <= 0)
		m->n_kv_heads = m->n_heads;
	if (m->head_dim <= 0)
		m->head_dim = m->hidden / m->n_heads;
	if (m->intermediate <= 0 && m->n_experts == 0)
		m->intermediate = 4 * m->hidden;
	double h = m->hidden, L = m->n_layers, V = m->vocab, I = mlp_width(m);
	bool gated = sp_shape_gated(m);
	double attn = h * q_dim(m) * 2 + h * kv_dim(m) * 2;
	double mlp1 = (gated ? 3.0 : 2.0) * h * I;
	double experts = m->n_experts > 0 ? m->n_experts : 1;
	double router = m->n_experts > 0 ? h * m->n_experts : 0;
	double linear = L * (attn + experts * mlp1 + router);
	/* norms (RMSNorm: weight only; LayerNorm: weight and bias) and, for the
	 * plain GPT-2 family, the biases of every linear */
	double small = gated ? L * 2 * h + h : L * (4 * h + q_dim(m) + 2 * kv_dim(m) + h + I + h) + 2 * h;
	double embed = V * h * (m->tied_embeddings ? 1 : 2);
	if (has_abs_positions(m))
		embed += (m->max_seq > 0 ? m->max_seq : 1024) * h;
	if (m->linear_params <= 0)
		m->linear_params = linear;
	if (m->embed_params <= 0)
		m->embed_params = embed;
	if (m->params <= 0)
		m->params = linear + small + embed;
	if (m->params_active <= 0) {
		double k = m->n_experts > 0 ? (m->experts_per_tok > 0 ? m->experts_per_tok : 2) : 1;
		m->params_active = m->n_experts > 0 ? L * (attn + k * mlp1 + router) + small + embed : m->params;
	}
	return 0;
}

double sp_lora_params(const struct sp_model_shape *m, int rank, unsigned t)
{
	if (m->n_layers <= 0 || m->hidden <= 0 || rank <= 0)
		return 0;
	double r = rank, h = m->hidden, qd = q_dim(m), kvd = kv_dim(m), I = mlp_width(m);
	double per = 0;
	if (t & SP_LT_Q)
		per += r * (h + qd);
	if (t & SP_LT_K)
		per += r * (h + kvd);
	if (t & SP_LT_V)
		per += r * (h + kvd);
	if ((t & SP_LT_QKV_FUSED) && !(t & (SP_LT_Q | SP_LT_K | SP_LT_V)))
		per += r * (h + qd + 2 * kvd); /* one A of r x h, one B of (q + 2kv) x r */
	if (t & SP_LT_O)
		per += r * (qd + h);
	bool gated = sp_shape_gated(m);
	/* one MLP of width w: the targeted matrices */
#define MLP_LORA(w) (((t & SP_LT_GATE) && gated ? r * (h + (w)) : 0) + ((t & SP_LT_UP) ? r * (h + (w)) : 0) + \
		     ((t & SP_LT_DOWN) ? r * ((w) + h) : 0))
	double L = m->n_layers;
	double moe_layers = m->n_experts > 0 ? (m->n_moe_layers > 0 ? m->n_moe_layers : L) : 0;
	double dense_w = m->intermediate > 0 ? m->intermediate : 4.0 * m->hidden;
	double total = per * L + (L - moe_layers) * MLP_LORA(dense_w);
	if (moe_layers > 0 && strcasecmp(m->arch, "gpt_oss") != 0) {
		total += moe_layers * m->n_experts * MLP_LORA(I);
		if (m->shared_intermediate > 0)
			total += moe_layers * MLP_LORA((double)m->shared_intermediate);
	}
#undef MLP_LORA
	return total;
}

/* the targets sp_lora_params counts: "gate" on an ungated MLP is no module, and
 * gpt-oss's experts are fused 3-D parameters (not Linear layers), which PEFT's
 * target_modules does not adapt: on a model whose every MLP is such, the MLP
 * targets add nothing */
unsigned sp_lora_targets_counted(const struct sp_model_shape *m, unsigned t)
{
	if (!sp_shape_gated(m))
		t &= ~(unsigned)SP_LT_GATE;
	double L = m->n_layers;
	double moe_layers = m->n_experts > 0 ? (m->n_moe_layers > 0 ? m->n_moe_layers : L) : 0;
	if (moe_layers >= L && moe_layers > 0 && strcasecmp(m->arch, "gpt_oss") == 0)
		t &= ~(unsigned)(SP_LT_GATE | SP_LT_UP | SP_LT_DOWN);
	return t;
}

/* ---- the terms ------------------------------------------------------------------- */

#define GiB_D 1073741824.0
/* NF4/FP4 with double quantization: 4 bits + 0.127 bit of constants per param
 * (an 8-bit absmax per 64, an fp32 scale per 256 of those) */
#define NF4_BYTES (0.5 + 0.127 / 8.0)
/* without double quantization (bitsandbytes' load_in_4bit default): an fp32
 * absmax per 64 values, 0.5 bit per param: 4.5 bits */
#define NF4_NODQ_BYTES (0.5 + 0.5 / 8.0)
/* LLM.int8: one byte + an fp32 scale per output row (about 0.001 B/param) */
#define INT8_BYTES 1.001
/* CUDA context, cuBLAS and cuDNN workspaces */
#define CUDA_CONTEXT_BYTES (0.5 * GiB_D)
/* the training process on the host: Python, torch, transformers, tokenizer,
 * two dataloader workers, pinned staging buffers */
#define HOST_TRAIN_BYTES (3.0 * GiB_D)
#define HOST_INFER_BYTES (2.0 * GiB_D)
/* allocator slack on transient allocations (activations, logits, buffers) */
#define ALLOC_SLACK 0.05
/* HF's default safetensors shard size (max_shard_size="5GB") */
#define SHARD_BYTES 5e9
/* --padding longest: the loss buffers reserved once more at the longest
 * shape (the segments of an earlier, shorter step's buffers; docs/plan.md) */
#define VARLEN_LOSS_SETS 1.0

/* bytes per param of a pre-quantized checkpoint, scales included:
 * MXFP4 an 8-bit scale per 32, NVFP4 an FP8 scale per 16, GPTQ/AWQ an fp16
 * scale and zero per 128; 8-bit formats a scale per 128 */
static double prequant_bytes(const struct sp_model_shape *m)
{
	if (m->quant_bits >= 8)
		return m->quant_bits / 8.0 + 1.0 / 128;
	if (strstr(m->quant_method, "nvfp4") || strstr(m->quant_method, "modelopt"))
		return m->quant_bits / 8.0 + 1.0 / 16;
	return m->quant_bits / 8.0 + 1.0 / 32;
}

static double cdt_bytes(enum sp_cdtype d)
{
	return d == SP_CDT_FP32 ? 4.0 : 2.0;
}

static double quant_bytes(enum sp_quant q, double unq, bool no_dq)
{
	switch (q) {
	case SP_QUANT_INT8:
		return INT8_BYTES;
	case SP_QUANT_NF4:
	case SP_QUANT_FP4:
		return no_dq ? NF4_NODQ_BYTES : NF4_BYTES;
	default:
		return unq;
	}
}

/* bitsandbytes before 0.43.2 (PR #1270, "fix QLoRA mem bug: delete useless
 * buffered activation"): MatMul4Bit kept its input A for backward although
 * only the weight is needed there, so every 4-bit linear's 16-bit input stays
 * until backward. A targeted linear's input is kept by its adapter anyway;
 * the untargeted ones add, per token and layer: the attention input (2h, when
 * none of q, k, v is targeted), the output projection's (2q, o untargeted),
 * the MLP's (2h, when neither gate nor up is, and the layer has a norm of its
 * own for the MLP), the down projection's (2I per routed expert, down
 * untargeted). */
static double legacy_bnb_inputs(const struct sp_model_shape *m, unsigned t)
{
	double h = m->hidden, b = 0;
	double k = m->n_experts > 0 ? (m->experts_per_tok > 0 ? m->experts_per_tok : 2) : 1;
	double down = k * mlp_width(m) + (m->n_experts > 0 ? m->shared_intermediate : 0);
	if (!(t & (SP_LT_Q | SP_LT_K | SP_LT_V | SP_LT_QKV_FUSED)))
		b += 2 * h;
	if (!(t & SP_LT_O))
		b += 2 * q_dim(m);
	if (!(t & (SP_LT_GATE | SP_LT_UP)) && !m->one_norm)
		b += 2 * h; /* one norm: the MLP reads the attention's input */
	if (!(t & SP_LT_DOWN))
		b += 2 * down;
	return b;
}

/* one layer's activations saved for backward, 16-bit, no recompute
 * (Korthikanti et al. 2022, generalised to GQA and gated MLPs) */
static double act_layer(const struct sp_model_shape *m, const struct sp_plan_opts *o, bool gated, bool kbit_inputs)
{
	double T = (double)o->batch * o->seq, h = m->hidden, I = mlp_width(m);
	double per_tok = 12 * h + 4 * kv_dim(m);
	if (m->one_norm)
		per_tok -= 4 * h; /* no second norm, and the MLP reads the attention's input */
	double c = gated ? 8 : 4; /* gate, up, act, product | fc1 out, act out */
	if (m->n_experts > 0) {
		double k = m->experts_per_tok > 0 ? m->experts_per_tok : 2;
		/* the average layer: MoE layers run k experts (+ a shared one), dense ones the full MLP */
		double L = m->n_layers > 0 ? m->n_layers : 1;
		double f = m->n_moe_layers > 0 ? m->n_moe_layers / L : 1;
		double moe = c * I * k + c * m->shared_intermediate + 4 * h * k + 4.0 * m->n_experts;
		double dense = c * (m->intermediate > 0 ? m->intermediate : 4.0 * h);
		per_tok += f * moe + (1 - f) * dense; /* + token permutation and router logits */
	} else {
		per_tok += c * I;
	}
	if (!gated)
		per_tok += 2 * h; /* the two dropout masks */
	double b = T * per_tok;
	if (kbit_inputs)
		b += T * legacy_bnb_inputs(m, o->lora_targets);
	if (o->attn == SP_ATTN_EAGER)
		b += 5.0 * m->n_heads * (double)o->seq * T;
	else if (o->attn == SP_ATTN_MATH)
		b += 2.0 * m->n_heads * (double)o->seq * T; /* the 16-bit softmax output, kept for both its backwards */
	return b;
}

static double logits_bytes_per_elem(enum sp_framework fw, enum sp_loss loss)
{
	switch (loss) {
	case SP_LOSS_FP32:
		return 16; /* fp32 upcast, shifted copy, log-softmax, its gradient */
	case SP_LOSS_BF16:
		return 6; /* bf16 logits, log-softmax output, its gradient */
	case SP_LOSS_CHUNKED:
		return 3.5; /* bf16 logits in 8 chunks + one chunk's fp32 loss */
	default:
		break;
	}
	switch (fw) {
	case SP_FW_HF:
		return 16; /* fp32 upcast, shifted copy, log-softmax, its gradient */
	case SP_FW_TORCHTUNE:
		return 3.5; /* bf16 logits in 8 chunks + one chunk's fp32 loss */
	case SP_FW_MEGATRON:
		/* bf16 logits + their fp32 copy, which becomes the softmax in
		 * place and is saved; backward writes the gradient into it and
		 * autograd casts it to bf16 for the output layer */
		return 6;
	default:
		return 0; /* Unsloth: fused/cut cross-entropy, see chunk below */
	}
}

/* Inference (HF generate; docs/plan.md, "generate"): two phases. The
 * prefill runs the prompt's P tokens at once: one layer's working set over
 * B x P tokens, the cache of the prompt, and the logits: of the last
 * position only (transformers >= 4.45 slices before lm_head, and the
 * dynamic and static caches came with the versions that keep it so), or,
 * with the legacy tuple cache (transformers <= 4.35, where LlamaForCausalLM
 * returned logits.float() for every position), 16-bit logits and their fp32
 * copy for all B x P positions. Each decode step then adds a token to the
 * cache: a static cache is allocated once at its full length; the dynamic
 * cache concatenates one layer at a time (that layer's old and new tensors
 * alive together); the legacy cache builds the whole new tuple while
 * generate still holds the old one (old and new alive together: the
 * cache twice at the last step). The peak is the larger phase; the kv_cache
 * term is the cache itself, the activations term what the phase adds. */
static void infer_terms(const struct sp_model_shape *m, const struct sp_plan_opts *o, double al_seq, bool arch,
			double *t, struct sp_footprint *f)
{
	double h = arch ? m->hidden : 4096, L = arch ? m->n_layers : 32, V = arch ? m->vocab : 128256;
	double B = o->batch, S = o->seq;
	double P = o->prompt > 0 && o->prompt < o->seq ? o->prompt : S;
	double kvb = o->dtype == SP_CDT_FP32 ? 4 : 2;
	double kvd = arch ? kv_dim(m) : h / 4;
	f->kv_per_token_bytes = L * kvd * 2 * kvb;
	double kv_full = f->kv_per_token_bytes * S * B;
	double kv_prompt = o->kv_cache == SP_KV_STATIC ? kv_full : f->kv_per_token_bytes * P * B;
	/* one layer's working set scales with the tokens it runs on */
	double act_prompt = (al_seq * 0.5) * (P / S) + B * P * 4 * h;
	double lg_prompt = o->kv_cache == SP_KV_LEGACY ? B * P * V * (2 + 4) : B * V * 4;
	double lg_step = B * V * 4;
	double extra = 0; /* what the last decode step holds besides the cache */
	if (P < S) {
		if (o->kv_cache == SP_KV_LEGACY)
			extra = f->kv_per_token_bytes * (S - 1) * B;
		else if (o->kv_cache == SP_KV_DYNAMIC)
			extra = kv_full / L;
		extra += B * 4 * h;
	}
	double prefill = kv_prompt + act_prompt + lg_prompt;
	double decode = kv_full + extra + lg_step;
	t[SP_T_KV_CACHE] = kv_full;
	if (prefill > decode) {
		f->prefill_peak = true;
		double rest = prefill - kv_full; /* what the prefill holds besides the full cache */
		t[SP_T_LOGITS] = lg_prompt < rest ? lg_prompt : (rest > 0 ? rest : 0);
		t[SP_T_ACTIVATIONS] = rest - t[SP_T_LOGITS] > 0 ? rest - t[SP_T_LOGITS] : 0;
	} else {
		t[SP_T_LOGITS] = lg_step;
		t[SP_T_ACTIVATIONS] = extra;
	}
}

uint64_t sp_bytes_add(uint64_t a, uint64_t b)
{
	return a >= SP_BYTES_SAT || b >= SP_BYTES_SAT || a + b >= SP_BYTES_SAT ? SP_BYTES_SAT : a + b;
}

/* bytes from a double: a NaN (0 x inf) or anything past SP_BYTES_SAT is
 * SP_BYTES_SAT and marks the footprint, so it can never read as small */
static uint64_t u64(double v, struct sp_footprint *f, int what)
{
	if (isnan(v) || v >= (double)SP_BYTES_SAT) {
		if (!f->saturated)
			f->saturated = what + 1;
		return SP_BYTES_SAT;
	}
	if (!(v > 0))
		return 0;
	return (uint64_t)llround(v);
}

/* Training's two phases (docs/plan.md, "The peak"): in backward the
 * gradients of the layers already done grow while their saved activations
 * (or checkpoints) are freed and the loss buffers are gone after the first
 * step, so the two never peak together (the largest sum is at one end: the
 * saved activations and the loss buffers, or all gradients); the optimizer
 * step runs on the gradients after every activation is gone. One layer's
 * working set, the dequantization buffers and the slack stay through both.
 * The device side peaks at the larger phase; the smaller is the overlap. */
static void overlap(const uint64_t *term, double freed, uint64_t step_tmp, bool train, uint64_t *bwd, uint64_t *step,
		    uint64_t *ov)
{
	uint64_t act = freed < (double)term[SP_T_ACTIVATIONS] ? (uint64_t)llround(freed) : term[SP_T_ACTIVATIONS];
	*bwd = sp_bytes_add(act, term[SP_T_LOGITS]);
	/* the step: the gradients and the optimizer's own copy (counted in the
	 * optimizer term, live only while it steps) */
	*step = sp_bytes_add(term[SP_T_GRADIENTS], step_tmp);
	*ov = 0;
	if (train && *bwd < SP_BYTES_SAT && *step < SP_BYTES_SAT)
		*ov = *bwd < *step ? *bwd : *step;
}

static uint64_t sub_overlap(uint64_t total, uint64_t ov)
{
	return total >= SP_BYTES_SAT ? total : total > ov ? total - ov : 0;
}

/* what the job keeps of the base: the quantization in force (qlora implies
 * nf4, full fine-tuning none) */
static enum sp_quant job_quant(const struct sp_plan_opts *o)
{
	enum sp_quant q = o->quant;
	if (o->method == SP_METHOD_QLORA && q == SP_QUANT_NONE)
		q = SP_QUANT_NF4;
	if (o->method == SP_METHOD_FULL)
		q = SP_QUANT_NONE; /* full fine-tuning updates 16/32-bit weights */
	return q;
}

/* the base weights (and HF's k-bit upcast of what stays unquantized) */
static void weight_terms(const struct sp_model_shape *m, const struct sp_plan_opts *o, enum sp_quant q, double *t,
			 struct sp_footprint *f)
{
	bool arch = m->n_layers > 0 && m->hidden > 0;
	double P = m->params;
	double lin = m->linear_params > 0 ? m->linear_params : 0.96 * P;
	if (lin > P)
		lin = P;
	double unq = P - lin;
	double db = cdt_bytes(o->dtype);
	if (m->prequantized && m->have_tensors && m->weight_bytes > 0 && o->method != SP_METHOD_FULL) {
		t[SP_T_WEIGHTS] = (double)m->weight_bytes;
		f->quantized_params = lin;
	} else if (m->prequantized && m->quant_bits > 0 && o->method != SP_METHOD_FULL) {
		/* a pre-quantized checkpoint known from its config only (catalog,
		 * --config): MXFP4 (gpt-oss) covers the experts, the rest the linears */
		bool mx = strstr(m->quant_method, "mxfp4") != NULL;
		double qp = mx && m->expert_params > 0 ? m->expert_params : lin;
		t[SP_T_WEIGHTS] = qp * prequant_bytes(m) + (P - qp) * db;
		f->quantized_params = qp;
	} else if (q != SP_QUANT_NONE) {
		/* --quant-lm-head: the output projection is a linear too (LitGPT's
		 * BitsandbytesPrecision replaces every nn.Linear); a tied head is the
		 * embedding, which stays 16-bit */
		double head = o->quant_lm_head && arch && !m->tied_embeddings ? (double)m->vocab * m->hidden : 0;
		if (head > unq)
			head = 0;
		t[SP_T_WEIGHTS] = (lin + head) * quant_bytes(q, db, o->no_double_quant) + (unq - head) * db;
		f->quantized_params = lin + head;
		unq -= head;
		if (o->method != SP_METHOD_INFER && o->framework == SP_FW_HF && db < 4)
			t[SP_T_KBIT_UPCAST] = unq * (4 - db);
	} else {
		t[SP_T_WEIGHTS] = P * db;
	}
}

/* Adafactor's factored second moment: a row and a column vector per matrix, fp32 */
static double adafactor_bytes(const struct sp_model_shape *m, const struct sp_plan_opts *o, double T, bool arch)
{
	double h = m->hidden, r = o->lora_rank, L = m->n_layers;
	if (!arch)
		return T * 4 * 0.002;
	if (o->method == SP_METHOD_FULL)
		return 4 * (L * 7 * (h + mlp_width(m)) * (m->n_experts > 0 ? m->n_experts : 1) + (double)m->vocab + h);
	int nt = 0;
	unsigned ct = sp_lora_targets_counted(m, o->lora_targets);
	for (int i = 0; i < 8; i++)
		nt += (int)(ct >> i & 1);
	return 4 * L * nt * 2 * (r + (h + mlp_width(m)) / 2);
}

/* the trainable parameters: the adapter, their gradients, the optimizer's
 * state (and its step's own copy: foreach AdamW's one-state-sized sqrt,
 * live with the gradients only; also into *step_tmp), the master copy */
static void trainable_terms(const struct sp_model_shape *m, const struct sp_plan_opts *o, double *t,
			    struct sp_footprint *f, double *step_tmp)
{
	bool arch = m->n_layers > 0 && m->hidden > 0;
	double db = cdt_bytes(o->dtype);
	double pb = db; /* bytes per trainable param */
	double T = 0;
	*step_tmp = 0;
	if (o->method == SP_METHOD_FULL) {
		T = m->params;
	} else if (o->method == SP_METHOD_LORA || o->method == SP_METHOD_QLORA) {
		f->lora_params = sp_lora_params(m, o->lora_rank, o->lora_targets);
		if (!arch) /* no architecture: PEFT's all-linear r=16 share is ~0.5% */
			f->lora_params = m->params * 0.0052 * o->lora_rank / 16.0;
		T = f->lora_params;
		/* PEFT keeps adapters in fp32 (autocast_adapter_dtype); torchtune
		 * and Megatron in the model dtype */
		pb = o->framework == SP_FW_TORCHTUNE || o->framework == SP_FW_MEGATRON ? db : 4.0;
		t[SP_T_ADAPTER] = T * pb;
	}
	f->trainable_params = T;
	if (o->method == SP_METHOD_INFER)
		return;
	if (o->framework == SP_FW_MEGATRON) {
		/* Megatron-core: gradients accumulate in a persistent fp32 main_grad
		 * buffer (bf16 implies --accumulate-allreduce-grads-in-fp32), the
		 * optimizer steps fp32 main params (--main-params-dtype fp32) with
		 * fp32 states, in a fused kernel (no step copy) */
		t[SP_T_GRADIENTS] = T * 4;
		if (pb < 4)
			t[SP_T_MASTER] = T * 4;
		if (o->optim == SP_OPTIM_ADAMW) {
			t[SP_T_OPTIMIZER] = T * 8;
			return;
		}
		pb = 4; /* the other optimizers step the fp32 main params */
	} else {
		t[SP_T_GRADIENTS] = T * pb;
	}
	switch (o->optim) {
	case SP_OPTIM_ADAMW:
		t[SP_T_OPTIMIZER] = T * 2 * pb; /* exp_avg, exp_avg_sq in the param dtype */
		/* torch.optim.AdamW's default on CUDA is foreach (_multi_tensor_adamw):
		 * exp_avg_sq_sqrt = torch._foreach_sqrt(exp_avg_sqs), one state's size
		 * over the whole group, while the gradients are live. torchtune's
		 * recipes pass fused=True (one kernel a tensor, no copy). */
		if (o->framework != SP_FW_TORCHTUNE && o->framework != SP_FW_MEGATRON)
			*step_tmp = T * pb;
		t[SP_T_OPTIMIZER] += *step_tmp;
		break;
	case SP_OPTIM_ADAMW8BIT:
	case SP_OPTIM_PAGED_ADAMW8BIT:
		t[SP_T_OPTIMIZER] = T * (2 + 8.0 / 2048); /* two 8-bit states + fp32 absmax per 2048 */
		break;
	case SP_OPTIM_SGD:
		t[SP_T_OPTIMIZER] = 0; /* torch.optim.SGD, momentum=0 (its default) */
		break;
	case SP_OPTIM_ADAFACTOR:
		t[SP_T_OPTIMIZER] = adafactor_bytes(m, o, T, arch);
		break;
	default:
		break;
	}
	if (o->master_weights && pb < 4)
		t[SP_T_MASTER] = T * 4;
}

/* the gradients are freed and reallocated around backward (zero_grad's
 * set_to_none), so they and the saved activations are never live at once;
 * Megatron's main_grad buffer is allocated once and kept */
static bool grads_transient(const struct sp_plan_opts *o)
{
	return o->method != SP_METHOD_INFER && o->framework != SP_FW_MEGATRON;
}

/* training's activations (device and offloaded) and loss buffers */
static void train_act_terms(const struct sp_model_shape *m, const struct sp_plan_opts *o, double al, double *t,
			    struct sp_footprint *f)
{
	bool arch = m->n_layers > 0 && m->hidden > 0;
	double tokens = (double)o->batch * o->seq;
	double h = arch ? m->hidden : 4096, L = arch ? m->n_layers : 32;
	double io = tokens * 4 * h; /* embedding output, final norm */
	if (!o->grad_ckpt && o->offload_activations) {
		/* every saved activation to the host; one layer's in flight */
		t[SP_T_ACT_OFFLOADED] = (L - 1) * al;
		t[SP_T_ACTIVATIONS] = al + io;
	} else if (!o->grad_ckpt) {
		t[SP_T_ACTIVATIONS] = L * al + io;
		f->act_freed_bytes = L * al;
	} else {
		double kept = L * 2 * tokens * h; /* each layer's input */
		if (o->framework == SP_FW_UNSLOTH || o->offload_activations) {
			t[SP_T_ACT_OFFLOADED] = kept;
			t[SP_T_ACTIVATIONS] = al + 2 * tokens * h + io;
		} else {
			t[SP_T_ACTIVATIONS] = kept + al + io;
			f->act_freed_bytes = kept;
		}
	}
	double V = arch ? m->vocab : 128256;
	double lg = tokens * V * logits_bytes_per_elem(o->framework, o->loss);
	if (o->framework == SP_FW_UNSLOTH && o->loss == SP_LOSS_DEFAULT)
		lg = (tokens < 1024 ? tokens : 1024) * V * 4;
	t[SP_T_LOGITS] = lg;
}

/* the dequantization buffers, the context, the caching allocator's slack
 * and the host process */
static void fixed_terms(const struct sp_model_shape *m, const struct sp_plan_opts *o, double *t, struct sp_footprint *f)
{
	bool arch = m->n_layers > 0 && m->hidden > 0;
	bool train = o->method != SP_METHOD_INFER;
	double lin = m->linear_params > 0 ? m->linear_params : 0.96 * m->params;
	if (lin > m->params)
		lin = m->params;
	/* one layer's 16-bit weights: what a 4/8-bit base dequantizes at a time */
	double layer16 = arch ? (lin / m->n_layers) * 2 : m->params / 32 * 2;
	f->layer_weight_bytes = layer16;
	if (f->quantized_params > 0) {
		double big = arch ? (double)m->hidden * mlp_width(m) * 2 : layer16 / 3;
		/* a quantized head is the widest linear of all (vocab x hidden) */
		if (o->quant_lm_head && arch && !m->prequantized && (double)m->vocab * m->hidden * 2 > big)
			big = (double)m->vocab * m->hidden * 2;
		t[SP_T_DEQUANT] = 2 * big; /* forward and backward of the widest linear */
	}
	t[SP_T_CUDA_CONTEXT] = CUDA_CONTEXT_BYTES;
	t[SP_T_ALLOCATOR] = ALLOC_SLACK * (t[SP_T_ACTIVATIONS] + t[SP_T_LOGITS] + t[SP_T_DEQUANT] + t[SP_T_KV_CACHE]);
	/* batches of varying length (--padding longest): a step longer than
	 * any before needs its loss buffers in new segments, which the
	 * caching allocator cuts when no cached block is large enough; the
	 * segments the earlier, shorter steps' buffers held stay reserved
	 * (split by the smaller tensors placed in them since), so at the
	 * longest shape reserved memory holds the loss buffers once more */
	if (train && o->padding == SP_PAD_LONGEST)
		t[SP_T_ALLOCATOR] += t[SP_T_LOGITS] * VARLEN_LOSS_SETS;
	t[SP_T_HOST_PROCESS] = train ? HOST_TRAIN_BYTES : HOST_INFER_BYTES;
}

/* the sums, the peak, and the peak as o->measure's counter reads it */
static void sum_terms(const double *t, const struct sp_plan_opts *o, double step_tmp, struct sp_footprint *f)
{
	bool train = grads_transient(o);
	for (int i = 0; i < SP_T_N; i++) {
		f->term[i] = u64(t[i], f, i);
		if (sp_term_is_host((enum sp_term)i))
			f->host_bytes = sp_bytes_add(f->host_bytes, f->term[i]);
		else
			f->device_bytes = sp_bytes_add(f->device_bytes, f->term[i]);
	}
	f->step_tmp_bytes = o->method != SP_METHOD_INFER ? u64(step_tmp, f, SP_T_OPTIMIZER) : 0;
	overlap(f->term, f->act_freed_bytes, f->step_tmp_bytes, train, &f->backward_phase_bytes, &f->step_phase_bytes,
		&f->overlap_bytes);
	f->device_bytes = sub_overlap(f->device_bytes, f->overlap_bytes);
	f->peak_bytes = o->uma ? sp_bytes_add(f->device_bytes, f->host_bytes) : f->device_bytes;
	/* torch's counters see neither the CUDA context nor the host side;
	 * allocated not the caching allocator's slack either */
	f->measure_bytes = f->peak_bytes;
	if (o->measure != SP_MEASURE_PROCESS && f->device_bytes < SP_BYTES_SAT) {
		uint64_t off = f->term[SP_T_CUDA_CONTEXT];
		if (o->measure == SP_MEASURE_ALLOCATED)
			off += f->term[SP_T_ALLOCATOR];
		f->measure_bytes = f->device_bytes > off ? f->device_bytes - off : 0;
	}
}

/* The load: a checkpoint is mmapped and copied. While a shard is being
 * copied its mapped pages and the copy of everything before it occupy the
 * pool; pages of shards already read stay behind as clean page cache,
 * which the kernel reclaims under pressure (load_cache_bytes reports
 * them). A GGUF (llama.cpp) or a checkpoint under 5 GB is mapped whole. A
 * 4-bit base quantized on load from 16-bit shards adds one layer's 16-bit
 * weights. */
static void load_terms(const struct sp_model_shape *m, const struct sp_plan_opts *o, const double *t,
		       struct sp_footprint *f)
{
	double P = m->params;
	double file = m->have_tensors && m->weight_bytes > 0 ? (double)m->weight_bytes
		      : m->prequantized && m->quant_bits > 0 ? t[SP_T_WEIGHTS] : P * 2;
	f->load_file_bytes = u64(file, f, SP_T_N);
	double dev_load = t[SP_T_WEIGHTS] + t[SP_T_KBIT_UPCAST] + t[SP_T_CUDA_CONTEXT];
	/* HF writes shards of at most 5 GB (max_shard_size) */
	double shard = m->source == SP_SRC_GGUF || file <= SHARD_BYTES ? file : file / ceil(file / SHARD_BYTES);
	double mapped = shard;
	if (f->quantized_params > 0 && !m->prequantized)
		mapped = shard + f->layer_weight_bytes;
	f->load_mapped_bytes = u64(mapped, f, SP_T_N);
	double host_load = mapped + t[SP_T_HOST_PROCESS];
	f->load_peak_bytes = u64(o->uma ? dev_load + host_load : dev_load, f, SP_T_N);
}

void sp_footprint_compute(const struct sp_model_shape *m, const struct sp_plan_opts *o, struct sp_footprint *f)
{
	memset(f, 0, sizeof *f);
	double t[SP_T_N] = { 0 };
	bool gated = sp_shape_gated(m);
	bool arch = m->n_layers > 0 && m->hidden > 0;
	bool train = o->method != SP_METHOD_INFER;
	enum sp_quant q = job_quant(o);
	f->gated_mlp = gated;
	f->params = m->params;
	weight_terms(m, o, q, t, f);
	double step_tmp;
	trainable_terms(m, o, t, f, &step_tmp);
	/* a 4-bit bitsandbytes base under LoRA on bitsandbytes < 0.43.2 */
	bool legacy = o->bnb_legacy && train && o->method != SP_METHOD_FULL && (q == SP_QUANT_NF4 || q == SP_QUANT_FP4) &&
		      !m->prequantized;
	double tokens = (double)o->batch * o->seq;
	double h = arch ? m->hidden : 4096;
	double al = arch ? act_layer(m, o, gated, legacy) : tokens * 34 * h;
	f->act_layer_bytes = al;
	if (train)
		train_act_terms(m, o, al, t, f);
	else
		infer_terms(m, o, al, arch, t, f);
	fixed_terms(m, o, t, f);
	sum_terms(t, o, step_tmp, f);
	load_terms(m, o, t, f);
	snprintf(f->note, sizeof f->note, "%s%s", arch ? "" : "no architecture: activations from a Llama-like 4096-wide, 32-layer guess",
		 m->prequantized ? (arch ? "weights as stored (pre-quantized)" : "; weights as stored (pre-quantized)") : "");
	sp_footprint_nodes(m, o, f);
}

/* ---- across nodes ------------------------------------------------------------------- */

bool sp_strategy_refused(const struct sp_plan_opts *o, char *why, size_t n)
{
	bool train = o->method != SP_METHOD_INFER;
	if (train && (o->strategy == SP_STRAT_TP || o->strategy == SP_STRAT_PP)) {
		snprintf(why, n,
			 "--strategy %s is for serving (--method infer): training across Sparks is DDP or FSDP, never %s "
			 "parallelism over the link (every layer would wait on a 200 Gb/s hop in forward and backward)",
			 sp_strategy_name(o->strategy), o->strategy == SP_STRAT_TP ? "tensor" : "pipeline");
		return true;
	}
	if (!train && (o->strategy == SP_STRAT_DDP || o->strategy == SP_STRAT_FSDP)) {
		snprintf(why, n, "--strategy %s is for training: serve across Sparks with --strategy tp or pp",
			 sp_strategy_name(o->strategy));
		return true;
	}
	return false;
}

uint64_t sp_node_need(const struct sp_footprint *f)
{
	return f->node_peak_bytes > f->node_load_peak_bytes ? f->node_peak_bytes : f->node_load_peak_bytes;
}

static uint64_t div_u(uint64_t v, double by)
{
	if (v >= SP_BYTES_SAT || !(by > 1))
		return v;
	return (uint64_t)llround((double)v / by);
}

void sp_footprint_nodes(const struct sp_model_shape *m, const struct sp_plan_opts *o, struct sp_footprint *f)
{
	int N = o->nodes > 1 ? o->nodes : 1;
	enum sp_strategy s = N > 1 ? o->strategy : SP_STRAT_NONE;
	f->nodes = N;
	f->strategy = s;
	f->link_bytes = 0;
	uint64_t *tn = f->term_node;
	memcpy(tn, f->term, sizeof f->term);
	double share = (N - 1.0) / N, T = (double)o->batch * o->seq, h = m->hidden > 0 ? m->hidden : 4096;
	double L = m->n_layers > 0 ? m->n_layers : 32;
	double kvh = m->n_kv_heads > 0 ? m->n_kv_heads : N;
	switch (s) {
	case SP_STRAT_FSDP: {
		static const enum sp_term sharded[] = { SP_T_WEIGHTS, SP_T_KBIT_UPCAST, SP_T_ADAPTER, SP_T_GRADIENTS,
							SP_T_OPTIMIZER, SP_T_MASTER };
		for (size_t i = 0; i < sizeof sharded / sizeof sharded[0]; i++)
			tn[sharded[i]] = div_u(f->term[sharded[i]], N);
		/* the unit being computed and the one prefetched, gathered whole at 16 bits */
		tn[SP_T_COMM] = u64(2 * f->layer_weight_bytes, f, SP_T_COMM);
		f->link_bytes = (2.0 * (double)f->term[SP_T_WEIGHTS] + (double)f->term[SP_T_GRADIENTS]) * share;
		break;
	}
	case SP_STRAT_DDP:
		f->link_bytes = 2.0 * (double)f->term[SP_T_GRADIENTS] * share;
		break;
	case SP_STRAT_TP:
		tn[SP_T_WEIGHTS] = div_u(f->term[SP_T_WEIGHTS], N);
		tn[SP_T_KV_CACHE] = div_u(f->term[SP_T_KV_CACHE], kvh < N ? kvh : N);
		/* the all-reduce's input and output of one layer's T x h activations */
		tn[SP_T_COMM] = u64(2 * T * h * 2, f, SP_T_COMM);
		f->link_bytes = 2 * L * (double)o->batch * h * 2 * 2 * share;
		break;
	case SP_STRAT_PP:
		tn[SP_T_WEIGHTS] = div_u(f->term[SP_T_WEIGHTS], N);
		tn[SP_T_KV_CACHE] = div_u(f->term[SP_T_KV_CACHE], N);
		/* the activations handed on and the ones received */
		tn[SP_T_COMM] = u64(2 * T * h * 2, f, SP_T_COMM);
		f->link_bytes = (double)o->batch * h * 2;
		break;
	default:
		break;
	}
	if (s == SP_STRAT_TP || s == SP_STRAT_PP || s == SP_STRAT_FSDP)
		tn[SP_T_ALLOCATOR] = u64(ALLOC_SLACK * ((double)tn[SP_T_ACTIVATIONS] + (double)tn[SP_T_LOGITS] +
							 (double)tn[SP_T_DEQUANT] + (double)tn[SP_T_KV_CACHE] +
							 (double)tn[SP_T_COMM]),
					 f, SP_T_ALLOCATOR);
	uint64_t dev = 0, host = 0, bwd, step;
	for (int i = 0; i < SP_T_N; i++) {
		if (sp_term_is_host((enum sp_term)i))
			host = sp_bytes_add(host, tn[i]);
		else
			dev = sp_bytes_add(dev, tn[i]);
	}
	/* the step's copy is sharded with the state it copies */
	uint64_t tmp = s == SP_STRAT_FSDP ? div_u(f->step_tmp_bytes, N) : f->step_tmp_bytes;
	overlap(tn, f->act_freed_bytes, tmp, grads_transient(o), &bwd, &step, &f->node_overlap_bytes);
	dev = sub_overlap(dev, f->node_overlap_bytes);
	f->node_peak_bytes = o->uma ? sp_bytes_add(dev, host) : dev;
	/* the load: each node reads and copies its own share of the checkpoint
	 * (FSDP's sharded load, TP/PP's slice); DDP and one node the whole model */
	if (s == SP_STRAT_NONE || s == SP_STRAT_DDP) {
		f->node_load_peak_bytes = f->load_peak_bytes;
	} else {
		double dev_load = (double)tn[SP_T_WEIGHTS] + (double)tn[SP_T_KBIT_UPCAST] + (double)tn[SP_T_CUDA_CONTEXT];
		double host_load = (double)f->load_mapped_bytes + (double)tn[SP_T_HOST_PROCESS];
		f->node_load_peak_bytes = u64(o->uma ? dev_load + host_load : dev_load, f, SP_T_N);
	}
}
