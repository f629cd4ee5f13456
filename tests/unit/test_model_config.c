// SPDX-License-Identifier: MIT
/* config.json reader and the built-in catalog: parameter counts against the
 * published totals, key spellings, defaults and bad inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "model/model.h"

#define S(x) x, sizeof(x) - 1
#define FIXM "tests/fixtures/models/"

static char err[512];

static void load(const char *name, struct sp_model_shape *m)
{
	char path[256];
	snprintf(path, sizeof path, FIXM "%s/config.json", name);
	int rc = sp_model_load_config(path, m, err, sizeof err);
	if (rc)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, 0);
	assert_int_equal(m->source, SP_SRC_CONFIG);
	assert_false(m->params_from_tensors);
}

/* within 0.5% of a published total */
static void near(double got, double published)
{
	double rel = (got - published) / published;
	if (rel > 0.005 || rel < -0.005)
		fail_msg("%.0f is %.2f%% off the published %.0f", got, rel * 100, published);
}

static void llama31_8b(void **st)
{
	(void)st;
	struct sp_model_shape m;
	load("llama-3.1-8b", &m);
	assert_string_equal(m.arch, "llama");
	assert_string_equal(m.name, "llama-3.1-8b");
	assert_int_equal(m.n_layers, 32);
	assert_int_equal(m.hidden, 4096);
	assert_int_equal(m.intermediate, 14336);
	assert_int_equal(m.n_heads, 32);
	assert_int_equal(m.n_kv_heads, 8);
	assert_int_equal(m.head_dim, 128);
	assert_int_equal(m.vocab, 128256);
	assert_int_equal(m.max_seq, 131072);
	assert_false(m.tied_embeddings);
	assert_string_equal(m.torch_dtype, "bfloat16");
	/* hand count: 32 x (attention 41,943,040 + MLP 176,160,768 + norms 8,192)
	 * + 2 x 128256 x 4096 + final norm 4096 */
	assert_true(m.params == 8030261248.0);
	near(m.params, 8.03e9);
	assert_true(m.params_active == m.params);
	assert_true(m.embed_params == 2.0 * 128256 * 4096);
	assert_true(m.linear_params == 32.0 * (41943040 + 176160768));
	assert_int_equal(m.n_experts, 0);
	assert_false(m.prequantized);
	assert_true(m.bytes_read > 500 && m.bytes_read < 2000);
}

static void llama31_70b(void **st)
{
	(void)st;
	struct sp_model_shape m;
	load("llama-3.1-70b", &m);
	assert_true(m.params == 70553706496.0);
	near(m.params, 70.6e9);
}

static void llama32_1b_tied(void **st)
{
	(void)st;
	struct sp_model_shape m;
	load("llama-3.2-1b", &m);
	assert_true(m.tied_embeddings);
	assert_int_equal(m.head_dim, 64);
	assert_true(m.params == 1235814400.0);
	assert_true(m.embed_params == 128256.0 * 2048); /* lm_head shares the embedding */
	near(m.params, 1.24e9);
}

static void qwen25_7b_biases(void **st)
{
	(void)st;
	struct sp_model_shape m;
	load("qwen2.5-7b", &m);
	assert_string_equal(m.arch, "qwen2");
	/* q/k/v biases: 3584 + 2 x 512 per layer */
	assert_true(m.params == 7615616512.0);
	near(m.params, 7.62e9);
}

static void gemma2_9b(void **st)
{
	(void)st;
	struct sp_model_shape m;
	load("gemma-2-9b", &m);
	assert_int_equal(m.head_dim, 256); /* not 3584/16 */
	assert_true(m.tied_embeddings);    /* absent: Gemma2Config ties */
	assert_string_equal(m.torch_dtype, "float32");
	near(m.params, 9.24e9);
	assert_true(m.params == 9241705984.0);
}

