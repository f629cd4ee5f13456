// SPDX-License-Identifier: MIT
/* GGUF reader: header, metadata, tensor infos, sizes per ggml type, and one
 * test per bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "model/gguf.h"

#define G "tests/fixtures/models/gguf/"

static char err[512];

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc((size_t)n + 1);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* the tiny file's tensors (see mkmodels.py tiny_gguf_tensors) */
#define TINY_PARAMS (16384 + 2 * (256 + 7 * 2048 + 256) + 256 + 16384)

static void tiny_llama(void **st)
{
	(void)st;
	struct sp_gguf_info g;
	assert_int_equal(sp_gguf_read(G "tiny-llama-q4_k_m.gguf", &g, err, sizeof err), 0);
	assert_int_equal(g.version, 3);
	assert_int_equal(g.tensor_count, 21);
	assert_int_equal(g.kv_count, 25);
	assert_string_equal(g.arch, "llama");
	assert_string_equal(g.name, "tiny");
	assert_int_equal(g.block_count, 2);
	assert_int_equal(g.embedding_length, 256);
	assert_int_equal(g.head_count, 4);
	assert_int_equal(g.head_count_kv, 2);
	assert_int_equal(g.feed_forward_length, 512);
	assert_int_equal(g.context_length, 4096);
	assert_int_equal(g.vocab, 64); /* tokenizer.ggml.tokens */
	assert_int_equal(g.file_type, 15);
	assert_int_equal(g.expert_count, -1);
	/* bytes per type from the block sizes */
	assert_int_equal(g.bytes_by_type[12], 2 * 4 * 8 * 144);          /* Q4_K */
	assert_int_equal(g.bytes_by_type[13], 2 * 8 * 176);              /* Q5_K */
	assert_int_equal(g.bytes_by_type[14], 2 * 2 * 8 * 210 + 64 * 210); /* Q6_K */
	assert_int_equal(g.bytes_by_type[8], 64 * 8 * 34);               /* Q8_0 */
	assert_int_equal(g.bytes_by_type[0], 4 * 256 * 4);               /* F32 */
	assert_int_equal(g.bytes_by_type[30], 256 * 2);                  /* BF16 */
	assert_true(g.params == TINY_PARAMS);
	assert_true(g.has_output);
	assert_true(g.quantized);
	assert_int_equal(g.data_offset % 32, 0);

	struct sp_model_shape m;
	assert_int_equal(sp_model_load(G "tiny-llama-q4_k_m.gguf", &m, err, sizeof err), 0);
	assert_int_equal(m.source, SP_SRC_GGUF);
	assert_string_equal(m.name, "tiny");
	assert_string_equal(m.arch, "llama");
	assert_int_equal(m.n_layers, 2);
	assert_int_equal(m.hidden, 256);
	assert_int_equal(m.n_kv_heads, 2);
	assert_int_equal(m.head_dim, 64);
	assert_int_equal(m.intermediate, 512);
	assert_int_equal(m.vocab, 64);
	assert_false(m.tied_embeddings);
	assert_true(m.params_from_tensors);
	assert_true(m.params == TINY_PARAMS);
	assert_true(m.embed_params == 2 * 16384);
	assert_true(m.prequantized);
	assert_string_equal(m.quant_method, "gguf Q4_K_M");
	assert_int_equal(m.bytes_by_dtype[SP_DT_GGML_QUANT], 9216 + 2816 + 20160 + 17408);
	assert_int_equal(m.bytes_by_dtype[SP_DT_F32], 4096);
	assert_int_equal(m.bytes_by_dtype[SP_DT_BF16], 512);
	assert_int_equal(m.weight_bytes, 9216 + 2816 + 20160 + 17408 + 4096 + 512);
	assert_int_equal(m.files_read, 1);
}

static void v2_and_moe(void **st)
{
	(void)st;
	struct sp_model_shape m;
	assert_int_equal(sp_model_load(G "tiny-v2.gguf", &m, err, sizeof err), 0);
	assert_true(m.params == TINY_PARAMS);
	assert_int_equal(sp_model_load(G "tiny-moe.gguf", &m, err, sizeof err), 0);
	assert_string_equal(m.arch, "qwen3moe");
	assert_int_equal(m.n_experts, 8);
	assert_int_equal(m.experts_per_tok, 2);
	assert_int_equal(m.moe_intermediate, 128);
}

