// SPDX-License-Identifier: MIT
/* The accounting: parameter counts of real architectures against their
 * published totals, PEFT's trainable counts, and each footprint term
 * against hand-computed values (docs/plan.md has the formulas). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "shapes.h"
#include "account/fit.h"

#define GiB 1073741824.0

static void assert_within(double got, double want, double rel)
{
	if (fabs(got - want) > rel * fabs(want)) {
		print_error("got %.6g, want %.6g (+-%.2f%%)\n", got, want, rel * 100);
		fail();
	}
}

static struct sp_plan_opts opts(enum sp_method m)
{
	struct sp_plan_opts o;
	sp_plan_opts_init(&o);
	o.method = m;
	o.uma = false;
	return o;
}

static void param_counts(void **st)
{
	(void)st;
	/* published totals (model cards / safetensors index), within 0.5% */
	struct {
		struct sp_model_shape m;
		double want;
	} c[] = {
		{ LLAMA31_8B, 8030261248.0 },  { LLAMA31_70B, 70553706496.0 }, { LLAMA2_7B, 6738415616.0 },
		{ LLAMA2_13B, 13015864320.0 }, { QWEN25_7B, 7615616512.0 },    { GEMMA2_9B, 9241705984.0 },
		{ MIXTRAL_8X7B, 46702792704.0 }, { GPT2, 124439808.0 },        { PHI15, 1418270720.0 },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
		assert_within(c[i].m.params, c[i].want, 0.005);
	/* exact where the architecture has no biases or extra norms */
	struct sp_model_shape l8 = LLAMA31_8B, l70 = LLAMA31_70B, g2 = GPT2, mx = MIXTRAL_8X7B;
	assert_true(l8.params == 8030261248.0);
	assert_true(l70.params == 70553706496.0);
	assert_true(g2.params == 124439808.0);
	assert_true(mx.params == 46702792704.0);
	/* MoE: ~12.9B active of 46.7B */
	assert_within(mx.params_active, 12.9e9, 0.01);
	/* Llama 3.1 8B: embeddings + lm_head untied */
	assert_true(l8.embed_params == 2.0 * 128256 * 4096);
}

static void lora_counts(void **st)
{
	(void)st;
	struct sp_model_shape l2 = LLAMA2_7B, l8 = LLAMA31_8B, mx = MIXTRAL_8X7B, g = GEMMA2_9B;
	/* PEFT print_trainable_parameters(): Llama-2-7b, r=8, q_proj+v_proj:
	 * "trainable params: 4,194,304 || all params: 6,742,609,920" */
	assert_true(sp_lora_params(&l2, 8, SP_LT_Q | SP_LT_V) == 4194304.0);
	assert_true(l2.params + 4194304.0 == 6742609920.0);
	/* Unsloth's notebooks: Llama-3.1-8B all linear r=16 -> 41,943,040 */
	assert_true(sp_lora_params(&l8, 16, SP_LT_ALL) == 41943040.0);
	assert_true(sp_lora_params(&l8, 32, SP_LT_ALL) == 83886080.0);
	/* GQA: k and v are 1024 wide: 8*(4096+1024)*32 each */
	assert_true(sp_lora_params(&l8, 8, SP_LT_K) == 8.0 * (4096 + 1024) * 32);
	/* Gemma 2: q is 16 heads x 256 = 4096 wide on a 3584 residual */
	assert_true(sp_lora_params(&g, 8, SP_LT_Q) == 8.0 * (3584 + 4096) * 42);
	/* MoE: every expert's w1/w2/w3 is a target */
	assert_true(sp_lora_params(&mx, 8, SP_LT_GATE) == 8.0 * (4096 + 14336) * 8 * 32);
}

static void targets_parse(void **st)
{
	(void)st;
	char b[64];
	assert_int_equal(sp_lora_targets_parse("q,v"), SP_LT_Q | SP_LT_V);
	assert_int_equal(sp_lora_targets_parse("q_proj, v_proj"), SP_LT_Q | SP_LT_V);
	assert_int_equal(sp_lora_targets_parse("all-linear"), SP_LT_ALL);
	assert_int_equal(sp_lora_targets_parse("attn,mlp"), SP_LT_ALL);
	assert_int_equal(sp_lora_targets_parse("q,,v"), -1);
	assert_int_equal(sp_lora_targets_parse(""), -1);
	assert_int_equal(sp_lora_targets_parse("q,lm_head"), -1);
	assert_string_equal(sp_lora_targets_str(SP_LT_ALL, b, sizeof b), "q,k,v,o,gate,up,down");
	assert_int_equal(sp_method_parse("QLoRA"), SP_METHOD_QLORA);
	assert_int_equal(sp_method_parse("dpo"), -1);
	assert_int_equal(sp_optim_parse("paged_adamw_8bit"), SP_OPTIM_PAGED_ADAMW8BIT);
	assert_int_equal(sp_optim_parse("adamw8bit"), SP_OPTIM_ADAMW8BIT);
	assert_int_equal(sp_cdtype_parse("bfloat16"), SP_CDT_BF16);
	assert_int_equal(sp_quant_parse("nf4"), SP_QUANT_NF4);
	assert_int_equal(sp_framework_parse("unsloth"), SP_FW_UNSLOTH);
}

