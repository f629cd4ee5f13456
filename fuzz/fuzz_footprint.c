// SPDX-License-Identifier: MIT
/* libFuzzer: config.json -> shape -> footprint -> verdict. The first bytes
 * pick the job (method, dtype, quant, optimizer, framework, batch, sequence,
 * checkpointing, LoRA rank); the rest is the config. Whatever the numbers,
 * no total is below a term and a saturated footprint never fits. */
#include <stdint.h>
#include <stdlib.h>

#include "account/footprint.h"
#include "account/fit.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t take(const uint8_t **d, size_t *n, size_t k)
{
	uint32_t v = 0;
	for (size_t i = 0; i < k && *n; i++, (*d)++, (*n)--)
		v = v << 8 | **d;
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 13)
		return 0;
	struct sp_plan_opts o;
	sp_plan_opts_init(&o);
	o.method = (enum sp_method)(take(&data, &size, 1) % SP_METHOD_N);
	o.dtype = (enum sp_cdtype)(take(&data, &size, 1) % SP_CDT_N);
	o.quant = (enum sp_quant)(take(&data, &size, 1) % SP_QUANT_N);
	o.optim = (enum sp_optim)(take(&data, &size, 1) % SP_OPTIM_N);
	o.framework = (enum sp_framework)(take(&data, &size, 1) % SP_FW_N);
	uint32_t flags = take(&data, &size, 1);
	o.attn = flags & 1 ? SP_ATTN_EAGER : SP_ATTN_SDPA;
	o.grad_ckpt = flags & 2;
	o.master_weights = flags & 4;
	o.uma = flags & 8;
	o.padding = flags & 16 ? SP_PAD_LONGEST : SP_PAD_MAX;
	o.batch = (int)(take(&data, &size, 2) % 65536) + 1;      /* --batch's own bounds */
	o.seq = (int)(take(&data, &size, 3) % (1u << 24)) + 1;   /* up to 16M tokens */
	o.lora_rank = (int)(take(&data, &size, 2) % 4096) + 1;
	o.lora_targets = SP_LT_ALL;

	struct sp_model_shape m = { 0 };
	char err[256];
	if (sp_hfconfig_parse((const char *)data, size, "fuzz", &m, err, sizeof err) != 0)
		return 0;
	if (sp_shape_complete(&m) != 0)
		return 0;
	struct sp_footprint f;
	sp_footprint_compute(&m, &o, &f);
	uint64_t dev = 0, host = 0;
	for (int i = 0; i < SP_T_N; i++) {
		if (f.term[i] > SP_BYTES_SAT)
			abort();
		if (f.peak_bytes < f.term[i] && (o.uma || !sp_term_is_host((enum sp_term)i)))
			abort(); /* a total below one of its terms: it wrapped */
		if (sp_term_is_host((enum sp_term)i))
			host = sp_bytes_add(host, f.term[i]);
		else
			dev = sp_bytes_add(dev, f.term[i]);
	}
	/* the device side less what is never live at once (gradients vs activations) */
	if ((dev >= SP_BYTES_SAT ? dev : dev - f.overlap_bytes) != f.device_bytes || host != f.host_bytes)
		abort();
	uint64_t need = sp_need(&f);
	if (f.saturated && need < SP_BYTES_SAT && f.saturated <= SP_T_N &&
	    (o.uma || !sp_term_is_host((enum sp_term)(f.saturated - 1))))
		abort(); /* a saturated term that the need does not carry */
	if (need >= SP_BYTES_SAT && sp_judge(need, UINT64_MAX) != SP_NO)
		abort(); /* a saturated job never fits, whatever the budget */
	return 0;
}
