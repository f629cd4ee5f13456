// SPDX-License-Identifier: MIT
/* config.json (Hugging Face transformers) -> struct sp_model_shape.
 *
 * Reads the architecture numbers under their several spellings (Llama /
 * Mistral / Qwen / Gemma names, GPT-2 names), unwraps a multimodal model's
 * text_config, and estimates the parameter count from the architecture.
 * The formulas are in docs/models.md; each family's quirks (gated MLP, biases,
 * four norms per layer, q/k norms, attention sinks) sit in one table below. */
#include "model/model_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/text.h"

int sp_model_err(char *err, size_t errlen, const char *label, const char *fmt, ...)
{
	if (!err || errlen == 0)
		return -1;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (label && *label)
		snprintf(err, errlen, "'%s': %s", label, msg);
	else
		snprintf(err, errlen, "%s", msg);
	return -1;
}

const char *sp_model_basename(const char *path)
{
	const char *s = strrchr(path, '/');
	if (s && s[1])
		return s + 1;
	if (!s)
		return path;
	/* "dir/": the component before the slash */
	static __thread char last[256];
	size_t n = (size_t)(s - path);
	while (n > 0 && path[n - 1] == '/')
		n--;
	size_t b = n;
	while (b > 0 && path[b - 1] != '/')
		b--;
	snprintf(last, sizeof last, "%.*s", (int)(n - b), path + b);
	return last;
}

json_t *sp_model_json(const char *buf, size_t len, const char *label, char *err, size_t errlen)
{
	json_error_t je;
	json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		if (strstr(je.text, "too big"))
			sp_model_err(err, errlen, label, "a number too large for 64 bits (line %d, column %d)", je.line,
				     je.column);
		else if (strstr(je.text, "duplicate"))
			sp_model_err(err, errlen, label, "duplicate key in JSON (line %d): %s", je.line, je.text);
		else
			sp_model_err(err, errlen, label, "not valid JSON (line %d, column %d): %s", je.line,
				     je.column, je.text);
	}
	return j;
}