static void weights_terms(void **st)
{
	(void)st;
	struct sp_model_shape l8 = LLAMA31_8B, l70 = LLAMA31_70B;
	struct sp_footprint f;
	struct sp_plan_opts o = opts(SP_METHOD_LORA);
	sp_footprint_compute(&l8, &o, &f);
	assert_true(f.term[SP_T_WEIGHTS] == 2ULL * 8030261248ULL); /* bf16 */
	assert_true(f.term[SP_T_KBIT_UPCAST] == 0);
	o.dtype = SP_CDT_FP32;
	sp_footprint_compute(&l8, &o, &f);
	assert_true(f.term[SP_T_WEIGHTS] == 4ULL * 8030261248ULL);
	/* QLoRA: the blocks' linears in NF4 with double quantization
	 * (0.5 B + 0.127 bit per param), embeddings and lm_head 16-bit */
	o = opts(SP_METHOD_QLORA);
	o.framework = SP_FW_UNSLOTH;
	sp_footprint_compute(&l70, &o, &f);
	double want = l70.linear_params * (0.5 + 0.127 / 8) + (l70.params - l70.linear_params) * 2;
	assert_within((double)f.term[SP_T_WEIGHTS], want, 1e-9);
	assert_within((double)f.term[SP_T_WEIGHTS], 39.5e9, 0.01);
	/* HF+PEFT: prepare_model_for_kbit_training upcasts what is not quantized to fp32 */
	o.framework = SP_FW_HF;
	sp_footprint_compute(&l70, &o, &f);
	assert_true(f.term[SP_T_KBIT_UPCAST] == (uint64_t)llround((l70.params - l70.linear_params) * 2));
	/* int8 */
	o = opts(SP_METHOD_INFER);
	o.quant = SP_QUANT_INT8;
	sp_footprint_compute(&l8, &o, &f);
	assert_within((double)f.term[SP_T_WEIGHTS], l8.linear_params * 1.001 + l8.embed_params * 2 + 266240.0 * 2, 1e-6);
}

static void trainable_terms(void **st)
{
	(void)st;
	struct sp_model_shape l8 = LLAMA31_8B, l2 = LLAMA2_7B;
	struct sp_footprint f;
	/* full fine-tune, bf16 params, torch AdamW keeps exp_avg/exp_avg_sq in
	 * the param dtype: 2 (w) + 2 (g) + 4 (m, v) bytes per param, and its
	 * foreach step makes one state's copy (2) */
	struct sp_plan_opts o = opts(SP_METHOD_FULL);
	sp_footprint_compute(&l8, &o, &f);
	assert_true(f.trainable_params == l8.params);
	assert_true(f.term[SP_T_GRADIENTS] == 2ULL * 8030261248ULL);
	assert_true(f.term[SP_T_OPTIMIZER] == 6ULL * 8030261248ULL && f.step_tmp_bytes == 2ULL * 8030261248ULL);
	assert_true(f.term[SP_T_MASTER] == 0);
	/* mixed precision with an fp32 master copy */
	o.master_weights = true;
	sp_footprint_compute(&l8, &o, &f);
	assert_true(f.term[SP_T_MASTER] == 4ULL * 8030261248ULL);
	/* fp32 params: the classic 16 bytes per param (w 4, g 4, Adam 8), and
	 * the foreach step's copy (4) */
	o = opts(SP_METHOD_FULL);
	o.dtype = SP_CDT_FP32;
	sp_footprint_compute(&l8, &o, &f);
	assert_true(f.term[SP_T_WEIGHTS] + f.term[SP_T_GRADIENTS] + f.term[SP_T_OPTIMIZER] - f.step_tmp_bytes ==
		    16ULL * 8030261248ULL);
	assert_true(f.step_tmp_bytes == 4ULL * 8030261248ULL);
	/* 8-bit AdamW: 2 bytes + an fp32 absmax per 2048 values */
	o.optim = SP_OPTIM_ADAMW8BIT;
	sp_footprint_compute(&l8, &o, &f);
	assert_within((double)f.term[SP_T_OPTIMIZER], 8030261248.0 * (2 + 8.0 / 2048), 1e-9);
	o.optim = SP_OPTIM_SGD;
	sp_footprint_compute(&l8, &o, &f);
	assert_true(f.term[SP_T_OPTIMIZER] == 0);
	/* adafactor: factored, a tiny fraction of AdamW */
	o.optim = SP_OPTIM_ADAFACTOR;
	sp_footprint_compute(&l8, &o, &f);
	assert_true(f.term[SP_T_OPTIMIZER] > 0 && f.term[SP_T_OPTIMIZER] < 8030261248ULL / 100);
	/* LoRA (PEFT): fp32 adapters, fp32 grads, fp32 AdamW states: 16 B/param
	 * (and the foreach step's copy of one state, 4) */
	o = opts(SP_METHOD_LORA);
	o.lora_rank = 8;
	o.lora_targets = SP_LT_Q | SP_LT_V;
	sp_footprint_compute(&l2, &o, &f);
	assert_true(f.trainable_params == 4194304.0);
	assert_true(f.term[SP_T_ADAPTER] == 4ULL * 4194304);
	assert_true(f.term[SP_T_GRADIENTS] == 4ULL * 4194304);
	assert_true(f.term[SP_T_OPTIMIZER] == 12ULL * 4194304 && f.step_tmp_bytes == 4ULL * 4194304);
	/* torchtune keeps adapters in the model dtype; its recipes step a fused AdamW */
	o.framework = SP_FW_TORCHTUNE;
	sp_footprint_compute(&l2, &o, &f);
	assert_true(f.term[SP_T_ADAPTER] == 2ULL * 4194304 && f.term[SP_T_OPTIMIZER] == 4ULL * 4194304);
	/* inference trains nothing */
	o = opts(SP_METHOD_INFER);
	sp_footprint_compute(&l2, &o, &f);
	assert_true(f.trainable_params == 0 && f.term[SP_T_GRADIENTS] == 0 && f.term[SP_T_OPTIMIZER] == 0);
}

