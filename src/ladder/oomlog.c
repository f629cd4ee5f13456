// SPDX-License-Identifier: MIT
/* The failed job's log, classified as it streams by. See oomlog.h and
 * docs/ladder.md for the formats it knows (PyTorch, transformers, the kernel,
 * the NVIDIA driver, vLLM, Ollama/llama.cpp, bitsandbytes, tqdm). This file
 * is the stream and the verdict: the names of kinds, phases and engines, the
 * bytes gathered into lines (ANSI escapes, control bytes, the window), the
 * log's signature, and what sp_oomlog_finish settles at the end. Each text
 * line is read by oomline.c, the failures it names by oomfail.c, the job's
 * facts by oomfacts.c. */
#include "ladder/oomlog.h"
#include "ladder/oomlog_int.h"

#include <stdint.h>
#include <stdio.h>
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

void sp_oomlog_init(struct sp_oomlog *p)
{
	memset(p, 0, sizeof *p);
	oom_figs_unset(p);
	p->sig = 0x243F6A8885A308D3ULL;
}

size_t sp_oomlog_parse_size(const char *s, uint64_t *bytes)
{
	return sp_match_size(s, bytes);
}

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
 * at most (sp_oomlog_classify_line, oomline.c). */
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
	sp_oomlog_classify_line(p, s, n);
	sp_match_filter(NULL, NULL);
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
