// SPDX-License-Identifier: MIT
/* The failed job's log, classified as it streams by. See oomlog.h and
 * docs/ladder.md for the formats it knows (PyTorch, transformers, the kernel,
 * the NVIDIA driver, vLLM, Ollama/llama.cpp, bitsandbytes, tqdm). */
#include "ladder/oomlog.h"
#include "ladder/oomlog_int.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_keys[SP_OOM_KIND_N] = {
	"unknown", "sigkill", "cuda_error_oom", "earlyoom_kill", "oomd_kill", "ray_oom_kill",
	"kernel_oom_kill", "container_oom_kill", "driver_no_memory",
	"ollama_memory", "cpu_alloc_failed", "torch_cuda_oom", "bitsandbytes_oom", "vllm_startup_memory",
	"llamacpp_memory", "tgi_memory", "sglang_memory", "vllm_kv_cache",
};
static const char *const kind_texts[SP_OOM_KIND_N] = {
	"no memory failure recognised in the log",
	"the process was killed with SIGKILL and said nothing else (the usual sign of an OOM kill)",
	"CUDA error: out of memory",
	"earlyoom killed the process: MemAvailable fell to the floor it was given (-m), not the kernel's verdict",
	"systemd-oomd killed the unit: its memory pressure (PSI) or swap went over the limit set for its slice",
	"Ray's memory monitor killed the worker: the node's memory use went over RAY_memory_usage_threshold",
	"the kernel OOM killer ended a process",
	"the container was OOMKilled: it reached the memory limit set for it (Docker --memory, Kubernetes limits.memory)",
	"the NVIDIA driver ran out of memory (NV_ERR_NO_MEMORY)",
	"Ollama / llama.cpp could not get the memory for the model",
	"PyTorch's CPU allocator could not allocate memory",
	"PyTorch: CUDA out of memory",
	"an allocation inside bitsandbytes (QLoRA quantization / dequantization buffers) failed",
	"vLLM's start-up check: free memory below gpu_memory_utilization x total",
	"llama.cpp could not allocate a buffer for the model, its KV cache or its compute graph",
	"text-generation-inference ran out of memory while warming up or serving",
	"SGLang's memory pool (weights plus KV cache) does not fit",
	"vLLM's KV cache does not fit in what is left after the weights",
};

const char *sp_oom_kind_key(enum sp_oom_kind k)
{
	return (unsigned)k < SP_OOM_KIND_N ? kind_keys[k] : "unknown";
}

const char *sp_oom_kind_text(enum sp_oom_kind k)
{
	return (unsigned)k < SP_OOM_KIND_N ? kind_texts[k] : kind_texts[0];
}

int sp_oom_kind_from_key(const char *key, enum sp_oom_kind *k)
{
	for (int i = 0; i < SP_OOM_KIND_N; i++)
		if (strcmp(key, kind_keys[i]) == 0) {
			*k = (enum sp_oom_kind)i;
			return 0;
		}
	return -1;
}

const char *sp_oom_phase_key(enum sp_oom_phase p)
{
	switch (p) {
	case SP_PHASE_LOAD: return "load";
	case SP_PHASE_STEP: return "step";
	case SP_PHASE_SERVE: return "serve";
	default: return "unknown";
	}
}

const char *sp_log_engine_key(enum sp_log_engine e)
{
	switch (e) {
	case SP_ENGINE_VLLM: return "vllm";
	case SP_ENGINE_SGLANG: return "sglang";
	case SP_ENGINE_LLAMACPP: return "llamacpp";
	case SP_ENGINE_OLLAMA: return "ollama";
	case SP_ENGINE_TGI: return "tgi";
	default: return "unknown";
	}
}

const char *sp_log_killer_key(enum sp_log_killer k)
{
	switch (k) {
	case SP_KILLER_KERNEL: return "kernel";
	case SP_KILLER_EARLYOOM: return "earlyoom";
	case SP_KILLER_OOMD: return "systemd-oomd";
	case SP_KILLER_RAY: return "ray";
	case SP_KILLER_CONTAINER: return "container";
	default: return "none";
	}
}

void sp_oomlog_killer_knob(const struct sp_oomlog *p, char *buf, size_t n)
{
	char lim[48] = "";
	if (!n)
		return;
	buf[0] = 0;
	if (p->killer_limit_pct > 0)
		snprintf(lim, sizeof lim, " (this one was %.4g%%)", p->killer_limit_pct);
	switch (p->killer) {
	case SP_KILLER_EARLYOOM:
		snprintf(buf, n,
			 "earlyoom, not the kernel, killed it: it kills when MemAvailable falls to its -m floor%s. "
			 "MemAvailable already counts the page cache as free, so a flush gives it nothing; lower the "
			 "floor (-m in EARLYOOM_ARGS, /etc/default/earlyoom) only if the rest of the machine can spare "
			 "it, or exempt the job (--avoid / --prefer), else make the job smaller",
			 lim);
		break;
	case SP_KILLER_OOMD:
		snprintf(buf, n,
			 "systemd-oomd, not the kernel, killed it: its slice went over the memory pressure limit%s "
			 "(ManagedOOMMemoryPressureLimit=, or oomd's swap limit). Pressure is reclaim stalls, which a "
			 "flush does not remove; raise the slice's limit or run the job in its own slice "
			 "(systemd-run --user --scope -p ManagedOOMMemoryPressure=auto), else make the job smaller",
			 lim);
		break;
	case SP_KILLER_RAY:
		snprintf(buf, n,
			 "Ray's memory monitor, not the kernel, killed the worker: the node's use went over "
			 "RAY_memory_usage_threshold%s. Ray reads used memory without the page cache, so a flush gives "
			 "it nothing; on a Spark, where the GPU's allocations are that same memory, raise "
			 "RAY_memory_usage_threshold (e.g. 0.98) or set RAY_memory_monitor_refresh_ms=0 when Ray starts, "
			 "else make the job smaller",
			 lim);
		break;
	case SP_KILLER_CONTAINER:
		snprintf(buf, n,
			 "the container's own memory limit killed it (OOMKilled), not the machine running out: the "
			 "cgroup reclaims its page cache before it kills, so a flush gives it nothing; raise the limit "
			 "(docker run --memory, compose mem_limit, Kubernetes resources.limits.memory) to what the job "
			 "needs, else make the job smaller");
		break;
	default:
		break;
	}
}

const char *sp_log_method_key(enum sp_log_method m)
{
	switch (m) {
	case SP_LOG_METHOD_FULL: return "full";
	case SP_LOG_METHOD_LORA: return "lora";
	case SP_LOG_METHOD_QLORA: return "qlora";
	default: return "unknown";
	}
}

static void unset(struct sp_u64 *f)
{
	f->v = 0;
	f->why = SP_MISSING;
}

void sp_oomlog_init(struct sp_oomlog *p)
{
	memset(p, 0, sizeof *p);
	unset(&p->fig.tried);
	unset(&p->fig.total);
	unset(&p->fig.free);
	unset(&p->fig.reserved_unalloc);
	unset(&p->fig.kv_needed);
	unset(&p->fig.kv_available);
	p->sig = 0x243F6A8885A308D3ULL;
}


static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t m = strlen(suf);
	while (n && (s[n - 1] == ' '))
		n--;
	return n >= m && memcmp(s + n - m, suf, m) == 0;
}

size_t sp_oomlog_parse_size(const char *s, uint64_t *bytes)
{
	return sp_match_size(s, bytes);
}

/* ---- the figures in each message format ---------------------------------------- */

