/* SPDX-License-Identifier: MIT */
/* The OOM ladder: which rung comes next, the exact change to make, the
 * competing processes judged by their cap, and the per-job memory of which
 * rungs were tried. Pure logic over a sample and a classified log; the state
 * file's reading and writing are thin wrappers over a text format. */
#ifndef SP_LADDER_H
#define SP_LADDER_H
#include "ladder/oomlog.h"
#include "probe/sample.h"
#include "probe/poolmodel.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SP_RUNGS 4

/* ---- per-job state -------------------------------------------------------- */
struct sp_ladder_state {
	unsigned tried;     /* bit r (1..4): rung r was tried */
	int proposed;       /* the rung the last call proposed, 0 none */
	uint64_t log_sig;   /* the log that proposal answered (its sp_oomlog sig: "log_hash" in the file), 0 none */
	int64_t updated;    /* Unix time of the last write */
};
void sp_ladder_state_init(struct sp_ladder_state *st);
/* The text format (docs/ladder.md). 0, or -1 when the text is not a state file. */
int sp_ladder_state_parse(const char *buf, size_t len, const char *job, struct sp_ladder_state *st);
/* Bytes written (< cap), or 0 when it does not fit. */
size_t sp_ladder_state_format(const struct sp_ladder_state *st, const char *job, char *buf, size_t cap);

/* A job name for --job: 1..100 of [A-Za-z0-9._@+-], not starting with '.' */
bool sp_ladder_job_valid(const char *job);
/* A job name from an absolute path (the log's, or the working directory):
 * '/' and other characters become '_'; long paths keep their tail plus a hash. */
void sp_ladder_job_from_path(const char *abs, char *job, size_t n);
/* The state folder: $SPARKOPS_RUN_DIR/state when that is set (the one root,
 * util/paths.h), else $XDG_STATE_HOME/sparkops (when absolute), else
 * $HOME/.local/state/sparkops. 0, or -1 when none is set. */
int sp_ladder_state_dir(char *out, size_t n);
/* Open the state folder (made 0700 when missing) and lock it (flock,
 * exclusive) for one read-modify-write of a job's state; the lock goes with
 * the fd. The folder must belong to the caller and not be writable by group
 * or others, and the job's state file (if any) must be a regular file of the
 * caller's: otherwise another user could steer root's ladder, so it is
 * refused (-EPERM, msg says why). Returns the folder's fd or -errno. */
int sp_ladder_state_lock(const char *dir, const char *file, char *msg, size_t n);

/* One job's state on disk from the ladder's load to its save, the state
 * folder locked between (one read-modify-write; state.c). */
struct sp_ladder_job {
	char job[128];
	char dir[PATH_MAX];
	char path[PATH_MAX];
	bool have_path;            /* false: the rungs tried are not remembered */
	int lock_fd;
	struct sp_ladder_state st;
	char warn[PATH_MAX + 400]; /* what the last call could not do, and so what it did instead; "" none */
};
/* The job (job: --job NAME, else named from the log's real path, else the
 * working directory), its state folder locked and its state loaded (reset:
 * started over). Never fails: a state that cannot be read or kept is
 * started over or not remembered, and warn says so. */
void sp_ladder_job_open(struct sp_ladder_job *j, const char *job, const char *log, bool reset);
/* Save j->st (stamped now) and unlock the folder; 0, or -errno with warn set. */
int sp_ladder_job_save(struct sp_ladder_job *j);

/* ---- the ladder ----------------------------------------------------------------- */
/* The lowest rung not tried (never skip ahead), 0 when all four were. */
int sp_ladder_next(unsigned tried);
const char *sp_ladder_rung_title(int rung);