static void gemma3_text_config(void **st)
{
	(void)st;
	struct sp_model_shape m;
	load("gemma-3-4b", &m);
	assert_string_equal(m.arch, "gemma3");
	assert_int_equal(m.hidden, 2560);
	assert_int_equal(m.n_layers, 34);
	/* left out of text_config: Gemma3TextConfig's defaults */
	assert_int_equal(m.vocab, 262208);
	assert_int_equal(m.n_heads, 8);
	assert_int_equal(m.n_kv_heads, 4);
	assert_int_equal(m.head_dim, 256);
	assert_true(m.tied_embeddings);
	/* Gemma 3 technical report, table 1: 4B = 417M vision + 675M embedding + 3,209M non-embedding */
	near(m.params - m.embed_params - m.vision_params - 2560, 3209e6);
	assert_true(m.vision_params > 416e6 && m.vision_params < 422e6);
	near(m.params, 4.30e9);

	load("gemma-3-27b", &m);
	assert_int_equal(m.head_dim, 128);
	assert_int_equal(m.n_kv_heads, 16);
	near(m.params - m.embed_params - m.vision_params - 5376, 25600e6);
	near(m.params, 27.4e9);
}

static void mixtral(void **st)
{
	(void)st;
	struct sp_model_shape m;
	load("mixtral-8x7b", &m);
	assert_int_equal(m.n_experts, 8);
	assert_int_equal(m.experts_per_tok, 2);
	assert_int_equal(m.n_moe_layers, 32);
	assert_int_equal(m.moe_intermediate, 0); /* experts use intermediate_size */
	near(m.params, 46.7e9);
	near(m.params_active, 12.9e9);
	assert_true(m.params == 46702792704.0);
	assert_true(m.expert_params == 32.0 * 8 * 3 * 4096 * 14336);
}

static void qwen3_moe(void **st)
{
	(void)st;
	struct sp_model_shape m;
	load("qwen3-30b-a3b", &m);
	assert_int_equal(m.n_experts, 128);
	assert_int_equal(m.experts_per_tok, 8);
	assert_int_equal(m.moe_intermediate, 768);
	assert_int_equal(m.n_moe_layers, 48);
	near(m.params, 30.53e9);
	near(m.params_active, 3.35e9);
}

static void gpt_oss(void **st)
{
	(void)st;
	struct sp_model_shape m;
	load("gpt-oss-20b", &m);
	assert_true(m.prequantized);
	assert_string_equal(m.quant_method, "mxfp4");
	assert_int_equal(m.quant_bits, 4);
	assert_int_equal(m.n_experts, 32);
	assert_int_equal(m.experts_per_tok, 4);
	/* model card: 20.9B total; 3.61B active, counted without the input
	 * embedding (201088 x 2880), which sparkops keeps in params_active */
	near(m.params, 20.91e9);
	double act = m.params_active - 201088.0 * 2880;
	assert_true(act > 3.59e9 && act < 3.63e9);
}

static void gpt2(void **st)
{
	(void)st;
	struct sp_model_shape m;
	load("gpt2", &m);
	assert_int_equal(m.hidden, 768);
	assert_int_equal(m.n_layers, 12);
	assert_int_equal(m.n_heads, 12);
	assert_int_equal(m.intermediate, 3072); /* n_inner absent: 4 x n_embd */
	assert_int_equal(m.max_seq, 1024);
	assert_true(m.tied_embeddings);
	/* the count PyTorch prints for GPT2LMHeadModel: 124,439,808 */
	assert_true(m.params == 124439808.0);
}

static void other_families(void **st)
{
	(void)st;
	struct sp_model_shape m;
	/* Phi-2: one LayerNorm per layer (parallel block), biases everywhere,
	 * lm_head with a bias: PyTorch counts 2,779,683,840 */
	load("phi-2", &m);
	assert_true(m.params == 2779683840.0);
	/* Pythia-1.4B (GPT-NeoX): 1,414,647,808 in the Pythia paper */
	load("pythia-1.4b", &m);
	assert_true(m.params == 1414647808.0);
	/* LLaVA-1.5-7B: text_config names only a few keys, LlamaConfig's
	 * defaults fill the rest; CLIP ViT-L/14-336 tower; 7.06B published */
	load("llava-1.5-7b", &m);
	assert_string_equal(m.arch, "llava");
	assert_int_equal(m.hidden, 4096);
	assert_int_equal(m.n_layers, 32);
	assert_int_equal(m.vocab, 32064);
	assert_int_equal(m.max_seq, 4096);
	assert_false(m.tied_embeddings);
	assert_true(m.vision_params > 290e6 && m.vision_params < 330e6);
	near(m.params, 7.06e9);
}

