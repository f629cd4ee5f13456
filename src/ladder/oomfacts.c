// SPDX-License-Identifier: MIT
/* What a failed job's log says about the job, line by line: which serving
 * engine wrote it, the training method's evidence (trainable parameters,
 * 4-bit weights, LoRA), the batch and lengths, the model's name, and what the
 * weights take. The classifier (oomlog.c) feeds it each text line after the
 * failure checks; it never decides a failure kind. */
#include "ladder/oomlog_int.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

/* The model's name at q, up to a quote, a comma, a bracket or (unless
 * spaces) a space; printable ASCII only, bounded; a source of a higher rank
 * replaces a lower one, the first of a rank stays. hf_cache: "models--org--name"
 * becomes "org/name". */
static void set_model(struct sp_oomlog *p, const char *q, const char *end, unsigned rank, bool spaces, bool hf_cache)
{
	if (rank <= p->model_rank)
		return;
	char buf[sizeof p->model] = { 0 };
	size_t o = 0;
	bool slash = false;
	while (q < end && *q == ' ')
		q++;
	while (q < end && o + 1 < sizeof buf) {
		unsigned char c = (unsigned char)*q;
		if (c > 0x7e) {
			buf[o++] = '?'; /* UTF-8 and the like: printable ASCII only */
			q++;
			continue;
		}
		if (c < 0x20 || c == '\'' || c == '"' || c == ',' || c == ')' || c == '(' || c == '}' ||
		    c == '{' || c == '`' || (c == ' ' && !spaces))
			break;
		if (hf_cache && c == '/')
			break;
		if (hf_cache && !slash && c == '-' && q + 1 < end && q[1] == '-') {
			buf[o++] = '/';
			slash = true;
			q += 2;
			continue;
		}
		buf[o++] = (char)c;
		q++;
	}
	while (o && buf[o - 1] == ' ')
		o--;
	buf[o] = 0;
	/* Ollama's runner is given a content-addressed blob: a file, not a name */
	if (o == 0 || (hf_cache && !slash) || strstr(buf, "blobs/sha256"))
		return;
	memcpy(p->model, buf, o);
	p->model[o] = 0;
	p->model_rank = rank;
}

/* "load_in_4bit=True", "'load_in_4bit': True", "\"load_in_4bit\": true" */
static bool true_after(const char *k, const char *end)
{
	const char *q = k;
	for (int i = 0; i < 6 && q < end && (*q == ' ' || *q == '=' || *q == ':' || *q == '\'' || *q == '"'); i++)
		q++;
	return end - q >= 4 && (memcmp(q, "True", 4) == 0 || memcmp(q, "true", 4) == 0);
}

/* vLLM's marks: module paths (vllm/engine/, vllm/v1/, vllm/worker/), process names
 * (EngineCore_DP0, VLLM::Worker_TP0, VllmWorkerProcess, (RayWorkerWrapper pid=...)) */
static const char *const vllm_marks[] = {
	"vLLM API server", "LLM engine",       "EngineCore",  "vllm.entrypoints", "vllm serve",
	"/vllm/",          "VLLM::",           "VllmWorker",  "RayWorkerVllm",    "RayWorkerWrapper",
	"vllm.engine",     "vllm.v1",          "vllm.executor", "vllm.worker",
};
static const char *const llamacpp_marks[] = {
	"ggml_",          "llama_model_load", "llm_load_",    "llama_new_context", "llama_context",
	"llama_init_from", "llama_kv_cache",  "llama-server", "load_tensors:",     "alloc_tensor_range",
};

/* which program wrote the log: a serving engine's own lines (Ollama wraps
 * llama.cpp and SGLang may import vLLM: those two replace the other) */