static void split_files(void **st)
{
	(void)st;
	struct sp_model_shape m;
	/* either part names the whole model */
	assert_int_equal(sp_model_load(G "tiny-split-00002-of-00002.gguf", &m, err, sizeof err), 0);
	assert_int_equal(m.files_read, 2);
	assert_true(m.params == TINY_PARAMS);
	assert_int_equal(m.tensor_count, 21);
	assert_int_equal(m.n_layers, 2);
	assert_false(m.tied_embeddings); /* output.weight is in part 2 */
	assert_int_equal(sp_model_load(G "tiny-split-00001-of-00002.gguf", &m, err, sizeof err), 0);
	assert_true(m.params == TINY_PARAMS);
	/* a missing part is an error naming it */
	assert_int_equal(sp_model_load_gguf(G "tiny-split-00001-of-00003.gguf", &m, err, sizeof err), -1);
	assert_non_null(strstr(err, "tiny-split-00001-of-00003.gguf': No such file"));
}

static void copy_to(const char *from, const char *dir, const char *name)
{
	size_t len;
	unsigned char *b = slurp(from, &len);
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len, f), len);
	fclose(f);
	free(b);
}

/* a folder holding one GGUF model and no config.json (a llama.cpp download) */
static void gguf_folder(void **st)
{
	(void)st;
	char dir[] = "/tmp/sp-ggdir-XXXXXX";
	assert_non_null(mkdtemp(dir));
	copy_to(G "tiny-split-00001-of-00002.gguf", dir, "m-00001-of-00002.gguf");
	copy_to(G "tiny-split-00002-of-00002.gguf", dir, "m-00002-of-00002.gguf");
	struct sp_model_shape m;
	assert_int_equal(sp_model_load(dir, &m, err, sizeof err), 0);
	assert_int_equal(m.source, SP_SRC_GGUF);
	assert_int_equal(m.files_read, 2);
	assert_true(m.params == TINY_PARAMS);
	/* a second model beside it: which one is meant? */
	copy_to(G "tiny-v2.gguf", dir, "other.gguf");
	assert_int_equal(sp_model_load(dir, &m, err, sizeof err), -1);
	assert_non_null(strstr(err, "no config.json and 2 .gguf models in the folder; name one"));
	char p[512];
	const char *names[] = { "m-00001-of-00002.gguf", "m-00002-of-00002.gguf", "other.gguf" };
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

static void same_from_buffer(void **st)
{
	(void)st;
	size_t len;
	unsigned char *b = slurp(G "tiny-llama-q4_k_m.gguf", &len);
	struct sp_gguf_info g, h;
	assert_int_equal(sp_gguf_parse(b, len, &g, "buf", err, sizeof err), 0);
	assert_int_equal(sp_gguf_read(G "tiny-llama-q4_k_m.gguf", &h, err, sizeof err), 0);
	assert_true(g.params == h.params);
	assert_int_equal(g.data_offset, h.data_offset);
	assert_int_equal(g.data_bytes, h.data_bytes);
	/* every cut before the end of the data fails cleanly, never crashes */
	for (size_t n = 0; n < len; n += n < g.data_offset + 64 ? 1 : 997) {
		if (sp_gguf_parse(b, n, &g, "buf", err, sizeof err) != -1)
			fail_msg("a file cut at %zu bytes was accepted", n);
	}
	/* flipping any header byte gives an answer or an error, never a crash
	 * (the sanitizer build watches) */
	for (size_t i = 0; i < h.data_offset; i++) {
		unsigned char keep = b[i];
		b[i] ^= 0xff;
		(void)sp_gguf_parse(b, len, &g, "buf", err, sizeof err);
		b[i] = keep;
	}
	free(b);
}

static void bad_files(void **st)
{
	(void)st;
	static const struct {
		const char *file, *want;
	} cases[] = {
		{ "bad-magic", "not a GGUF file (bad magic)" },
		{ "bad-version", "unsupported GGUF version 7 (2 and 3 are known)" },
		{ "truncated", "truncated at byte" },
		{ "absurd-tensor-count", "tensor count 1152921504606846976 is more than the file can hold" },
		{ "absurd-kv-count", "key/value count 1152921504606846976 is more than the file can hold" },
		{ "absurd-string", "a key length 4611686018427387904 exceeds the 20 bytes left in the file" },
		{ "absurd-array", "array of 2305843009213693952 elements exceeds" },
		{ "bad-value-type", "key 'x' has an unknown value type 13" },
		{ "bad-ggml-type", "tensor 'x.weight' has an unknown ggml type 99" },
		{ "bad-block", "row of 100 is not a multiple of Q4_K's block of 256" },
		{ "bad-dims", "has 9 dimensions" },
		{ "data-past-end", "past the end of the file" },
		{ "no-arch", "missing general.architecture" },
		{ "missing", "No such file" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char path[256], prefix[300];
		snprintf(path, sizeof path, G "%s.gguf", cases[i].file);
		snprintf(prefix, sizeof prefix, "'%s': ", path);
		struct sp_model_shape m;
		err[0] = 0;
		int rc = sp_model_load_gguf(path, &m, err, sizeof err);
		if (rc != -1 || !strstr(err, cases[i].want) || strncmp(err, prefix, strlen(prefix)) != 0 ||
		    strchr(err, '\n'))
			fail_msg("%s: rc %d, err \"%s\", want \"%s\"", cases[i].file, rc, err, cases[i].want);
	}
}

/* a GGUF in a buffer: magic, version, counts, then the key/values given */
static size_t put_u32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
	return 4;
}
static size_t put_u64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
	return 8;
}
static size_t put_str(unsigned char *p, const char *s)
{
	size_t n = strlen(s);
	put_u64(p, n);
	memcpy(p + 8, s, n);
	return 8 + n;
}