static void gpt2_style_keys(void **st)
{
	(void)st;
	struct sp_model_shape m = { 0 };
	/* GPT-BigCode style: multi_query, explicit n_inner */
	const char j[] = "{\"model_type\":\"gpt_bigcode\",\"n_embd\":2048,\"n_layer\":24,\"n_head\":16,"
			 "\"n_inner\":8192,\"n_positions\":8192,\"multi_query\":true,\"vocab_size\":49152}";
	assert_int_equal(sp_hfconfig_parse(S(j), "c.json", &m, err, sizeof err), 0);
	assert_int_equal(m.n_kv_heads, 1);
	assert_int_equal(m.intermediate, 8192);
	assert_int_equal(m.head_dim, 128);
	/* SantaCoder-class: ~1.1B */
	assert_true(m.params > 1.1e9 && m.params < 1.25e9);
}

/* Falcon: no intermediate_size (a 4h MLP), multi-query or KV groups by
 * new_decoder_architecture, one or two LayerNorms per layer, no linear biases */
static void falcon(void **st)
{
	(void)st;
	struct sp_model_shape m = { 0 };
	/* tiiuae/falcon-7b: 6,921,720,704 parameters (model card, safetensors index) */
	const char f7[] = "{\"model_type\":\"falcon\",\"hidden_size\":4544,\"num_hidden_layers\":32,"
			  "\"num_attention_heads\":71,\"multi_query\":true,\"new_decoder_architecture\":false,"
			  "\"parallel_attn\":true,\"bias\":false,\"vocab_size\":65024}";
	assert_int_equal(sp_hfconfig_parse(S(f7), "c", &m, err, sizeof err), 0);
	assert_int_equal(m.n_kv_heads, 1);
	assert_int_equal(m.intermediate, 4 * 4544);
	assert_true(m.tied_embeddings);
	assert_true(m.params == 6921720704.0);
	assert_string_equal(m.assumed, "");
	/* multi_query absent: FalconConfig's default (true) */
	const char f7b[] = "{\"model_type\":\"falcon\",\"hidden_size\":4544,\"num_hidden_layers\":32,"
			   "\"num_attention_heads\":71,\"parallel_attn\":true,\"vocab_size\":65024}";
	memset(&m, 0, sizeof m);
	assert_int_equal(sp_hfconfig_parse(S(f7b), "c", &m, err, sizeof err), 0);
	assert_true(m.params == 6921720704.0);
	/* tiiuae/falcon-40b: new decoder, 8 KV groups, ln_attn + ln_mlp: by hand
	 * 60 x (8192 x (8192 + 2 x 8 x 64) + 8192^2 + 8 x 8192^2 + 4 x 8192)
	 * + 65024 x 8192 + 2 x 8192 = 41,303,293,952 */
	const char f40[] = "{\"model_type\":\"falcon\",\"hidden_size\":8192,\"num_hidden_layers\":60,"
			   "\"num_attention_heads\":128,\"num_kv_heads\":8,\"multi_query\":true,"
			   "\"new_decoder_architecture\":true,\"parallel_attn\":true,\"bias\":false,\"vocab_size\":65024}";
	memset(&m, 0, sizeof m);
	assert_int_equal(sp_hfconfig_parse(S(f40), "c", &m, err, sizeof err), 0);
	assert_int_equal(m.n_kv_heads, 8);
	assert_true(m.params == 41303293952.0);
	/* an architecture not known by name says what it was read as */
	const char unk[] = "{\"model_type\":\"somethingnew\",\"hidden_size\":64,\"intermediate_size\":128,"
			   "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":100}";
	memset(&m, 0, sizeof m);
	assert_int_equal(sp_hfconfig_parse(S(unk), "c", &m, err, sizeof err), 0);
	assert_non_null(strstr(m.assumed, "'somethingnew' is not a known architecture: read as Llama"));
}