static void activation_terms(void **st)
{
	(void)st;
	struct sp_model_shape l8 = LLAMA31_8B, g2 = GPT2;
	struct sp_footprint f;
	struct sp_plan_opts o = opts(SP_METHOD_LORA);
	o.batch = 2;
	o.seq = 1024;
	o.grad_ckpt = false;
	sp_footprint_compute(&l8, &o, &f);
	/* per layer s*b*(12h + 4*kv_dim + 8I), no dropout, SDPA */
	double T = 2048, layer = T * (12 * 4096 + 4 * 1024 + 8 * 14336);
	assert_true(f.act_layer_bytes == layer);
	assert_true(f.term[SP_T_ACTIVATIONS] == (uint64_t)(32 * layer + T * 4 * 4096));
	/* full recompute: each layer's input (2sbh) + one layer's working set */
	o.grad_ckpt = true;
	sp_footprint_compute(&l8, &o, &f);
	assert_true(f.term[SP_T_ACTIVATIONS] == (uint64_t)(32 * 2 * T * 4096 + layer + T * 4 * 4096));
	/* eager attention adds Korthikanti's 5*a*s^2*b per layer */
	o.attn = SP_ATTN_EAGER;
	sp_footprint_compute(&l8, &o, &f);
	assert_true(f.act_layer_bytes == layer + 5.0 * 32 * 1024 * 1024 * 2);
	/* SDPA's unfused math path keeps the 16-bit softmax output: 2*a*s^2*b */
	o.attn = SP_ATTN_MATH;
	sp_footprint_compute(&l8, &o, &f);
	assert_true(f.act_layer_bytes == layer + 2.0 * 32 * 1024 * 1024 * 2);
	/* GPT-2 (h=768, a=12, I=4h, dropout): exactly Korthikanti's
	 * s*b*h*(34 + 5*a*s/h) */
	o = opts(SP_METHOD_FULL);
	o.batch = 1;
	o.seq = 1024;
	o.grad_ckpt = false;
	o.attn = SP_ATTN_EAGER;
	sp_footprint_compute(&g2, &o, &f);
	double s = 1024, h = 768, a = 12;
	assert_true(f.act_layer_bytes == s * h * (34 + 5 * a * s / h));
	/* Unsloth offloads the checkpoints: they move to the host side */
	o = opts(SP_METHOD_QLORA);
	o.framework = SP_FW_UNSLOTH;
	o.seq = 4096;
	sp_footprint_compute(&l8, &o, &f);
	assert_true(f.term[SP_T_ACT_OFFLOADED] == (uint64_t)(32 * 2 * 4096.0 * 4096));
	assert_true(f.host_bytes == f.term[SP_T_ACT_OFFLOADED] + f.term[SP_T_HOST_PROCESS]);
}

static void logits_and_kv(void **st)
{
	(void)st;
	struct sp_model_shape l8 = LLAMA31_8B, l70 = LLAMA31_70B;
	struct sp_footprint f;
	struct sp_plan_opts o = opts(SP_METHOD_LORA);
	o.batch = 4;
	o.seq = 2048;
	sp_footprint_compute(&l8, &o, &f);
	/* HF: batch x seq x vocab, fp32 upcast + shifted copy + log-softmax + grad */
	assert_true(f.term[SP_T_LOGITS] == 4ULL * 2048 * 128256 * 16);
	assert_true(f.term[SP_T_LOGITS] > 15 * GiB); /* "often GiB": 15.7 GiB here */
	o.framework = SP_FW_TORCHTUNE;
	sp_footprint_compute(&l8, &o, &f);
	assert_true(f.term[SP_T_LOGITS] == (uint64_t)(4.0 * 2048 * 128256 * 3.5));
	o.framework = SP_FW_UNSLOTH;
	sp_footprint_compute(&l8, &o, &f);
	assert_true(f.term[SP_T_LOGITS] == 1024ULL * 128256 * 4);
	/* KV cache: layers x kv_heads x head_dim x seq x batch x 2 x bytes */
	o = opts(SP_METHOD_INFER);
	o.seq = 32768;
	o.batch = 1;
	sp_footprint_compute(&l70, &o, &f);
	assert_true(f.term[SP_T_KV_CACHE] == 80ULL * 8 * 128 * 32768 * 1 * 2 * 2);
	assert_true(f.term[SP_T_KV_CACHE] == 10ULL << 30); /* 10 GiB at 32k context */
}