/* the kind of program that failed: the change differs */
enum sp_job_family {
	SP_FAMILY_TRAINING, SP_FAMILY_VLLM, SP_FAMILY_OLLAMA, SP_FAMILY_SGLANG, SP_FAMILY_LLAMACPP, SP_FAMILY_TGI,
	SP_FAMILY_RAY, /* Ray's memory monitor killed the task: Ray's knobs, whatever ran in it */
};
/* From the kind alone (a serving kind names its engine; the rest: training). */
enum sp_job_family sp_ladder_family(enum sp_oom_kind k);
/* From the kind and the engine whose lines the log holds: a serving kind
 * decides; a generic kind (a CUDA or PyTorch OOM, a kill) in a server's log
 * is that server's failure. */
enum sp_job_family sp_ladder_family_of(enum sp_oom_kind k, enum sp_log_engine e);
const char *sp_ladder_family_key(enum sp_job_family f); /* "training", "vllm", "ollama", "sglang", "llamacpp", "tgi", "ray" */

/* A process sharing the pool, judged by its cap, not its presence. */
#define SP_SUSPECT_RSS (4ULL << 30)
#define SP_SMALL_CAP SP_POOL_SMALL_CAP /* one constant, beside the pool model */
struct sp_competitor {
	const struct sp_proc *proc;
	bool suspect;
	bool holds_ok;         /* always true: what it holds is known (RSS + GPU memory) */
	uint64_t holds_bytes;  /* what it holds now (sp_pool_proc_held), never its cap */
	bool cap_ok;           /* a cap, and the memory it is a fraction of is known */
	uint64_t cap_bytes;    /* what its cap lets it take (cap x total); 0 without a cap */
	char judgement[200];   /* for people */
	char action[200];      /* what to do about it, "" when fine */
};
int sp_ladder_competitors(const struct sp_sample *s, struct sp_competitor *out, int max);

/* A flush worth a rerun gives back at least this much (rung 1 is skipped below it). */
#define SP_FLUSH_WORTH (1ULL << 30)
/* The fragmentation advice (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)
 * when the allocator holds at least this much reserved but unallocated, and
 * at least the allocation that failed. */
#define SP_FRAG_MIN (1ULL << 30)

/* What the job looked like, for a concrete change (0 / "" / UNKNOWN: unknown). */
struct sp_job_facts {
	enum sp_oom_kind kind;
	enum sp_oom_phase phase;
	enum sp_log_engine engine;
	uint64_t batch_per_device, grad_accum, seq_len;
	struct sp_u64 reclaimable; /* what a flush gives back */
	struct sp_u64 budget_now, budget_after_flush;
	struct sp_u64 total;       /* the pool (MemTotal) */
	/* what the log says */
	enum sp_log_method method;
	const char *method_why;    /* "trainable%: 0.52" ..., or NULL */
	double trainable_pct;
	const char *model;         /* the model as the log names it, or NULL */
	const char *model_file;    /* llama.cpp: the GGUF file it loaded (for -m), or NULL */
	uint64_t prefill_tokens;   /* TGI: the prefill batch its warm-up allocated, 0: not said */
	uint64_t max_model_len, est_max_model_len, max_num_seqs;
	bool kv_negative, vllm_v1;
	struct sp_u64 kv_needed, kv_available, reserved_unalloc, tried;
	/* oomlog.h: the failed buffer held the weights; a killer's threshold, not the kernel's verdict;
	 * a contiguous allocation failed in the log; contiguous free memory now (buddyinfo, 2 MiB blocks) */
	bool weights_alloc, killer_threshold, fragmented;
	uint64_t weights_need;     /* what the weights need before loading, as the log says (0: not said) */
	const char *fragmented_why;
	struct sp_u64 contig_free;
	/* what else holds the pool (sp_ladder_competitors): their sum, and the suspects' */
	uint64_t others_bytes, suspect_bytes;
	int nothers, nsuspects;
	/* from the planner (ladder --plan), for rung 4: a smaller model of the
	 * family that fits ("" none found or not planned), two Sparks (1 fits,
	 * -1 does not, 0 not planned) and the per-node need */
	char smaller_model[128];
	uint64_t smaller_need;
	/* without a plan: the catalog's next size down of the log's model (no
	 * claim that it fits), its Hugging Face id; "" when not known */
	char next_down[64], next_down_hf[128];
	int two_sparks;
	const char *two_sparks_strategy; /* "fsdp" (training), "tp" (serving) */
	uint64_t two_sparks_need;
	/* the checks (docs/ladder.md "What the ladder checks") */
	const struct sp_log_facts *more; /* the log's hint, share, Ray's monitor (ladder/facts.h), or NULL */
	bool ray;                  /* Ray's memory monitor killed the task */
	uint64_t weights;          /* the weights' bytes: the log's (weights_src "the log") or the planner's; 0 unknown */
	const char *weights_src;
	char plan_name[128];       /* the planner's model ("" not planned) and how it was found ("--plan", "the log's model") */
	const char *plan_how;
	const char *plan_prec;     /* the log's model served in: "bf16", "8-bit weights", "4-bit weights"; NULL: --plan's */
	uint64_t plan_need;        /* the job as given (0: not planned) */
	uint64_t plan_need_min;    /* served: the least the server's knobs make it (a 2048 context, one sequence) */
	uint64_t plan_need_q8, plan_need_q4; /* served with 8-bit / 4-bit weights (0: not planned) */
};
/* What a server needs besides its weights before any KV cache: the CUDA
 * context, the profiling pass's activations, CUDA graphs (a floor for the
 * memory share, never advised below weights + this). */