int sp_model_open(const char *path, uint64_t *size, char *err, size_t errlen)
{
	*size = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return sp_model_err(err, errlen, path, "%s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return sp_model_err(err, errlen, path, "%s", strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return sp_model_err(err, errlen, path, "not a regular file");
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

int sp_model_slurp(const char *path, size_t cap, char **buf, size_t *len, uint64_t *bytes_read,
		   char *err, size_t errlen)
{
	*buf = NULL;
	*len = 0;
	uint64_t size;
	int fd = sp_model_open(path, &size, err, errlen);
	if (fd < 0)
		return -1;
	if (size > cap) {
		close(fd);
		return sp_model_err(err, errlen, path, "file of %llu bytes exceeds the %zu-byte limit",
				    (unsigned long long)size, cap);
	}
	char *b = malloc((size_t)size + 1);
	if (!b) {
		close(fd);
		return sp_model_err(err, errlen, path, "out of memory");
	}
	ssize_t r = sp_read_full(fd, b, (size_t)size);
	int e = errno;
	close(fd);
	if (r < 0) {
		free(b);
		return sp_model_err(err, errlen, path, "%s", strerror(e));
	}
	b[r] = 0;
	*buf = b;
	*len = (size_t)r;
	if (bytes_read)
		*bytes_read += (uint64_t)r;
	return 0;
}

/* ---- families --------------------------------------------------------------- */

enum {
	F_GATED = 1 << 0,       /* gate+up+down MLP (3 matrices) */
	F_QKV_BIAS = 1 << 1,    /* biases on q, k, v */
	F_O_BIAS = 1 << 2,      /* bias on the attention output */
	F_MLP_BIAS = 1 << 3,    /* biases in the MLP (and the experts) */
	F_NORM4 = 1 << 4,       /* four norms per layer (Gemma 2/3), else two */
	F_LN_BIAS = 1 << 5,     /* LayerNorm with bias (GPT-2), else RMSNorm */
	F_QK_NORM = 1 << 6,     /* RMSNorm on q and k (Qwen3, Gemma 3) */
	F_LEARNED_POS = 1 << 7, /* learned position embeddings (GPT-2) */
	F_SINKS = 1 << 8,       /* one attention sink per head (gpt-oss) */
	F_ROUTER_BIAS = 1 << 9, /* bias on the MoE router (gpt-oss) */
	F_SHARED_GATE = 1 << 10, /* the shared expert has a 1-wide gate (Qwen2 MoE) */
	F_NORM1 = 1 << 11,      /* one norm per layer: parallel attention and MLP (Phi-2) */
	F_HEAD_BIAS = 1 << 12,  /* a bias on lm_head (Phi-2) */
};

/* tie: the architecture class's default when config.json has no
 * tie_word_embeddings: 1 tied, 0 untied (transformers' *Config defaults). */
struct family {
	const char *type;
	unsigned flags;
	int tie;
};

static const struct family families[] = {
	{ "llama", F_GATED, 0 },
	{ "mistral", F_GATED, 0 },
	{ "mixtral", F_GATED, 0 },
	{ "qwen2", F_GATED | F_QKV_BIAS, 0 },
	{ "qwen2_moe", F_GATED | F_QKV_BIAS | F_SHARED_GATE, 0 },
	{ "qwen3", F_GATED | F_QK_NORM, 0 },
	{ "qwen3_moe", F_GATED | F_QK_NORM, 0 },
	{ "gemma", F_GATED, 1 },
	{ "gemma2", F_GATED | F_NORM4, 1 },
	{ "gemma3_text", F_GATED | F_NORM4 | F_QK_NORM, 1 },
	{ "gemma3", F_GATED | F_NORM4 | F_QK_NORM, 1 },
	{ "phi3", F_GATED, 0 },
	{ "granite", F_GATED, 1 },
	{ "olmo2", F_GATED | F_QK_NORM, 0 },
	{ "gpt_oss", F_GATED | F_QKV_BIAS | F_O_BIAS | F_MLP_BIAS | F_SINKS | F_ROUTER_BIAS, 0 },
	{ "gpt_neox", F_QKV_BIAS | F_O_BIAS | F_MLP_BIAS | F_LN_BIAS, 0 },
	{ "phi", F_QKV_BIAS | F_O_BIAS | F_MLP_BIAS | F_LN_BIAS | F_NORM1 | F_HEAD_BIAS, 0 },
	{ "gpt2", F_QKV_BIAS | F_O_BIAS | F_MLP_BIAS | F_LN_BIAS | F_LEARNED_POS, 1 },
	{ "gpt_bigcode", F_QKV_BIAS | F_O_BIAS | F_MLP_BIAS | F_LN_BIAS | F_LEARNED_POS, 1 },
	/* Falcon: a plain 4h MLP (GELU), LayerNorm with bias, no linear biases
	 * (bias: false); the norms and KV heads depend on the config (below) */
	{ "falcon", F_LN_BIAS, 1 },
	{ "RefinedWeb", F_LN_BIAS, 1 },
	{ "RefinedWebModel", F_LN_BIAS, 1 },
	{ NULL, 0, 0 },
};

/* An unknown model_type is read as a Llama-style decoder (gated MLP, RMSNorm,
 * no biases) and ties by PretrainedConfig's own default (true). */
static const struct family unknown_family = { "", F_GATED, 1 };

static const struct family *family_of(const char *type)
{
	for (const struct family *f = families; f->type; f++)
		if (strcmp(f->type, type) == 0)
			return f;
	return &unknown_family;
}

/* Defaults of keys that real config.json files leave out because the
 * architecture class supplies them (Gemma 3's text_config is the main case:
 * gemma-3-4b lists neither vocab_size nor the head counts). */
struct arch_default {
	const char *type, *key;
	long long v;
	bool nested_only; /* only inside text_config, where configs rely on the class defaults */
};
static const struct arch_default arch_defaults[] = {
	{ "gemma3_text", "vocab_size", 262208, false },
	{ "gemma3_text", "num_attention_heads", 8, false },
	{ "gemma3_text", "num_key_value_heads", 4, false },
	{ "gemma3_text", "head_dim", 256, false },
	{ "gemma3_text", "max_position_embeddings", 131072, false },
	{ "gemma2", "head_dim", 256, false },
	{ "gemma", "head_dim", 256, false },
	{ "gpt2", "n_positions", 1024, false },
	{ "gpt2", "vocab_size", 50257, false },
	/* LLaVA-1.5's text_config names little more than its model_type:
	 * LlamaConfig's defaults (Llama-2-7B's numbers) fill the rest */
	{ "llama", "hidden_size", 4096, true },
	{ "llama", "intermediate_size", 11008, true },
	{ "llama", "num_hidden_layers", 32, true },
	{ "llama", "num_attention_heads", 32, true },
	{ "llama", "vocab_size", 32000, true },
	{ "llama", "max_position_embeddings", 2048, true },
	{ NULL, NULL, 0, false },
};

static int arch_default(const char *type, const char *key, bool nested, long long *v)
{
	for (const struct arch_default *d = arch_defaults; d->type; d++)
		if (strcmp(d->type, type) == 0 && strcmp(d->key, key) == 0 && (nested || !d->nested_only)) {
			*v = d->v;
			return 1;
		}
	return 0;
}

/* ---- key reading -------------------------------------------------------------- */

struct reader {
	json_t *obj;      /* where the language model's keys live */
	json_t *outer;    /* the top level (torch_dtype, quantization_config) */
	const char *type; /* the language model's model_type */
	const char *label;
	char *err;
	size_t errlen;
};

#define INT_MAX_SANE 100000000LL /* no architecture number is above 1e8 */

/* One integer under the first of the given names. 1 found, 0 absent,
 * -1 present but not a sane non-negative integer. */
static int get_int(struct reader *r, const char *const *names, long long *out)
{
	for (const char *const *n = names; *n; n++) {
		json_t *v = json_object_get(r->obj, *n);
		if (!v || json_is_null(v))
			continue;
		double d;
		if (json_is_integer(v))
			d = (double)json_integer_value(v);
		else if (json_is_real(v) && floor(json_real_value(v)) == json_real_value(v))
			d = json_real_value(v);
		else
			return sp_model_err(r->err, r->errlen, r->label, "%s is not an integer", *n);
		if (d < 0 || d > (double)INT_MAX_SANE)
			return sp_model_err(r->err, r->errlen, r->label, "%s = %.0f is out of range", *n, d);
		*out = (long long)d;
		return 1;
	}
	long long dv;
	for (const char *const *n = names; *n; n++)
		if (arch_default(r->type, *n, r->obj != r->outer, &dv)) {
			*out = dv;
			return 1;
		}
	return 0;
}

#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

static int need_int(struct reader *r, const char *const *names, int *out, bool positive)
{
	long long v = 0;
	int g = get_int(r, names, &v);
	if (g < 0)
		return -1;
	if (g == 0)
		return sp_model_err(r->err, r->errlen, r->label, "missing %s", names[0]);
	if (positive && v == 0)
		return sp_model_err(r->err, r->errlen, r->label, "%s must be positive", names[0]);
	*out = (int)v;
	return 0;
}

static int opt_int(struct reader *r, const char *const *names, int *out)
{
	long long v = 0;
	int g = get_int(r, names, &v);
	if (g < 0)
		return -1;
	if (g > 0)
		*out = (int)v;
	return 0;
}

/* a boolean key: 1/0 when present, -1 absent */
static int get_bool(json_t *obj, const char *name)
{
	json_t *v = json_object_get(obj, name);
	if (json_is_boolean(v))
		return json_is_true(v);
	return -1;
}

static void copy_str(char *dst, size_t n, json_t *v)
{
	if (json_is_string(v)) {
		snprintf(dst, n, "%s", json_string_value(v));
		sp_text_clean(dst);
	}
}

/* ---- parameter estimate ------------------------------------------------------- */

/* one MLP of width w: weights, biases */
static double mlp_params(unsigned fl, double h, double w, double *linear)
{
	double mats = (fl & F_GATED) ? 3 : 2;
	double p = mats * h * w;
	if (linear)
		*linear += p;
	if (fl & F_MLP_BIAS)
		p += (fl & F_GATED) ? 2 * w + h : w + h;
	return p;
}

static int moe_layer(int i, int step, const int *dense_only, int n_dense_only)
{
	for (int k = 0; k < n_dense_only; k++)
		if (dense_only[k] == i)
			return 0;
	return step <= 1 || (i + 1) % step == 0;
}

/* A ViT vision tower (SigLIP / CLIP style): pre-LN blocks with biases,
 * patch and position embeddings, a final LayerNorm. */
static double vision_params(json_t *vc, double text_hidden, const char *type)
{
	long long h = 0, inter = 0, layers = 0, patch = 0, image = 0, ch = 3;
	json_t *v;
	if (!json_is_object(vc))
		return 0;
	if ((v = json_object_get(vc, "hidden_size")) && json_is_integer(v))
		h = json_integer_value(v);
	if ((v = json_object_get(vc, "intermediate_size")) && json_is_integer(v))
		inter = json_integer_value(v);
	if ((v = json_object_get(vc, "num_hidden_layers")) && json_is_integer(v))
		layers = json_integer_value(v);
	if ((v = json_object_get(vc, "patch_size")) && json_is_integer(v))
		patch = json_integer_value(v);
	if ((v = json_object_get(vc, "image_size")) && json_is_integer(v))
		image = json_integer_value(v);
	if ((v = json_object_get(vc, "num_channels")) && json_is_integer(v))
		ch = json_integer_value(v);
	if (h <= 0 || inter <= 0 || layers <= 0 || h > INT_MAX_SANE || inter > INT_MAX_SANE ||
	    layers > 100000 || patch < 0 || patch > 100000 || image < 0 || image > 1000000 || ch < 0 ||
	    ch > 1000)
		return 0;
	double H = (double)h, I = (double)inter;
	double layer = 4 * (H * H + H) + 2 * H * I + I + H + 4 * H;
	double p = (double)layers * layer + 2 * H;
	if (patch > 0) {
		p += (double)ch * (double)patch * (double)patch * H + H;
		if (image > 0) {
			long long per_side = image / patch; /* whole patches */
			double side = (double)per_side;
			p += side * side * H;
		}
	}
	/* the projector into the language model: one matrix (Gemma 3 adds a norm) */
	p += H * text_hidden;
	if (strncmp(type, "gemma3", 6) == 0)
		p += H;
	return p;
}

static void estimate(struct sp_model_shape *m, unsigned fl, const int *dense_only, int n_dense_only,
		     int sparse_step)
{
	double h = m->hidden;
	double qo = (double)m->n_heads * m->head_dim, kvo = (double)m->n_kv_heads * m->head_dim;
	double linear = 0, attn_lin = h * qo + 2 * h * kvo + qo * h;
	double attn = attn_lin;
	if (fl & F_QKV_BIAS)
		attn += qo + 2 * kvo;
	if (fl & F_O_BIAS)
		attn += h;
	if (fl & F_QK_NORM)
		attn += 2.0 * m->head_dim;
	if (fl & F_SINKS)
		attn += m->n_heads;
	double norm = (fl & F_LN_BIAS) ? 2 * h : h;
	double norms = ((fl & F_NORM4) ? 4 : (fl & F_NORM1) ? 1 : 2) * norm;
	m->one_norm = (fl & F_NORM1) != 0;

	double total = 0, active = 0, experts = 0;
	int moe_layers = 0;
	for (int i = 0; i < m->n_layers; i++) {
		double lin = attn_lin;
		double layer = attn + norms, layer_active;
		if (m->n_experts > 0 && moe_layer(i, sparse_step, dense_only, n_dense_only)) {
			double E = m->n_experts, k = m->experts_per_tok;
			double w = m->moe_intermediate > 0 ? m->moe_intermediate : m->intermediate;
			double one = mlp_params(fl, h, w, NULL);
			double router = h * E + ((fl & F_ROUTER_BIAS) ? E : 0);
			double shared = 0;
			if (m->shared_intermediate > 0)
				shared = mlp_params(fl, h, m->shared_intermediate, &lin) +
					 ((fl & F_SHARED_GATE) ? h : 0);
			lin += E * ((fl & F_GATED) ? 3 : 2) * h * w + h * E;
			layer += E * one + router + shared;
			layer_active = attn + norms + k * one + router + shared;
			experts += E * one;
			moe_layers++;
		} else {
			double mlp = mlp_params(fl, h, m->intermediate, &lin);
			layer += mlp;
			layer_active = layer;
		}
		total += layer;
		active += layer_active;
		linear += lin;
	}
	double embed = (double)m->vocab * h;
	if (!m->tied_embeddings)
		embed += (double)m->vocab * h;
	if (fl & F_LEARNED_POS)
		embed += (double)m->max_seq * h;
	if ((fl & F_HEAD_BIAS) && !m->tied_embeddings)
		embed += m->vocab;
	total += embed + norm;
	active += embed + norm;
	m->embed_params = embed;
	m->linear_params = linear;
	m->params = total + m->vision_params;
	m->params_active = active + m->vision_params;
	m->expert_params = experts;
	m->n_moe_layers = moe_layers;
	m->params_from_tensors = false;
}

/* ---- quantization --------------------------------------------------------------- */

static void read_quant(json_t *q, struct sp_model_shape *m)
{
	if (!json_is_object(q))
		return;
	m->prequantized = true;
	json_t *meth = json_object_get(q, "quant_method");
	if (json_is_string(meth))
		copy_str(m->quant_method, sizeof m->quant_method, meth);
	else
		snprintf(m->quant_method, sizeof m->quant_method, "unknown");
	json_t *bits = json_object_get(q, "bits");
	if (!json_is_integer(bits))
		bits = json_object_get(q, "w_bit");
	if (json_is_integer(bits) && json_integer_value(bits) > 0 && json_integer_value(bits) <= 16)
		m->quant_bits = (int)json_integer_value(bits);
	else if (json_is_true(json_object_get(q, "load_in_4bit")) || json_is_true(json_object_get(q, "_load_in_4bit")) ||
		 strstr(m->quant_method, "fp4")) /* mxfp4, nvfp4 */
		m->quant_bits = 4;
	else if (json_is_true(json_object_get(q, "load_in_8bit")) || json_is_true(json_object_get(q, "_load_in_8bit")) ||
		 strstr(m->quant_method, "fp8"))
		m->quant_bits = 8;
}

/* ---- the reader ------------------------------------------------------------------- */

/* Where the language model's keys live and what it is: multimodal configs
 * keep its numbers in text_config (Gemma 3, LLaVA, Mistral 3), the vision
 * tower in vision_config. Sets r->obj and r->type, m->arch; the family, or
 * NULL after an error. */
static const struct family *read_type(struct reader *r, json_t *root, struct sp_model_shape *m, const char **outer_type)
{
	json_t *mt = json_object_get(root, "model_type");
	*outer_type = json_is_string(mt) ? json_string_value(mt) : "";
	json_t *tc = json_object_get(root, "text_config");
	if (json_is_object(tc) && !json_object_get(root, "num_hidden_layers") && !json_object_get(root, "n_layer"))
		r->obj = tc;
	else if (tc && !json_is_object(tc) && !json_is_null(tc)) {
		sp_model_err(r->err, r->errlen, r->label, "text_config is not an object");
		return NULL;
	}
	json_t *imt = json_object_get(r->obj, "model_type");
	r->type = json_is_string(imt) ? json_string_value(imt) : *outer_type;
	if (r->obj == tc && !json_is_string(imt) && strcmp(*outer_type, "gemma3") == 0)
		r->type = "gemma3_text";
	snprintf(m->arch, sizeof m->arch, "%s", **outer_type ? *outer_type : r->type);
	sp_text_clean(m->arch);
	return family_of(r->type);
}

/* The sizes every architecture has: layers, width, heads, vocabulary, the
 * MLP's width. A config without a known model_type is read as GPT-2 (its
 * n_embd) or Llama, and m->assumed says which. */
static int read_dims(struct reader *r, const struct family *fam, unsigned *fl, struct sp_model_shape *m)
{
	if (need_int(r, NAMES("num_hidden_layers", "n_layer", "num_layers", "n_layers"), &m->n_layers, true) ||
	    need_int(r, NAMES("hidden_size", "n_embd", "d_model", "dim"), &m->hidden, true) ||
	    need_int(r, NAMES("num_attention_heads", "n_head", "num_heads", "n_heads"), &m->n_heads, true) ||
	    need_int(r, NAMES("vocab_size", "padded_vocab_size"), &m->vocab, true))
		return -1;
	if (m->n_layers > 100000)
		return sp_model_err(r->err, r->errlen, r->label, "num_hidden_layers = %d is out of range", m->n_layers);

	m->intermediate = 0;
	if (opt_int(r, NAMES("intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size"), &m->intermediate))
		return -1;
	bool gpt2_style = json_object_get(r->obj, "n_embd") != NULL;
	if (m->intermediate == 0) {
		if (gpt2_style || !(*fl & F_GATED))
			m->intermediate = 4 * m->hidden; /* GPT-2: n_inner null means 4h */
		else
			return sp_model_err(r->err, r->errlen, r->label, "missing intermediate_size");
	}
	if (gpt2_style && fam == &unknown_family)
		*fl = F_QKV_BIAS | F_O_BIAS | F_MLP_BIAS | F_LN_BIAS | F_LEARNED_POS;
	if (fam == &unknown_family) {
		char t[48];
		snprintf(t, sizeof t, "%s", *r->type ? r->type : "(none)");
		sp_text_clean(t);
		snprintf(m->assumed, sizeof m->assumed,
			 gpt2_style ? "model_type '%s' is not a known architecture: read as GPT-2 (plain 4h MLP, biases, LayerNorm, learned positions)"
				    : "model_type '%s' is not a known architecture: read as Llama (gated MLP, RMSNorm, no biases)",
			 t);
	}
	return 0;
}

/* Falcon: new_decoder_architecture (40B/180B) has num_kv_heads groups and
 * two norms per layer (ln_attn, ln_mlp); the original (7B) is multi-query
 * (multi_query, FalconConfig's default true) with one norm when attention
 * and MLP run in parallel */
static void read_falcon(const struct reader *r, unsigned *fl, struct sp_model_shape *m)
{
	int nda = get_bool(r->obj, "new_decoder_architecture");
	int mq = get_bool(r->obj, "multi_query");
	int par = get_bool(r->obj, "parallel_attn");
	if (nda == 1) {
		long long nl = 0;
		json_t *v = json_object_get(r->obj, "num_ln_in_parallel_attn");
		if (json_is_integer(v))
			nl = json_integer_value(v);
		if (nl == 1)
			*fl |= F_NORM1;
	} else {
		if (mq != 0)
			m->n_kv_heads = 1;
		if (par != 0)
			*fl |= F_NORM1;
	}
	if (get_bool(r->obj, "bias") == 1)
		*fl |= F_QKV_BIAS | F_O_BIAS | F_MLP_BIAS;
}

/* The attention's shape: key/value heads (grouped, multi-query), the head's
 * width, the context it was trained for. */
static int read_attention(struct reader *r, bool falcon, unsigned *fl, struct sp_model_shape *m)
{
	m->n_kv_heads = m->n_heads;
	if (opt_int(r, NAMES("num_key_value_heads", "num_kv_heads", "n_head_kv"), &m->n_kv_heads))
		return -1;
	if (falcon)
		read_falcon(r, fl, m);
	else if (json_is_true(json_object_get(r->obj, "multi_query")))
		m->n_kv_heads = 1;
	if (m->n_kv_heads == 0)
		m->n_kv_heads = m->n_heads;
	if (m->n_kv_heads <= 0 || m->n_heads % m->n_kv_heads != 0)
		return sp_model_err(r->err, r->errlen, r->label,
				    "num_attention_heads %d is not a multiple of num_key_value_heads %d", m->n_heads,
				    m->n_kv_heads);
	m->head_dim = 0;
	if (opt_int(r, NAMES("head_dim"), &m->head_dim))
		return -1;
	if (m->head_dim == 0) {
		if (m->hidden % m->n_heads != 0)
			return sp_model_err(r->err, r->errlen, r->label,
					    "hidden_size %d is not a multiple of num_attention_heads %d", m->hidden,
					    m->n_heads);
		m->head_dim = m->hidden / m->n_heads;
	}
	m->max_seq = 0;
	if (opt_int(r, NAMES("max_position_embeddings", "n_positions", "n_ctx", "seq_length",
			     "max_sequence_length"), &m->max_seq))
		return -1;
	return 0;
}

/* Tied embeddings and the explicit bias switches (Llama's attention_bias /
 * mlp_bias), which win over the family's. */
static void read_biases(const struct reader *r, json_t *root, const struct family *fam, unsigned *fl,
			struct sp_model_shape *m)
{
	int tie = get_bool(r->obj, "tie_word_embeddings");
	if (tie < 0 && r->obj != root)
		tie = get_bool(root, "tie_word_embeddings");
	m->tied_embeddings = tie >= 0 ? tie : fam->tie;

	int ab = get_bool(r->obj, "attention_bias");
	if (ab == 1)
		*fl |= F_QKV_BIAS | F_O_BIAS;
	else if (ab == 0 && fam != &unknown_family && !(fam->flags & F_LN_BIAS) && strcmp(r->type, "qwen2") != 0 &&
		 strcmp(r->type, "qwen2_moe") != 0)
		*fl &= ~(unsigned)(F_QKV_BIAS | F_O_BIAS);
	if (get_bool(r->obj, "mlp_bias") == 1)
		*fl |= F_MLP_BIAS;
}

/* the layers that keep a dense MLP in a mixture-of-experts model */
struct moe_layers {
	int sparse_step;     /* every sparse_step-th layer is MoE (decoder_sparse_step) */
	int dense_only[256]; /* mlp_only_layers */
	int n_dense_only;
};

/* Mixture of experts: how many, how many per token, their widths, which
 * layers have them. One expert is a dense MLP. */
static int read_moe(struct reader *r, struct sp_model_shape *m, struct moe_layers *ml)
{
	m->n_experts = 0;
	m->experts_per_tok = 0;
	m->moe_intermediate = 0;
	m->shared_intermediate = 0;
	if (opt_int(r, NAMES("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"),
		    &m->n_experts) ||
	    opt_int(r, NAMES("num_experts_per_tok", "experts_per_token", "num_experts_per_token", "moe_top_k"),
		    &m->experts_per_tok) ||
	    opt_int(r, NAMES("moe_intermediate_size"), &m->moe_intermediate) ||
	    opt_int(r, NAMES("shared_expert_intermediate_size"), &m->shared_intermediate))
		return -1;
	ml->sparse_step = 1;
	if (opt_int(r, NAMES("decoder_sparse_step"), &ml->sparse_step))
		return -1;
	ml->n_dense_only = 0;
	json_t *mol = json_object_get(r->obj, "mlp_only_layers");
	if (json_is_array(mol)) {
		size_t i;
		json_t *x;
		json_array_foreach(mol, i, x)
		{
			if (i >= sizeof ml->dense_only / sizeof ml->dense_only[0])
				break;
			if (json_is_integer(x))
				ml->dense_only[ml->n_dense_only++] = (int)json_integer_value(x);
		}
	}
	if (m->n_experts == 1)
		m->n_experts = 0; /* one expert is a dense MLP */
	if (m->n_experts > 0) {
		if (m->experts_per_tok == 0)
			return sp_model_err(r->err, r->errlen, r->label, "missing num_experts_per_tok for %d experts",
					    m->n_experts);
		if (m->experts_per_tok > m->n_experts)
			return sp_model_err(r->err, r->errlen, r->label, "num_experts_per_tok %d exceeds the %d experts",
					    m->experts_per_tok, m->n_experts);
	} else {
		m->experts_per_tok = 0;
	}
	return 0;
}

int sp_hfconfig_from_json(json_t *root, struct sp_model_shape *m, const char *label, char *err, size_t errlen)
{
	if (!json_is_object(root))
		return sp_model_err(err, errlen, label, "config is not a JSON object");
	struct reader r = { .obj = root, .outer = root, .label = label, .err = err, .errlen = errlen };
	const char *outer_type;
	const struct family *fam = read_type(&r, root, m, &outer_type);
	if (!fam)
		return -1;
	unsigned fl = fam->flags;
	bool falcon = (fam->type && strncmp(fam->type, "falcon", 6) == 0) || strncmp(r.type, "RefinedWeb", 10) == 0;
	m->assumed[0] = 0;

	struct moe_layers ml;
	if (read_dims(&r, fam, &fl, m) || read_attention(&r, falcon, &fl, m))
		return -1;
	read_biases(&r, root, fam, &fl, m);
	if (read_moe(&r, m, &ml))
		return -1;

	json_t *dt = json_object_get(root, "torch_dtype");
	if (!json_is_string(dt))
		dt = json_object_get(root, "dtype");
	if (!json_is_string(dt))
		dt = json_object_get(r.obj, "torch_dtype");
	copy_str(m->torch_dtype, sizeof m->torch_dtype, dt);

	json_t *q = json_object_get(root, "quantization_config");
	if (!q)
		q = json_object_get(r.obj, "quantization_config");
	read_quant(q, m);

	m->vision_params = 0;
	if (r.obj != root)
		m->vision_params = vision_params(json_object_get(root, "vision_config"), m->hidden, outer_type);

	/* every product below stays far inside a double's exact range */
	estimate(m, fl, ml.dense_only, ml.n_dense_only, ml.sparse_step);
	return 0;
}

int sp_hfconfig_parse(const char *buf, size_t len, const char *label, struct sp_model_shape *m,
		      char *err, size_t errlen)
{
	json_t *j = sp_model_json(buf, len, label, err, errlen);
	if (!j)
		return -1;
	int rc = sp_hfconfig_from_json(j, m, label, err, errlen);
	json_decref(j);
	return rc;
}

int sp_model_load_config(const char *path, struct sp_model_shape *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof *m);
	char *buf;
	size_t len;
	if (sp_model_slurp(path, SP_CONFIG_MAX_BYTES, &buf, &len, &m->bytes_read, err, errlen))
		return -1;
	m->files_read = 1;
	int rc = sp_hfconfig_parse(buf, len, path, m, err, errlen);
	free(buf);
	if (rc)
		return -1;
	m->source = SP_SRC_CONFIG;
	snprintf(m->path, sizeof m->path, "%s", path);
	if (!m->name[0]) {
		/* the folder holding config.json names the model */
		char dir[512];
		snprintf(dir, sizeof dir, "%s", path);
		char *s = strrchr(dir, '/');
		if (s) {
			*s = 0;
			snprintf(m->name, sizeof m->name, "%s", sp_model_basename(dir));
		} else {
			snprintf(m->name, sizeof m->name, "%s", path);
		}
	}
	return 0;
}