static void peaks(void **st)
{
	(void)st;
	struct sp_model_shape l8 = LLAMA31_8B;
	struct sp_footprint f;
	struct sp_plan_opts o = opts(SP_METHOD_LORA);
	o.uma = true;
	sp_footprint_compute(&l8, &o, &f);
	assert_true(f.peak_bytes == f.device_bytes + f.host_bytes);
	uint64_t sum = 0;
	for (int i = 0; i < SP_T_N; i++)
		sum += f.term[i];
	assert_true(sum - f.overlap_bytes == f.peak_bytes);
	/* load: the file (bf16, no files read: 2 B/param) is read in HF's 5 GB
	 * shards; the copy + the shard being mapped */
	assert_true(f.load_file_bytes == 2ULL * 8030261248ULL);
	uint64_t shard = (uint64_t)llround(2.0 * 8030261248.0 / 4); /* 16.06 GB in four <= 5 GB shards */
	assert_true(f.load_mapped_bytes == shard);
	assert_true(f.load_peak_bytes == f.term[SP_T_WEIGHTS] + f.term[SP_T_CUDA_CONTEXT] + shard +
						 f.term[SP_T_HOST_PROCESS]);
	/* the real tensor bytes when files were read */
	struct sp_model_shape sh = LLAMA31_8B;
	sh.have_tensors = true;
	sh.weight_bytes = 16060522496ULL;
	sp_footprint_compute(&sh, &o, &f);
	assert_true(f.load_mapped_bytes == 16060522496ULL / 4 && f.load_file_bytes == 16060522496ULL);
	/* a GGUF is mapped whole */
	sh.source = SP_SRC_GGUF;
	sp_footprint_compute(&sh, &o, &f);
	assert_true(f.load_mapped_bytes == 16060522496ULL);
	/* discrete: the device side alone against the GPU */
	o.uma = false;
	sp_footprint_compute(&l8, &o, &f);
	assert_true(f.peak_bytes == f.device_bytes);
	/* QLoRA from 16-bit shards streams one shard + one layer at a time */
	o = opts(SP_METHOD_QLORA);
	o.uma = true;
	sp_footprint_compute(&l8, &o, &f);
	double layer16 = l8.linear_params / 32 * 2;
	assert_within((double)f.load_peak_bytes,
		      (double)(f.term[SP_T_WEIGHTS] + f.term[SP_T_KBIT_UPCAST] + f.term[SP_T_CUDA_CONTEXT] +
			       f.term[SP_T_HOST_PROCESS]) + 2.0 * 8030261248.0 / 4 + layer16, 1e-9);
	/* a pre-quantized checkpoint is mapped and copied as stored */
	struct sp_model_shape pq = LLAMA31_8B;
	pq.prequantized = true;
	pq.have_tensors = true;
	pq.weight_bytes = 5700000000ULL;
	sp_footprint_compute(&pq, &o, &f);
	assert_true(f.term[SP_T_WEIGHTS] == 5700000000ULL && f.load_file_bytes == 5700000000ULL);
}

static void from_params(void **st)
{
	(void)st;
	struct sp_model_shape m;
	sp_model_from_params(70e9, &m);
	assert_int_equal(m.hidden, 8192);
	assert_in_range(m.n_layers, 78, 81); /* Llama 3 70B: 80 */
	assert_true(m.params == 70e9);
	assert_true(m.source == SP_SRC_PARAMS);
	sp_model_from_params(8e9, &m);
	assert_int_equal(m.hidden, 4096);
	assert_int_equal(m.n_layers, 32);
	sp_model_from_params(1.2e9, &m);
	assert_int_equal(m.hidden, 2048);
	assert_true(m.tied_embeddings);
	assert_true(m.n_layers >= 1);
	sp_model_from_params(1e6, &m); /* tiny: still a usable shape */
	assert_true(m.n_layers >= 1 && m.hidden > 0 && m.linear_params > 0 && m.linear_params < m.params);
	sp_model_from_params(-1, &m);
	assert_true(m.params == 0);
	/* the estimate lands close to the real 8B and 70B footprints */
	struct sp_model_shape real = LLAMA31_8B;
	struct sp_footprint fe, fr;
	struct sp_plan_opts o = opts(SP_METHOD_QLORA);
	sp_model_from_params(8.03e9, &m);
	sp_footprint_compute(&m, &o, &fe);
	sp_footprint_compute(&real, &o, &fr);
	assert_within((double)fe.peak_bytes, (double)fr.peak_bytes, 0.05);
}

/* A job past any machine saturates instead of wrapping: the review's
 * "plan llama-3.1-8b --method full --no-grad-ckpt --attn eager --framework
 * unsloth --batch 512 --seq 16777216" once summed two huge terms past 2^64
 * and said "fits, needs 63.8 GiB". */
