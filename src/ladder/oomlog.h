/* SPDX-License-Identifier: MIT */
/* A streaming classifier for the output of a job that ran out of memory.
 * Pure: it is fed buffers chunk by chunk (any split), keeps a bounded window
 * of each line (a multi-GB line costs no memory), strips ANSI escapes and
 * treats '\r' as a line break (tqdm). It tells which failure, in which phase
 * (loading or training steps), and the figures the message names. */
#ifndef SP_OOMLOG_H
#define SP_OOMLOG_H
#include "ladder/facts.h"
#include "probe/sample.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Failure kinds, weakest evidence first: when a log holds several, the later
 * (more specific) kind wins. Keys are snake_case (sp_oom_kind_key). */
enum sp_oom_kind {
	SP_OOM_UNKNOWN = 0,  /* "unknown": nothing memory-related found */
	SP_OOM_SIGKILL,      /* "sigkill": Killed / exit 137 / signal 9, nothing else said */
	SP_OOM_CUDA_ERROR,   /* "cuda_error_oom": CUDA error: out of memory, CUBLAS alloc failed */
	/* the killers someone configured: a threshold, not the kernel's verdict (see sp_log_killer) */
	SP_OOM_EARLYOOM,     /* "earlyoom_kill": earlyoom sent SIGTERM/SIGKILL at its MemAvailable floor */
	SP_OOM_OOMD,         /* "oomd_kill": systemd-oomd killed a cgroup over its PSI pressure (or swap) limit */
	SP_OOM_RAY,          /* "ray_oom_kill": Ray's memory monitor killed a worker over RAY_memory_usage_threshold */
	SP_OOM_KERNEL,       /* "kernel_oom_kill": the kernel (or cgroup) OOM killer */
	SP_OOM_CONTAINER,    /* "container_oom_kill": Docker / Kubernetes OOMKilled: the container's memory limit */
	SP_OOM_DRIVER,       /* "driver_no_memory": NV_ERR_NO_MEMORY from the NVIDIA driver */
	SP_OOM_OLLAMA,       /* "ollama_memory": Ollama / llama.cpp memory errors */
	SP_OOM_CPU_ALLOC,    /* "cpu_alloc_failed": DefaultCPUAllocator: can't allocate memory */
	SP_OOM_TORCH,        /* "torch_cuda_oom": torch.OutOfMemoryError, CUDA out of memory. Tried to allocate */
	SP_OOM_BNB,          /* "bitsandbytes_oom": an OOM raised inside bitsandbytes (QLoRA (de)quantization) */
	SP_OOM_VLLM_STARTUP, /* "vllm_startup_memory": vLLM's free-memory check at start-up */
	/* serving engines (a serving kind outranks the generic ones above it) */
	SP_OOM_LLAMACPP,     /* "llamacpp_memory": llama.cpp could not allocate a buffer (cudaMalloc failed, unable to allocate CUDA0 buffer) */
	SP_OOM_TGI,          /* "tgi_memory": text-generation-inference's warm-up / prefill ran out of memory */
	SP_OOM_SGLANG,       /* "sglang_memory": SGLang's memory pool / KV cache does not fit */
	SP_OOM_VLLM_KV,      /* "vllm_kv_cache": vLLM's KV cache does not fit (no memory for the cache blocks,
			      * negative KV cache memory, max seq len needs more KV cache than available) */
	SP_OOM_KIND_N
};

/* which program wrote the log (what the ladder's rungs are about) */
enum sp_log_engine {
	SP_ENGINE_UNKNOWN = 0, /* a training script, or not said */
	SP_ENGINE_VLLM, SP_ENGINE_SGLANG, SP_ENGINE_LLAMACPP, SP_ENGINE_OLLAMA, SP_ENGINE_TGI,
};
const char *sp_log_engine_key(enum sp_log_engine e); /* "vllm", "sglang", "llamacpp", "ollama", "tgi", "unknown" */

struct sp_oomlog;

