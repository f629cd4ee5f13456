// SPDX-License-Identifier: MIT
/* The memory-heavy processes that compete for the pool: inference servers and
 * trainers recognised by name, with their resident memory and, for servers,
 * the cap they were started with when their command line says it. */
#include "probe/probe.h"
#include "util/dirscan.h"
#include "util/fileio.h"
#include "util/pagesize.h"
#include "util/paths.h"
#include "util/sort.h"
#include "util/text.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int sp_statm_parse(const char *buf, uint64_t *resident_pages)
{
	/* size resident shared text lib data dt */
	const char *p = buf;
	while (*p == ' ')
		p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p != ' ')
		return -1;
	p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	char *e;
	errno = 0;
	unsigned long long v = strtoull(p, &e, 10);
	if (errno || (*e != ' ' && *e != '\n' && *e != 0))
		return -1;
	*resident_pages = v;
	return 0;
}

static int is_pid(const char *name)
{
	if (!*name)
		return 0;
	for (const char *p = name; *p; p++)
		if (!isdigit((unsigned char)*p))
			return 0;
	return 1;
}

/* comm and resident memory of /proc/PID; returns 0, or -1 when it vanished. */
static int read_proc_brief(int pid, struct sp_proc *p)
{
	char path[600], buf[256];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->gpu_mem.why = SP_MISSING;
	p->kind = SP_PROC_OTHER;
	sp_proc_path(path, sizeof path, "%d/comm", pid);
	if (sp_read_line(path, p->comm, sizeof p->comm) < 0)
		return -1;
	sp_text_clean(p->comm); /* a process names itself: no escapes to root's terminal */
	snprintf(p->name, sizeof p->name, "%s", p->comm);
	sp_proc_path(path, sizeof path, "%d/statm", pid);
	uint64_t pages = 0;
	if (sp_read_file(path, buf, sizeof buf, NULL) == 0 && sp_statm_parse(buf, &pages) == 0) {
		uint64_t page = sp_page_size();
		/* no process holds 64 PiB: a wrapped or forged count is left out */
		if (pages > (1ULL << 56) / page)
			return -1;
		p->rss_bytes = pages * page;
	}
	return 0;
}

/* The command line: NUL-separated argv into argv[], and its start for people. */
static void read_cmdline(int pid, struct sp_proc *p, char *argv, size_t argv_cap, size_t *argv_len)
{
	char path[600];
	*argv_len = 0;
	sp_proc_path(path, sizeof path, "%d/cmdline", pid);
	if (sp_read_file(path, argv, argv_cap, argv_len) < 0)
		*argv_len = 0;
	size_t n = *argv_len < sizeof p->cmdline - 1 ? *argv_len : sizeof p->cmdline - 1;
	/* cppcheck follows one caller's argv_cap of 2 and concludes n < 1 */
	// cppcheck-suppress knownConditionTrueFalse
	for (size_t i = 0; i < n; i++)
		p->cmdline[i] = argv[i] ? (isprint((unsigned char)argv[i]) ? argv[i] : '?') : ' ';
	while (n > 0 && p->cmdline[n - 1] == ' ')
		n--;
	p->cmdline[n] = 0;
}

static int read_proc(int pid, struct sp_proc *p, char *argv, size_t argv_cap, size_t *argv_len)
{
	*argv_len = 0;
	if (read_proc_brief(pid, p) < 0)
		return -1;
	read_cmdline(pid, p, argv, argv_cap, argv_len);
	return 0;
}

/* comm names worth reading the command line of: interpreters and launchers */
static int worth_argv(const char *comm)
{
	static const char *const w[] = { "python", "pt_main_thread", "torchrun", "accelerate",
					 "deepspeed", "ray::", "vllm", "VLLM", "sglang", "tune", "trl",
					 "axolotl", NULL };
	for (int i = 0; w[i]; i++)
		if (strncmp(comm, w[i], strlen(w[i])) == 0)
			return 1;
	return 0;
}

static int cmp_rss(const void *a, const void *b)
{
	const struct sp_proc *x = a, *y = b;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	return x->rss_bytes < y->rss_bytes ? 1 : x->rss_bytes > y->rss_bytes ? -1 : 0;
}

void sp_procs_read(struct sp_sample *s, const struct sp_read_opts *o)
{
	s->nprocs = 0;
	s->procs_seen = 0;
	struct sp_dir d;
	if (sp_dir_open(&d, sp_procfs()) < 0)
		return;
	char argv[4096];
	const char *name;
	int self = (int)getpid();
	while ((name = sp_dir_next(&d))) {
		int64_t pid64;
		if (!is_pid(name) || sp_parse_i64(name, &pid64) < 0 || pid64 > INT32_MAX)
			continue;
		int pid = (int)pid64;
		s->procs_seen++;
		if (pid == self && !sp_paths_is_fixture())
			continue;
		struct sp_proc p;
		size_t alen = 0;
		/* cheap first look: comm and statm; the command line only for
		 * interpreters, launchers and known names, or big processes */
		if (read_proc_brief(pid, &p) < 0)
			continue;
		int known_comm = worth_argv(p.comm);
		for (size_t i = 0; i < sizeof known / sizeof known[0] && !known_comm; i++)
			if (known[i].comm && strcmp(known[i].comm, p.comm) == 0)
				known_comm = 1;
		if (!known_comm && p.rss_bytes < o->proc_min_rss)
			continue;
		read_cmdline(pid, &p, argv, sizeof argv, &alen);
		bool hit = sp_proc_classify(p.comm, argv, alen, &p);
		if (!hit && p.rss_bytes < o->proc_min_rss)
			continue;
		if (s->nprocs < SP_MAX_PROCS) {
			s->procs[s->nprocs++] = p;
		} else {
			/* full: keep the largest */
			int small = 0;
			for (int i = 1; i < s->nprocs; i++)
				if (s->procs[i].rss_bytes < s->procs[small].rss_bytes)
					small = i;
			if (s->procs[small].rss_bytes < p.rss_bytes)
				s->procs[small] = p;
		}
	}
	sp_dir_close(&d);
	sp_sort(s->procs, (size_t)s->nprocs, sizeof s->procs[0], cmp_rss);
}

struct sp_proc *sp_proc_ensure(struct sp_sample *s, int pid)
{
	for (int i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	if (s->nprocs >= SP_MAX_PROCS)
		return NULL;
	struct sp_proc p;
	char argv[4096] = "";
	size_t alen = 0;
	if (read_proc(pid, &p, argv, sizeof argv, &alen) < 0) {
		alen = 0;
		/* a GPU process we cannot see (another PID namespace) */
		memset(&p, 0, sizeof p);
		p.pid = pid;
		snprintf(p.name, sizeof p.name, "pid %d", pid);
		p.gpu_mem.why = SP_MISSING;
	}
	if (!sp_proc_classify(p.comm, argv, alen, &p))
		p.kind = SP_PROC_GPU;
	s->procs[s->nprocs] = p;
	return &s->procs[s->nprocs++];
}