static void saturation(void **st)
{
	(void)st;
	struct sp_model_shape m = LLAMA31_8B;
	assert_int_equal(sp_shape_complete(&m), 0);
	struct sp_plan_opts o = opts(SP_METHOD_FULL);
	o.grad_ckpt = false;
	o.attn = SP_ATTN_EAGER;
	o.framework = SP_FW_UNSLOTH;
	o.batch = 512;
	o.seq = 16777216;
	o.uma = true;
	struct sp_footprint f;
	sp_footprint_compute(&m, &o, &f);
	assert_int_equal(f.saturated, SP_T_ACTIVATIONS + 1);
	assert_int_equal(f.term[SP_T_ACTIVATIONS], SP_BYTES_SAT);
	assert_int_equal(f.peak_bytes, SP_BYTES_SAT);
	for (int i = 0; i < SP_T_N; i++)
		assert_true(f.peak_bytes >= f.term[i]);
	assert_int_equal(sp_judge(sp_need(&f), 100ULL << 30), SP_NO);
	assert_int_equal(sp_judge(sp_need(&f), UINT64_MAX), SP_NO);
	assert_int_equal(sp_bytes_add(SP_BYTES_SAT - 1, 2), SP_BYTES_SAT);
	assert_int_equal(sp_bytes_add(1, 2), 3);
	/* an ordinary job is not marked */
	o = opts(SP_METHOD_LORA);
	sp_footprint_compute(&m, &o, &f);
	assert_int_equal(f.saturated, 0);
}

/* Full fine-tuning: the gradients grow in backward as the saved
 * activations and the loss buffers go, so they never peak together. */
static void full_overlap(void **st)
{
	(void)st;
	struct sp_model_shape m = LLAMA31_8B;
	struct sp_plan_opts o = opts(SP_METHOD_FULL);
	o.grad_ckpt = false;
	o.batch = 4;
	o.seq = 768;
	struct sp_footprint f;
	sp_footprint_compute(&m, &o, &f);
	double P = 8030261248.0, T = 4 * 768.0;
	assert_true(f.term[SP_T_GRADIENTS] == (uint64_t)(2 * P));
	/* what backward frees: 32 layers' saved activations + 16 B per logit */
	double act = 32 * f.act_layer_bytes, lg = T * 128256 * 16;
	assert_within((double)f.backward_phase_bytes, act + lg, 1e-9);
	/* the step phase: the gradients and foreach AdamW's copy of one state
	 * (bf16 here) the size of every trainable parameter, which the
	 * optimizer term holds */
	assert_true(f.step_tmp_bytes == (uint64_t)(2 * P));
	assert_true(f.step_phase_bytes == f.term[SP_T_GRADIENTS] + f.step_tmp_bytes);
	/* backward keeps more than the gradients (16 GB) alone, but less than
	 * the step phase (32 GB): the backward phase is what overlaps */
	assert_true(f.backward_phase_bytes > f.term[SP_T_GRADIENTS]);
	assert_true(f.step_phase_bytes > f.backward_phase_bytes);
	assert_true(f.overlap_bytes == f.backward_phase_bytes);
	uint64_t sum = 0;
	for (int i = 0; i < SP_T_N; i++)
		sum += f.term[i];
	assert_true(f.device_bytes + f.host_bytes == sum - f.overlap_bytes && f.peak_bytes == f.device_bytes);
	/* with checkpointing and a short sequence the gradients dominate: the
	 * checkpoints and logits are what overlaps */
	o.grad_ckpt = true;
	o.batch = 1;
	o.seq = 256;
	sp_footprint_compute(&m, &o, &f);
	assert_within((double)f.overlap_bytes, 32 * 2 * 256 * 4096.0 + 256 * 128256 * 16.0, 1e-9);
	/* the step phase is the peak: the sum less the backward phase */
	sum = 0;
	for (int i = 0; i < SP_T_N; i++)
		sum += f.term[i];
	assert_true(f.step_phase_bytes > f.backward_phase_bytes && f.overlap_bytes == f.backward_phase_bytes);
	assert_true(f.device_bytes + f.host_bytes == sum - f.overlap_bytes);
	/* torchtune's recipes step a fused AdamW, 8-bit AdamW has no such copy */
	o.framework = SP_FW_TORCHTUNE;
	sp_footprint_compute(&m, &o, &f);
	assert_true(f.step_tmp_bytes == 0);
	o.framework = SP_FW_HF;
	o.optim = SP_OPTIM_ADAMW8BIT;
	sp_footprint_compute(&m, &o, &f);
	assert_true(f.step_tmp_bytes == 0);
	/* inference has no backward */
	o = opts(SP_METHOD_INFER);
	sp_footprint_compute(&m, &o, &f);
	assert_true(f.overlap_bytes == 0);
}

/* --padding longest: the loss buffers once more in the caching allocator's
 * slack; allocated memory does not see it, and inference has no loss */
