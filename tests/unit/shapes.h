/* SPDX-License-Identifier: MIT */
/* Architecture numbers of real models, from their published config.json,
 * for the accounting tests (no model readers needed). */
#ifndef SP_TEST_SHAPES_H
#define SP_TEST_SHAPES_H
#include "account/footprint.h"

#include <stdio.h>
#include <string.h>

static inline struct sp_model_shape shape_of(const char *name, const char *arch, int L, int h, int I, int a, int kv,
					     int hd, int V, int tied, int E, int k)
{
	struct sp_model_shape m;
	memset(&m, 0, sizeof m);
	snprintf(m.name, sizeof m.name, "%s", name);
	snprintf(m.arch, sizeof m.arch, "%s", arch);
	m.source = SP_SRC_CATALOG;
	m.n_layers = L;
	m.hidden = h;
	m.intermediate = I;
	m.n_heads = a;
	m.n_kv_heads = kv;
	m.head_dim = hd;
	m.vocab = V;
	m.tied_embeddings = tied;
	m.n_experts = E;
	m.experts_per_tok = k;
	m.max_seq = 1024;
	sp_shape_complete(&m);
	return m;
}

/* meta-llama/Llama-3.1-8B */
#define LLAMA31_8B shape_of("llama-3.1-8b", "llama", 32, 4096, 14336, 32, 8, 0, 128256, 0, 0, 0)
/* meta-llama/Llama-3.1-70B (Llama-3.3-70B has the same shape) */
#define LLAMA31_70B shape_of("llama-3.1-70b", "llama", 80, 8192, 28672, 64, 8, 0, 128256, 0, 0, 0)
/* meta-llama/Llama-2-7b-hf */
#define LLAMA2_7B shape_of("llama-2-7b", "llama", 32, 4096, 11008, 32, 32, 0, 32000, 0, 0, 0)
/* meta-llama/Llama-2-13b-hf */
#define LLAMA2_13B shape_of("llama-2-13b", "llama", 40, 5120, 13824, 40, 40, 0, 32000, 0, 0, 0)
/* Qwen/Qwen2.5-7B */
#define QWEN25_7B shape_of("qwen2.5-7b", "qwen2", 28, 3584, 18944, 28, 4, 0, 152064, 0, 0, 0)
/* google/gemma-2-9b: head_dim 256 (q width 4096 != hidden 3584), tied */
#define GEMMA2_9B shape_of("gemma-2-9b", "gemma2", 42, 3584, 14336, 16, 8, 256, 256000, 1, 0, 0)
/* mistralai/Mixtral-8x7B-v0.1 */
#define MIXTRAL_8X7B shape_of("mixtral-8x7b", "mixtral", 32, 4096, 14336, 32, 8, 0, 32000, 0, 8, 2)
/* openai-community/gpt2 (124M): n_embd 768, n_layer 12, n_head 12, n_inner 4h, n_positions 1024 */
#define GPT2 shape_of("gpt2", "gpt2", 12, 768, 3072, 12, 12, 0, 50257, 1, 0, 0)
/* microsoft/phi-1_5: 24 layers, 2048 wide, MLP 8192, 32 heads, vocab 51200, untied */
#define PHI15 shape_of("phi-1.5", "phi", 24, 2048, 8192, 32, 32, 0, 51200, 0, 0, 0)
/* stabilityai/stablelm-base-alpha-3b: GPT-NeoX, 16 layers, 4096 wide, vocab 50688 */
#define STABLELM_3B shape_of("stablelm-alpha-3b", "gpt_neox", 16, 4096, 16384, 32, 32, 0, 50688, 0, 0, 0)
#endif
