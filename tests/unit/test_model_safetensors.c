// SPDX-License-Identifier: MIT
/* safetensors headers, index.json and model folders: real tensor counts,
 * quantized layouts, bytes read, and one test per bad input. */
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

#include "model/safetensors.h"

#define S(x) x, sizeof(x) - 1
#define FIXM "tests/fixtures/models/"

static char err[512];

static uint64_t file_size(const char *p)
{
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	return (uint64_t)st.st_size;
}

/* 8 + the header length stored in the file */
static uint64_t header_bytes(const char *p)
{
	FILE *f = fopen(p, "rb");
	assert_non_null(f);
	unsigned char b[8];
	assert_int_equal(fread(b, 1, 8, f), 8);
	fclose(f);
	uint64_t n = 0;
	for (int i = 7; i >= 0; i--)
		n = n << 8 | b[i];
	return 8 + n;
}

static void parse_good_buffer(void **st)
{
	(void)st;
	struct sp_st_summary s = { 0 };
	const char h[] = "{\"__metadata__\":{\"format\":\"pt\"},"
			 "\"model.embed_tokens.weight\":{\"dtype\":\"BF16\",\"shape\":[10,4],\"data_offsets\":[0,80]},"
			 "\"model.layers.0.mlp.up_proj.weight\":{\"dtype\":\"F32\",\"shape\":[4,4],\"data_offsets\":[80,144]},"
			 "\"model.norm.weight\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[144,152]},"
			 "\"scalar\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[152,156]},"
			 "\"empty\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[156,156]},"
			 "\"fp4\":{\"dtype\":\"F4\",\"shape\":[6],\"data_offsets\":[156,159]}}";
	assert_int_equal(sp_safetensors_parse_header(S(h), 159, &s, "x", err, sizeof err), 0);
	assert_int_equal(s.tensor_count, 6);
	assert_int_equal(s.bytes_by_dtype[SP_DT_BF16], 80);
	assert_int_equal(s.elems_by_dtype[SP_DT_BF16], 40);
	assert_int_equal(s.bytes_by_dtype[SP_DT_F32], 68);
	assert_int_equal(s.bytes_by_dtype[SP_DT_F4], 3);
	assert_int_equal(s.elems_by_dtype[SP_DT_F4], 6);
	assert_int_equal(s.data_bytes, 159);
	assert_true(s.params == 40 + 16 + 4 + 1 + 0 + 6);
	assert_true(s.embed_params == 40);
	assert_true(s.linear_params == 16);
	assert_true(s.packed_params == 6);
	/* a second header adds up */
	const char h2[] = "{\"t\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]}}";
	assert_int_equal(sp_safetensors_parse_header(S(h2), 4, &s, "y", err, sizeof err), 0);
	assert_int_equal(s.tensor_count, 7);
	assert_int_equal(s.bytes_by_dtype[SP_DT_BF16], 84);
}

/* zero-size tensors share their offset with the next tensor: whatever order
 * the header (or the hash table) gives them in, they tile the buffer */
static void empty_tensors_anywhere(void **st)
{
	(void)st;
	static const char *const names[] = { "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l" };
	for (int order = 0; order < 12; order++) {
		char h[2048];
		size_t o = 0;
		o += (size_t)snprintf(h + o, sizeof h - o, "{");
		for (int i = 0; i < 12; i++) {
			int k = (i + order) % 12;
			/* even names: 4 bytes each; odd names: empty, at the start of the next */
			uint64_t at = (uint64_t)(k / 2) * 4;
			if (k % 2 == 0)
				o += (size_t)snprintf(h + o, sizeof h - o,
						      "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[%llu,%llu]}",
						      i ? "," : "", names[k], (unsigned long long)at, (unsigned long long)at + 4);
			else
				o += (size_t)snprintf(h + o, sizeof h - o,
						      "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[%llu,%llu]}",
						      i ? "," : "", names[k], (unsigned long long)at + 4 * (k / 2 < 5),
						      (unsigned long long)at + 4 * (k / 2 < 5));
		}
		o += (size_t)snprintf(h + o, sizeof h - o, "}");
		struct sp_st_summary s = { 0 };
		if (sp_safetensors_parse_header(h, o, 24, &s, "e.safetensors", err, sizeof err) != 0)
			fail_msg("order %d: %s", order, err);
		assert_int_equal(s.tensor_count, 12);
	}
}