static void tie_defaults(void **st)
{
	(void)st;
	struct sp_model_shape m = { 0 };
	const char llama[] = "{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":128,"
			     "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":100}";
	assert_int_equal(sp_hfconfig_parse(S(llama), "c", &m, err, sizeof err), 0);
	assert_false(m.tied_embeddings); /* LlamaConfig: untied */
	assert_int_equal(m.n_kv_heads, 4);
	/* a top-level llama config missing keys is an error, not Llama-2-7B */
	const char partial[] = "{\"model_type\":\"llama\",\"vocab_size\":100}";
	memset(&m, 0, sizeof m);
	assert_int_equal(sp_hfconfig_parse(S(partial), "c", &m, err, sizeof err), -1);
	assert_string_equal(err, "'c': missing num_hidden_layers");
	const char unknown[] = "{\"model_type\":\"somethingnew\",\"hidden_size\":64,\"intermediate_size\":128,"
			       "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":100}";
	memset(&m, 0, sizeof m);
	assert_int_equal(sp_hfconfig_parse(S(unknown), "c", &m, err, sizeof err), 0);
	assert_true(m.tied_embeddings); /* PretrainedConfig: tied */
	const char dtype_key[] = "{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":128,"
				 "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":100,\"dtype\":\"float16\"}";
	memset(&m, 0, sizeof m);
	assert_int_equal(sp_hfconfig_parse(S(dtype_key), "c", &m, err, sizeof err), 0);
	assert_string_equal(m.torch_dtype, "float16");
}

static void quant_config(void **st)
{
	(void)st;
	struct sp_model_shape m = { 0 };
	const char bnb[] = "{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":128,"
			   "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":100,"
			   "\"quantization_config\":{\"quant_method\":\"bitsandbytes\",\"load_in_4bit\":true,"
			   "\"bnb_4bit_quant_type\":\"nf4\"}}";
	assert_int_equal(sp_hfconfig_parse(S(bnb), "c", &m, err, sizeof err), 0);
	assert_true(m.prequantized);
	assert_string_equal(m.quant_method, "bitsandbytes");
	assert_int_equal(m.quant_bits, 4);
	const char gptq[] = "{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":128,"
			    "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":100,"
			    "\"quantization_config\":{\"quant_method\":\"gptq\",\"bits\":4,\"group_size\":128}}";
	memset(&m, 0, sizeof m);
	assert_int_equal(sp_hfconfig_parse(S(gptq), "c", &m, err, sizeof err), 0);
	assert_string_equal(m.quant_method, "gptq");
	assert_int_equal(m.quant_bits, 4);
}