#define SP_SERVER_OVERHEAD (3ULL << 30)
/* The least memory a server needs whatever its knobs: the weights it
 * reported in the log plus SP_SERVER_OVERHEAD, else the planner's need at a
 * 2048 context and one sequence, else the planner's weights plus the
 * overhead; 0 unknown (and for training). */
uint64_t sp_ladder_min_need(const struct sp_job_facts *f, const char **why);
/* The memory share to advise (a multiple of 0.05; 0: none fits) and why, in
 * words: what is free after a flush over the pool, never below what the
 * weights need, and in the direction the server's own hint names. */
double sp_ladder_share(const struct sp_job_facts *f, char *why, size_t n);
/* Fill f from a classified log (kind, phase and the log's facts; NULL: none). */
void sp_ladder_facts_from_log(struct sp_job_facts *f, const struct sp_oomlog *log);

/* Why rung r does not apply to this job ("" when it does): rung 1 when a
 * flush gives back under SP_FLUSH_WORTH; rung 3 when the job is already at
 * the lowest tier (QLoRA, or a 4-bit model served). */
void sp_ladder_skip_reason(int rung, const struct sp_job_facts *f, char *buf, size_t n);
/* The failed allocation held the weights and is larger than the whole pool (rungs 1 and 2 skipped). */
bool sp_ladder_weights_exceed(const struct sp_job_facts *f);
/* Rung 1 compacts as well as flushes: the log shows a contiguous allocation
 * failing, or the machine has under SP_CONTIG_LOW free in 2 MiB blocks. */
#define SP_CONTIG_LOW SP_POOL_LOW_CONTIG /* one constant, beside the pool model */
bool sp_ladder_compact(const struct sp_job_facts *f);
/* The fragmentation advice for the log's figures, "" when it does not apply. */
void sp_ladder_fragmentation(const struct sp_job_facts *f, char *buf, size_t n);
/* The --max-model-len to use: the log's estimate rounded down to a multiple
 * of 1024, else the max length scaled by available/needed KV cache (the
 * same rounding), else half the max length; 0: nothing known. */
uint64_t sp_ladder_model_len(const struct sp_job_facts *f);
/* The job's method one tier down (full -> lora -> qlora), or UNKNOWN at the bottom. */
enum sp_log_method sp_ladder_method_down(enum sp_log_method m);

/* The rung's title for this job (rung 2 of a load-time OOM is about the load
 * peak, a server's rungs are about its own knobs). */
const char *sp_ladder_rung_title_for(int rung, const struct sp_job_facts *f);
/* The change for a rung, in words: a title and the exact change. */
void sp_ladder_change(int rung, const struct sp_job_facts *f, char *buf, size_t n);
#endif