static void dtypes_all_known(void **st)
{
	(void)st;
	static const char *const names[] = { "BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0", "I16",
					     "U16", "F16", "BF16", "I32", "U32", "F32", "F64", "I64", "U64",
					     "C64", "F4", "F6_E2M3", "F6_E3M2" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		enum sp_dtype dt;
		unsigned bits;
		assert_int_equal(sp_st_dtype(names[i], &dt, &bits), 0);
		assert_true(bits >= 4 && bits <= 64);
	}
	enum sp_dtype dt;
	unsigned bits;
	assert_int_equal(sp_st_dtype("bf16", &dt, &bits), -1);
	assert_int_equal(sp_st_dtype("Q4_K", &dt, &bits), -1);
	assert_string_equal(sp_dtype_name(SP_DT_BF16), "BF16");
	assert_string_equal(sp_dtype_name(SP_DT_N), "?");
}

/* bad headers as buffers: -1, the label first, s untouched */
static void bad_buffers(void **st)
{
	(void)st;
	static const struct {
		const char *h;
		uint64_t data;
		const char *want;
	} cases[] = {
		{ "", 0, "not a JSON object" },
		{ "[]", 0, "not a JSON object" },
		{ "{\"a\":", 0, "not valid JSON" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
		  4, "duplicate key" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, "negative" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4, "non-integer" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,2],\"data_offsets\":[0,4]}}", 4, "overflows" },
		{ "{\"a\":{\"dtype\":\"F64\",\"shape\":[4611686018427387904],\"data_offsets\":[0,4]}}", 4, "overflows" },
		{ "{\"a\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "unknown dtype 'F33'" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4, "bad data_offsets" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4, "lacks" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 4, "bad data_offsets" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, "4 bytes of data for a shape of 8" },
		{ "{\"a\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,1]}}", 1, "shape of" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8, "cover 4 of the 8" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "gap at byte 0" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
		  8, "overlap at byte 8" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8, "past the 8-byte data buffer" },
		{ "{\"a\":3}", 0, "is not an object" },
		{ "{\"__metadata__\":[1]}", 0, "__metadata__ is not an object" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}} trailing", 4, "not valid JSON" },
		{ "{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,4]}}", 4, "a number too large for 64 bits" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sp_st_summary s = { 0 };
		err[0] = 0;
		int rc = sp_safetensors_parse_header(cases[i].h, strlen(cases[i].h), cases[i].data, &s, "f.safetensors",
						     err, sizeof err);
		if (rc != -1 || !strstr(err, cases[i].want) || strncmp(err, "'f.safetensors': ", 17) != 0 ||
		    s.tensor_count != 0 || s.data_bytes != 0)
			fail_msg("case %zu: rc %d, err \"%s\", want \"%s\"", i, rc, err, cases[i].want);
	}
}