/* each bad config: -1 and one line naming the file and the problem */
static void bad_configs(void **st)
{
	(void)st;
	static const struct {
		const char *json, *want;
	} cases[] = {
		{ "{\"hidden_size\":64,\"num_attention_heads\":4,\"vocab_size\":100,\"intermediate_size\":1}",
		  "missing num_hidden_layers" },
		{ "{\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":100,\"intermediate_size\":1}",
		  "missing hidden_size" },
		{ "{\"num_hidden_layers\":2,\"hidden_size\":64,\"vocab_size\":100,\"intermediate_size\":1}",
		  "missing num_attention_heads" },
		{ "{\"num_hidden_layers\":2,\"hidden_size\":64,\"num_attention_heads\":4,\"intermediate_size\":1}",
		  "missing vocab_size" },
		{ "{\"num_hidden_layers\":2,\"hidden_size\":64,\"num_attention_heads\":4,\"vocab_size\":100}",
		  "missing intermediate_size" },
		{ "{\"num_hidden_layers\":-2,\"hidden_size\":64,\"num_attention_heads\":4,\"vocab_size\":100,\"intermediate_size\":1}",
		  "num_hidden_layers = -2 is out of range" },
		{ "{\"num_hidden_layers\":\"two\",\"hidden_size\":64,\"num_attention_heads\":4,\"vocab_size\":100,\"intermediate_size\":1}",
		  "num_hidden_layers is not an integer" },
		{ "{\"num_hidden_layers\":2.5,\"hidden_size\":64,\"num_attention_heads\":4,\"vocab_size\":100,\"intermediate_size\":1}",
		  "num_hidden_layers is not an integer" },
		{ "{\"num_hidden_layers\":2,\"hidden_size\":1e300,\"num_attention_heads\":4,\"vocab_size\":100,\"intermediate_size\":1}",
		  "hidden_size = " },
		{ "{\"num_hidden_layers\":0,\"hidden_size\":64,\"num_attention_heads\":4,\"vocab_size\":100,\"intermediate_size\":1}",
		  "num_hidden_layers must be positive" },
		{ "{\"num_hidden_layers\":2,\"hidden_size\":64,\"num_attention_heads\":6,\"vocab_size\":100,\"intermediate_size\":1}",
		  "not a multiple" },
		{ "{\"num_hidden_layers\":2,\"hidden_size\":64,\"num_attention_heads\":4,\"num_key_value_heads\":3,\"vocab_size\":100,\"intermediate_size\":1}",
		  "not a multiple" },
		{ "{\"num_hidden_layers\":2,\"hidden_size\":64,\"num_attention_heads\":4,\"vocab_size\":100,\"intermediate_size\":1,\"num_local_experts\":8}",
		  "missing num_experts_per_tok" },
		{ "{\"num_hidden_layers\":2,\"hidden_size\":64,\"num_attention_heads\":4,\"vocab_size\":100,\"intermediate_size\":1,\"num_local_experts\":8,\"num_experts_per_tok\":9}",
		  "exceeds" },
		{ "{\"num_hidden_layers\":2,\"num_hidden_layers\":3}", "duplicate key" },
		{ "{\"num_hidden_layers\":2,", "not valid JSON" },
		{ "[1,2]", "not a JSON object" },
		{ "{\"text_config\":5}", "text_config is not an object" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sp_model_shape m = { 0 };
		err[0] = 0;
		int rc = sp_hfconfig_parse(cases[i].json, strlen(cases[i].json), "x/config.json", &m, err, sizeof err);
		if (rc != -1 || !strstr(err, cases[i].want) || strncmp(err, "'x/config.json': ", 17) != 0 ||
		    strchr(err, '\n'))
			fail_msg("case %zu: rc %d, err \"%s\", want \"%s\"", i, rc, err, cases[i].want);
	}
}

static void missing_file(void **st)
{
	(void)st;
	struct sp_model_shape m;
	assert_int_equal(sp_model_load_config("/nonexistent/config.json", &m, err, sizeof err), -1);
	assert_string_equal(err, "'/nonexistent/config.json': No such file or directory");
}

/* ---- catalog ---- */

static void catalog_lookup(void **st)
{
	(void)st;
	unsetenv("SPARKOPS_CATALOG");
	struct sp_model_shape m;
	assert_int_equal(sp_catalog_find("LLAMA-3.1-8B", &m, err, sizeof err), 0);
	assert_string_equal(m.name, "llama-3.1-8b");
	assert_int_equal(m.source, SP_SRC_CATALOG);
	assert_true(m.params == 8030261248.0); /* the same as the fixture config.json */
	assert_string_equal(m.hf_id, "meta-llama/Llama-3.1-8B");
	assert_int_equal(sp_catalog_find("meta-llama/llama-3.1-8b", &m, err, sizeof err), 0);
	assert_int_equal(sp_catalog_find("llama3-8b", &m, err, sizeof err), 0); /* alias */
	assert_string_equal(m.name, "llama-3.1-8b");
	assert_int_equal(sp_catalog_find("gpt-oss:120b", &m, err, sizeof err), 0);
	assert_string_equal(m.name, "gpt-oss-120b");
	assert_true(m.prequantized);
	assert_int_equal(sp_catalog_find("no-such-model", &m, err, sizeof err), 1);
	assert_int_equal(sp_catalog_find("Mixtral", &m, err, sizeof err), 0);
	near(m.params_active, 12.9e9);
}

/* every catalog model against the total its model card publishes: within 2%
 * (cards round to two or three digits) */
static void catalog_published(void **st)
{
	(void)st;
	unsetenv("SPARKOPS_CATALOG");
	struct sp_catalog_entry *l;
	size_t n;
	assert_int_equal(sp_catalog_list(&l, &n, err, sizeof err), 0);
	assert_true(n >= 40);
	int bad = 0, checked = 0;
	for (size_t i = 0; i < n; i++) {
		double pub = l[i].published_params, act = l[i].published_params_active;
		if (pub <= 0)
			continue;
		checked++;
		double rel = (l[i].params - pub) / pub;
		if (rel > 0.02 || rel < -0.02) {
			fprintf(stderr, "%s: %.3fB vs published %.3fB (%.1f%%)\n", l[i].name, l[i].params / 1e9,
				pub / 1e9, rel * 100);
			bad++;
		}
		if (act > 0) {
			double r2 = (l[i].params_active - act) / act;
			if (r2 > 0.03 || r2 < -0.03) {
				fprintf(stderr, "%s active: %.3fB vs published %.3fB\n", l[i].name,
					l[i].params_active / 1e9, act / 1e9);
				bad++;
			}
		}
	}
	assert_int_equal(checked, n); /* every model carries its card's figure */
	free(l);
	assert_int_equal(bad, 0);
}

static void catalog_override(void **st)
{
	(void)st;
	char path[] = "/tmp/sp-catalog-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char j[] = "{\"models\":[{\"name\":\"tiny\",\"aliases\":[\"T1\"],\"config\":{\"model_type\":\"llama\","
			 "\"hidden_size\":64,\"intermediate_size\":128,\"num_hidden_layers\":2,"
			 "\"num_attention_heads\":4,\"vocab_size\":100}}]}";
	assert_int_equal(write(fd, j, sizeof j - 1), (ssize_t)(sizeof j - 1));
	close(fd);
	setenv("SPARKOPS_CATALOG", path, 1);
	struct sp_model_shape m;
	assert_int_equal(sp_catalog_find("t1", &m, err, sizeof err), 0);
	assert_string_equal(m.name, "tiny");
	assert_int_equal(sp_catalog_find("llama-3.1-8b", &m, err, sizeof err), 1);
	struct sp_catalog_entry *l;
	size_t n;
	assert_int_equal(sp_catalog_list(&l, &n, err, sizeof err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(l[0].aliases, "T1");
	free(l);
	/* a broken catalog is an error naming the file */
	FILE *f = fopen(path, "w");
	fputs("{\"models\":[{\"name\":\"x\",\"config\":{}}]}", f);
	fclose(f);
	assert_int_equal(sp_catalog_list(&l, &n, err, sizeof err), -1);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "missing num_hidden_layers"));
	unlink(path);
	unsetenv("SPARKOPS_CATALOG");
}

/* the precision a checkpoint's name says: one reader for the ladder's
 * rung 3 and ladder --plan's model check */
static void name_weight_bits(void **st)
{
	(void)st;
	assert_int_equal(sp_name_weight_bits("Qwen/Qwen2.5-72B-Instruct-AWQ"), 4);
	assert_int_equal(sp_name_weight_bits("TheBloke/Llama-2-13B-GPTQ"), 4);
	assert_int_equal(sp_name_weight_bits("unsloth/llama-3-8b-bnb-4bit"), 4);
	assert_int_equal(sp_name_weight_bits("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"), 4);
	assert_int_equal(sp_name_weight_bits("model-IQ3_XS.gguf"), 4);
	assert_int_equal(sp_name_weight_bits("neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8-dynamic"), 8);
	assert_int_equal(sp_name_weight_bits("Qwen-7B-Chat-Int8"), 8);
	assert_int_equal(sp_name_weight_bits("meta-llama/Llama-3.1-8B"), 0);
	assert_int_equal(sp_name_weight_bits(""), 0);
	assert_int_equal(sp_name_weight_bits(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(llama31_8b),         cmocka_unit_test(llama31_70b),
		cmocka_unit_test(llama32_1b_tied),    cmocka_unit_test(qwen25_7b_biases),
		cmocka_unit_test(gemma2_9b),          cmocka_unit_test(gemma3_text_config),
		cmocka_unit_test(mixtral),            cmocka_unit_test(qwen3_moe),
		cmocka_unit_test(gpt_oss),            cmocka_unit_test(gpt2),
		cmocka_unit_test(other_families),     cmocka_unit_test(gpt2_style_keys),    cmocka_unit_test(tie_defaults),
		cmocka_unit_test(falcon),
		cmocka_unit_test(quant_config),       cmocka_unit_test(bad_configs),
		cmocka_unit_test(missing_file),       cmocka_unit_test(catalog_lookup),
		cmocka_unit_test(catalog_published),  cmocka_unit_test(catalog_override),
		cmocka_unit_test(name_weight_bits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
