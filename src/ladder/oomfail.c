// SPDX-License-Identifier: MIT
/* The failures a log line names, one rule set per source: PyTorch and
 * bitsandbytes, vLLM, SGLang and TGI at start-up, the killers someone
 * configured (earlyoom, systemd-oomd, Ray, a container's limit), the host's,
 * Ollama's and llama.cpp's allocations, the kernel and the driver, a bare
 * SIGKILL, and the failures that are not memory. Each is recorded with the
 * figures its message prints (record: the more specific kind wins). Called
 * on each text line by the line classifier (oomline.c). */
#include "ladder/oomlog.h"
#include "ladder/oomlog_int.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- the figures in each message format ---------------------------------------- */

static void torch_figures(struct sp_oomlog *p, const char *s, size_t n)
{
	struct sp_oom_figures f;
	oom_unset(&f.tried);
	oom_unset(&f.total);
	oom_unset(&f.free);
	oom_unset(&f.reserved_unalloc);
	oom_unset(&f.kv_needed);
	oom_unset(&f.kv_available);
	(void)size_after(s, n, "Tried to allocate", &f.tried);
	/* PyTorch >= 2.1: "GPU 0 has a total capacity of 119.70 GiB of which 1.23 GiB is free.
	 * ... and 8.30 GiB is reserved by PyTorch but unallocated." */
	if (size_after(s, n, "total capacity of", &f.total) || size_after(s, n, "total capacty of", &f.total)) {
		(void)size_after(s, n, "of which", &f.free);
		uint64_t b;
		if (size_before(s, n, "is reserved by PyTorch but unallocated", &b))
			oom_set(&f.reserved_unalloc, b);
	} else {
		/* PyTorch 1.x: "(GPU 0; 15.78 GiB total capacity; 14.56 GiB already allocated;
		 * 3.06 MiB free; 14.71 GiB reserved in total by PyTorch)" */
		uint64_t b, alloc, resv;
		if (size_before(s, n, "total capacity", &b))
			oom_set(&f.total, b);
		if (size_before(s, n, " free;", &b) || size_before(s, n, " free)", &b))
			oom_set(&f.free, b);
		if (size_before(s, n, "already allocated", &alloc) &&
		    size_before(s, n, "reserved in total by PyTorch", &resv) && resv >= alloc)
			oom_set(&f.reserved_unalloc, resv - alloc);
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
			if (sp_match_size(tmp, &frb))
				oom_set(&p->fig.free, frb);
			oom_set(&p->fig.total, tot);
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
			if (sp_match_size(q, &b))
				oom_set(&p->fig.tried, b);
		}
	}
}

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
	oom_figs_unset(p);
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
		if (record(p, SP_OOM_VLLM_KV, s, n) && p->kv_negative)
			oom_set(&p->fig.kv_available, 0);
	} else if (vllm_negative_kv(s, n)) {
		p->kv_negative = true;
		if (record(p, SP_OOM_VLLM_KV, s, n))
			oom_set(&p->fig.kv_available, 0);
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
			if (size_before(s, n, "KV cache is needed", &b))
				oom_set(&p->fig.kv_needed, b);
			(void)size_after(s, n, "available KV cache memory (", &p->fig.kv_available);
		}
	} else if (HAS(s, n, "Not enough memory. Please try to increase --mem-fraction-static") ||
		   (HAS(s, n, "is larger than the profiled value -") && HAS(s, n, "max_total"))) {
		/* SGLang: the pool (weights plus KV cache) left no room: max_total_num_tokens <= 0 */
		if (HAS(s, n, "profiled value -"))
			p->kv_negative = true;
		engine_is(p, SP_ENGINE_SGLANG);
		if (record(p, SP_OOM_SGLANG, s, n) && p->avail_mem)
			oom_set(&p->fig.free, p->avail_mem);
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
	sp_oomlog_failures_line(p, j, jl, false);
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
			if ((b = number_after(s, n, "trying to allocate")))
				oom_set(&p->fig.tried, b);
			if (!size_after(s, n, "free:", &p->fig.free) && (b = number_after(s, n, "free:")))
				oom_set(&p->fig.free, b);
			if (!size_after(s, n, "total:", &p->fig.total) && (b = number_after(s, n, "total:")))
				oom_set(&p->fig.total, b);
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
		if (record(p, SP_OOM_CPU_ALLOC, s, n) && b)
			oom_set(&p->fig.tried, b);
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
			if (!size_after(s, n, "allocating", &p->fig.tried) && (b = number_after(s, n, "buffer of size")))
				oom_set(&p->fig.tried, b);
		}
	} else {
		return false;
	}
	return true;
}

/* The failure a line names, recorded with its figures (record: the more
 * specific kind wins); indented: a traceback's frame, not its exception line. */
void sp_oomlog_failures_line(struct sp_oomlog *p, const char *s, size_t n, bool indented)
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