static void torch_figures(struct sp_oomlog *p, const char *s, size_t n)
{
	struct sp_oom_figures f;
	unset(&f.tried);
	unset(&f.total);
	unset(&f.free);
	unset(&f.reserved_unalloc);
	unset(&f.kv_needed);
	unset(&f.kv_available);
	(void)size_after(s, n, "Tried to allocate", &f.tried);
	/* PyTorch >= 2.1: "GPU 0 has a total capacity of 119.70 GiB of which 1.23 GiB is free.
	 * ... and 8.30 GiB is reserved by PyTorch but unallocated." */
	if (size_after(s, n, "total capacity of", &f.total) || size_after(s, n, "total capacty of", &f.total)) {
		(void)size_after(s, n, "of which", &f.free);
		uint64_t b;
		if (size_before(s, n, "is reserved by PyTorch but unallocated", &b)) {
			f.reserved_unalloc.v = b;
			f.reserved_unalloc.why = SP_OK;
		}
	} else {
		/* PyTorch 1.x: "(GPU 0; 15.78 GiB total capacity; 14.56 GiB already allocated;
		 * 3.06 MiB free; 14.71 GiB reserved in total by PyTorch)" */
		uint64_t b, alloc, resv;
		if (size_before(s, n, "total capacity", &b)) {
			f.total.v = b;
			f.total.why = SP_OK;
		}
		if (size_before(s, n, " free;", &b) || size_before(s, n, " free)", &b)) {
			f.free.v = b;
			f.free.why = SP_OK;
		}
		if (size_before(s, n, "already allocated", &alloc) &&
		    size_before(s, n, "reserved in total by PyTorch", &resv) && resv >= alloc) {
			f.reserved_unalloc.v = resv - alloc;
			f.reserved_unalloc.why = SP_OK;
		}
	}
	p->fig = f;
}

static void vllm_figures(struct sp_oomlog *p, const char *s, size_t n)
{
	/* "Free memory on device (2.77/119.7 GiB) on startup is less than desired
	 * GPU memory utilization (0.9, 107.73 GiB)" */
	const char *k = HAS(s, n, "Free memory on device (");
	if (k) {
		const char *q = k + strlen("Free memory on device (");
		char *e;
		double fr = strtod(q, &e);
		uint64_t tot;
		size_t used;
		if (e != q && *e == '/' && isfinite(fr) && fr >= 0 && (used = sp_match_size(e + 1, &tot))) {
			/* the unit is written once, after the total */
			const char *u = e + 1 + used;
			while (u > e + 1 && isalpha((unsigned char)u[-1]))
				u--;
			char tmp[48];
			snprintf(tmp, sizeof tmp, "%.6f %.5s", fr, u);
			uint64_t frb;
			if (sp_match_size(tmp, &frb)) {
				p->fig.free.v = frb;
				p->fig.free.why = SP_OK;
			}
			p->fig.total.v = tot;
			p->fig.total.why = SP_OK;
		}
	}
	k = HAS(s, n, "GPU memory utilization (");
	if (k) {
		const char *c = memchr(k, ',', (size_t)(s + n - k));
		if (c) {
			const char *q = c + 1;
			while (*q == ' ')
				q++;
			uint64_t b;
			if (sp_match_size(q, &b)) {
				p->fig.tried.v = b;
				p->fig.tried.why = SP_OK;
			}
		}
	}
}

/* ---- one line --------------------------------------------------------------------- */

static bool record(struct sp_oomlog *p, enum sp_oom_kind k, const char *s, size_t n)
{
	if (k <= p->kind)
		return false; /* keep the first of a kind, and the more specific kind */
	p->kind = k;
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < sizeof p->evidence; i++) {
		unsigned char c = (unsigned char)s[i];
		p->evidence[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	p->evidence[o] = 0;
	p->evidence_line = p->lines + 1;
	unset(&p->fig.tried);
	unset(&p->fig.total);
	unset(&p->fig.free);
	unset(&p->fig.reserved_unalloc);
	unset(&p->fig.kv_needed);
	unset(&p->fig.kv_available);
	/* the phase of this failure: the traceback's innermost marker, else the
	 * log's progress at the time */
	if (k == SP_OOM_VLLM_STARTUP || k == SP_OOM_VLLM_KV) {
		p->phase = SP_PHASE_LOAD;
		oom_set_why(p->phase_why, sizeof p->phase_why,
			k == SP_OOM_VLLM_KV ? "vLLM start-up: sizing the KV cache (before serving)"
					    : "vLLM start-up (before serving)");
	} else if (k == SP_OOM_SGLANG) {
		p->phase = SP_PHASE_LOAD;
		oom_set_why(p->phase_why, sizeof p->phase_why, "SGLang start-up: sizing the memory pool (before serving)");
	} else if (k == SP_OOM_TGI) {
		p->phase = SP_PHASE_LOAD;
		oom_set_why(p->phase_why, sizeof p->phase_why, "text-generation-inference warm-up (before serving)");
	} else if (p->progress == SP_PHASE_SERVE) {
		p->phase = SP_PHASE_SERVE;
		snprintf(p->phase_why, sizeof p->phase_why, "%s", p->progress_why);
	} else if (p->in_tb && p->tb_phase != SP_PHASE_UNKNOWN) {
		p->phase = p->tb_phase;
		snprintf(p->phase_why, sizeof p->phase_why, "%.39s in the traceback", p->tb_why);
	} else {
		p->phase = p->progress;
		snprintf(p->phase_why, sizeof p->phase_why, "%s", p->progress_why);
	}
	return true;
}

static void mark_progress(struct sp_oomlog *p, enum sp_oom_phase ph, const char *why)
{
	p->progress = ph;
	p->tqdm_step = false;
	oom_set_why(p->progress_why, sizeof p->progress_why, why);
	if (ph == SP_PHASE_STEP)
		p->trained = true;
}

static const char *const load_frames[] = {
	"from_pretrained", "_load_pretrained_model", "load_state_dict", "_load_state_dict_into",
	"load_checkpoint", "safetensors", "load_model", "load_weights", "model_loader", "load_sharded_checkpoint",
	"in quantize_4bit", "in create_quantized_param", "in init_cuda_graphs", "in capture_model", "in profile_run",
	"in determine_num_available_blocks", "in determine_available_memory", "in _initialize_kv_caches",
	"in initialize_kv_cache",
};
/* a server's request loop: a failure under it is while serving (whatever model code runs below) */
static const char *const serve_frames[] = {
	"run_engine_loop", "in engine_step", "run_busy_loop", "step_with_batch_queue", "in sample_tokens",
	"event_loop_normal", "event_loop_overlap", "in exposed_step",
};
static const char *const step_frames[] = {
	"training_step", "_inner_training_loop", "compute_loss", "in forward", ".backward(", "in backward",
	"_engine_run_backward", "optimizer.step", "evaluation_loop", "in evaluate", "prediction_step",
	"in train_step", "in _forward", "in _call_impl",
};
static const char *const bnb_frames[] = {
	"bitsandbytes", "dequantize", "quantize_4bit", "Linear4bit", "MatMul4Bit", "Params4bit",
};

static void tb_phase_set(struct sp_oomlog *p, enum sp_oom_phase ph, const char *why)
{
	p->tb_phase = ph;
	oom_set_why(p->tb_why, sizeof p->tb_why, why);
	p->tb_last_phase = ph;
	oom_set_why(p->tb_last_why, sizeof p->tb_last_why, why);
}

static void tb_line(struct sp_oomlog *p, const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof bnb_frames / sizeof bnb_frames[0]; i++)
		if (sp_has(s, n, bnb_frames[i]))
			p->tb_bnb = true;
	/* under a server's request loop every frame below is serving */
	if (p->tb_phase == SP_PHASE_SERVE)
		return;
	for (size_t i = 0; i < sizeof serve_frames / sizeof serve_frames[0]; i++)
		if (sp_has(s, n, serve_frames[i])) {
			tb_phase_set(p, SP_PHASE_SERVE, serve_frames[i]);
			return;
		}
	for (size_t i = 0; i < sizeof load_frames / sizeof load_frames[0]; i++)
		if (sp_has(s, n, load_frames[i])) {
			tb_phase_set(p, SP_PHASE_LOAD, load_frames[i]);
			return;
		}
	for (size_t i = 0; i < sizeof step_frames / sizeof step_frames[0]; i++)
		if (sp_has(s, n, step_frames[i])) {
			/* nn.Module's _call_impl is everywhere; it is a step only
			 * when nothing said load */
			if (strcmp(step_frames[i], "in _call_impl") == 0)
				continue;
			tb_phase_set(p, SP_PHASE_STEP, step_frames[i]);
			return;
		}
	if (ends_with(s, n, "in step"))
		tb_phase_set(p, SP_PHASE_STEP, "optimizer step");
}

