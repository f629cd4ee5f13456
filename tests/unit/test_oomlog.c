// SPDX-License-Identifier: MIT
/* The ladder's log classifier: the corpus of failed-job logs in
 * tests/fixtures/oomlogs (EXPECTED says what each must give), fed whole and
 * in every chunking; long lines, binary junk, escapes split across chunks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ladder/oomlog.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *fixdir(void)
{
	const char *f = getenv("FIX");
	return f && *f ? f : "tests/fixtures";
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *buf = malloc(1 << 20);
	assert_non_null(buf);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

static void classify_chunks(struct sp_oomlog *p, const char *buf, size_t len, size_t chunk)
{
	sp_oomlog_init(p);
	for (size_t o = 0; o < len; o += chunk)
		sp_oomlog_feed(p, buf + o, len - o < chunk ? len - o : chunk);
	sp_oomlog_finish(p);
}

static void same(const struct sp_oomlog *a, const struct sp_oomlog *b)
{
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->phase, b->phase);
	assert_int_equal(a->fig.tried.v, b->fig.tried.v);
	assert_int_equal(a->fig.total.v, b->fig.total.v);
	assert_int_equal(a->fig.free.v, b->fig.free.v);
	assert_int_equal(a->fig.reserved_unalloc.v, b->fig.reserved_unalloc.v);
	assert_int_equal(a->evidence_line, b->evidence_line);
	assert_string_equal(a->evidence, b->evidence);
	assert_int_equal(a->sig, b->sig);
	assert_int_equal(a->lines, b->lines);
	assert_int_equal(a->fig.kv_needed.v, b->fig.kv_needed.v);
	assert_int_equal(a->fig.kv_available.v, b->fig.kv_available.v);
	assert_int_equal(a->engine, b->engine);
	assert_int_equal(a->method, b->method);
	assert_string_equal(a->method_why, b->method_why);
	assert_true(a->trainable_pct == b->trainable_pct);
	assert_string_equal(a->model, b->model);
	assert_int_equal(a->batch_per_device, b->batch_per_device);
	assert_int_equal(a->grad_accum, b->grad_accum);
	assert_int_equal(a->total_batch, b->total_batch);
	assert_int_equal(a->seq_len, b->seq_len);
	assert_int_equal(a->max_model_len, b->max_model_len);
	assert_int_equal(a->est_max_model_len, b->est_max_model_len);
	assert_int_equal(a->max_num_seqs, b->max_num_seqs);
	assert_int_equal(a->weights_bytes, b->weights_bytes);
	assert_int_equal(a->kv_negative, b->kv_negative);
	assert_int_equal(a->vllm_v1, b->vllm_v1);
	assert_string_equal(a->phase_why, b->phase_why);
}

static const struct sp_u64 *fig(const struct sp_oomlog *p, const char *name)
{
	if (strcmp(name, "tried") == 0)
		return &p->fig.tried;
	if (strcmp(name, "total") == 0)
		return &p->fig.total;
	if (strcmp(name, "free") == 0)
		return &p->fig.free;
	if (strcmp(name, "reserved_unalloc") == 0)
		return &p->fig.reserved_unalloc;
	if (strcmp(name, "kv_needed") == 0)
		return &p->fig.kv_needed;
	if (strcmp(name, "kv_available") == 0)
		return &p->fig.kv_available;
	return NULL;
}

/* the log's facts EXPECTED may name: counts, flags, strings */
static bool fact(const struct sp_oomlog *p, const char *name, unsigned long long *v)
{
	static const struct {
		const char *name;
		size_t off;
	} u64s[] = {
		{ "batch", offsetof(struct sp_oomlog, batch_per_device) },
		{ "accum", offsetof(struct sp_oomlog, grad_accum) },
		{ "total_batch", offsetof(struct sp_oomlog, total_batch) },
		{ "seq_len", offsetof(struct sp_oomlog, seq_len) },
		{ "max_model_len", offsetof(struct sp_oomlog, max_model_len) },
		{ "est_max_model_len", offsetof(struct sp_oomlog, est_max_model_len) },
		{ "max_num_seqs", offsetof(struct sp_oomlog, max_num_seqs) },
		{ "weights", offsetof(struct sp_oomlog, weights_bytes) },
	};
	for (size_t i = 0; i < sizeof u64s / sizeof u64s[0]; i++)
		if (strcmp(name, u64s[i].name) == 0) {
			uint64_t x;
			memcpy(&x, (const char *)p + u64s[i].off, sizeof x);
			*v = x;
			return true;
		}
	if (strcmp(name, "kv_negative") == 0) {
		*v = p->kv_negative;
		return true;
	}
	if (strcmp(name, "vllm_v1") == 0) {
		*v = p->vllm_v1;
		return true;
	}
	return false;
}

