// SPDX-License-Identifier: MIT
/* The policy of the process view: which programs are inference servers or
 * trainers (the known table, matched on comm and the first argv words), the
 * cap a server was started with when its command line says it, and which
 * comm names are worth reading the command line of. Pure: no reads here;
 * the scan that feeds it is procs.c. */
#include "probe/procclass.h"
#include "probe/probe.h"
#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sp_proc_kind_name(enum sp_proc_kind k)
{
	switch (k) {
	case SP_PROC_SERVER: return "inference_server";
	case SP_PROC_TRAINER: return "trainer";
	case SP_PROC_GPU: return "gpu_process";
	default: return "other";
	}
}

struct known {
	const char *name;       /* what we call it */
	enum sp_proc_kind kind;
	const char *comm;       /* matches comm exactly (NULL: no) */
	const char *argv_word;  /* an argv word whose basename is this, or a module after -m */
	const char *argv_sub;   /* substring of an argv word (e.g. "vllm.entrypoints") */
};

/* Order matters: specific servers before generic launchers. */
static const struct known known[] = {
	{ "vllm", SP_PROC_SERVER, NULL, "vllm", "vllm.entrypoints" },
	{ "sglang", SP_PROC_SERVER, NULL, NULL, "sglang.launch_server" },
	{ "ollama", SP_PROC_SERVER, "ollama", "ollama", NULL },
	{ "llama-server", SP_PROC_SERVER, "llama-server", "llama-server", NULL },
	{ "tritonserver", SP_PROC_SERVER, "tritonserver", "tritonserver", NULL },
	{ "trtllm-serve", SP_PROC_SERVER, "trtllm-serve", "trtllm-serve", "tensorrt_llm" },
	{ "torchrun", SP_PROC_TRAINER, "torchrun", "torchrun", "torch.distributed.run" },
	{ "accelerate", SP_PROC_TRAINER, "accelerate", "accelerate", "accelerate.commands" },
	{ "deepspeed", SP_PROC_TRAINER, "deepspeed", "deepspeed", NULL },
	{ "axolotl", SP_PROC_TRAINER, NULL, "axolotl", "axolotl" },
	{ "trl", SP_PROC_TRAINER, "trl", "trl", NULL },
	{ "unsloth", SP_PROC_TRAINER, NULL, NULL, "unsloth" },
	{ "llamafactory", SP_PROC_TRAINER, "llamafactory-cli", "llamafactory-cli", "llamafactory" },
	{ "nemo", SP_PROC_TRAINER, NULL, NULL, "nemo" },
	{ "torchtune", SP_PROC_TRAINER, "tune", "tune", "torchtune" },
};

static const char *base_name(const char *w)
{
	const char *s = strrchr(w, '/');
	return s ? s + 1 : w;
}

/* A float argument: "--flag X" or "--flag=X". */
static int flag_value(const char *argv, size_t len, const char *flag, double *out)
{
	size_t fl = strlen(flag);
	const char *p = argv, *end = argv + len;
	while (p < end) {
		size_t wl = strnlen(p, (size_t)(end - p));
		const char *val = NULL;
		if (wl == fl && memcmp(p, flag, fl) == 0) {
			const char *n = p + wl + 1;
			if (n < end)
				val = n;
		} else if (wl > fl && memcmp(p, flag, fl) == 0 && p[fl] == '=') {
			val = p + fl + 1;
		}
		if (val) {
			char tmp[32];
			size_t vl = strnlen(val, (size_t)(end - val));
			if (vl == 0 || vl >= sizeof tmp)
				return -1;
			memcpy(tmp, val, vl);
			tmp[vl] = 0;
			char *e;
			double d = strtod(tmp, &e);
			if (*e || !(d > 0 && d <= 1.0))
				return -1;
			*out = d;
			return 0;
		}
		p += wl + 1;
	}
	return -1;
}