/* who killed the job, when the log says (SP_KILLER_NONE: nobody said) */
enum sp_log_killer {
	SP_KILLER_NONE = 0, SP_KILLER_KERNEL, SP_KILLER_EARLYOOM, SP_KILLER_OOMD, SP_KILLER_RAY, SP_KILLER_CONTAINER,
};
const char *sp_log_killer_key(enum sp_log_killer k); /* "kernel", "earlyoom", "systemd-oomd", "ray", "container", "none" */
/* The killer's own knob, in words ("" for none): earlyoom's -m floor, oomd's
 * ManagedOOMMemoryPressureLimit=, RAY_memory_usage_threshold, the container's
 * memory limit. The log's limit is named when it printed one. */
void sp_oomlog_killer_knob(const struct sp_oomlog *p, char *buf, size_t n);

/* the training method the log shows */
enum sp_log_method { SP_LOG_METHOD_UNKNOWN = 0, SP_LOG_METHOD_FULL, SP_LOG_METHOD_LORA, SP_LOG_METHOD_QLORA };
const char *sp_log_method_key(enum sp_log_method m); /* "full", "lora", "qlora", "unknown" */
/* SP_PHASE_SERVE: a server that had started serving requests (after start-up) */
enum sp_oom_phase { SP_PHASE_UNKNOWN = 0, SP_PHASE_LOAD, SP_PHASE_STEP, SP_PHASE_SERVE };

const char *sp_oom_kind_key(enum sp_oom_kind k);
const char *sp_oom_kind_text(enum sp_oom_kind k);
const char *sp_oom_phase_key(enum sp_oom_phase p);
/* 0 and the kind for a key, -1 for an unknown key */
int sp_oom_kind_from_key(const char *key, enum sp_oom_kind *k);

/* The bounded window kept of each line; bytes past it are not looked at. */
#define SP_OOMLOG_WINDOW 4096

struct sp_oom_figures {
	struct sp_u64 tried;            /* tried to allocate (vLLM: the desired reservation) */
	struct sp_u64 total;            /* total capacity */
	struct sp_u64 free;             /* free at the time */
	struct sp_u64 reserved_unalloc; /* reserved by PyTorch but unallocated */
	struct sp_u64 kv_needed;        /* vLLM: KV cache needed for one request at max seq len */
	struct sp_u64 kv_available;     /* vLLM/SGLang: KV cache memory available (may be negative: then 0 and kv_negative) */
};

struct sp_oomlog {
	/* ---- the answer (read after sp_oomlog_finish) ---- */
	enum sp_oom_kind kind;
	enum sp_oom_phase phase;
	char phase_why[96];           /* "backward in the traceback", "after training steps began" ... */
	struct sp_oom_figures fig;
	char evidence[200];           /* the deciding line, printable ASCII */
	uint64_t evidence_line;       /* its line number (1-based, by '\n') */
	uint64_t bytes;               /* bytes fed */
	uint64_t lines;               /* '\n' seen */
	uint64_t long_lines;          /* lines cut to the window */
	uint64_t control_bytes;       /* NUL and other control bytes (binary junk) */
	uint64_t sig;                 /* a 64-bit hash of every byte fed (oomlog.c: sig_feed), set by sp_oomlog_finish */
	/* what the Trainer's start-of-training block says (0: not said) */
	uint64_t batch_per_device, grad_accum, total_batch, seq_len;
	/* what else the log says about the job (0 / "" / UNKNOWN: not said) */
	enum sp_log_engine engine;    /* the serving engine whose lines the log holds */
	enum sp_log_method method;    /* full / LoRA / QLoRA, from trainable%, PEFT, bitsandbytes or Unsloth banners */
	char method_why[96];          /* "trainable%: 0.52", "Unsloth QLoRA banner" ... */
	double trainable_pct;         /* PEFT's "trainable%" (0: not printed) */
	char model[128];              /* the model's name or path as the log prints it, printable ASCII */
	uint64_t max_model_len;       /* vLLM: the max seq len the log names (max_model_len) */
	uint64_t est_max_model_len;   /* vLLM: "the estimated maximum model length is N" */
	uint64_t max_num_seqs;        /* vLLM: max_num_seqs where printed */
	bool kv_negative;             /* vLLM: "Available KV cache memory: -3.41 GiB" */
	bool vllm_v1;                 /* vLLM v1 wording (EngineCore) seen */
	struct sp_log_facts more;     /* ladder/facts.c: the server's hint, Ray's monitor, the last error line */
	/* who killed it: the kernel's verdict, or a threshold someone set (earlyoom's floor,
	 * oomd's pressure limit, Ray's usage threshold, a container's limit) */
	enum sp_log_killer killer;
	bool killer_threshold;        /* a threshold someone set, not the kernel running out */
	double killer_limit_pct;      /* the limit the log printed, in percent (0: not said) */
	/* a failure that is not memory (an illegal memory access, an NCCL watchdog timeout, a GPU
	 * off the bus, an import error): the OOM ladder does not apply; kind stays unknown */
	bool not_memory;
	char not_memory_why[120];
	/* the allocation that failed was the model's weights (llama.cpp's load_tensors buffer,
	 * Ollama's weights cudaMalloc): when it is larger than the pool no context change
	 * or flush fits it (the ladder compares fig.tried with the pool) */
	bool weights_alloc;
	/* the log shows a contiguous (physically addressed / CMA) allocation failing:
	 * fragmentation, so rung 1 compacts as well as flushes */
	bool fragmented;
	char fragmented_why[64];
	uint64_t weights_bytes;       /* the weights' footprint the engine reported: vLLM "Model loading took X GiB",
				       * SGLang "Load weight end ... mem usage=X GB", llama.cpp "CUDA0 model buffer size = X MiB" */