/* the next "key=value" of an EXPECTED row; a value may be "quoted, with spaces" */
static char *next_kv(char **cur)
{
	char *s = *cur;
	while (*s == ' ')
		s++;
	if (!*s || *s == '\n')
		return NULL;
	char *start = s;
	bool q = false;
	for (; *s && *s != '\n' && (q || *s != ' '); s++)
		if (*s == '"')
			q = !q;
	if (*s)
		*s++ = 0;
	*cur = s;
	return start;
}

static void check_row(const char *file, const struct sp_oomlog *whole, char *rest)
{
	for (char *kv; (kv = next_kv(&rest));) {
		char *eq = strchr(kv, '=');
		assert_non_null(eq);
		*eq = 0;
		char *val = eq + 1;
		size_t vl = strlen(val);
		if (vl >= 2 && val[0] == '"' && val[vl - 1] == '"') {
			val[vl - 1] = 0;
			val++;
		}
		unsigned long long want = strtoull(val, NULL, 10), got;
		if (strcmp(kv, "engine") == 0) {
			if (strcmp(sp_log_engine_key(whole->engine), val) != 0)
				fail_msg("%s: engine %s, want %s", file, sp_log_engine_key(whole->engine), val);
		} else if (strcmp(kv, "method") == 0) {
			if (strcmp(sp_log_method_key(whole->method), val) != 0)
				fail_msg("%s: method %s (%s), want %s", file, sp_log_method_key(whole->method),
					 whole->method_why, val);
			if (whole->method != SP_LOG_METHOD_UNKNOWN)
				assert_true(whole->method_why[0] != 0);
		} else if (strcmp(kv, "model") == 0) {
			if (strcmp(whole->model, val) != 0)
				fail_msg("%s: model '%s', want '%s'", file, whole->model, val);
		} else if (strcmp(kv, "trainable_pct") == 0) {
			double w = strtod(val, NULL);
			if (!(whole->trainable_pct > w - 1e-6 && whole->trainable_pct < w + 1e-6))
				fail_msg("%s: trainable%% %g, want %g", file, whole->trainable_pct, w);
		} else if (fact(whole, kv, &got)) {
			if (got != want)
				fail_msg("%s: %s = %llu, want %llu", file, kv, got, want);
		} else {
			const struct sp_u64 *f = fig(whole, kv);
			if (!f)
				fail_msg("%s: unknown figure '%s' in EXPECTED", file, kv);
			else if (f->why != SP_OK || f->v != want)
				fail_msg("%s: %s = %llu (why %d), want %llu", file, kv, (unsigned long long)f->v, f->why, want);
		}
	}
}