bool sp_proc_classify(const char *comm, const char *argv, size_t argv_len, struct sp_proc *p)
{
	const struct known *hit = NULL;
	for (size_t i = 0; i < sizeof known / sizeof known[0] && !hit; i++) {
		const struct known *k = &known[i];
		if (k->comm && strcmp(comm, k->comm) == 0) {
			hit = k;
			break;
		}
		/* look at the first few argv words only: a path argument naming
		 * "nemo" deep in the command line is not a trainer */
		const char *w = argv, *end = argv + argv_len;
		for (int n = 0; w < end && n < 4 && !hit; n++) {
			size_t wl = strnlen(w, (size_t)(end - w));
			char word[256];
			size_t cl = wl < sizeof word - 1 ? wl : sizeof word - 1;
			memcpy(word, w, cl);
			word[cl] = 0;
			if ((k->argv_word && strcmp(base_name(word), k->argv_word) == 0) ||
			    (k->argv_sub && strstr(word, k->argv_sub) && (word[0] != '-' || n > 0) &&
			     strncmp(word, "--", 2) != 0))
				hit = k;
			w += wl + 1;
		}
	}
	if (!hit) {
		/* a Python training script: python3 [-u] [-m x] .../train_lora.py */
		if (strncmp(comm, "python", 6) != 0 && strcmp(comm, "pt_main_thread") != 0)
			return false;
		const char *w = argv, *end = argv + argv_len;
		for (int n = 0; w < end && n < 6; n++) {
			size_t wl = strnlen(w, (size_t)(end - w));
			const char *b = w;
			for (size_t i = 0; i < wl; i++)
				if (w[i] == '/')
					b = w + i + 1;
			size_t bl = wl - (size_t)(b - w);
			if (bl > 3 && memcmp(b + bl - 3, ".py", 3) == 0) {
				char word[sizeof p->name];
				size_t cl = bl < sizeof word - 1 ? bl : sizeof word - 1;
				memcpy(word, b, cl);
				word[cl] = 0;
				if (strstr(word, "train") || strstr(word, "finetune") || strstr(word, "sft") ||
				    strstr(word, "lora")) {
					snprintf(p->name, sizeof p->name, "%s", word);
					sp_text_clean(p->name);
					p->kind = SP_PROC_TRAINER;
					p->has_cap = false;
					return true;
				}
				return false;
			}
			w += wl + 1;
		}
		return false;
	}
	snprintf(p->name, sizeof p->name, "%s", hit->name);
	p->kind = hit->kind;
	p->has_cap = false;
	p->cap_default = false;
	p->cap_flag[0] = 0;
	double d;
	if (strcmp(hit->name, "vllm") == 0) {
		p->has_cap = true;
		if (flag_value(argv, argv_len, "--gpu-memory-utilization", &d) == 0) {
			p->cap_frac = d;
			snprintf(p->cap_flag, sizeof p->cap_flag, "--gpu-memory-utilization");
		} else {
			p->cap_frac = 0.9; /* vLLM's default */
			p->cap_default = true;
			snprintf(p->cap_flag, sizeof p->cap_flag, "default gpu_memory_utilization");
		}
	} else if (strcmp(hit->name, "sglang") == 0 &&
		   flag_value(argv, argv_len, "--mem-fraction-static", &d) == 0) {
		p->has_cap = true;
		p->cap_frac = d;
		snprintf(p->cap_flag, sizeof p->cap_flag, "--mem-fraction-static");
	}
	return true;
}

/* comm names worth reading the command line of: interpreters, launchers and
 * the known names above */
bool sp_proc_worth_argv(const char *comm)
{
	static const char *const w[] = { "python", "pt_main_thread", "torchrun", "accelerate",
					 "deepspeed", "ray::", "vllm", "VLLM", "sglang", "tune", "trl",
					 "axolotl", NULL };
	for (int i = 0; w[i]; i++)
		if (strncmp(comm, w[i], strlen(w[i])) == 0)
			return true;
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (known[i].comm && strcmp(known[i].comm, comm) == 0)
			return true;
	return false;
}

