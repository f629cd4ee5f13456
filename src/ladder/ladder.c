// SPDX-License-Identifier: MIT
/* The OOM ladder: 1 flush the page cache; concurrent workloads
 * judged by their cap before any change to the job; 2 shorter packing /
 * sequence first, then a smaller micro-batch with more gradient accumulation;
 * 3 bf16 LoRA before QLoRA; 4 a smaller model or two Sparks. A load-phase OOM
 * points at the load-time peak, never at the batch. */
#include "ladder/ladder.h"
#include "util/fileio.h"
#include "util/units.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- state ------------------------------------------------------------------ */

void sp_ladder_state_init(struct sp_ladder_state *st)
{
	memset(st, 0, sizeof *st);
}

int sp_ladder_state_parse(const char *buf, size_t len, const char *job, struct sp_ladder_state *st)
{
	sp_ladder_state_init(st);
	bool version = false, named = false;
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[256];
		if (ll >= sizeof line)
			return -1;
		memcpy(line, p, ll);
		line[ll] = 0;
		p += ll + (nl ? 1 : 0);
		if (memchr(line, 0, ll))
			return -1;
		if (ll == 0 || line[0] == '#')
			continue;
		char *sp = strchr(line, ' ');
		if (!sp)
			return -1;
		*sp = 0;
		const char *key = line, *val = sp + 1;
		if (strcmp(key, "version") == 0) {
			if (strcmp(val, "1") != 0)
				return -1;
			version = true;
		} else if (strcmp(key, "job") == 0) {
			if (strcmp(val, job) != 0)
				return -1;
			named = true;
		} else if (strcmp(key, "tried") == 0) {
			if (strcmp(val, "none") == 0)
				continue;
			for (const char *q = val; *q;) {
				if (*q < '1' || *q > '4')
					return -1;
				st->tried |= 1u << (*q - '0');
				q++;
				if (*q == ',')
					q++;
				else if (*q)
					return -1;
			}
		} else if (strcmp(key, "proposed") == 0) {
			int64_t v;
			if (sp_parse_i64(val, &v) < 0 || v < 0 || v > SP_RUNGS)
				return -1;
			st->proposed = (int)v;
		} else if (strcmp(key, "log_sig") == 0) {
			if (strlen(val) != 16)
				return -1;
			uint64_t v = 0;
			for (const char *q = val; *q; q++) {
				if (!isxdigit((unsigned char)*q))
					return -1;
				v = v << 4 | (uint64_t)(isdigit((unsigned char)*q) ? *q - '0' : (tolower((unsigned char)*q) - 'a' + 10));
			}
			st->log_sig = v;
		} else if (strcmp(key, "updated") == 0) {
			if (sp_parse_i64(val, &st->updated) < 0)
				return -1;
		} else {
			return -1;
		}
	}
	return version && named ? 0 : -1;
}

size_t sp_ladder_state_format(const struct sp_ladder_state *st, const char *job, char *buf, size_t cap)
{
	char tried[16] = "";
	size_t o = 0;
	for (int r = 1; r <= SP_RUNGS; r++)
		if (st->tried >> r & 1)
			o += (size_t)snprintf(tried + o, sizeof tried - o, "%s%d", o ? "," : "", r);
	int n = snprintf(buf, cap,
			 "# sparkops ladder state: the OOM ladder's rungs tried for one job\n"
			 "# ('sparkops ladder --job NAME --reset' forgets it)\n"
			 "version 1\njob %s\ntried %s\nproposed %d\nlog_sig %016llx\nupdated %lld\n",
			 job, o ? tried : "none", st->proposed, (unsigned long long)st->log_sig, (long long)st->updated);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static bool job_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-' || c == '@' || c == '+';
}