static void padding_longest(void **st)
{
	(void)st;
	struct sp_model_shape m = LLAMA31_8B;
	struct sp_plan_opts o = opts(SP_METHOD_LORA);
	o.uma = false;
	struct sp_footprint mx, lg;
	for (int c = 0; c < 3; c++) {
		o.measure = c == 0 ? SP_MEASURE_PROCESS : c == 1 ? SP_MEASURE_RESERVED : SP_MEASURE_ALLOCATED;
		o.padding = SP_PAD_MAX;
		sp_footprint_compute(&m, &o, &mx);
		o.padding = SP_PAD_LONGEST;
		sp_footprint_compute(&m, &o, &lg);
		assert_true(lg.term[SP_T_LOGITS] == mx.term[SP_T_LOGITS]);
		assert_true(lg.term[SP_T_ALLOCATOR] - mx.term[SP_T_ALLOCATOR] == mx.term[SP_T_LOGITS]);
		if (c < 2)
			assert_true(lg.measure_bytes - mx.measure_bytes == mx.term[SP_T_LOGITS]);
		else
			assert_true(lg.measure_bytes == mx.measure_bytes);
	}
	assert_true(sp_padding_parse("longest") == SP_PAD_LONGEST && sp_padding_parse("max") == SP_PAD_MAX &&
		    sp_padding_parse("min") == -1);
	o = opts(SP_METHOD_INFER);
	sp_footprint_compute(&m, &o, &mx);
	o.padding = SP_PAD_LONGEST;
	sp_footprint_compute(&m, &o, &lg);
	assert_true(lg.peak_bytes == mx.peak_bytes);
}

/* --framework megatron: bf16 weights, fp32 main grads kept throughout, fp32
 * main params and Adam states (18 bytes a parameter), fused Adam (no step
 * copy), 6 bytes a logit */
static void megatron_profile(void **st)
{
	(void)st;
	struct sp_model_shape m = LLAMA31_8B;
	struct sp_plan_opts o = opts(SP_METHOD_FULL);
	o.framework = SP_FW_MEGATRON;
	o.grad_ckpt = false;
	o.seq = 4096;
	struct sp_footprint f;
	sp_footprint_compute(&m, &o, &f);
	double P = 8030261248.0;
	assert_true(f.term[SP_T_WEIGHTS] + f.term[SP_T_GRADIENTS] + f.term[SP_T_OPTIMIZER] + f.term[SP_T_MASTER] ==
		    (uint64_t)(18 * P));
	assert_true(f.step_tmp_bytes == 0 && f.overlap_bytes == 0);
	assert_within((double)f.term[SP_T_LOGITS], 4096.0 * 128256 * 6, 1e-9);
	assert_true(sp_framework_parse("megatron") == SP_FW_MEGATRON);
	/* LoRA: the adapter in bf16, its main grad, main param and states in fp32 */
	o = opts(SP_METHOD_LORA);
	o.framework = SP_FW_MEGATRON;
	sp_footprint_compute(&m, &o, &f);
	double A = f.lora_params;
	assert_true(A > 0 && f.term[SP_T_ADAPTER] == (uint64_t)(2 * A) && f.term[SP_T_GRADIENTS] == (uint64_t)(4 * A) &&
		    f.term[SP_T_MASTER] == (uint64_t)(4 * A) && f.term[SP_T_OPTIMIZER] == (uint64_t)(8 * A));
}

/* bitsandbytes' load_in_4bit without double quantization: 4.5 bits */
static void double_quant(void **st)
{
	(void)st;
	struct sp_model_shape m = LLAMA31_8B;
	struct sp_plan_opts o = opts(SP_METHOD_QLORA);
	struct sp_footprint dq, nodq;
	sp_footprint_compute(&m, &o, &dq);
	o.no_double_quant = true;
	sp_footprint_compute(&m, &o, &nodq);
	double lin = m.linear_params;
	assert_within((double)(nodq.term[SP_T_WEIGHTS] - dq.term[SP_T_WEIGHTS]), lin * (0.5 - 0.127) / 8, 1e-6);
	assert_within((double)nodq.term[SP_T_WEIGHTS], lin * 4.5 / 8 + (m.params - lin) * 2, 1e-9);
}

/* --bnb-legacy: bitsandbytes < 0.43.2 keeps the input of every 4-bit linear;
 * with LoRA on q,v the untargeted ones are o (2q), the MLP input (2h) and
 * down (2I) per token and layer */
static void bnb_legacy(void **st)
{
	(void)st;
	struct sp_model_shape m = LLAMA2_7B;
	struct sp_plan_opts o = opts(SP_METHOD_QLORA);
	struct sp_footprint now, old;
	o.lora_targets = SP_LT_Q | SP_LT_V;
	o.grad_ckpt = false;
	o.batch = 1;
	o.seq = 1304;
	sp_footprint_compute(&m, &o, &now);
	o.bnb_legacy = true;
	sp_footprint_compute(&m, &o, &old);
	double per_layer = 1304.0 * (2 * 4096 + 2 * 4096 + 2 * 11008);
	assert_within((double)(old.term[SP_T_ACTIVATIONS] - now.term[SP_T_ACTIVATIONS]), 32 * per_layer, 1e-9);
	assert_within(old.act_layer_bytes - now.act_layer_bytes, per_layer, 1e-9);
	/* checkpointed: one layer's recompute holds them */
	o.grad_ckpt = true;
	sp_footprint_compute(&m, &o, &old);
	o.bnb_legacy = false;
	sp_footprint_compute(&m, &o, &now);
	assert_within((double)(old.term[SP_T_ACTIVATIONS] - now.term[SP_T_ACTIVATIONS]), per_layer, 1e-9);
	/* every linear targeted: the adapters keep those inputs anyway */
	o.grad_ckpt = false;
	o.lora_targets = SP_LT_ALL;
	sp_footprint_compute(&m, &o, &now);
	o.bnb_legacy = true;
	sp_footprint_compute(&m, &o, &old);
	assert_true(old.term[SP_T_ACTIVATIONS] == now.term[SP_T_ACTIVATIONS]);
	/* no 4-bit base: nothing */
	o = opts(SP_METHOD_LORA);
	o.lora_targets = SP_LT_Q | SP_LT_V;
	sp_footprint_compute(&m, &o, &now);
	o.bnb_legacy = true;
	sp_footprint_compute(&m, &o, &old);
	assert_true(old.term[SP_T_ACTIVATIONS] == now.term[SP_T_ACTIVATIONS]);
}

