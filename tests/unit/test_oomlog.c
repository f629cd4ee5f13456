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
			if (whole->method != SP_METHOD_UNKNOWN)
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(corpus),
		cmocka_unit_test(long_line),
		cmocka_unit_test(binary),
		cmocka_unit_test(escapes_split),
		cmocka_unit_test(kinds_and_priority),
		cmocka_unit_test(sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