/* tqdm's "%|" (the first), without the needle machinery: the hot path of a long log */
static const char *pct_bar(const char *s, size_t n)
{
	for (const char *q = s; (q = memchr(q, '|', (size_t)(s + n - q))); q++)
		if (q > s && q[-1] == '%')
			return q - 1;
	return NULL;
}

/* tqdm's rate: "it/s" or "s/it" */
static bool tqdm_rate(const char *s, size_t n)
{
	const char *e = s + n;
	for (const char *q = s; (q = memchr(q, '/', (size_t)(e - q))); q++) {
		if (q - s >= 2 && q[-2] == 'i' && q[-1] == 't' && q + 1 < e && q[1] == 's')
			return true;
		if (q > s && q[-1] == 's' && e - q >= 3 && q[1] == 'i' && q[2] == 't')
			return true;
	}
	return false;
}

/* tqdm: "desc:  30%|███       | 30/100 [00:10<00:23,  3.00it/s]" */
static void tqdm_line(struct sp_oomlog *p, const char *s, size_t n)
{
	if (!tqdm_rate(s, n))
		return;
	if (p->progress == SP_PHASE_SERVE)
		return;
	const char *bar = memchr(s, '|', n);
	if (!bar)
		return;
	const char *br = memchr(bar, '[', (size_t)(s + n - bar));
	const char *sl = br ? memchr(bar, '/', (size_t)(br - bar)) : NULL;
	if (!sl)
		return;
	size_t dl = (size_t)(bar - s);
	bool words = false;
	for (size_t i = 0; i < dl && !words; i++)
		words = isalpha((unsigned char)s[i]);
	static const char *const load_words[] = { "load", "shard", "capturing" };
	static const char *const prep_words[] = { "fetch", "download", "map", "token", "filter", "generat",
						  "extract", "convert", "process", "upload", "saving", "packing" };
	for (size_t i = 0; words && i < sizeof load_words / sizeof load_words[0]; i++)
		if (sp_has_ci(s, dl, load_words[i])) {
			mark_progress(p, SP_PHASE_LOAD, "while loading, by its progress bar");
			return;
		}
	for (size_t i = 0; words && i < sizeof prep_words / sizeof prep_words[0]; i++)
		if (sp_has_ci(s, dl, prep_words[i]))
			return;
	/* a serving engine's bars (requests, prompts, warm-up) are not training steps */
	if (p->engine != SP_ENGINE_UNKNOWN || p->progress == SP_PHASE_SERVE)
		return;
	mark_progress(p, SP_PHASE_STEP, "after training steps began, by its step counter");
	p->tqdm_step = true;
}

static bool is_sigkill(const char *s, size_t n)
{
	/* a bare "Killed" (the shell), or "./run.sh: line 3:  4242 Killed  python train.py" */
	size_t a = 0, b = n;
	while (a < b && s[a] == ' ')
		a++;
	while (b > a && s[b - 1] == ' ')
		b--;
	/* cppcheck loses track of the two trims: the length can be 6 */
	// cppcheck-suppress knownConditionTrueFalse
	if (b - a == 6 && memcmp(s + a, "Killed", 6) == 0)
		return true;
	const char *k = HAS(s, n, " Killed ");
	if (k && k > s && isdigit((unsigned char)k[-1]))
		return true;
	if (HAS(s, n, "SIGKILL") || sp_has_ci(s, n, "signal 9") || HAS(s, n, "status=9/KILL") ||
	    HAS(s, n, "signal: killed"))
		return true;
	/* "exit code 137", "exit status 137", "exitcode  : -9", "exit status -9" */
	static const char *const codes[] = { "137", "-9" };
	for (int c = 0; c < 2; c++) {
		size_t cl = strlen(codes[c]);
		/* the first occurrence through the line's filter, the rest by memmem */
		for (const char *q = sp_has(s, n, codes[c]); q; q = memmem(q, (size_t)(s + n - q), codes[c], cl)) {
			bool alone = (q + cl == s + n || !isdigit((unsigned char)q[cl])) &&
				     (q == s || !isdigit((unsigned char)q[-1]));
			size_t back = (size_t)(q - s) < 24 ? (size_t)(q - s) : 24;
			if (alone && sp_has_ci(q - back, back, "exit"))
				return true;
			q += cl;
		}
	}
	return false;
}

static void classify_line(struct sp_oomlog *p, const char *s, size_t n);