void sp_oomlog_engine_line(struct sp_oomlog *p, const char *s, size_t n)
{
	/* settled: nothing replaces Ollama, SGLang or TGI, nor vLLM once its v1 wording is seen */
	if (p->engine == SP_ENGINE_OLLAMA || p->engine == SP_ENGINE_SGLANG || p->engine == SP_ENGINE_TGI)
		return;
	if (p->engine == SP_ENGINE_VLLM && p->vllm_v1) {
		if (HAS(s, n, "sglang") || HAS(s, n, "ServerArgs("))
			p->engine = SP_ENGINE_SGLANG;
		return;
	}
	enum sp_log_engine e = SP_ENGINE_UNKNOWN;
	if (HAS(s, n, "ollama") || (HAS(s, n, "level=") && HAS(s, n, "source=") && HAS(s, n, "msg=")))
		e = SP_ENGINE_OLLAMA;
	else if (HAS(s, n, "sglang") || HAS(s, n, "ServerArgs("))
		e = SP_ENGINE_SGLANG;
	else if (HAS(s, n, "text_generation_") || HAS(s, n, "text-generation-launcher"))
		e = SP_ENGINE_TGI;
	else if (ANY(s, n, vllm_marks))
		e = SP_ENGINE_VLLM;
	else if (ANY(s, n, llamacpp_marks))
		e = SP_ENGINE_LLAMACPP;
	if (e == SP_ENGINE_UNKNOWN)
		return;
	if (e == SP_ENGINE_VLLM && (HAS(s, n, "EngineCore") || HAS(s, n, "V1 LLM engine") || HAS(s, n, "/vllm/v1/")))
		p->vllm_v1 = true;
	if (p->engine == SP_ENGINE_UNKNOWN || (e == SP_ENGINE_OLLAMA && p->engine == SP_ENGINE_LLAMACPP) ||
	    (e == SP_ENGINE_SGLANG && p->engine == SP_ENGINE_VLLM))
		p->engine = e;
}

/* the buffer that failed: the weights, or a contiguous one */
static void alloc_facts(struct sp_oomlog *p, const char *s, size_t n)
{
	const char *k;
	/* the buffer that failed holds the weights: llama.cpp's "alloc_tensor_range: failed to allocate
	 * CUDA0 buffer of size N" and "llama_model_load: error loading model: unable to allocate CUDA0 buffer"
	 * (the model's tensors), not its KV cache or compute graph */
	if ((HAS(s, n, "alloc_tensor_range") && HAS(s, n, "failed to allocate")) ||
	    (HAS(s, n, "error loading model") && HAS(s, n, "unable to allocate")))
		p->weights_alloc = true;
	/* a contiguous allocation failed: the memory is there but not in one piece ("cma_alloc: ... alloc
	 * failed", a physically addressed DMA buffer, the kernel's "page allocation failure: order:9") */
	if (!p->fragmented) {
		if (HAS(s, n, "cma_alloc") && HAS(s, n, "failed"))
			oom_set_why(p->fragmented_why, sizeof p->fragmented_why, "a CMA (contiguous) allocation failed");
		else if (HAS(s, n, "PHYSICALLY_ADDRESSED") && HAS(s, n, "FAILED"))
			oom_set_why(p->fragmented_why, sizeof p->fragmented_why, "a physically contiguous DMA buffer failed");
		else if ((k = HAS(s, n, "page allocation failure: order:")) && isdigit((unsigned char)k[31]) &&
			 (k[31] != '0' || isdigit((unsigned char)k[32])))
			oom_set_why(p->fragmented_why, sizeof p->fragmented_why, "a higher-order page allocation failed");
		p->fragmented = p->fragmented_why[0] != 0;
	}
}