/* one norm a layer (Phi-1/2, Falcon-7B: attention and MLP read the same
 * normed input): no second norm's input and no separate MLP input, 4h a
 * token less; under --bnb-legacy the MLP's input is the attention's */
static void one_norm(void **st)
{
	(void)st;
	char err[256];
	struct sp_model_shape m = { 0 };
	const char f7[] = "{\"model_type\":\"falcon\",\"hidden_size\":4544,\"num_hidden_layers\":32,"
			  "\"num_attention_heads\":71,\"multi_query\":true,\"new_decoder_architecture\":false,"
			  "\"parallel_attn\":true,\"bias\":false,\"vocab_size\":65024}";
	assert_int_equal(sp_hfconfig_parse(f7, sizeof f7 - 1, "c", &m, err, sizeof err), 0);
	assert_true(m.one_norm);
	struct sp_plan_opts o = opts(SP_METHOD_LORA);
	o.grad_ckpt = false;
	o.batch = 1;
	o.seq = 1000;
	struct sp_footprint one, two;
	sp_footprint_compute(&m, &o, &one);
	struct sp_model_shape m2 = m;
	m2.one_norm = false;
	sp_footprint_compute(&m2, &o, &two);
	assert_within(two.act_layer_bytes - one.act_layer_bytes, 1000.0 * 4 * 4544, 1e-9);
	/* QLoRA on q,v, bitsandbytes < 0.43.2: o (2q) and fc2 (2I) keep their
	 * inputs; the MLP's input is the attention's, kept by the adapters */
	o = opts(SP_METHOD_QLORA);
	o.grad_ckpt = false;
	o.batch = 1;
	o.seq = 1000;
	o.lora_targets = SP_LT_Q | SP_LT_V;
	sp_footprint_compute(&m, &o, &two);
	o.bnb_legacy = true;
	sp_footprint_compute(&m, &o, &one);
	assert_within(one.act_layer_bytes - two.act_layer_bytes, 1000.0 * (2 * 4544 + 2 * 4 * 4544), 1e-9);
	/* Falcon-40B's new decoder has a norm for each */
	const char f40[] = "{\"model_type\":\"falcon\",\"hidden_size\":8192,\"num_hidden_layers\":60,"
			   "\"num_attention_heads\":128,\"num_kv_heads\":8,\"new_decoder_architecture\":true,"
			   "\"parallel_attn\":true,\"bias\":false,\"vocab_size\":65024}";
	memset(&m, 0, sizeof m);
	assert_int_equal(sp_hfconfig_parse(f40, sizeof f40 - 1, "c", &m, err, sizeof err), 0);
	assert_false(m.one_norm);
}

/* --loss and --offload-activations */
static void loss_and_offload(void **st)
{
	(void)st;
	struct sp_model_shape m = LLAMA31_8B;
	struct sp_plan_opts o = opts(SP_METHOD_LORA);
	struct sp_footprint f;
	double TV = 2048.0 * 128256;
	o.loss = SP_LOSS_BF16;
	sp_footprint_compute(&m, &o, &f);
	assert_true(f.term[SP_T_LOGITS] == (uint64_t)(TV * 6));
	o.loss = SP_LOSS_CHUNKED;
	sp_footprint_compute(&m, &o, &f);
	assert_true(f.term[SP_T_LOGITS] == (uint64_t)(TV * 3.5));
	o.loss = SP_LOSS_FP32;
	o.framework = SP_FW_UNSLOTH; /* the loss overrides the framework's fused one */
	sp_footprint_compute(&m, &o, &f);
	assert_true(f.term[SP_T_LOGITS] == (uint64_t)(TV * 16));
	/* offloaded checkpoints: the layer inputs move to the host side */
	o = opts(SP_METHOD_LORA);
	o.offload_activations = true;
	sp_footprint_compute(&m, &o, &f);
	assert_true(f.term[SP_T_ACT_OFFLOADED] == 32ULL * 2 * 2048 * 4096);
	o.uma = true;
	struct sp_footprint g;
	sp_footprint_compute(&m, &o, &f);
	o.offload_activations = false;
	sp_footprint_compute(&m, &o, &g);
	/* on UMA it moves bytes, it saves none (within the overlap's one layer) */
	assert_within((double)f.peak_bytes, (double)g.peak_bytes, 0.02);
}