static inline bool ctrl_byte(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* Eight bytes at once (SWAR): each test is exact for "any of the eight" (a
 * borrow can only mark a byte above a true one). */
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* a byte below 0x20, or DEL */
static inline uint64_t ctrl_in(uint64_t w)
{
	uint64_t d = w ^ (0x7f * ONES);
	return (((w - 0x20 * ONES) & ~w) | ((d - ONES) & ~d)) & HIGHS;
}

/* a byte in 0x41..0x7f (where the letters are) */
static inline uint64_t letters_in(uint64_t w)
{
	return ((w & (0x7f * ONES)) + 0x3f * ONES) & ~w & HIGHS;
}

/* Each byte's class as the line is gathered: BC_CTRL ends a run of printable
 * bytes (below 0x20, DEL); BC_TEXT is a letter but tqdm's i t s B k M G
 * ("it/s", "s/it", "MB/s", "GiB"): a line without one is a progress redraw
 * at most (classify_line). */
#define BC_CTRL 1u
#define BC_TEXT 2u
static const unsigned char byte_class[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 2, 0, 2, 2, 2, 2, 0, 2, 2, 2, 2, 2, 0, 2, 2, /* @ A B ... O: not B G M */
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0,
	0, 2, 2, 2, 2, 2, 2, 2, 2, 0, 2, 0, 2, 2, 2, 2, /* ` a b ... o: not i k */
	2, 2, 2, 0, 0, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 1, /* p ... z: not s t; DEL */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* One line, once it ends. A text line's byte and bigram sets (ladder/match.c)
 * are its needle filter while it is classified: only text lines search
 * needles, the redraws that make most of a long log never pay for them. */
static void classify(struct sp_oomlog *p, const char *s, size_t n)
{
	/* A redraw without text letters (below) can only mark the steps a
	 * tqdm counter marks: nothing to do when the last mark was just that
	 * and no traceback is open (most lines of a long training log). */
	if (!p->text && p->tqdm_step && !p->in_tb)
		return;
	if (p->text) {
		sp_match_sets((const unsigned char *)p->line, p->len, p->line_set, p->line_bigrams);
		sp_match_filter(p->line_set, p->line_bigrams);
	}
	classify_line(p, s, n);
	sp_match_filter(NULL, NULL);
}

/* vLLM: "Available KV cache memory: -3.41 GiB" (at start-up, after profiling) */
static bool vllm_negative_kv(const char *s, size_t n)
{
	const char *k = HAS(s, n, "Available KV cache memory:");
	if (!k)
		return false;
	k += strlen("Available KV cache memory:");
	while (*k == ' ')
		k++;
	return *k == '-' && isdigit((unsigned char)k[1]);
}

/* The prefixes a line may carry before its text, in any order and stacked:
 * a rank tag, a dmesg or CI time, a line number, Docker Compose's service
 * column ("vllm-1  | "), a pager's box rule ("│ "), vLLM's process tag,
 * vLLM's level and time. True when vLLM's logger prefix was among them. */
static bool strip_one_prefix(const char **sp, size_t *np, bool *vllm_prefix);

static bool strip_prefixes(const char **sp, size_t *np)
{
	bool vllm_prefix = false;
	for (int i = 0; i < 6 && strip_one_prefix(sp, np, &vllm_prefix); i++)
		;
	return vllm_prefix;
}

/* one prefix off the front: true when one was */
static bool strip_one_prefix(const char **sp, size_t *np, bool *vllm_prefix)
{
	const char *s = *sp;
	size_t n = *np;
	const char *s0 = s;
	/* a box rule a pager or a dashboard drew: "│ " (U+2502) */
	if (n >= 4 && (unsigned char)s[0] == 0xe2 && (unsigned char)s[1] == 0x94 && (unsigned char)s[2] == 0x82 &&
	    s[3] == ' ') {
		*sp = s + 4;
		*np = n - 4;
		return true;
	}
	/* Docker Compose's service column: "vllm-1  | ", "ollama_1 | " (a name, spaces, a bar) */
	if (n > 4 && isalnum((unsigned char)s[0])) {
		size_t w = 0;
		while (w < n && w < 48 && (isalnum((unsigned char)s[w]) || s[w] == '-' || s[w] == '_' || s[w] == '.'))
			w++;
		size_t b = w;
		while (b < n && s[b] == ' ')
			b++;
		if (b > w && b + 1 < n && s[b] == '|' && s[b + 1] == ' ' && w > 1 && isdigit((unsigned char)s[w - 1])) {
			*sp = s + b + 2;
			*np = n - b - 2;
			return true;
		}
	}
	/* drop a "[rank0]:" / "[default0]:" / "[ 1234.5678]" prefix */
	if (n > 2 && s[0] == '[') {
		const char *e = memchr(s, ']', n < 24 ? n : 24);
		if (e && (size_t)(e - s) + 1 < n && (e[1] == ':' || e[1] == ' ')) {
			e += 2;
			if (e < s + n && *e == ' ' && e[-1] == ':')
				e++;
			n -= (size_t)(e - s);
			s = e;
		}
	}
	/* vLLM's process tag "(EngineCore_DP0 pid=563) ", "(VllmWorker rank=4 pid=555) " */
	if (n > 8 && s[0] == '(') {
		const char *e = memchr(s, ')', n < 48 ? n : 48);
		if (e && (size_t)(e - s) + 1 < n && e[1] == ' ' && memmem(s, (size_t)(e - s), "pid=", 4)) {
			n -= (size_t)(e + 2 - s);
			s = e + 2;
		}
	}
	/* vLLM's level and time: "ERROR 12-23 23:34:23 [core.py:708] ", "INFO 11-18 18:07:28 engine.py:366] " */
	if (n > 24 && (s[0] == 'I' || s[0] == 'E' || s[0] == 'W' || s[0] == 'D')) {
		size_t w = 0;
		while (w < 8 && isupper((unsigned char)s[w]))
			w++;
		if (w >= 4 && s[w] == ' ' && isdigit((unsigned char)s[w + 1]) && isdigit((unsigned char)s[w + 2]) &&
		    s[w + 3] == '-') {
			const char *e = memmem(s, n < 80 ? n : 80, "] ", 2);
			if (e) {
				n -= (size_t)(e + 2 - s);
				s = e + 2;
				*vllm_prefix = true; /* vLLM's logger: "%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] " */
			}
		}
	}
	*sp = s;
	*np = n;
	return s != s0;
}

static void engine_is(struct sp_oomlog *p, enum sp_log_engine e)
{
	/* the engine's own message names the engine (Ollama wraps llama.cpp: it stays) */
	if (p->engine == SP_ENGINE_UNKNOWN || (p->engine == SP_ENGINE_VLLM && e == SP_ENGINE_SGLANG) ||
	    (p->engine == SP_ENGINE_LLAMACPP && e == SP_ENGINE_OLLAMA)) {
		p->engine = e;
		p->engine_weak = false;
	}
}

/* vLLM's, SGLang's and TGI's start-up failures: true when the line is one */
static bool serving_failure(struct sp_oomlog *p, const char *s, size_t n)
{
	if (HAS(s, n, "Free memory on device") && HAS(s, n, "less than desired GPU memory utilization")) {
		engine_is(p, SP_ENGINE_VLLM);
		if (record(p, SP_OOM_VLLM_STARTUP, s, n))
			vllm_figures(p, s, n);
	} else if (HAS(s, n, "The memory capacity is unbalanced")) {
		/* SGLang's start-up check: "RuntimeError: The memory capacity is unbalanced. Some GPUs may be
		 * occupied by other processes." (what each rank has free differs: another holder, or memory a
		 * dead run still holds) */
		engine_is(p, SP_ENGINE_SGLANG);
		record(p, SP_OOM_SGLANG, s, n);
	} else if (HAS(s, n, "No available memory for the cache blocks")) {
		p->engine = p->engine == SP_ENGINE_UNKNOWN ? SP_ENGINE_VLLM : p->engine;
		if (record(p, SP_OOM_VLLM_KV, s, n) && p->kv_negative) {
			p->fig.kv_available.v = 0;
			p->fig.kv_available.why = SP_OK;
		}
	} else if (vllm_negative_kv(s, n)) {
		p->kv_negative = true;
		if (record(p, SP_OOM_VLLM_KV, s, n)) {
			p->fig.kv_available.v = 0;
			p->fig.kv_available.why = SP_OK;
		}
	} else if (HAS(s, n, "max seq len (") && HAS(s, n, "KV cache")) {
		/* v1: "To serve at least one request with the models's max seq len (131072), (16.00 GiB KV
		 * cache is needed, which is larger than the available KV cache memory (9.51 GiB). Based on
		 * the available memory, the estimated maximum model length is 77888. ..."
		 * v0: "The model's max seq len (131072) is larger than the maximum number of tokens that can
		 * be stored in KV cache (77888). ..." */
		if (record(p, SP_OOM_VLLM_KV, s, n)) {
			uint64_t v, b;
			if ((v = number_after(s, n, "max seq len (")))
				p->max_model_len = v;
			if ((v = number_after(s, n, "estimated maximum model length is")) ||
			    (v = number_after(s, n, "stored in KV cache (")))
				p->est_max_model_len = v;
			if (size_before(s, n, "KV cache is needed", &b)) {
				p->fig.kv_needed.v = b;
				p->fig.kv_needed.why = SP_OK;
			}
			(void)size_after(s, n, "available KV cache memory (", &p->fig.kv_available);
		}
	} else if (HAS(s, n, "Not enough memory. Please try to increase --mem-fraction-static") ||
		   (HAS(s, n, "is larger than the profiled value -") && HAS(s, n, "max_total"))) {
		/* SGLang: the pool (weights plus KV cache) left no room: max_total_num_tokens <= 0 */
		if (HAS(s, n, "profiled value -"))
			p->kv_negative = true;
		engine_is(p, SP_ENGINE_SGLANG);
		if (record(p, SP_OOM_SGLANG, s, n) && p->avail_mem) {
			p->fig.free.v = p->avail_mem;
			p->fig.free.why = SP_OK;
		}
	} else if (HAS(s, n, "Not enough memory to handle") && HAS(s, n, "prefill tokens")) {
		/* TGI's warm-up: "Not enough memory to handle 4096 prefill tokens. You need to decrease
		 * `--max-batch-prefill-tokens`" (the shard's CUDA OOM usually came just before) */
		struct sp_oom_figures keep = p->fig;
		bool had_torch = p->kind == SP_OOM_TORCH;
		if (record(p, SP_OOM_TGI, s, n) && had_torch)
			p->fig = keep;
	} else {
		return false;
	}
	return true;
}

static void set_killer(struct sp_oomlog *p, enum sp_log_killer k, bool threshold)
{
	p->killer = k;
	p->killer_threshold = threshold;
}

/* The killers someone configured, each with the limit it printed: earlyoom,
 * systemd-oomd, Ray's memory monitor, a container's limit. True when the
 * line is one of theirs. */
static bool killer_line(struct sp_oomlog *p, const char *s, size_t n)
{
	const char *k;
	double v;
	/* Ray: "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
	 * "... was 12.49GB / 13.15GB (0.950003), which exceeds the memory usage threshold of 0.95. Ray killed
	 * this worker", the raylet's "1 Workers (tasks / actors) killed due to memory pressure (OOM)" */
	if (HAS(s, n, "ray.exceptions.OutOfMemoryError") || HAS(s, n, "killed due to the node running low on memory") ||
	    HAS(s, n, "exceeds the memory usage threshold of") || HAS(s, n, "killed due to memory pressure (OOM)")) {
		if (record(p, SP_OOM_RAY, s, n) || p->kind == SP_OOM_RAY)
			set_killer(p, SP_KILLER_RAY, true);
		if ((k = HAS(s, n, "memory usage threshold of")) && (v = sp_pct_at(k + strlen("memory usage threshold of"))) > 0)
			p->killer_limit_pct = v <= 1.0 ? v * 100.0 : v;
		/* the task Ray killed: an actor's constructor is its start-up (a vLLM worker loading) */
		if (p->kind == SP_OOM_RAY && HAS(s, n, "name=") && HAS(s, n, ".__init__")) {
			p->phase = SP_PHASE_LOAD;
			oom_set_why(p->phase_why, sizeof p->phase_why, "Ray killed an actor in its __init__ (start-up)");
		}
		if (HAS(s, n, "RayWorkerVllm") || HAS(s, n, "RayWorkerWrapper"))
			p->engine = p->engine == SP_ENGINE_UNKNOWN ? SP_ENGINE_VLLM : p->engine;
		return true;
	}
	/* earlyoom: "low memory! at or below SIGTERM limits: mem 10.00%, swap 15.00%" (1.x), "Low Memory!
	 * At or below sigterm limits (mem: 10 %, swap: 10 %)" (0.x), "sending SIGTERM to process 696 uid 1001
	 * \"ipfs\": badness 757, VmRSS 637 MiB", "killing process 27541 \"bash\" with signal 15: badness 550",
	 * "Killing process 'bash' with signal 15, pid: 5874, badness: 538"; its start-up line "sending
	 * SIGTERM when mem <= 50 % and swap <= 10 %," names the floor */
	if ((k = sp_has_ci(s, n, "at or below sigterm limits")) || (k = sp_has_ci(s, n, "at or below sigkill limits"))) {
		if (record(p, SP_OOM_EARLYOOM, s, n) || p->kind == SP_OOM_EARLYOOM)
			set_killer(p, SP_KILLER_EARLYOOM, true);
		const char *m = sp_has_ci(k, (size_t)(s + n - k), "mem");
		if (m && (v = sp_pct_at(m + 3)) > 0)
			p->killer_limit_pct = v;
		return true;
	}
	if ((HAS(s, n, "badness") && (sp_has_ci(s, n, "sending SIG") || sp_has_ci(s, n, "killing process"))) ||
	    HAS(s, n, "escalating to SIGKILL after")) {
		if (record(p, SP_OOM_EARLYOOM, s, n) || p->kind == SP_OOM_EARLYOOM)
			set_killer(p, SP_KILLER_EARLYOOM, true);
		return true;
	}
	if (HAS(s, n, "sending SIGTERM when mem <=") && (k = HAS(s, n, "mem <="))) {
		if ((v = sp_pct_at(k + 6)) > 0)
			p->killer_limit_pct = v; /* earlyoom's start-up: its floor, not a kill */
		return true;
	}
	/* systemd-oomd: "Killed /user.slice/.../x.scope due to memory pressure for /user.slice/... being
	 * 51.07% > 50.00% for > 20s with reclaim activity", "Marked ... for killing due to memory pressure
	 * for ...", "x.scope: systemd-oomd killed 12 process(es) in this unit.", "... due to swap used ..." */
	if ((HAS(s, n, "due to memory pressure for") && (HAS(s, n, "Killed ") || HAS(s, n, "Marked "))) ||
	    HAS(s, n, "systemd-oomd killed") || (HAS(s, n, "oomd") && HAS(s, n, "due to swap used"))) {
		if (record(p, SP_OOM_OOMD, s, n) || p->kind == SP_OOM_OOMD)
			set_killer(p, SP_KILLER_OOMD, true);
		if ((k = HAS(s, n, "% > ")) && (v = sp_pct_at(k + 4)) > 0)
			p->killer_limit_pct = v;
		return true;
	}
	/* Docker / Kubernetes: "Reason: OOMKilled", "STATUS OOMKilled", docker inspect's "OOMKilled": true,
	 * the kubelet's older "reason": "OOM Killed" (not "OOMKilled": false) */
	if ((HAS(s, n, "OOMKilled") && !HAS(s, n, "\"OOMKilled\": false") && !HAS(s, n, "OOMKilled=false")) ||
	    HAS(s, n, "\"OOM Killed\"")) {
		if (record(p, SP_OOM_CONTAINER, s, n) || p->kind == SP_OOM_CONTAINER)
			set_killer(p, SP_KILLER_CONTAINER, true);
		return true;
	}
	return false;
}

/* Failures that are not memory: the OOM ladder does not apply (sp_oomlog_finish
 * leaves the kind unknown unless a memory failure was also named). */
static void not_memory_line(struct sp_oomlog *p, const char *s, size_t n)
{
	static const char *const marks[] = {
		"illegal memory access",            /* CUDA error: an illegal memory access was encountered */
		"Watchdog caught collective operation timeout", /* NCCL: a collective timed out */
		"fallen off the bus",               /* NVRM: GPU has fallen off the bus */
		"unspecified launch failure",
		"device-side assert triggered",
		"misaligned address",
		"ModuleNotFoundError:",
		"ImportError:",
		"NCCL error",
	};
	if (p->not_memory)
		return;
	for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
		if (sp_has(s, n, marks[i])) {
			p->not_memory = true;
			size_t o = 0;
			for (size_t j = 0; j < n && o + 1 < sizeof p->not_memory_why; j++) {
				unsigned char c = (unsigned char)s[j];
				p->not_memory_why[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
			}
			p->not_memory_why[o] = 0;
			return;
		}
}

static void failures_line(struct sp_oomlog *p, const char *s, size_t n, bool indented);

/* A message wrapped over two lines by a terminal or a paste: the previous line's start
 * joined to this one ("Free memory on device cuda:0 (67.92/121.69 GiB) on startup is less
 * than" / "desired GPU memory utilization (0.7, 85.18 GiB)."). True when the join named a
 * failure (the line is not read on its own then). */
static bool wrapped_failure(struct sp_oomlog *p, const char *s, size_t n)
{
	if (!p->prev_len)
		return false;
	if (!((HAS(s, n, "desired GPU memory utilization") && !HAS(s, n, "Free memory on device")) ||
	      (HAS(s, n, "CUDACachingAllocator") && !HAS(s, n, "INTERNAL ASSERT FAILED"))))
		return false;
	char j[sizeof p->prev + SP_OOMLOG_WINDOW + 2];
	size_t m = n < SP_OOMLOG_WINDOW ? n : SP_OOMLOG_WINDOW;
	memcpy(j, p->prev, p->prev_len);
	j[p->prev_len] = ' ';
	memcpy(j + p->prev_len + 1, s, m);
	j[p->prev_len + 1 + m] = 0;
	const uint64_t *lb = sp_match_bytes, *lg = sp_match_bigrams;
	size_t jl = p->prev_len + 1 + m;
	sp_match_filter(NULL, NULL); /* the joined text is not the line the filters were built from */
	p->prev_len = 0;
	enum sp_oom_kind was = p->kind;
	failures_line(p, j, jl, false);
	sp_match_filter(lb, lg);
	return p->kind != was;
}

/* PyTorch's own failures (bitsandbytes' when its frames are in the traceback):
 * true when the line is one; indented: a traceback's frame */
static bool torch_failure(struct sp_oomlog *p, const char *s, size_t n, bool indented)
{
	/* PyTorch on Tegra and other unified-memory boards: when cudaMalloc fails, the allocator's NVML
	 * query asserts before the OOM message can be made: "RuntimeError: NVML_SUCCESS == r INTERNAL
	 * ASSERT FAILED at \".../c10/cuda/CUDACachingAllocator.cpp\":838" (pytorch issue 185240) */
	if (HAS(s, n, "NVML_SUCCESS == r INTERNAL ASSERT FAILED") && HAS(s, n, "CUDACachingAllocator")) {
		record(p, (p->in_tb && p->tb_bnb) ? SP_OOM_BNB : SP_OOM_TORCH, s, n);
		return true;
	}
	if ((HAS(s, n, "CUDA out of memory") || HAS(s, n, "OutOfMemoryError")) &&
	    (!indented || HAS(s, n, "Tried to allocate"))) {
		if (record(p, (p->in_tb && p->tb_bnb) ? SP_OOM_BNB : SP_OOM_TORCH, s, n))
			torch_figures(p, s, n);
	} else if (HAS(s, n, "CUDACachingAllocator") && HAS(s, n, "memory allocation failed with OOM")) {
		/* PyTorch's allocator warning (2.8+): "[W... CUDACachingAllocator.cpp:NNNN] memory allocation
		 * failed with OOM on device 0 while trying to allocate 2147483648 bytes (free: 1073741824,
		 * total: 128526896333)" */
		if (record(p, (p->in_tb && p->tb_bnb) ? SP_OOM_BNB : SP_OOM_TORCH, s, n)) {
			uint64_t b;
			if ((b = number_after(s, n, "trying to allocate"))) {
				p->fig.tried.v = b;
				p->fig.tried.why = SP_OK;
			}
			if (!size_after(s, n, "free:", &p->fig.free) && (b = number_after(s, n, "free:"))) {
				p->fig.free.v = b;
				p->fig.free.why = SP_OK;
			}
			if (!size_after(s, n, "total:", &p->fig.total) && (b = number_after(s, n, "total:"))) {
				p->fig.total.v = b;
				p->fig.total.why = SP_OK;
			}
		}
	} else {
		return false;
	}
	return true;
}

/* An allocation the host, Ollama or llama.cpp could not make: true when the line is one */
static bool alloc_failure(struct sp_oomlog *p, const char *s, size_t n)
{
	if (HAS(s, n, "DefaultCPUAllocator") &&
	    (HAS(s, n, "can't allocate memory") || HAS(s, n, "not enough memory"))) {
		/* "DefaultCPUAllocator: can't allocate memory: you tried to allocate N bytes" (older),
		 * "DefaultCPUAllocator: not enough memory: you tried to allocate N bytes." (current) */
		uint64_t b = number_after(s, n, "you tried to allocate");
		if (record(p, SP_OOM_CPU_ALLOC, s, n) && b) {
			p->fig.tried.v = b;
			p->fig.tried.why = SP_OK;
		}
	} else if ((HAS(s, n, "Unable to allocate") && HAS(s, n, "for an array")) || HAS(s, n, "std::bad_alloc")) {
		/* NumPy: "Unable to allocate 32.0 GiB for an array with shape ..."; C++ new */
		if (record(p, SP_OOM_CPU_ALLOC, s, n))
			(void)size_after(s, n, "Unable to allocate", &p->fig.tried);
	} else if (HAS(s, n, "model requires more system memory") || HAS(s, n, "model requires more memory") ||
		   HAS(s, n, "model request too large for system") || HAS(s, n, "is too large for this system")) {
		/* Ollama's own check: "model requires more system memory (25.3 GiB) than is available
		 * (10.2 GiB)", msg="model request too large for system" requested="91.1 GiB"
		 * available="79.2 GiB", "requested model (18.4 GiB) is too large for this system (6.8 GiB)" */
		p->engine = SP_ENGINE_OLLAMA;
		if (record(p, SP_OOM_OLLAMA, s, n)) {
			if (!size_after(s, n, "memory (", &p->fig.tried) && !size_after(s, n, "requested=\"", &p->fig.tried))
				(void)size_after(s, n, "requested model (", &p->fig.tried);
			if (!size_after(s, n, "is available (", &p->fig.free) && !size_after(s, n, "available=\"", &p->fig.free))
				(void)size_after(s, n, "this system (", &p->fig.free);
			p->phase = SP_PHASE_LOAD;
			oom_set_why(p->phase_why, sizeof p->phase_why, "Ollama's memory check before loading");
		}
	} else if (HAS(s, n, "cudaMalloc failed: out of memory") || HAS(s, n, "unable to allocate CUDA") ||
		   HAS(s, n, "unable to allocate backend buffer") || HAS(s, n, "failed to allocate CUDA") ||
		   HAS(s, n, "failed to allocate buffer for kv cache") || HAS(s, n, "failed to allocate compute buffers") ||
		   (HAS(s, n, "ggml_") && HAS(s, n, "failed to allocate buffer of size")) ||
		   ((HAS(s, n, "unable to allocate ") || HAS(s, n, "failed to allocate ")) && HAS(s, n, " buffer") &&
		    (HAS(s, n, "llama_model_load") || HAS(s, n, "alloc_tensor_range") || HAS(s, n, "ggml_")))) {
		/* llama.cpp: "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0:
		 * cudaMalloc failed: out of memory", "llama_model_load: error loading model: unable to allocate
		 * CUDA0 buffer", "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size N"; inside
		 * Ollama it is Ollama's failure */
		if (p->engine != SP_ENGINE_OLLAMA)
			p->engine = SP_ENGINE_LLAMACPP;
		if (record(p, p->engine == SP_ENGINE_OLLAMA ? SP_OOM_OLLAMA : SP_OOM_LLAMACPP, s, n)) {
			uint64_t b;
			if (!size_after(s, n, "allocating", &p->fig.tried) && (b = number_after(s, n, "buffer of size"))) {
				p->fig.tried.v = b;
				p->fig.tried.why = SP_OK;
			}
		}
	} else {
		return false;
	}
	return true;
}

/* The failure a line names, recorded with its figures (record: the more
 * specific kind wins); indented: a traceback's frame, not its exception line. */
static void failures_line(struct sp_oomlog *p, const char *s, size_t n, bool indented)
{
	not_memory_line(p, s, n);
	if (serving_failure(p, s, n) || killer_line(p, s, n) || wrapped_failure(p, s, n) ||
	    torch_failure(p, s, n, indented) || alloc_failure(p, s, n))
		return;
	if (HAS(s, n, "NV_ERR_NO_MEMORY") || (HAS(s, n, "nvgpu") && HAS(s, n, "alloc FAILED"))) {
		/* NVRM on GB10; Jetson's nvgpu: "nvgpu_dma_print_err:101 [INFO] DMA alloc FAILED: [sysmem]
		 * size=257490944 ... flags:PHYSICALLY_ADDRESSED" */
		record(p, SP_OOM_DRIVER, s, n);
	} else if (HAS(s, n, "Out of memory: Kill") || HAS(s, n, "out of memory: Kill") || HAS(s, n, "oom-kill:") ||
		   HAS(s, n, "invoked oom-killer") || HAS(s, n, "oom_reaper: reaped")) {
		if (record(p, SP_OOM_KERNEL, s, n) || p->kind == SP_OOM_KERNEL)
			set_killer(p, SP_KILLER_KERNEL, false);
	} else if (HAS(s, n, "CUDA error: out of memory") || HAS(s, n, "CUBLAS_STATUS_ALLOC_FAILED") ||
		   HAS(s, n, "cudaErrorMemoryAllocation") || HAS(s, n, "CUDA driver error: out of memory") ||
		   HAS(s, n, "Cuda failure 'out of memory'")) {
		record(p, (p->in_tb && p->tb_bnb) ? SP_OOM_BNB : SP_OOM_CUDA_ERROR, s, n);
	} else if (is_sigkill(s, n)) {
		record(p, SP_OOM_SIGKILL, s, n);
	}
}

/* A training loop's own progress line, of any common shape: a counter word
 * (step, iter, iteration, epoch) with a number after it, and a loss on the
 * same line: "step 1180 | loss 1.0912 | lr 2e-5", "iter 200: loss 3.21",
 * "Iteration 51 | Backbone loss 5.88", "Epoch 3 [120/500] loss=0.41",
 * "Training Epoch: 1/3, step 10/36 completed (loss: 0.52)". */
static bool counter_loss_line(const char *s, size_t n)
{
	if (!sp_has_ci(s, n, "loss"))
		return false;
	static const char *const words[] = { "step", "iter", "epoch" };
	for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
		size_t wl = strlen(words[w]);
		for (const char *q = s; (q = sp_has_ci(q, (size_t)(s + n - q), words[w])); q += wl) {
			/* a word of its own start ("step", not "timestep"); "iteration", "steps" may follow */
			if (q > s && isalpha((unsigned char)q[-1]))
				continue;
			const char *r = q + wl;
			while (r < s + n && isalpha((unsigned char)*r))
				r++;
			while (r < s + n && (*r == ' ' || *r == ':' || *r == '=' || *r == '#' || *r == '['))
				r++;
			if (r < s + n && isdigit((unsigned char)*r))
				return true;
		}
	}
	return false;
}

/* Where the job was: serving, starting, loading, training steps (the
 * phase a later failure is placed in), and the Trainer's batch banner. */
static void progress_line(struct sp_oomlog *p, const char *s, size_t n)
{
	if (HAS(s, n, "Application startup complete") || HAS(s, n, "Uvicorn running on") ||
	    HAS(s, n, "Avg prompt throughput") || HAS(s, n, "Processed prompts") ||
	    HAS(s, n, "fired up and ready to roll") || HAS(s, n, "Decode batch.") ||
	    HAS(s, n, "server is listening on") || HAS(s, n, "HTTP server listening") ||
	    HAS(s, n, "all slots are idle") || HAS(s, n, "llama runner started") ||
	    (HAS(s, n, "text_generation_router") && HAS(s, n, ": Connected"))) {
		mark_progress(p, SP_PHASE_SERVE, "after the server began serving");
	} else if (HAS(s, n, "vLLM API server version") || HAS(s, n, "LLM engine (v") || HAS(s, n, "ServerArgs(") ||
		   HAS(s, n, "text_generation_launcher: Args") || HAS(s, n, "loaded meta data") ||
		   HAS(s, n, "starting llama server") || HAS(s, n, "EngineCore failed to start") ||
		   HAS(s, n, "WorkerProc failed to start") || HAS(s, n, "Engine core initialization failed")) {
		/* a server (re)starting, or Ollama loading a model into a new runner */
		mark_progress(p, SP_PHASE_LOAD, "while the server was starting");
	} else if (p->progress == SP_PHASE_SERVE) {
		/* serving: later lines do not turn it back into loading or training */
	} else if (HAS(s, n, "Loading checkpoint shards") || HAS(s, n, "checkpoint shards") ||
		   HAS(s, n, "Loading model weights") || HAS(s, n, "Loading weights") || HAS(s, n, "llm_load_tensors") ||
		   HAS(s, n, "load_tensors:") || HAS(s, n, "llama_model_load") || HAS(s, n, "Starting to load model") ||
		   HAS(s, n, "loading weights file") || HAS(s, n, "from_pretrained") || HAS(s, n, "Model loading took") ||
		   HAS(s, n, "llama_new_context") || HAS(s, n, "llama_context:") || HAS(s, n, "llama_init_from") ||
		   HAS(s, n, "llama_kv_cache") || HAS(s, n, "Load weight")) {
		mark_progress(p, SP_PHASE_LOAD, "while loading the model");
	} else if (HAS(s, n, "{'loss'") || HAS(s, n, "{\"loss\"") || HAS(s, n, "{'train_runtime'") ||
		   HAS(s, n, "{'eval_loss'") || HAS(s, n, "***** Running training *****") ||
		   HAS(s, n, "***** Running Evaluation *****")) {
		mark_progress(p, SP_PHASE_STEP, "after training steps began, by the Trainer's log");
	} else if (pct_bar(s, n)) {
		tqdm_line(p, s, n);
	} else if (p->engine == SP_ENGINE_UNKNOWN && counter_loss_line(s, n)) {
		mark_progress(p, SP_PHASE_STEP, "after training steps began, by its step/loss lines");
	}
	uint64_t v;
	if ((v = number_after(s, n, "Instantaneous batch size per device")))
		p->batch_per_device = v;
	if ((v = number_after(s, n, "Gradient Accumulation steps")))
		p->grad_accum = v;
	if ((v = number_after(s, n, "Total train batch size (w. parallel, distributed & accumulation)")))
		p->total_batch = v;
}

static void classify_line(struct sp_oomlog *p, const char *s, size_t n)
{
	const char *raw = s;
	size_t raw_n = n;
	bool vllm_prefix = strip_prefixes(&s, &n);
	bool indented = n && (s[0] == ' ' || s[0] == '\t');
	size_t i0 = 0;
	while (i0 < n && s[i0] == ' ')
		i0++;
	if (i0 == n)
		return;

	/* Most lines of a long log are tqdm redraws: " 12%|#    | 1234/10000 [01:00<05:00,
	 * 3.00s/it]". A line whose only letters are tqdm's (i t s B k M G: "it/s", "s/it",
	 * "MB/s", "GiB") cannot hold any needle below but tqdm's own ("%|", "it/s",
	 * "s/it", "["): every other needle has a letter outside that set (keep it so).
	 * Such a line only ends a traceback and moves the progress (classify: its
	 * needle filters are not even set). */
	if (!p->text) {
		if (p->in_tb) {
			if (indented) {
				p->tb_frames = true;
				return;
			}
			if (p->tb_frames)
				p->in_tb = false;
		}
		if (pct_bar(s, n))
			tqdm_line(p, s, n);
		return;
	}
	if (sp_log_facts_line(&p->more, s, n, p->lines + 1)) /* ladder/facts.c */
		return; /* a row of Ray's table of other processes */

	/* the engine's marks anywhere in the line, its prefixes too ("(EngineCore_DP0 pid=1) "),
	 * a traceback's frames too (module paths) */
	enum sp_log_engine before = p->engine;
	sp_oomlog_engine_line(p, raw, raw_n);
	if (vllm_prefix && p->engine == SP_ENGINE_UNKNOWN)
		p->engine = SP_ENGINE_VLLM; /* vLLM's own logger prefix */
	if (p->engine != before)
		p->engine_weak = p->in_tb && (HAS(s, n, "File \"") || (n && s[0] == ' '));

	const char *tbk = HAS(s, n, "Traceback (most recent call last)");
	if (tbk) {
		/* "ResponseError('...')Traceback (most recent call last):": the text before it is a line of its own */
		if (tbk > s && !p->in_tb)
			failures_line(p, s, (size_t)(tbk - s), false);
		p->in_tb = true;
		p->tb_frames = false;
		p->tb_bnb = false;
		p->tb_phase = SP_PHASE_UNKNOWN;
		p->tb_why[0] = 0;
		return;
	}
	bool tb_exception = false;
	if (p->in_tb) {
		if (indented || HAS(s, n, "File \"")) {
			p->tb_frames = true;
			tb_line(p, s, n);
			return;
		}
		if (HAS(s, n, "During handling of") || HAS(s, n, "The above exception"))
			return;
		tb_exception = p->tb_frames;
	}
	failures_line(p, s, n, indented);
	if (tb_exception)
		p->in_tb = false;
	progress_line(p, s, n);
	sp_oomlog_facts_line(p, s, n);
	/* the start of this line, for a message wrapped onto the next (failures_line) */
	if (HAS(s, n, "Free memory on device") || HAS(s, n, "INTERNAL ASSERT FAILED")) {
		p->prev_len = n < sizeof p->prev ? n : sizeof p->prev;
		memcpy(p->prev, s, p->prev_len);
	} else {
		p->prev_len = 0;
	}
}

static void end_line(struct sp_oomlog *p)
{
	if (p->len) {
		p->line[p->len] = 0;
		classify(p, p->line, p->len);
	}
	if (p->cut)
		p->long_lines++;
	p->len = 0;
	p->text = false;
	p->cut = false;
}

/* ---- the log's signature -------------------------------------------------------------
 * A 64-bit hash of every byte fed, the same for any split of the input: the
 * bytes are taken as little-endian 8-byte words (the last, short one held in
 * sig_tail until more comes or the log ends), each word mixed in with one
 * multiply, and the end (the tail, the length) through a full avalanche. One
 * multiply per 8 bytes, where FNV-1a paid one per byte (its chain was a third
 * of the classifier's time on a plain training log). Never 0 (0 is "none"). */
#define SIG_K 0x9E3779B97F4A7C15ULL

static inline uint64_t sig_word(uint64_t h, uint64_t w)
{
	h ^= w;
	h *= SIG_K;
	return h ^ (h >> 29);
}

static void sig_feed(struct sp_oomlog *p, const unsigned char *b, size_t len)
{
	uint64_t h = p->sig;
	size_t i = 0;
	while (p->sig_tail_n && p->sig_tail_n < 8 && i < len)
		p->sig_tail[p->sig_tail_n++] = b[i++];
	if (p->sig_tail_n == 8) {
		uint64_t w = 0;
		for (int k = 7; k >= 0; k--)
			w = w << 8 | p->sig_tail[k];
		h = sig_word(h, w);
		p->sig_tail_n = 0;
	}
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, 8); /* one load */
		if (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) /* a constant: no code on little-endian hosts */
			w = __builtin_bswap64(w); /* little-endian words on any host: the same signature everywhere */
		h = sig_word(h, w);
	}
	while (i < len)
		p->sig_tail[p->sig_tail_n++] = b[i++];
	p->sig = h;
}