/* the training method's evidence: trainable parameters, 4-bit weights, LoRA adapters */
static void method_facts(struct sp_oomlog *p, const char *s, size_t n)
{
	const char *k, *end = s + n;
	uint64_t v;
	/* PEFT: "trainable params: 4,194,304 || all params: 6,742,609,920 || trainable%: 0.0622" */
	if ((v = count_after(s, n, "trainable params:"))) {
		p->params_trainable = v;
		if ((v = count_after(s, n, "all params:")))
			p->params_all = v;
		if ((k = HAS(s, n, "trainable%")) && sp_pct_at(k + strlen("trainable%")) >= 0)
			p->trainable_pct = sp_pct_at(k + strlen("trainable%"));
		p->lora_seen = true;
	}
	/* Unsloth: "Trainable parameters = 41,943,040 of 8,072,204,288 (0.52% trained)";
	 * the Trainer (and older Unsloth): "Number of trainable parameters = 41,943,040" */
	if ((k = HAS(s, n, "rainable parameters = "))) {
		const char *q = k + strlen("rainable parameters = ");
		if ((v = sp_count_at(q)))
			p->params_trainable = v;
		const char *of = HAS(s, n, " of ");
		const char *sl = memchr(q, '/', (size_t)(end - q));
		if ((of && of > q && (v = sp_count_at(of + 4))) || (sl && sl < q + 32 && (v = sp_count_at(sl + 1))))
			p->params_all = v;
		const char *pc = HAS(s, n, "% trained");
		if (pc) {
			const char *b = pc;
			while (b > q && (isdigit((unsigned char)b[-1]) || b[-1] == '.'))
				b--;
			if (sp_pct_at(b) >= 0)
				p->trainable_pct = sp_pct_at(b);
		}
	}
	/* 4-bit base weights (QLoRA) and LoRA adapters */
	if (!p->quant4) {
		if ((k = HAS(s, n, "load_in_4bit")) && true_after(k + strlen("load_in_4bit"), end)) {
			p->quant4 = true;
			oom_set_why(p->quant4_why, sizeof p->quant4_why, "load_in_4bit");
		} else if (HAS(s, n, "Linear4bit")) {
			p->quant4 = true;
			oom_set_why(p->quant4_why, sizeof p->quant4_why, "Linear4bit layers");
		} else if (HAS(s, n, "-bnb-4bit")) {
			p->quant4 = true;
			oom_set_why(p->quant4_why, sizeof p->quant4_why, "a -bnb-4bit model");
		}
	}
	if (HAS(s, n, "LoraConfig(") || HAS(s, n, "lora.Linear"))
		p->lora_seen = true;
}

/* Unsloth's start-of-training banner: the batch, and that steps began */
static void banner_facts(struct sp_oomlog *p, const char *s, size_t n)
{
	const char *k, *end = s + n;
	uint64_t v;
	/* Unsloth's banner: "Batch size per device = 2 | Gradient accumulation steps = 4",
	 * "Total batch size (2 x 4 x 1) = 8" */
	if ((v = number_after(s, n, "Batch size per device")))
		p->batch_per_device = v;
	if ((v = number_after(s, n, "Gradient accumulation steps")))
		p->grad_accum = v;
	if ((k = HAS(s, n, "Total batch size"))) {
		const char *eq = memchr(k, '=', (size_t)(end - k));
		if (eq && (v = sp_count_at(eq + 1)))
			p->total_batch = v;
	}
	if (HAS(s, n, "Num examples =") && HAS(s, n, "Total steps ="))
		p->trained = true; /* Unsloth's start-of-training banner */
}

/* the model, most direct source first: an engine's config, a command line,
 * then a checkpoint's own name, the HF cache path, Unsloth's patch */
static void model_facts(struct sp_oomlog *p, const char *s, size_t n)
{
	const char *k, *end = s + n;
	if ((k = HAS(s, n, "model='")))
		set_model(p, k + 7, end, 4, false, false);
	else if ((k = HAS(s, n, "'model': '")))
		set_model(p, k + 10, end, 4, false, false);
	else if ((k = HAS(s, n, "model_path='")))
		set_model(p, k + 12, end, 4, false, false);
	else if ((k = HAS(s, n, "model_id: \"")) || (k = HAS(s, n, "ollama run ")) || (k = HAS(s, n, "vllm serve ")))
		set_model(p, k + 11, end, 4, false, false); /* three needles of 11 bytes */
	else if ((k = HAS(s, n, "--model ")) || (k = HAS(s, n, "--model-path ")) || (k = HAS(s, n, "--model-id ")))
		set_model(p, (const char *)memchr(k, ' ', (size_t)(end - k)) + 1, end, 4, false, false);
	else if ((k = HAS(s, n, "general.name"))) {
		const char *q = k + strlen("general.name");
		while (q < end && *q == ' ')
			q++;
		// cppcheck-suppress knownConditionTrueFalse ; q moved past the spaces: it can be anywhere before end
		if (end - q > 3 && memcmp(q, "str", 3) == 0)
			q += 3;
		while (q < end && *q == ' ')
			q++;
		if (q < end && *q == '=')
			set_model(p, q + 1, end, 3, true, false);
	} else if ((k = HAS(s, n, "models--")))
		set_model(p, k + 8, end, 2, false, true);
	else if ((k = HAS(s, n, " model=")) && k[7] != '/' && k[7] != '"')
		set_model(p, k + 7, end, 2, false, false);
	else if (HAS(s, n, "Unsloth") && (k = HAS(s, n, ": Fast "))) {
		const char *pe = HAS(s, n, " patching");
		if (pe && pe > k + 7)
			set_model(p, k + 7, pe, 1, true, false);
	}
}