/* Across nodes, each strategy's per-node terms against hand-computed figures. */
static void nodes_terms(void **st)
{
	(void)st;
	struct sp_model_shape m = LLAMA31_70B;
	struct sp_plan_opts o = opts(SP_METHOD_FULL);
	struct sp_footprint one, f;
	double P = 70553706496.0;
	sp_footprint_compute(&m, &o, &one);
	assert_int_equal(one.nodes, 1);
	assert_true(one.node_peak_bytes == one.peak_bytes);
	for (int i = 0; i < SP_T_N; i++)
		assert_true(one.term_node[i] == one.term[i]);
	/* DDP: a full replica on every node, nothing saved; the ring all-reduce
	 * sends 2 x gradients x (N-1)/N */
	o.nodes = 2;
	o.strategy = SP_STRAT_DDP;
	sp_footprint_compute(&m, &o, &f);
	assert_true(f.node_peak_bytes == one.peak_bytes);
	assert_within(f.link_bytes, 2 * (2 * P) * 0.5, 1e-9);
	/* FSDP over 4: weights, gradients, optimizer / 4; two layers' 16-bit
	 * weights gathered; (2 x weights + gradients) x 3/4 on the link */
	o.nodes = 4;
	o.strategy = SP_STRAT_FSDP;
	sp_footprint_compute(&m, &o, &f);
	assert_true(f.term_node[SP_T_WEIGHTS] == (uint64_t)llround(2 * P / 4));
	assert_true(f.term_node[SP_T_GRADIENTS] == (uint64_t)llround(2 * P / 4));
	/* the two states and the foreach step's copy of one, sharded with them */
	assert_true(f.term_node[SP_T_OPTIMIZER] == (uint64_t)llround(6 * P / 4));
	assert_true(f.term_node[SP_T_ACTIVATIONS] == one.term[SP_T_ACTIVATIONS]);
	assert_true(f.term_node[SP_T_LOGITS] == one.term[SP_T_LOGITS]);
	assert_within((double)f.term_node[SP_T_COMM], 2 * (m.linear_params / 80) * 2, 1e-9);
	assert_within(f.link_bytes, (2 * 2 * P + 2 * P) * 0.75, 1e-9);
	assert_true(f.node_peak_bytes < one.peak_bytes / 2);
	/* TP serving over 2: weights / 2, KV / 2 (8 KV heads), an all-reduce
	 * buffer of 2 x T x h x 2 bytes */
	o = opts(SP_METHOD_INFER);
	o.seq = 32768;
	sp_footprint_compute(&m, &o, &one);
	assert_within(one.kv_per_token_bytes, 80.0 * 8 * 128 * 2 * 2, 1e-12); /* 320 KiB per token */
	o.nodes = 2;
	o.strategy = SP_STRAT_TP;
	sp_footprint_compute(&m, &o, &f);
	assert_true(f.term_node[SP_T_WEIGHTS] == one.term[SP_T_WEIGHTS] / 2);
	assert_true(f.term_node[SP_T_KV_CACHE] == 5ULL << 30);
	assert_true(f.term_node[SP_T_COMM] == 2ULL * 32768 * 8192 * 2);
	assert_within(f.link_bytes, 2 * 80 * 1 * 8192 * 2 * 2 * 0.5, 1e-9);
	/* TP past the KV heads replicates them: 16 nodes still hold 1/8 each */
	o.nodes = 16;
	sp_footprint_compute(&m, &o, &f);
	assert_true(f.term_node[SP_T_KV_CACHE] == (10ULL << 30) / 8);
	/* PP over 2: layers split, one activation hand-off per boundary */
	o.nodes = 2;
	o.strategy = SP_STRAT_PP;
	sp_footprint_compute(&m, &o, &f);
	assert_true(f.term_node[SP_T_KV_CACHE] == 5ULL << 30);
	assert_within(f.link_bytes, 8192 * 2.0, 1e-12);
	/* training over TP/PP is refused, serving over DDP/FSDP too */
	char why[300];
	o = opts(SP_METHOD_LORA);
	o.nodes = 2;
	o.strategy = SP_STRAT_TP;
	assert_true(sp_strategy_refused(&o, why, sizeof why));
	assert_non_null(strstr(why, "never tensor parallelism"));
	o.strategy = SP_STRAT_FSDP;
	assert_false(sp_strategy_refused(&o, why, sizeof why));
	o.method = SP_METHOD_INFER;
	assert_true(sp_strategy_refused(&o, why, sizeof why));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(param_counts),    cmocka_unit_test(lora_counts),   cmocka_unit_test(targets_parse),
		cmocka_unit_test(weights_terms),   cmocka_unit_test(trainable_terms), cmocka_unit_test(activation_terms),
		cmocka_unit_test(logits_and_kv),   cmocka_unit_test(peaks),         cmocka_unit_test(from_params),
		cmocka_unit_test(saturation),      cmocka_unit_test(full_overlap), cmocka_unit_test(padding_longest), cmocka_unit_test(megatron_profile),  cmocka_unit_test(double_quant),
		cmocka_unit_test(loss_and_offload), cmocka_unit_test(nodes_terms), cmocka_unit_test(bnb_legacy), cmocka_unit_test(one_norm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