/* the committed bad files, through the reader */
static void bad_files(void **st)
{
	(void)st;
	static const struct {
		const char *file, *want;
	} cases[] = {
		{ "truncated", "truncated: 5 bytes, too short for the 8-byte header length" },
		{ "beyond", "header length 4096 exceeds the file size" },
		{ "huge-header", "header length 200000000 exceeds the 100000000-byte limit" },
		{ "not-json", "not valid JSON" },
		{ "not-object", "not a JSON object" },
		{ "duplicate", "duplicate key" },
		{ "negative-shape", "negative" },
		{ "overflow-shape", "overflows" },
		{ "unknown-dtype", "unknown dtype 'Q4_K'" },
		{ "gap", "gap at byte 4" },
		{ "overlap", "overlap" },
		{ "short-cover", "cover 4 of the 64" },
		{ "size-mismatch", "8 bytes of data for a shape of 12" },
		{ "past-end", "past the 8-byte data buffer" },
		{ "no-dtype", "lacks dtype" },
		{ "bad-metadata", "__metadata__" },
		{ "does-not-exist", "No such file" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char path[256], want_prefix[300];
		snprintf(path, sizeof path, FIXM "bad/%s.safetensors", cases[i].file);
		snprintf(want_prefix, sizeof want_prefix, "'%s': ", path);
		struct sp_st_summary s = { 0 };
		uint64_t br = 0;
		err[0] = 0;
		int rc = sp_safetensors_read(path, &s, &br, err, sizeof err);
		if (rc != -1 || !strstr(err, cases[i].want) || strncmp(err, want_prefix, strlen(want_prefix)) != 0 ||
		    strchr(err, '\n'))
			fail_msg("%s: rc %d, err \"%s\", want \"%s\"", cases[i].file, rc, err, cases[i].want);
		assert_true(br <= 4096); /* never more than the header, whatever it claims */
	}
	struct sp_st_summary s = { 0 };
	uint64_t br = 0;
	assert_int_equal(sp_safetensors_read(FIXM "bad/good.safetensors", &s, &br, err, sizeof err), 0);
	assert_int_equal(s.tensor_count, 2);
	assert_int_equal(br, header_bytes(FIXM "bad/good.safetensors"));
	/* a folder is not a shard */
	assert_int_equal(sp_safetensors_read(FIXM "bad", &s, &br, err, sizeof err), -1);
	assert_non_null(strstr(err, "not a regular file"));
}

static void index_parse(void **st)
{
	(void)st;
	struct sp_st_index ix;
	const char j[] = "{\"metadata\":{\"total_size\":1234},\"weight_map\":{\"a\":\"m-2.safetensors\","
			 "\"b\":\"m-1.safetensors\",\"c\":\"m-2.safetensors\",\"d\":\"sub/m-3.safetensors\"}}";
	assert_int_equal(sp_st_index_parse(S(j), &ix, "i.json", err, sizeof err), 0);
	assert_int_equal(ix.n_files, 3); /* each shard once */
	assert_int_equal(ix.n_weights, 4);
	assert_int_equal(ix.total_size, 1234);
	assert_string_equal(ix.files[0], "m-1.safetensors");
	assert_string_equal(ix.files[1], "m-2.safetensors");
	sp_st_index_free(&ix);

	static const struct {
		const char *j, *want;
	} bad[] = {
		{ "{\"metadata\":{}}", "no weight_map" },
		{ "{\"weight_map\":[]}", "no weight_map" },
		{ "{\"weight_map\":{}}", "weight_map is empty" },
		{ "{\"weight_map\":{\"a\":5}}", "is not a file name" },
		{ "{\"weight_map\":{\"a\":\"../x.safetensors\"}}", "points outside the folder" },
		{ "{\"weight_map\":{\"a\":\"/etc/passwd\"}}", "points outside the folder" },
		{ "{\"weight_map\":{\"a\":\"x/../../y\"}}", "points outside the folder" },
		{ "{\"weight_map\":{\"a\":\"\"}}", "points outside the folder" },
		{ "{\"weight_map\":{\"a\":\"x\",\"a\":\"y\"}}", "duplicate key" },
		{ "{\"weight_map\":", "not valid JSON" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = 0;
		int rc = sp_st_index_parse(bad[i].j, strlen(bad[i].j), &ix, "i.json", err, sizeof err);
		if (rc != -1 || !strstr(err, bad[i].want) || strncmp(err, "'i.json': ", 10) != 0)
			fail_msg("case %zu: rc %d, err \"%s\"", i, rc, err);
		assert_null(ix.files);
	}
	/* "..x" is a name, not a parent */
	const char ok[] = "{\"weight_map\":{\"a\":\"..x.safetensors\"}}";
	assert_int_equal(sp_st_index_parse(S(ok), &ix, "i.json", err, sizeof err), 0);
	sp_st_index_free(&ix);
}

static void load(const char *spec, struct sp_model_shape *m)
{
	int rc = sp_model_load(spec, m, err, sizeof err);
	if (rc)
		fail_msg("%s: %s", spec, err);
}

/* the config's estimate for the tiny Llama: 2 x 128 x 32 embeddings, and
 * per layer 32x32 x2 + 16x32 x2 attention, 3 x 32x64 MLP, 2 norms */
#define TINY_PARAMS (2.0 * 128 * 32 + 2 * (2 * 32 * 32 + 2 * 16 * 32 + 3 * 32 * 64 + 2 * 32) + 32)

static void folder_sharded(void **st)
{
	(void)st;
	struct sp_model_shape m;
	load(FIXM "tiny-llama", &m);
	assert_int_equal(m.source, SP_SRC_FOLDER);
	assert_string_equal(m.name, "tiny-llama");
	assert_string_equal(m.path, FIXM "tiny-llama");
	assert_true(m.have_tensors);
	assert_true(m.params_from_tensors);
	assert_true(m.params == TINY_PARAMS); /* the tensors agree with the formula */
	assert_true(m.params_active == m.params);
	assert_true(m.embed_params == 2.0 * 128 * 32);
	assert_true(m.linear_params == 2.0 * (2 * 32 * 32 + 2 * 16 * 32 + 3 * 32 * 64));
	assert_int_equal(m.tensor_count, 1 + 2 * 9 + 2);
	assert_int_equal(m.bytes_by_dtype[SP_DT_BF16], (uint64_t)TINY_PARAMS * 2);
	assert_int_equal(m.elems_by_dtype[SP_DT_BF16], (uint64_t)TINY_PARAMS);
	assert_int_equal(m.weight_bytes, (uint64_t)TINY_PARAMS * 2);
	assert_false(m.prequantized);
	assert_int_equal(m.files_read, 4); /* config, index, two shards */
	/* exactly what was read: config.json, the index, and each shard's 8 + N */
	uint64_t want = file_size(FIXM "tiny-llama/config.json") +
			file_size(FIXM "tiny-llama/model.safetensors.index.json") +
			header_bytes(FIXM "tiny-llama/model-00001-of-00002.safetensors") +
			header_bytes(FIXM "tiny-llama/model-00002-of-00002.safetensors");
	assert_int_equal(m.bytes_read, want);
	/* a trailing slash names the same folder */
	load(FIXM "tiny-llama/", &m);
	assert_string_equal(m.name, "tiny-llama");
}

static void folder_single_and_consolidated(void **st)
{
	(void)st;
	struct sp_model_shape m;
	load(FIXM "tiny-llama-single", &m);
	assert_true(m.params == TINY_PARAMS);
	assert_int_equal(m.files_read, 2);
	/* consolidated.safetensors repeats the HF shards: read only the shards */
	load(FIXM "tiny-mistral-consolidated", &m);
	assert_true(m.params == TINY_PARAMS);
	assert_int_equal(m.files_read, 3);
	/* a config.json alone in a folder: the estimate */
	load(FIXM "llama-3.1-8b", &m);
	assert_int_equal(m.source, SP_SRC_FOLDER);
	assert_false(m.have_tensors);
	assert_false(m.params_from_tensors);
	assert_true(m.params == 8030261248.0);
}

static void folder_quantized(void **st)
{
	(void)st;
	struct sp_model_shape m;
	load(FIXM "tiny-bnb4", &m);
	assert_true(m.prequantized);
	assert_string_equal(m.quant_method, "bitsandbytes");
	assert_int_equal(m.quant_bits, 4);
	assert_true(m.params == TINY_PARAMS); /* two 4-bit values per U8, absmax etc. not params */
	assert_true(m.bytes_by_dtype[SP_DT_U8] > 0);
	assert_true(m.bytes_by_dtype[SP_DT_F32] > 0); /* the quantization constants */
	assert_true(m.linear_params == 2.0 * (2 * 32 * 32 + 2 * 16 * 32 + 3 * 32 * 64));

	load(FIXM "tiny-u8-noconfig", &m);
	assert_true(m.prequantized); /* from the tensors alone */
	assert_string_equal(m.quant_method, "4bit-u8");
	assert_int_equal(m.quant_bits, 4);
	assert_true(m.params == TINY_PARAMS);

	load(FIXM "tiny-gptq", &m);
	assert_string_equal(m.quant_method, "gptq");
	assert_true(m.params == TINY_PARAMS); /* eight 4-bit values per I32 qweight */
	assert_true(m.bytes_by_dtype[SP_DT_I32] > 0);

	load(FIXM "tiny-fp8", &m);
	assert_true(m.prequantized);
	assert_string_equal(m.quant_method, "fp8");
	assert_int_equal(m.quant_bits, 8);
	assert_true(m.params == TINY_PARAMS);
	assert_int_equal(m.elems_by_dtype[SP_DT_F8_E4M3], (uint64_t)m.linear_params);
}

/* gpt-oss: MXFP4 experts; the tensors count what the config estimates */
static void folder_mxfp4(void **st)
{
	(void)st;
	struct sp_model_shape cfg, m;
	assert_int_equal(sp_model_load_config(FIXM "tiny-gpt-oss/config.json", &cfg, err, sizeof err), 0);
	load(FIXM "tiny-gpt-oss", &m);
	assert_true(m.params_from_tensors);
	assert_true(m.params == cfg.params);
	assert_true(m.expert_params == cfg.expert_params);
	assert_true(m.params_active == cfg.params_active);
	assert_true(m.prequantized);
	assert_string_equal(m.quant_method, "mxfp4");
	assert_int_equal(m.quant_bits, 4);
	assert_true(m.bytes_by_dtype[SP_DT_U8] == 4 * 64 * 16 + 4 * 64 + 4 * 32 * 16 + 4 * 32);
}

static void folder_moe(void **st)
{
	(void)st;
	struct sp_model_shape m;
	load(FIXM "tiny-mixtral", &m);
	double experts = 2.0 * 4 * 3 * 64 * 32;
	assert_true(m.expert_params == experts);
	assert_true(m.params == m.expert_params + 2 * 128 * 32 + 2 * (2 * 32 * 32 + 2 * 16 * 32 + 4 * 32 + 2 * 32) + 32);
	assert_true(m.params_active == m.params - experts / 2); /* top-2 of 4 */
}

static void bad_folders(void **st)
{
	(void)st;
	static const struct {
		const char *spec, *want;
	} cases[] = {
		{ FIXM "bad-index-missing-shard", "bad-index-missing-shard/model-00002-of-00002.safetensors': No such file" },
		{ FIXM "bad-index-escape", "points outside the folder" },
		{ FIXM "bad-shard", "bad-shard/model.safetensors': not valid JSON" },
		{ FIXM "bad-no-config", "bad-no-config': no config.json in the folder" },
		{ FIXM "bad", "bad': no config.json in the folder" },
		{ FIXM "bad/good.safetensors", "good.safetensors': one shard alone; give the model folder" },
		{ FIXM "mkmodels.py", "mkmodels.py': not a model folder, config.json or .gguf file" },
		{ "no-such-model-anywhere", "'no-such-model-anywhere': not a folder, file or catalog model "
					    "(see sparkops plan --list-models)" },
		{ "", "no model given" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sp_model_shape m;
		err[0] = 0;
		int rc = sp_model_load(cases[i].spec, &m, err, sizeof err);
		if (rc != -1 || !strstr(err, cases[i].want) || strchr(err, '\n'))
			fail_msg("%s: rc %d, err \"%s\"", cases[i].spec, rc, err);
	}
}

/* a header-only shard of a 16 GiB tensor (a sparse file made here): the
 * reader touches the header and nothing else */
static void sparse_shard(void **st)
{
	(void)st;
	char dir[] = "/tmp/sp-sparse-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char p[256];
	snprintf(p, sizeof p, "%s/config.json", dir);
	FILE *f = fopen(p, "w");
	fputs("{\"model_type\":\"llama\",\"hidden_size\":65536,\"intermediate_size\":1,\"num_hidden_layers\":1,"
	      "\"num_attention_heads\":1,\"vocab_size\":1}", f);
	fclose(f);
	snprintf(p, sizeof p, "%s/model.safetensors", dir);
	const char h[] = "{\"w\":{\"dtype\":\"BF16\",\"shape\":[65536,131072],\"data_offsets\":[0,17179869184]}}";
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	unsigned char len[8] = { sizeof h - 1 };
	assert_int_equal(write(fd, len, 8), 8);
	assert_int_equal(write(fd, h, sizeof h - 1), (ssize_t)(sizeof h - 1));
	assert_int_equal(ftruncate(fd, (off_t)(8 + sizeof h - 1 + 17179869184ULL)), 0);
	close(fd);
	struct sp_model_shape m;
	load(dir, &m);
	assert_true(m.params == 65536.0 * 131072);
	assert_int_equal(m.weight_bytes, 17179869184ULL);
	assert_true(m.bytes_read < 1024);
	unlink(p);
	snprintf(p, sizeof p, "%s/config.json", dir);
	unlink(p);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_good_buffer), cmocka_unit_test(empty_tensors_anywhere),
		cmocka_unit_test(dtypes_all_known),
		cmocka_unit_test(bad_buffers),       cmocka_unit_test(bad_files),
		cmocka_unit_test(index_parse),       cmocka_unit_test(folder_sharded),
		cmocka_unit_test(folder_single_and_consolidated),
		cmocka_unit_test(folder_quantized),  cmocka_unit_test(folder_moe), cmocka_unit_test(folder_mxfp4),
		cmocka_unit_test(bad_folders),       cmocka_unit_test(sparse_shard),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