static void corpus(void **st)
{
	(void)st;
	char path[1024];
	snprintf(path, sizeof path, "%s/oomlogs/EXPECTED", fixdir());
	FILE *m = fopen(path, "r");
	assert_non_null(m);
	char row[1024];
	int n = 0;
	while (fgets(row, sizeof row, m)) {
		if (row[0] == '#' || row[0] == '\n')
			continue;
		char *save = NULL;
		char *file = strtok_r(row, " \n", &save);
		char *kind = strtok_r(NULL, " \n", &save);
		char *phase = strtok_r(NULL, " \n", &save);
		assert_non_null(phase);
		snprintf(path, sizeof path, "%s/oomlogs/%s", fixdir(), file);
		size_t len;
		char *buf = slurp(path, &len);
		struct sp_oomlog whole, part;
		classify_chunks(&whole, buf, len, len ? len : 1);
		print_message("%-28s %-20s %-8s (%s) line %llu engine %s method %s model '%s'\n", file,
			      sp_oom_kind_key(whole.kind), sp_oom_phase_key(whole.phase), whole.phase_why,
			      (unsigned long long)whole.evidence_line, sp_log_engine_key(whole.engine),
			      sp_log_method_key(whole.method), whole.model);
		assert_string_equal(sp_oom_kind_key(whole.kind), kind);
		assert_string_equal(sp_oom_phase_key(whole.phase), phase);
		if (whole.kind != SP_OOM_UNKNOWN)
			assert_true(whole.evidence[0] != 0);
		check_row(file, &whole, save ? save : "");
		/* the same answer whatever the chunking */
		static const size_t chunks[] = { 1, 2, 3, 7, 64, 4095, 4097 };
		for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
			classify_chunks(&part, buf, len, chunks[c]);
			same(&whole, &part);
		}
		free(buf);
		n++;
	}
	fclose(m);
	assert_true(n >= 30);
}

static void feed_str(struct sp_oomlog *p, const char *s)
{
	sp_oomlog_feed(p, s, strlen(s));
}

/* the log's signature: the same for any split, another for any other log */
static uint64_t sig_of(const char *s, size_t len, size_t chunk)
{
	struct sp_oomlog p;
	classify_chunks(&p, s, len, chunk);
	return p.sig;
}

static void signature(void **st)
{
	(void)st;
	char a[200];
	for (size_t i = 0; i < sizeof a; i++)
		a[i] = (char)('a' + i % 26);
	for (size_t len = 0; len <= 40; len++) {
		uint64_t h = sig_of(a, len, len ? len : 1);
		assert_true(h != 0);
		for (size_t chunk = 1; chunk <= 17; chunk++)
			assert_true(sig_of(a, len, chunk) == h);
		/* one more byte, or one byte changed: another signature */
		assert_true(sig_of(a, len + 1, 3) != h);
		if (len) {
			char b[200];
			memcpy(b, a, len);
			b[len / 2] ^= 1;
			assert_true(sig_of(b, len, 5) != h);
		}
	}
	/* a NUL more at the end is not the same log */
	char z[9] = "abcdefgh";
	assert_true(sig_of(z, 8, 8) != sig_of(z, 9, 9));
}

/* a multi-MB line (a progress bar that never ends a line) costs no memory and
 * hides nothing that follows it */
static void long_line(void **st)
{
	(void)st;
	struct sp_oomlog p;
	sp_oomlog_init(&p);
	char *chunk = malloc(1 << 16);
	assert_non_null(chunk);
	memset(chunk, '#', 1 << 16);
	memcpy(chunk + 100, "Killed", 6); /* inside the window, but not the whole line */
	for (int i = 0; i < 128; i++) /* 8 MiB */
		sp_oomlog_feed(&p, chunk, 1 << 16);
	free(chunk);
	feed_str(&p, "\nRuntimeError: CUDA out of memory. Tried to allocate 1.50 GiB (GPU 0; 23.65 GiB total capacity)\n");
	sp_oomlog_finish(&p);
	assert_int_equal(p.kind, SP_OOM_TORCH);
	assert_int_equal(p.long_lines, 1);
	assert_int_equal(p.fig.tried.v, 3ULL << 29);
	assert_int_equal(p.evidence_line, 2);
	assert_true(sizeof p < 8192);
}