/* a FIFO named as a model (or as its config.json) is refused at once: the
 * open must not wait for a writer */
static void fifo_refused(void **st)
{
	(void)st;
	char dir[] = "/tmp/sp-fifo-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char p[128];
	snprintf(p, sizeof p, "%s/m.gguf", dir);
	assert_int_equal(mkfifo(p, 0600), 0);
	struct sp_gguf_info g;
	assert_int_equal(sp_gguf_read(p, &g, err, sizeof err), -1);
	assert_non_null(strstr(err, "not a regular file"));
	struct sp_model_shape m;
	assert_int_equal(sp_model_load(p, &m, err, sizeof err), -1);
	assert_non_null(strstr(err, "not a regular file"));
	unlink(p);
	snprintf(p, sizeof p, "%s/config.json", dir);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(sp_model_load(dir, &m, err, sizeof err), -1);
	assert_non_null(strstr(err, "not a regular file"));
	unlink(p);
	rmdir(dir);
}

static void missing_keys(void **st)
{
	(void)st;
	unsigned char b[512];
	size_t n = 0;
	memcpy(b, "GGUF", 4);
	n = 4;
	n += put_u32(b + n, 3);
	n += put_u64(b + n, 0);
	n += put_u64(b + n, 3);
	n += put_str(b + n, "general.architecture");
	n += put_u32(b + n, 8);
	n += put_str(b + n, "gemma2");
	n += put_str(b + n, "gemma2.embedding_length");
	n += put_u32(b + n, 4);
	n += put_u32(b + n, 2304);
	n += put_str(b + n, "llama.block_count"); /* another architecture's key: ignored */
	n += put_u32(b + n, 4);
	n += put_u32(b + n, 26);
	struct sp_gguf_info g;
	if (sp_gguf_parse(b, n, &g, "m.gguf", err, sizeof err))
		fail_msg("%s", err);
	assert_int_equal(g.block_count, -1);
	assert_int_equal(g.embedding_length, 2304);
	struct sp_model_shape m = { 0 };
	assert_int_equal(sp_gguf_shape(&g, &m, "m.gguf", err, sizeof err), -1);
	assert_string_equal(err, "'m.gguf': missing gemma2.block_count");

	/* the architecture's own key, then another prefix's key with the same
	 * ending (a vision tower's "mllama.vision.block_count"): the first stays */
	n = 4;
	n += put_u32(b + n, 3);
	n += put_u64(b + n, 0);
	n += put_u64(b + n, 4);
	n += put_str(b + n, "general.architecture");
	n += put_u32(b + n, 8);
	n += put_str(b + n, "mllama");
	n += put_str(b + n, "mllama.block_count");
	n += put_u32(b + n, 4);
	n += put_u32(b + n, 40);
	n += put_str(b + n, "mllama.vision.block_count");
	n += put_u32(b + n, 4);
	n += put_u32(b + n, 32);
	n += put_str(b + n, "clip.block_count");
	n += put_u32(b + n, 4);
	n += put_u32(b + n, 24);
	if (sp_gguf_parse(b, n, &g, "m.gguf", err, sizeof err))
		fail_msg("%s", err);
	assert_int_equal(g.block_count, 40);

	/* bad alignment and nesting too deep */
	n = 4;
	n += put_u32(b + n, 3);
	n += put_u64(b + n, 0);
	n += put_u64(b + n, 1);
	n += put_str(b + n, "general.alignment");
	n += put_u32(b + n, 4);
	n += put_u32(b + n, 48);
	assert_int_equal(sp_gguf_parse(b, n, &g, "m.gguf", err, sizeof err), -1);
	assert_non_null(strstr(err, "general.alignment 48 is not a power of two"));
	n = 4;
	n += put_u32(b + n, 3);
	n += put_u64(b + n, 0);
	n += put_u64(b + n, 1);
	n += put_str(b + n, "deep");
	n += put_u32(b + n, 9);
	for (int d = 0; d < 6; d++) {
		n += put_u32(b + n, 9);
		n += put_u64(b + n, 1);
	}
	n += put_u32(b + n, 0);
	memset(b + n, 0, 64);
	n += 64;
	assert_int_equal(sp_gguf_parse(b, n, &g, "m.gguf", err, sizeof err), -1);
	assert_non_null(strstr(err, "nested deeper"));
}

