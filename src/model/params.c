// SPDX-License-Identifier: MIT
/* --params N: a plausible Llama-like shape from a bare parameter count.
 *
 * The width comes from the Llama 3 family's steps (the family people
 * fine-tune most): under 2B params 2048 wide, under 5B 3072, under 11B 4096,
 * under 24B 5120, under 45B 6656, under 150B 8192, above that 16384; under
 * 300M a GPT-2-sized 768. Heads are 128 wide, 8 KV heads (GQA) once there
 * are 16 or more heads, the gated MLP is 3.5x the width (Llama 3: 14336 for
 * 4096), the vocabulary is Llama 3's 128256, tied under 5B (Llama 3.2 1B/3B)
 * and untied above. The layer count is what makes the total come out at N.
 * The total stays exactly N; the split between the blocks' linear layers and
 * the embeddings follows the shape. docs/plan.md explains the error this
 * carries (activations and logits are the terms it moves most). */
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void sp_model_from_params(double params, struct sp_model_shape *m)
{
	memset(m, 0, sizeof *m);
	m->source = SP_SRC_PARAMS;
	snprintf(m->arch, sizeof m->arch, "llama");
	if (!(params > 0) || !isfinite(params))
		return;
	static const struct {
		double below;
		int hidden;
	} steps[] = {
		{ 0.3e9, 768 }, { 2e9, 2048 }, { 5e9, 3072 }, { 11e9, 4096 },
		{ 24e9, 5120 }, { 45e9, 6656 }, { 150e9, 8192 }, { INFINITY, 16384 },
	};
	int h = 16384;
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
		if (params < steps[i].below) {
			h = steps[i].hidden;
			break;
		}
	int heads = h / 128 > 0 ? h / 128 : 1;
	if (h == 768)
		heads = 12;
	int kv = heads >= 16 ? 8 : heads;
	int inter = (int)(lround(3.5 * h / 256.0) * 256);
	int vocab = 128256;
	bool tied = params < 5e9;
	double hd = (double)h / heads;
	double per_layer = 2.0 * h * h + 2.0 * h * kv * hd + 3.0 * h * inter + 2.0 * h;
	double embed = (double)vocab * h * (tied ? 1 : 2);
	double rest = params - embed;
	if (rest < per_layer) /* tiny counts: shrink the vocabulary until a layer fits */
		rest = per_layer;
	int layers = (int)lround(rest / per_layer);
	if (layers < 1)
		layers = 1;
	snprintf(m->name, sizeof m->name, "%.2fB params", params / 1e9);
	m->n_layers = layers;
	m->hidden = h;
	m->intermediate = inter;
	m->n_heads = heads;
	m->n_kv_heads = kv;
	m->head_dim = (int)hd;
	m->vocab = vocab;
	m->max_seq = 131072;
	m->tied_embeddings = tied;
	snprintf(m->torch_dtype, sizeof m->torch_dtype, "bfloat16");
	m->params = params;
	m->params_active = params;
	double lin = layers * (per_layer - 2.0 * h);
	if (lin > params * 0.98)
		lin = params * 0.98;
	m->linear_params = lin;
	m->embed_params = params - lin;
	m->params_from_tensors = false;
}