static void binary(void **st)
{
	(void)st;
	struct sp_oomlog p;
	sp_oomlog_init(&p);
	unsigned char buf[4096];
	uint32_t x = 12345;
	for (int r = 0; r < 256; r++) {
		for (size_t i = 0; i < sizeof buf; i++) {
			x = x * 1103515245u + 12345u;
			buf[i] = (unsigned char)(x >> 16);
		}
		sp_oomlog_feed(&p, buf, sizeof buf);
	}
	sp_oomlog_finish(&p);
	assert_int_equal(p.kind, SP_OOM_UNKNOWN);
	assert_int_equal(p.phase, SP_PHASE_UNKNOWN);
	assert_true(p.control_bytes > 0);
	/* an empty log */
	sp_oomlog_init(&p);
	sp_oomlog_finish(&p);
	assert_int_equal(p.kind, SP_OOM_UNKNOWN);
}

static void escapes_split(void **st)
{
	(void)st;
	const char *s = "\x1b[1;31mtorch.OutOfMemoryError\x1b[0m: CUDA out of memory. Tried to allocate "
			"\x1b]8;;http://x\x07" "3.00 GiB.\x1b[K GPU 0 has a total capacity of 119.70 GiB\r\n";
	struct sp_oomlog p;
	classify_chunks(&p, s, strlen(s), 1);
	assert_int_equal(p.kind, SP_OOM_TORCH);
	assert_int_equal(p.fig.tried.v, 3ULL << 30);
	assert_string_equal(p.evidence, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 119.70 GiB");
}

static void kinds_and_priority(void **st)
{
	(void)st;
	struct sp_oomlog p;
	/* Killed after a torch OOM: the torch OOM is the failure */
	const char *a = "CUDA out of memory. Tried to allocate 1.00 GiB\nKilled\n";
	classify_chunks(&p, a, strlen(a), 5);
	assert_int_equal(p.kind, SP_OOM_TORCH);
	assert_int_equal(p.evidence_line, 1);
	/* not SIGKILL */
	const char *b = "exit code 1370\nKilled 3 zombie workers\nprocess exited with code 1\n";
	classify_chunks(&p, b, strlen(b), 4096);
	assert_int_equal(p.kind, SP_OOM_UNKNOWN);
	const char *c = "./run.sh: line 3: 4242 Killed                  python train.py\n";
	classify_chunks(&p, c, strlen(c), 4096);
	assert_int_equal(p.kind, SP_OOM_SIGKILL);
	const char *d = "Process finished with exit code 137 (interrupted by signal 9:SIGKILL)\n";
	classify_chunks(&p, d, strlen(d), 4096);
	assert_int_equal(p.kind, SP_OOM_SIGKILL);
	/* a mention of OutOfMemoryError in indented code is not an OOM */
	const char *e = "Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n"
			"    except torch.OutOfMemoryError:\nKeyError: 'x'\n";
	classify_chunks(&p, e, strlen(e), 4096);
	assert_int_equal(p.kind, SP_OOM_UNKNOWN);
	/* a dataset progress bar is not a training step */
	const char *f = "Map: 100%|##########| 5000/5000 [00:01<00:00, 4000.00it/s]\nKilled\n";
	classify_chunks(&p, f, strlen(f), 4096);
	assert_int_equal(p.kind, SP_OOM_SIGKILL);
	assert_int_equal(p.phase, SP_PHASE_UNKNOWN);
	for (int k = 0; k < SP_OOM_KIND_N; k++) {
		enum sp_oom_kind back;
		assert_int_equal(sp_oom_kind_from_key(sp_oom_kind_key((enum sp_oom_kind)k), &back), 0);
		assert_int_equal(back, k);
	}
}

static void sizes(void **st)
{
	(void)st;
	uint64_t v;
	assert_int_equal(sp_oomlog_parse_size("2.00 GiB.", &v), 8);
	assert_int_equal(v, 2ULL << 30);
	assert_true(sp_oomlog_parse_size("512 MiB", &v));
	assert_int_equal(v, 512ULL << 20);
	assert_true(sp_oomlog_parse_size("123 bytes", &v));
	assert_int_equal(v, 123);
	assert_true(sp_oomlog_parse_size("1.5GB", &v));
	assert_int_equal(v, 1500000000ULL);
	assert_false(sp_oomlog_parse_size("GiB", &v));
	assert_false(sp_oomlog_parse_size("1e9 GiB", &v));
	assert_false(sp_oomlog_parse_size("0x10 GiB", &v));
	assert_false(sp_oomlog_parse_size("5 Gigawatts", &v));
	assert_false(sp_oomlog_parse_size("99999999999999999999 TiB", &v));
	assert_false(sp_oomlog_parse_size("-1 GiB", &v));
}

/* classify s whole and in every small chunking; the answers must agree */
static void classify_all(struct sp_oomlog *p, const char *s)
{
	struct sp_oomlog q;
	size_t len = strlen(s);
	classify_chunks(p, s, len, len ? len : 1);
	for (size_t c = 1; c <= 9; c++) {
		classify_chunks(&q, s, len, c);
		same(p, &q);
	}
}

static void serving(void **st)
{
	(void)st;
	struct sp_oomlog p;
	/* llama.cpp's lines in an Ollama log are Ollama's failure, whichever comes first */
	classify_all(&p, "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 512.00 MiB on device 0: cudaMalloc failed: out of memory\n"
			 "llama_model_load: error loading model: unable to allocate CUDA0 buffer\n"
			 "time=2026-11-29T08:30:09.000Z level=ERROR source=sched.go:455 msg=\"error loading llama server\"\n");
	assert_int_equal(p.kind, SP_OOM_OLLAMA);
	assert_int_equal(p.engine, SP_ENGINE_OLLAMA);
	assert_int_equal(p.fig.tried.v, 512ULL << 20);
	assert_int_equal(p.phase, SP_PHASE_LOAD);
	/* without Ollama it is llama.cpp's, and a failure with no marker at all is start-up */
	classify_all(&p, "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 512.00 MiB on device 0: cudaMalloc failed: out of memory\n");
	assert_int_equal(p.kind, SP_OOM_LLAMACPP);
	assert_int_equal(p.engine, SP_ENGINE_LLAMACPP);
	assert_int_equal(p.phase, SP_PHASE_LOAD);
	/* Ollama serves, then loads another model into a new runner: that load failing is load */
	classify_all(&p, "time=x level=INFO source=server.go:600 msg=\"llama runner started in 4.51 seconds\"\n"
			 "[GIN] 2026/11/29 - 10:01:00 | 200 |  3.2s |  127.0.0.1 | POST \"/api/chat\"\n"
			 "time=y level=INFO source=server.go:380 msg=\"starting llama server\" cmd=\"ollama runner --model /root/.ollama/models/blobs/sha256-0ff7b3\"\n"
			 "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9000.00 MiB on device 0: cudaMalloc failed: out of memory\n");
	assert_int_equal(p.kind, SP_OOM_OLLAMA);
	assert_int_equal(p.phase, SP_PHASE_LOAD);
	assert_string_equal(p.model, ""); /* the runner's --model is a blob, not a name */
	/* a CUDA OOM in vLLM's profiling pass ("in forward") before serving is start-up, not a step */
	classify_all(&p, "INFO 11-29 09:12:04 [api_server.py:1395] vLLM API server version 0.9.2\n"
			 "Traceback (most recent call last):\n"
			 "  File \"/x/vllm/v1/worker/gpu_model_runner.py\", line 2001, in profile_run\n"
			 "  File \"/x/vllm/model_executor/models/llama.py\", line 581, in forward\n"
			 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n");
	assert_int_equal(p.kind, SP_OOM_TORCH);
	assert_int_equal(p.phase, SP_PHASE_LOAD);
	assert_int_equal(p.engine, SP_ENGINE_VLLM);
	/* vLLM offline generation ("Processed prompts" bars) is serving, its bars are not training steps */
	classify_all(&p, "INFO 11-29 09:12:14 [core.py:69] Initializing a V1 LLM engine (v0.9.2) with config: model='m/x', max_seq_len=4096\n"
			 "Processed prompts:  10%|#         | 100/1000 [00:10<01:30, 10.00it/s]\n"
			 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.\n");
	assert_int_equal(p.phase, SP_PHASE_SERVE);
	assert_true(p.vllm_v1);
	assert_int_equal(p.max_model_len, 4096);
	assert_string_equal(p.model, "m/x");
	/* the v0 wording of the max-seq-len check */
	classify_all(&p, "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be "
			 "stored in KV cache (21152). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
			 "initializing the engine.\n");
	assert_int_equal(p.kind, SP_OOM_VLLM_KV);
	assert_int_equal(p.max_model_len, 32768);
	assert_int_equal(p.est_max_model_len, 21152);
	assert_int_equal(p.phase, SP_PHASE_LOAD);
	/* a positive "Available KV cache memory" is not a failure */
	classify_all(&p, "INFO 11-29 [gpu_worker.py:232] Available KV cache memory: 9.51 GiB\n");
	assert_int_equal(p.kind, SP_OOM_UNKNOWN);
	assert_false(p.kv_negative);
	/* SGLang's profiled value below zero */
	classify_all(&p, "[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.\n");
	assert_int_equal(p.kind, SP_OOM_SGLANG);
	assert_true(p.kv_negative);
	/* TGI's total-tokens variant */
	classify_all(&p, "Error: Warmup(Generation(\"Not enough memory to handle 16000 total tokens with 2 prefill tokens. You need to "
			 "decrease `--max-batch-total-tokens` or `--max-batch-prefill-tokens`\"))\n");
	assert_int_equal(p.kind, SP_OOM_TGI);
	/* the serving kinds outrank the generic ones */
	assert_true(SP_OOM_VLLM_KV > SP_OOM_TORCH && SP_OOM_LLAMACPP > SP_OOM_OLLAMA && SP_OOM_TGI > SP_OOM_VLLM_STARTUP);
	assert_string_equal(sp_oom_phase_key(SP_PHASE_SERVE), "serve");
}

static void cpu_and_driver(void **st)
{
	(void)st;
	struct sp_oomlog p;
	classify_all(&p, "RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: not enough memory: you "
			 "tried to allocate 4294967296 bytes.\n");
	assert_int_equal(p.kind, SP_OOM_CPU_ALLOC);
	assert_int_equal(p.fig.tried.v, 4294967296ULL);
	classify_all(&p, "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 32.0 GiB for an array with shape (4, 2147483648) and data type float32\n");
	assert_int_equal(p.kind, SP_OOM_CPU_ALLOC);
	assert_int_equal(p.fig.tried.v, 32ULL << 30);
	/* the driver's line after training progress, with dmesg, dmesg -T and journal prefixes */
	static const char *const prefixes[] = { "[ 9812.114201] ", "[Sat Nov 29 10:12:01 2026] ", "Nov 29 10:12:01 spark kernel: ", "" };
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
		char buf[512];
		snprintf(buf, sizeof buf,
			 "{'loss': 1.8123, 'grad_norm': 3.21, 'learning_rate': 1.9e-05, 'epoch': 0.02}\n"
			 "%sNVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051)\n", prefixes[i]);
		classify_all(&p, buf);
		assert_int_equal(p.kind, SP_OOM_DRIVER);
		assert_int_equal(p.phase, SP_PHASE_STEP);
		snprintf(buf, sizeof buf,
			 "  5%%|5         | 40/800 [00:40<12:40, 1.00s/it]\r  6%%|6         | 48/800 [00:48<12:32, 1.00s/it]\n"
			 "%sNVRM: Out of memory [NV_ERR_NO_MEMORY]\n", prefixes[i]);
		classify_all(&p, buf);
		assert_int_equal(p.phase, SP_PHASE_STEP);
	}
}

static void method(void **st)
{
	(void)st;
	struct sp_oomlog p;
	/* PEFT's trainable% over 4-bit weights: QLoRA */
	classify_all(&p, "quantization_config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type='nf4')\n"
			 "trainable params: 41,943,040 || all params: 8,072,204,288 || trainable%: 0.5196\n");
	assert_int_equal(p.method, SP_LOG_METHOD_QLORA);
	assert_true(p.trainable_pct > 0.5195 && p.trainable_pct < 0.5197);
	assert_non_null(strstr(p.method_why, "load_in_4bit"));
	/* load_in_4bit=False is not 4-bit */
	classify_all(&p, "BitsAndBytesConfig {\"load_in_4bit\": false, \"load_in_8bit\": true}\n"
			 "trainable params: 4,194,304 || all params: 6,742,609,920 || trainable%: 0.0622\n");
	assert_int_equal(p.method, SP_LOG_METHOD_LORA);
	/* the Trainer's count equal to all parameters: full */
	classify_all(&p, "trainable params: 1,235,814,400 || all params: 1,235,814,400 || trainable%: 100.0000\n");
	assert_int_equal(p.method, SP_LOG_METHOD_FULL);
	classify_all(&p, "trainable params: 8 || all params: 1,000\n");
	assert_int_equal(p.method, SP_LOG_METHOD_LORA);
	assert_true(p.trainable_pct > 0.79 && p.trainable_pct < 0.81);
	/* a model repr with lora.Linear4bit layers, training steps: QLoRA */
	classify_all(&p, "        (q_proj): lora.Linear4bit(\n***** Running training *****\n");
	assert_int_equal(p.method, SP_LOG_METHOD_QLORA);
	/* nothing said: unknown, and no reason given */
	classify_all(&p, "***** Running training *****\n  Number of trainable parameters = 41,943,040\n");
	assert_int_equal(p.method, SP_LOG_METHOD_UNKNOWN);
	assert_string_equal(p.method_why, "");
	/* Unsloth's older banner */
	classify_all(&p, "   \\\\   /|    Num examples = 210,289 | Num Epochs = 1\n"
			 "O^O/ \\_/ \\    Batch size per device = 2 | Gradient Accumulation steps = 4\n"
			 "\\        /    Total batch size = 8 | Total steps = 60\n");
	assert_int_equal(p.batch_per_device, 2);
	assert_int_equal(p.grad_accum, 4);
	assert_int_equal(p.total_batch, 8);
	/* the model's name: printable ASCII, bounded, a direct source replaces a weaker one */
	char big[600];
	memset(big, 'x', sizeof big);
	memcpy(big, "model='", 7);
	big[sizeof big - 2] = '\'';
	big[sizeof big - 1] = 0;
	classify_all(&p, big);
	assert_int_equal(strlen(p.model), sizeof p.model - 1);
	classify_all(&p, "==((====))==  Unsloth 2025.3.14: Fast Llama patching. Transformers: 4.48.2.\n");
	assert_string_equal(p.model, "Llama");
	/* the HF cache path outranks Unsloth's family name */
	classify_all(&p, "==((====))==  Unsloth 2025.3.14: Fast Llama patching. Transformers: 4.48.2.\n"
			 "loading weights file model.safetensors from cache at /h/models--meta-llama--Llama-3.2-1B/snapshots/a/model.safetensors\n");
	assert_string_equal(p.model, "meta-llama/Llama-3.2-1B");
	classify_all(&p, "llama_model_loader: - kv   2:   general.name str = Caf\xc3\xa9 7B\n");
	assert_string_equal(p.model, "Caf?? 7B");
	for (const char *c = p.model; *c; c++)
		assert_true(*c >= 0x20 && *c < 0x7f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(corpus),
		cmocka_unit_test(signature),
		cmocka_unit_test(long_line),
		cmocka_unit_test(binary),
		cmocka_unit_test(escapes_split),
		cmocka_unit_test(kinds_and_priority),
		cmocka_unit_test(sizes),
		cmocka_unit_test(serving),
		cmocka_unit_test(cpu_and_driver),
		cmocka_unit_test(method),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