static void ftype_names(void **st)
{
	(void)st;
	assert_string_equal(sp_gguf_ftype_name(15), "Q4_K_M");
	assert_string_equal(sp_gguf_ftype_name(38), "MXFP4_MOE");
	assert_null(sp_gguf_ftype_name(4));
	assert_null(sp_gguf_ftype_name(-1));
	assert_null(sp_gguf_ftype_name(1000));
	const char *nm;
	uint32_t blk, bytes;
	assert_true(sp_ggml_type(39, &nm, &blk, &bytes));
	assert_string_equal(nm, "MXFP4");
	assert_int_equal(bytes, 17);
	assert_false(sp_ggml_type(4, &nm, &blk, &bytes));
	assert_false(sp_ggml_type(40, &nm, &blk, &bytes));
}

/* the header of the tiny file in front of 1 GiB of hole: read stays small */
static void sparse_reads_header_only(void **st)
{
	(void)st;
	size_t len;
	unsigned char *b = slurp(G "tiny-llama-q4_k_m.gguf", &len);
	struct sp_gguf_info g;
	assert_int_equal(sp_gguf_parse(b, len, &g, "buf", err, sizeof err), 0);
	char path[] = "/tmp/sp-gguf-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, g.data_offset), (ssize_t)g.data_offset);
	assert_int_equal(ftruncate(fd, (off_t)(g.data_offset + (1ULL << 30))), 0);
	close(fd);
	struct sp_gguf_info h;
	assert_int_equal(sp_gguf_read(path, &h, err, sizeof err), 0);
	assert_true(h.bytes_read <= h.data_offset + 65536);
	unlink(path);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tiny_llama),   cmocka_unit_test(v2_and_moe),   cmocka_unit_test(split_files), cmocka_unit_test(gguf_folder),   cmocka_unit_test(same_from_buffer),
		cmocka_unit_test(bad_files),    cmocka_unit_test(missing_keys), cmocka_unit_test(fifo_refused), cmocka_unit_test(ftype_names),
		cmocka_unit_test(sparse_reads_header_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