/* lengths and batch: the engine's config, its arguments, a training script's flags */
static void length_facts(struct sp_oomlog *p, const char *s, size_t n)
{
	uint64_t v;
	if ((v = number_after(s, n, "max_model_len")) || (v = number_after(s, n, "max-model-len")) ||
	    (v = number_after(s, n, "max_seq_len=")))
		p->max_model_len = v;
	if ((v = number_after(s, n, "max_num_seqs")) || (v = number_after(s, n, "max-num-seqs")))
		p->max_num_seqs = v;
	if ((v = number_after(s, n, "max_seq_length")) || (v = number_after(s, n, "max-seq-length")) ||
	    (v = number_after(s, n, "sequence_len")) || (v = number_after(s, n, "max_length")))
		p->seq_len = v;
}

/* what the weights take: loaded (the engine's own report), or will need (before loading) */
static void weights_facts(struct sp_oomlog *p, const char *s, size_t n)
{
	/* SGLang: "Load weight end. type=..., avail mem=21.73 GB, mem usage=166.59 GB." */
	struct sp_u64 am;
	if (size_after(s, n, "avail mem=", &am))
		p->avail_mem = am.v;
	/* what the weights will need, before they are loaded: Ollama's "pulling 799587243b19: 100% ▕██▏ 132 GB"
	 * (the largest layer pulled is the weights), its estimate "memory.weights.total=\"38.9 GiB\"" */
	if (HAS(s, n, "pulling ") && HAS(s, n, "100%")) {
		const char *q = s + n;
		while (q > s && q[-1] == ' ')
			q--;
		const char *u = q;
		while (u > s && isalpha((unsigned char)u[-1]))
			u--;
		while (u > s && u[-1] == ' ')
			u--;
		while (u > s && (isdigit((unsigned char)u[-1]) || u[-1] == '.'))
			u--;
		uint64_t b;
		if (u < q && sp_match_size(u, &b) && b > p->weights_need)
			p->weights_need = b;
	}
	struct sp_u64 w;
	if (size_after(s, n, "memory.weights.total=\"", &w) && w.v > p->weights_need)
		p->weights_need = w.v;
	/* the weights' footprint: vLLM v1 "Model loading took 14.9889 GiB and 10.1 seconds",
	 * v0 "Loading model weights took 26.4976 GB", SGLang's "mem usage=" at "Load weight end",
	 * llama.cpp's "CUDA0 model buffer size = 18508.35 MiB" (the largest device) */
	if (size_after(s, n, "Model loading took", &w) || size_after(s, n, "Loading model weights took", &w) ||
	    (HAS(s, n, "Load weight end") && size_after(s, n, "mem usage=", &w)) ||
	    (HAS(s, n, "CUDA") && size_after(s, n, "model buffer size =", &w) && w.v > p->weights_bytes))
		p->weights_bytes = w.v;
}

/* the job's facts: method, parameters, model, lengths, weights (whatever the line says) */
void sp_oomlog_facts_line(struct sp_oomlog *p, const char *s, size_t n)
{
	alloc_facts(p, s, n);
	method_facts(p, s, n);
	banner_facts(p, s, n);
	model_facts(p, s, n);
	length_facts(p, s, n);
	weights_facts(p, s, n);
}