	/* ---- parser state ---- */
	unsigned char sig_tail[8];    /* the bytes past the last whole 8-byte word */
	unsigned sig_tail_n;
	char line[SP_OOMLOG_WINDOW + 1];
	size_t len;
	bool text;                    /* line[0..len) holds a letter other than tqdm's (oomlog.c: byte_class) */
	uint64_t line_set[4];         /* a text line's bytes, set when it ends (a needle pre-filter) */
	uint64_t line_bigrams[4];     /* its adjacent byte pairs, hashed to 256 bits (the same) */
	bool cut;
	int esc;                      /* ANSI escape state */
	unsigned esc_len;
	enum sp_oom_phase progress;   /* the phase the log's own progress markers say */
	char progress_why[64];
	bool tqdm_step;               /* the last progress mark was a tqdm step counter's (see classify) */
	bool in_tb, tb_frames, tb_bnb;
	enum sp_oom_phase tb_phase;   /* innermost load/step marker in the traceback */
	enum sp_oom_phase tb_last_phase; /* the last traceback's marker (a failure printed before its traceback) */
	char tb_last_why[40];
	char tb_why[40];
	bool trained;                 /* training steps shown (Trainer log or banner, a step counter) */
	bool engine_weak;             /* the engine was named only in a traceback's frames (a training job may import it) */
	bool quant4;                  /* 4-bit (bitsandbytes) base weights named */
	bool lora_seen;               /* LoRA adapters named (LoraConfig, lora.Linear) */
	char quant4_why[24];
	uint64_t params_trainable;    /* "Number of trainable parameters = N", PEFT's "trainable params: N" */
	uint64_t params_all;          /* PEFT's "all params: N", Unsloth's "N of M" */
	unsigned model_rank;          /* how direct the source of model[] is (a later, more direct one replaces it) */
	uint64_t avail_mem;           /* SGLang's last "avail mem=" (bytes; 0: not said) */
	uint64_t weights_need;        /* what the weights will need before loading: Ollama's pulled weights layer,
				       * its memory.weights.total estimate (a loaded footprint, weights_bytes, fit) */
	char prev[256];               /* the previous line's start, when it opened a message that wraps */
	size_t prev_len;
};

void sp_oomlog_init(struct sp_oomlog *p);
void sp_oomlog_feed(struct sp_oomlog *p, const void *buf, size_t len);
/* Ends the last line (a log need not end with a newline). */
void sp_oomlog_finish(struct sp_oomlog *p);

/* "2.00 GiB", "512 MiB", "123 bytes": parses a size at s (bounded, NUL-terminated).
 * Returns the number of characters used, 0 for no size. */
size_t sp_oomlog_parse_size(const char *s, uint64_t *bytes);
#endif