static void sig_finish(struct sp_oomlog *p)
{
	uint64_t w = 0;
	for (int k = (int)p->sig_tail_n - 1; k >= 0; k--)
		w = w << 8 | p->sig_tail[k];
	uint64_t h = sig_word(p->sig, w ^ (uint64_t)p->sig_tail_n << 56);
	h ^= p->bytes;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	p->sig = h ? h : 1;
	p->sig_tail_n = 0;
}

void sp_oomlog_feed(struct sp_oomlog *p, const void *buf, size_t len)
{
	const unsigned char *b = buf;
	size_t i = 0;
	sig_feed(p, b, len);
	while (i < len) {
		/* the common case: a run of printable bytes. While it fits in the
		 * window it is copied 8 bytes at a time, and looked at byte by byte
		 * only where a word holds a letter (for BC_TEXT) until the line is
		 * known to be text. Past the window only skipped (the signature,
		 * sig_feed, has seen every byte). */
		if (!p->esc) {
			size_t room = p->len < SP_OOMLOG_WINDOW ? SP_OOMLOG_WINDOW - p->len : 0;
			size_t lim = len - i < room ? len - i : room;
			const unsigned char *q = b + i;
			char *dst = p->line + p->len;
			bool text = p->text;
			size_t k = 0;
			for (; k + 8 <= lim; k += 8) {
				uint64_t w;
				memcpy(&w, q + k, 8); /* one load */
				if (ctrl_in(w))
					break;
				memcpy(dst + k, &w, 8);
				if (!text && letters_in(w))
					text = (byte_class[q[k]] | byte_class[q[k + 1]] | byte_class[q[k + 2]] |
						byte_class[q[k + 3]] | byte_class[q[k + 4]] | byte_class[q[k + 5]] |
						byte_class[q[k + 6]] | byte_class[q[k + 7]]) & BC_TEXT;
			}
			for (; k < lim; k++) {
				unsigned f = byte_class[q[k]];
				if (f & BC_CTRL)
					break;
				dst[k] = (char)q[k];
				text |= f & BC_TEXT;
			}
			p->text = text;
			p->len += k;
			i += k;
			if (k == lim) {
				/* the window is full (or the buffer ended): the rest of the run is skipped */
				size_t start = i;
				while (i < len && !ctrl_byte(b[i]))
					i++;
				if (i > start)
					p->cut = true;
			}
			if (i >= len)
				break;
		}
		unsigned char c = b[i++];
		/* ANSI escapes: ESC [ params final, ESC ] ... BEL|ESC \, ESC x */
		if (p->esc) {
			p->esc_len++;
			if (p->esc == 1) {
				p->esc = c == '[' ? 2 : c == ']' ? 3 : 0;
				continue;
			}
			if (p->esc == 2) {
				if ((c >= 0x40 && c <= 0x7e) || p->esc_len > 64)
					p->esc = 0;
				continue;
			}
			if (p->esc == 3) {
				if (c == 0x07 || p->esc_len > 512)
					p->esc = 0;
				else if (c == 0x1b)
					p->esc = 4;
				continue;
			}
			p->esc = 0; /* ESC \ ends an OSC */
			continue;
		}
		if (c == 0x1b) {
			p->esc = 1;
			p->esc_len = 0;
			continue;
		}
		if (c == '\n' || c == '\r') {
			end_line(p);
			if (c == '\n')
				p->lines++;
			continue;
		}
		if (c == '\t') {
			c = ' ';
		} else if (c < 0x20 || c == 0x7f) {
			p->control_bytes++;
			c = ' ';
		}
		if (p->len < SP_OOMLOG_WINDOW) {
			p->line[p->len++] = (char)c; /* a space: never BC_TEXT */
		} else {
			p->cut = true;
		}
	}
	p->bytes += len;
}