bool sp_ladder_job_valid(const char *job)
{
	size_t n = strlen(job);
	if (n == 0 || n > 100 || job[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!job_char(job[i]))
			return false;
	return true;
}

void sp_ladder_job_from_path(const char *abs, char *job, size_t n)
{
	char tmp[4096];
	size_t o = 0;
	while (*abs == '/')
		abs++;
	for (const char *p = abs; *p && o + 1 < sizeof tmp; p++)
		tmp[o++] = job_char(*p) ? *p : '_';
	tmp[o] = 0;
	if (o == 0)
		snprintf(tmp, sizeof tmp, "root");
	if (tmp[0] == '.')
		tmp[0] = '_';
	if (strlen(tmp) <= 100) {
		snprintf(job, n, "%s", tmp);
		return;
	}
	uint64_t h = 0xcbf29ce484222325ULL;
	for (const char *p = abs; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	const char *tail = tmp + strlen(tmp) - 80;
	snprintf(job, n, "%016llx-%s", (unsigned long long)h, tail);
}

int sp_ladder_state_dir(char *out, size_t n)
{
	const char *x = getenv("XDG_STATE_HOME");
	int w;
	if (x && x[0] == '/') {
		w = snprintf(out, n, "%s/sparkops", x);
	} else {
		const char *home = getenv("HOME");
		if (!home || home[0] != '/')
			return -1;
		w = snprintf(out, n, "%s/.local/state/sparkops", home);
	}
	return w > 0 && (size_t)w < n ? 0 : -1;
}

static int mkdirs(const char *dir)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp)
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int sp_ladder_state_lock(const char *dir, const char *file, char *msg, size_t n)
{
	char who[160];
	int e = mkdirs(dir);
	if (e < 0)
		return snprintf(msg, n, "'%s': %s", dir, strerror(-e)), e;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		if (e == -ELOOP || e == -ENOTDIR)
			snprintf(msg, n, "'%s' is not a folder (a symbolic link?): not using it for the ladder state", dir);
		else
			snprintf(msg, n, "'%s': %s", dir, strerror(-e));
		return e;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		e = -errno;
		close(fd);
		return snprintf(msg, n, "'%s': %s", dir, strerror(-e)), e;
	}
	if (st.st_uid != geteuid()) {
		sp_owner_name(st.st_uid, who, sizeof who);
		snprintf(msg, n, "'%s' belongs to %s, not to you: not using it for the ladder state", dir, who);
		close(fd);
		return -EPERM;
	}
	if (st.st_mode & 022) {
		snprintf(msg, n, "'%s' is writable by %s (mode %04o): not using it for the ladder state", dir,
			 st.st_mode & 002 ? "everyone" : "its group", (unsigned)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	/* serialize the read-modify-write of concurrent ladders */
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			e = -errno;
			close(fd);
			return snprintf(msg, n, "'%s': cannot lock: %s", dir, strerror(-e)), e;
		}
	}
	if (fstatat(fd, file, &st, AT_SYMLINK_NOFOLLOW) == 0 && (!S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
		if (S_ISREG(st.st_mode)) {
			sp_owner_name(st.st_uid, who, sizeof who);
			snprintf(msg, n, "'%s/%s' belongs to %s, not to you: not using it", dir, file, who);
		} else {
			snprintf(msg, n, "'%s/%s' is not a regular file: not using it", dir, file);
		}
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* ---- the ladder -------------------------------------------------------------------- */

int sp_ladder_next(unsigned tried)
{
	for (int r = 1; r <= SP_RUNGS; r++)
		if (!(tried >> r & 1))
			return r;
	return 0;
}

const char *sp_ladder_rung_title(int rung)
{
	switch (rung) {
	case 1: return "flush the page cache";
	case 2: return "shorter sequence/packing first, then a smaller micro-batch with more gradient accumulation";
	case 3: return "downgrade the method one tier: bf16 LoRA before QLoRA";
	case 4: return "a smaller model, or two Sparks";
	default: return "every rung tried";
	}
}

const char *sp_ladder_rung_title_for(int rung, const struct sp_job_facts *f)
{
	enum sp_job_family fam = sp_ladder_family(f->kind);
	if (rung == 2 && fam == SP_FAMILY_VLLM)
		return "a shorter context and fewer sequences first, then a cap that fits";
	if (rung == 2 && fam == SP_FAMILY_OLLAMA)
		return "a smaller context first, then fewer parallel requests and loaded models";
	if (rung == 2 && f->phase == SP_PHASE_LOAD)
		return "lower the load-time peak (not the batch: it failed while loading)";
	if (rung == 3 && fam != SP_FAMILY_TRAINING)
		return "quantized weights, one tier down";
	return sp_ladder_rung_title(rung);
}

enum sp_job_family sp_ladder_family(enum sp_oom_kind k)
{
	if (k == SP_OOM_VLLM_STARTUP)
		return SP_FAMILY_VLLM;
	if (k == SP_OOM_OLLAMA)
		return SP_FAMILY_OLLAMA;
	return SP_FAMILY_TRAINING;
}

int sp_ladder_competitors(const struct sp_sample *s, struct sp_competitor *out, int max)
{
	int n = 0;
	char g1[32], g2[32];
	/* the cap is a fraction of the GPU's memory on a discrete GPU, of the pool on UMA */
	const char *of = "pool";
	const double total = sp_cap_base_bytes(s, &of);
	const bool total_ok = total > 0;
	for (int i = 0; i < s->nprocs && n < max; i++) {
		const struct sp_proc *p = &s->procs[i];
		struct sp_competitor *c = &out[n];
		memset(c, 0, sizeof *c);
		c->proc = p;
		if (p->kind == SP_PROC_SERVER && p->has_cap) {
			c->holds_ok = total_ok;
			c->holds_bytes = total_ok ? (uint64_t)(p->cap_frac * total) : 0;
			/* " = 107.7 GiB", or nothing when the pool size is unknown */
			char eq[48] = "";
			if (total_ok)
				snprintf(eq, sizeof eq, " = %s", sp_fmt_gib(g1, sizeof g1, (double)c->holds_bytes));
			if (p->cap_default) {
				c->suspect = true;
				snprintf(c->judgement, sizeof c->judgement,
					 "uncapped: reserves the default %.2f of the %s%s at start-up", p->cap_frac, of, eq);
			} else if (p->cap_frac > SP_SMALL_CAP) {
				c->suspect = true;
				snprintf(c->judgement, sizeof c->judgement, "capped high: %s %.2f%s", p->cap_flag,
					 p->cap_frac, eq);
			} else {
				snprintf(c->judgement, sizeof c->judgement,
					 "capped at %s %.2f%s: a small cap, judged fine", p->cap_flag, p->cap_frac, eq);
			}
			if (c->suspect)
				snprintf(c->action, sizeof c->action,
					 "stop %s (pid %d) or restart it with a small cap (%s 0.3 or lower)", p->name, p->pid,
					 p->cap_flag[0] == '-' ? p->cap_flag : "--gpu-memory-utilization");
			n++;
			continue;
		}
		c->holds_ok = true;
		c->holds_bytes = p->rss_bytes;
		sp_fmt_gib(g1, sizeof g1, (double)p->rss_bytes);
		if (p->rss_bytes >= SP_SUSPECT_RSS) {
			c->suspect = true;
			if (strcmp(p->name, "ollama") == 0) {
				snprintf(c->judgement, sizeof c->judgement,
					 "no cap; holds %s resident (models stay loaded for keep_alive, 5 min by default)", g1);
				snprintf(c->action, sizeof c->action,
					 "unload ollama's models ('ollama stop MODEL', or keep_alive 0) or stop ollama (pid %d)",
					 p->pid);
			} else if (p->kind == SP_PROC_SERVER) {
				snprintf(c->judgement, sizeof c->judgement, "no cap; holds %s resident", g1);
				snprintf(c->action, sizeof c->action, "stop %s (pid %d) while the job runs", p->name, p->pid);
			} else {
				snprintf(c->judgement, sizeof c->judgement, "%s holds %s resident",
					 p->kind == SP_PROC_TRAINER ? "another training process" : "a memory-heavy process", g1);
				snprintf(c->action, sizeof c->action,
					 "make sure %s (pid %d) is not a leftover of the failed run; stop it if it is not needed",
					 p->name, p->pid);
			}
		} else {
			snprintf(c->judgement, sizeof c->judgement, "holds %s resident (under %s): judged fine", g1,
				 sp_fmt_gib(g2, sizeof g2, (double)SP_SUSPECT_RSS));
		}
		n++;
	}
	return n;
}

static void cat(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t n, const char *fmt, ...)
{
	size_t l = strlen(buf);
	if (l + 1 >= n)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + l, n - l, fmt, ap);
	va_end(ap);
}

static void rung1(const struct sp_job_facts *f, char *buf, size_t n)
{
	char g1[32], g2[32], g3[32];
	cat(buf, n, "sync; echo 3 | sudo tee /proc/sys/vm/drop_caches (or: sudo sparkops ladder --apply 1), "
		    "then rerun the job unchanged");
	if (sp_ok(f->reclaimable.why) && sp_ok(f->budget_now.why) && sp_ok(f->budget_after_flush.why))
		cat(buf, n, ". A flush gives back about %s now: the budget goes from %s to %s",
		    sp_fmt_gib(g1, sizeof g1, (double)f->reclaimable.v), sp_fmt_gib(g2, sizeof g2, (double)f->budget_now.v),
		    sp_fmt_gib(g3, sizeof g3, (double)f->budget_after_flush.v));
	if (sp_ladder_family(f->kind) == SP_FAMILY_VLLM)
		cat(buf, n, ". vLLM's start-up check counts only what CUDA calls free, which leaves out the page "
			    "cache: on unified memory a flush is usually all it needs");
	else if (f->phase == SP_PHASE_LOAD)
		cat(buf, n, ". It failed while loading: the load-time peak is the mapped weight files plus their copy, "
			    "and page cache left by earlier loads shares the same pool");
	cat(buf, n, ". A between-runs reset, not a mid-training step");
}

static void rung2(const struct sp_job_facts *f, char *buf, size_t n)
{
	enum sp_job_family fam = sp_ladder_family(f->kind);
	if (fam == SP_FAMILY_VLLM) {
		cat(buf, n, "shorter --max-model-len first (the KV cache scales with it), then fewer --max-num-seqs; "
			    "and a --gpu-memory-utilization that fits what is free after the flush");
		if (sp_ok(f->budget_after_flush.why) && sp_ok(f->total.why) && f->total.v) {
			double frac = (double)f->budget_after_flush.v / (double)f->total.v;
			frac = (double)(int)(frac * 20) / 20; /* down to a multiple of 0.05 */
			if (frac >= 0.05)
				cat(buf, n, " (at most %.2f here)", frac);
		}
		return;
	}
	if (fam == SP_FAMILY_OLLAMA) {
		cat(buf, n, "a smaller context first (num_ctx, or OLLAMA_CONTEXT_LENGTH), then fewer parallel requests "
			    "(OLLAMA_NUM_PARALLEL=1) and one loaded model at a time (OLLAMA_MAX_LOADED_MODELS=1)");
		return;
	}
	if (f->phase == SP_PHASE_LOAD) {
		cat(buf, n, "it failed while loading, so the batch and the sequence length are not the cause: lower "
			    "the load-time peak instead. Load straight to the GPU shard by shard (low_cpu_mem_usage=True, "
			    "device_map=\"cuda\"), do not keep the mapped safetensors pages or a CPU copy of the "
			    "state_dict around, and prefer pre-quantized weights (a published 4-bit or FP8 checkpoint) "
			    "to quantizing bf16 shards at load. 'sparkops plan MODEL --method ...' shows the load peak");
		return;
	}
	if (f->seq_len >= 512)
		cat(buf, n, "cut the sequence/packing length first: max_seq_length %llu -> %llu (activation memory "
			    "scales with it)", (unsigned long long)f->seq_len, (unsigned long long)f->seq_len / 2);
	else
		cat(buf, n, "cut the sequence/packing length first: halve max_seq_length (e.g. 4096 -> 2048; "
			    "activation memory scales with it)");
	if (f->batch_per_device > 1) {
		unsigned long long b = f->batch_per_device, a = f->grad_accum ? f->grad_accum : 1;
		cat(buf, n, "; if that is not enough, halve the micro-batch and double the accumulation: "
			    "per_device_train_batch_size %llu -> %llu, gradient_accumulation_steps %llu -> %llu "
			    "(the effective batch stays %llu)", b, b / 2, a, a * 2, (b / 2) * a * 2);
	} else if (f->batch_per_device == 1) {
		cat(buf, n, "; the micro-batch is already 1, so next turn on gradient checkpointing "
			    "(gradient_checkpointing=True) rather than cut the batch");
	} else {
		cat(buf, n, "; if that is not enough, halve the micro-batch and double the accumulation "
			    "(per_device_train_batch_size B -> B/2, gradient_accumulation_steps A -> 2A: the "
			    "effective batch stays the same)");
	}
	if (f->phase == SP_PHASE_UNKNOWN)
		cat(buf, n, ". The log does not say when it failed: if it was while loading, the batch is not the "
			    "cause (lower the load-time peak instead)");
}

static void rung3(const struct sp_job_facts *f, char *buf, size_t n)
{
	enum sp_job_family fam = sp_ladder_family(f->kind);
	if (fam == SP_FAMILY_VLLM) {
		cat(buf, n, "serve a quantized checkpoint (FP8, NVFP4 or AWQ) instead of bf16 weights");
		return;
	}
	if (fam == SP_FAMILY_OLLAMA) {
		cat(buf, n, "a smaller quantization of the same model (e.g. q4_K_M instead of q8_0 or fp16)");
		return;
	}
	if (f->kind == SP_OOM_BNB)
		cat(buf, n, "this OOM came from bitsandbytes' transient (de)quantization buffers, which can fail before "
			    "an equivalent bf16 LoRA would: a QLoRA OOM is not proof the model does not fit. Try bf16 "
			    "LoRA (no quantization_config) if 'sparkops plan MODEL --method lora' says it fits; "
			    "otherwise stay on QLoRA with a pre-quantized checkpoint");
	else
		cat(buf, n, "one tier down: a full fine-tune becomes bf16 LoRA (PEFT, r=16 on the attention and MLP "
			    "projections); only if bf16 LoRA does not fit, QLoRA (4-bit NF4). Check with 'sparkops plan "
			    "MODEL --method lora' first");
}

static void rung4(const struct sp_job_facts *f, char *buf, size_t n)
{
	(void)f;
	cat(buf, n, "a smaller model (the next size down of the same family), or more than one Spark with "
		    "DDP/FSDP over the link (never tensor parallelism)");
}

void sp_ladder_change(int rung, const struct sp_job_facts *f, char *buf, size_t n)
{
	if (!n)
		return;
	buf[0] = 0;
	switch (rung) {
	case 1: rung1(f, buf, n); break;
	case 2: rung2(f, buf, n); break;
	case 3: rung3(f, buf, n); break;
	case 4: rung4(f, buf, n); break;
	default:
		cat(buf, n, "every rung was tried: as configured the job does not fit on one Spark. "
			    "'sparkops plan' shows each term of the footprint; '--reset' starts the ladder over");
	}
}
