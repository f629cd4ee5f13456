/* SPDX-License-Identifier: MIT */
/* The budget a plan is judged against, one path for 'plan' and 'ladder
 * --plan': --budget SIZE or the live reading (the pool model's budget on
 * unified memory, the GPU's free memory on a discrete GPU), less the
 * co-hosted servers (--cohost: cohost.c; an ollama:FILE.gguf sized by its
 * file). budget.c. No reading of the machine here: the caller hands in its
 * sample. */
#ifndef SP_BUDGET_H
#define SP_BUDGET_H
#include "probe/sample.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- --cohost SPEC ---------------------------------------------------------- */
enum sp_cohost_kind { SP_COHOST_VLLM, SP_COHOST_OLLAMA_SIZE, SP_COHOST_OLLAMA_FILE };
struct sp_cohost {
	enum sp_cohost_kind kind;
	double frac;       /* vllm: gpu_memory_utilization, (0, 1] */
	uint64_t bytes;    /* ollama: SIZE, or the gguf's size once stat'ed */
	char path[512];    /* ollama: FILE.gguf */
};
/* "vllm:0.5", "ollama:12GiB", "ollama:/models/x.gguf" from a buffer (not
 * NUL-terminated). Returns 0, or -1 with a one-line reason in err. */
int sp_cohost_parse(const char *buf, size_t len, struct sp_cohost *c, char *err, size_t errlen);
/* bytes the server keeps out of a pool of pool_total bytes */
uint64_t sp_cohost_bytes(const struct sp_cohost *c, uint64_t pool_total);

/* ---- the budget a plan is judged against ---------------------------------------- */
struct sp_plan_budget {
	uint64_t bytes;          /* what the job can count on (device side on discrete) */
	uint64_t raw_bytes;      /* before the co-hosted servers */
	uint64_t after_flush;    /* live: plus what a cache flush returns (0: unknown) */
	uint64_t host_bytes;     /* discrete: system memory for the host side (0: unknown) */
	uint64_t pool_total;     /* what vllm:FRACTION is a share of */
	uint64_t cohost_bytes;   /* what the co-hosted servers keep */
	const char *source;      /* "live", "--budget" */
	bool uma;                /* one pool for CPU and GPU */
	const char *uma_source;  /* "--uma", "detected from the GPU", "no GPU found: system memory" */
};
/* Take n co-hosted servers (ollama files already sized) out of b: sets
 * cohost_bytes, and bytes and after_flush less it (never below 0). */
void sp_budget_less_cohosts(struct sp_plan_budget *b, const struct sp_cohost *c, int n);
/* Size each ollama:FILE.gguf of c from its file (stat: a sparse or
 * unreadable-content file counts its size). 0, or -1 with "--cohost:
 * 'FILE': why" in err. */
int sp_cohosts_size_files(struct sp_cohost *c, int n, char *err, size_t errlen);

/* Why a budget could not be made (sp_plan_budget_make) */
enum sp_budget_fail {
	SP_BUDGET_OK,
	SP_BUDGET_UNREAD,      /* the live budget: meminfo unreadable (err: why) */
	SP_BUDGET_GPU_UNREAD,  /* --uma no: the GPU's memory unreadable (err: why) */
	SP_BUDGET_COHOST_FILE, /* an ollama:FILE.gguf cannot be sized (err: "--cohost: 'FILE': why") */
};
/* The budget of a plan from sample s (read with at least SP_READ_MEM; with
 * SP_READ_GPU the pool's kind is detected from the GPU): given (--budget,
 * 0: the live one), uma (1 yes, 0 no, -1 from the sample: one pool when it
 * has no GPU or the GPU is integrated), less the n co-hosts (their files
 * sized here). The same for every command that plans. SP_BUDGET_OK, or why
 * not with the detail in err. */
enum sp_budget_fail sp_plan_budget_make(struct sp_plan_budget *b, const struct sp_sample *s, uint64_t given, int uma,
					struct sp_cohost *c, int n, char *err, size_t errlen);

#endif