/* full / LoRA / QLoRA from what the log printed */
static void decide_method(struct sp_oomlog *p)
{
	double pct = p->trainable_pct;
	if (pct <= 0 && p->params_trainable && p->params_all && p->params_trainable <= p->params_all) {
		pct = 100.0 * (double)p->params_trainable / (double)p->params_all;
		p->trainable_pct = pct;
	}
	if (pct >= 99.995) {
		p->method = SP_LOG_METHOD_FULL;
		snprintf(p->method_why, sizeof p->method_why, "trainable%%: %.4g (every weight trains)", pct);
	} else if (pct > 0 && p->quant4) {
		p->method = SP_LOG_METHOD_QLORA;
		snprintf(p->method_why, sizeof p->method_why, "trainable%%: %.4g over 4-bit weights (%s)", pct, p->quant4_why);
	} else if (pct > 0) {
		p->method = SP_LOG_METHOD_LORA;
		snprintf(p->method_why, sizeof p->method_why, "trainable%%: %.4g (adapters only)", pct);
	} else if (p->quant4 && (p->lora_seen || p->trained)) {
		p->method = SP_LOG_METHOD_QLORA;
		snprintf(p->method_why, sizeof p->method_why, "training over 4-bit weights (%s)", p->quant4_why);
	} else if (p->lora_seen) {
		p->method = SP_LOG_METHOD_LORA;
		snprintf(p->method_why, sizeof p->method_why, "LoRA adapters named (LoraConfig / lora.Linear)");
	}
}

void sp_oomlog_finish(struct sp_oomlog *p)
{
	sig_finish(p);
	end_line(p);
	/* a failure that is not memory, with at most a bare kill after it (the ranks torn down):
	 * not the OOM ladder's */
	if (p->not_memory && p->kind <= SP_OOM_SIGKILL && p->kind != SP_OOM_UNKNOWN) {
		p->kind = SP_OOM_UNKNOWN;
		snprintf(p->evidence, sizeof p->evidence, "%s", p->not_memory_why);
		p->phase = SP_PHASE_UNKNOWN;
	}
	/* the engine named only in a training job's traceback frames: a library it imports */
	if (p->engine_weak && p->trained)
		p->engine = SP_ENGINE_UNKNOWN;
	/* a failure printed before its traceback ("ERROR ... OutOfMemoryError(...)" then the frames):
	 * the traceback's frames still say where it was */
	if (p->kind != SP_OOM_UNKNOWN && p->phase == SP_PHASE_UNKNOWN && p->tb_last_phase != SP_PHASE_UNKNOWN) {
		p->phase = p->tb_last_phase;
		snprintf(p->phase_why, sizeof p->phase_why, "%.39s in the traceback", p->tb_last_why);
	}
	if (p->kind == SP_OOM_UNKNOWN) {
		p->phase = p->progress;
		snprintf(p->phase_why, sizeof p->phase_why, "%s", p->progress_why);
		if (p->phase == SP_PHASE_UNKNOWN && p->tb_last_phase != SP_PHASE_UNKNOWN) {
			p->phase = p->tb_last_phase;
			snprintf(p->phase_why, sizeof p->phase_why, "%.39s in the traceback", p->tb_last_why);
		}
	}
	/* llama.cpp's lines inside an Ollama log (Ollama's lines may come after them) */
	if (p->kind == SP_OOM_LLAMACPP && p->engine == SP_ENGINE_OLLAMA)
		p->kind = SP_OOM_OLLAMA;
	/* a server that never began serving (and no training) failed while starting: its
	 * profiling and warm-up passes ("in forward") are not training steps */
	if (p->engine != SP_ENGINE_UNKNOWN && !p->trained &&
	    (p->phase == SP_PHASE_STEP || (p->phase == SP_PHASE_UNKNOWN && p->kind != SP_OOM_UNKNOWN))) {
		p->phase = SP_PHASE_LOAD;
		snprintf(p->phase_why, sizeof p->phase_why, "%s start-up, before it began serving",
			 sp_log_engine_key(p->engine));
	}
	decide_method(p);
}
