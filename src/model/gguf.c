// SPDX-License-Identifier: MIT
/* GGUF reader: magic "GGUF", u32 version (2 or 3), u64 tensor_count,
 * u64 kv_count, the key/values (13 value types, arrays nest), the tensor
 * infos (name, dims, ggml type, offset); then, aligned, the data, which is
 * never read. Every count and length from the file is checked against the
 * bytes left in the file before anything is allocated or looped over. */
#include "model/gguf.h"
#include "util/text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
	const char *name;
	uint32_t blk, bytes;
} ggml_types[SP_GGML_NTYPES] = {
	[0] = { "F32", 1, 4 },         [1] = { "F16", 1, 2 },        [2] = { "Q4_0", 32, 18 },
	[3] = { "Q4_1", 32, 20 },      [6] = { "Q5_0", 32, 22 },     [7] = { "Q5_1", 32, 24 },
	[8] = { "Q8_0", 32, 34 },      [9] = { "Q8_1", 32, 36 },     [10] = { "Q2_K", 256, 84 },
	[11] = { "Q3_K", 256, 110 },   [12] = { "Q4_K", 256, 144 },  [13] = { "Q5_K", 256, 176 },
	[14] = { "Q6_K", 256, 210 },   [15] = { "Q8_K", 256, 292 },  [16] = { "IQ2_XXS", 256, 66 },
	[17] = { "IQ2_XS", 256, 74 },  [18] = { "IQ3_XXS", 256, 98 }, [19] = { "IQ1_S", 256, 50 },
	[20] = { "IQ4_NL", 32, 18 },   [21] = { "IQ3_S", 256, 110 }, [22] = { "IQ2_S", 256, 82 },
	[23] = { "IQ4_XS", 256, 136 }, [24] = { "I8", 1, 1 },        [25] = { "I16", 1, 2 },
	[26] = { "I32", 1, 4 },        [27] = { "I64", 1, 8 },       [28] = { "F64", 1, 8 },
	[29] = { "IQ1_M", 256, 56 },   [30] = { "BF16", 1, 2 },      [34] = { "TQ1_0", 256, 54 },
	[35] = { "TQ2_0", 256, 66 },   [39] = { "MXFP4", 32, 17 },
};

int sp_ggml_type(uint32_t type, const char **name, uint32_t *blk, uint32_t *bytes)
{
	if (type >= SP_GGML_NTYPES || !ggml_types[type].name)
		return 0;
	if (name)
		*name = ggml_types[type].name;
	if (blk)
		*blk = ggml_types[type].blk;
	if (bytes)
		*bytes = ggml_types[type].bytes;
	return 1;
}

const char *sp_gguf_ftype_name(int64_t ft)
{
	static const char *const names[] = {
		[0] = "F32",      [1] = "F16",      [2] = "Q4_0",     [3] = "Q4_1",    [7] = "Q8_0",
		[8] = "Q5_0",     [9] = "Q5_1",     [10] = "Q2_K",    [11] = "Q3_K_S", [12] = "Q3_K_M",
		[13] = "Q3_K_L",  [14] = "Q4_K_S",  [15] = "Q4_K_M",  [16] = "Q5_K_S", [17] = "Q5_K_M",
		[18] = "Q6_K",    [19] = "IQ2_XXS", [20] = "IQ2_XS",  [21] = "Q2_K_S", [22] = "IQ3_XS",
		[23] = "IQ3_XXS", [24] = "IQ1_S",   [25] = "IQ4_NL",  [26] = "IQ3_S",  [27] = "IQ3_M",
		[28] = "IQ2_S",   [29] = "IQ2_M",   [30] = "IQ4_XS",  [31] = "IQ1_M",  [32] = "BF16",
		[36] = "TQ1_0",   [37] = "TQ2_0",   [38] = "MXFP4_MOE",
	};
	if (ft < 0 || (size_t)ft >= sizeof names / sizeof names[0])
		return NULL;
	return names[ft];
}

/* ---- a bounded buffered reader over a buffer or a file --------------------- */

#define RBUF 65536

struct rd {
	const unsigned char *mem; /* whole file in memory, or NULL */
	int fd;
	uint64_t size;            /* file size */
	uint64_t off;             /* logical position */
	unsigned char *buf;       /* file mode: a window [buf_off, buf_off + buf_len) */
	uint64_t buf_off;
	size_t buf_len;
	uint64_t bytes_read;
	uint64_t elems;           /* array elements met so far, all arrays */
	const char *label;
	char *err;
	size_t errlen;
};

static uint64_t left(const struct rd *r)
{
	return r->off <= r->size ? r->size - r->off : 0;
}

static int rd_err(struct rd *r, const char *what)
{
	return sp_model_err(r->err, r->errlen, r->label, "truncated at byte %llu (reading %s)",
			    (unsigned long long)r->off, what);
}

static int rd_bytes(struct rd *r, void *dst, size_t n, const char *what)
{
	if (n > left(r))
		return rd_err(r, what);
	if (r->mem) {
		memcpy(dst, r->mem + r->off, n);
		r->off += n;
		return 0;
	}
	unsigned char *d = dst;
	while (n > 0) {
		if (r->off >= r->buf_off && r->off < r->buf_off + r->buf_len) {
			size_t at = (size_t)(r->off - r->buf_off), k = r->buf_len - at;
			if (k > n)
				k = n;
			memcpy(d, r->buf + at, k);
			d += k;
			n -= k;
			r->off += k;
			continue;
		}
		ssize_t got;
		do
			got = pread(r->fd, r->buf, RBUF, (off_t)r->off);
		while (got < 0 && errno == EINTR);
		if (got <= 0) {
			if (got < 0)
				return sp_model_err(r->err, r->errlen, r->label, "%s", strerror(errno));
			return rd_err(r, what);
		}
		r->bytes_read += (uint64_t)got;
		r->buf_off = r->off;
		r->buf_len = (size_t)got;
	}
	return 0;
}

/* skip n bytes: a jump, nothing read unless the window already holds them */
static int rd_skip(struct rd *r, uint64_t n, const char *what)
{
	if (n > left(r))
		return rd_err(r, what);
	r->off += n;
	return 0;
}

static int rd_u32(struct rd *r, uint32_t *v, const char *what)
{
	unsigned char b[4] = { 0 };
	if (rd_bytes(r, b, 4, what))
		return -1;
	*v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	return 0;
}

static int rd_u64(struct rd *r, uint64_t *v, const char *what)
{
	unsigned char b[8] = { 0 };
	if (rd_bytes(r, b, 8, what))
		return -1;
	uint64_t x = 0;
	for (int i = 7; i >= 0; i--)
		x = x << 8 | b[i];
	*v = x;
	return 0;
}

#define MAX_KEY 65535        /* llama.cpp's limit on key lengths */
#define MAX_KEEP 1024        /* the longest string value we keep */
#define MAX_DEPTH 4          /* nested arrays */
#define MAX_DIMS 4           /* GGML_MAX_DIMS */
/* What a header holds at most, whatever the file's size: a vocabulary of a
 * few hundred thousand tokens (its strings, scores, types and merges) and a
 * few thousand tensors. A count past these is refused at once instead of
 * read through (a sparse file of zeros parses as endless empty strings). */
#define MAX_ELEMS (1ull << 24)   /* array elements, all arrays together */
#define MAX_TENSORS (1ull << 20) /* tensor infos */

/* a string: u64 length, bytes. Up to cap-1 bytes are kept (NUL-terminated),
 * the rest skipped; the length is checked against the file first. */
static int rd_str(struct rd *r, char *out, size_t cap, uint64_t maxlen, uint64_t *len_out, const char *what)
{
	uint64_t n;
	if (rd_u64(r, &n, what))
		return -1;
	if (n > left(r))
		return sp_model_err(r->err, r->errlen, r->label, "%s length %llu exceeds the %llu bytes left in the file",
				    what, (unsigned long long)n, (unsigned long long)left(r));
	if (n > maxlen)
		return sp_model_err(r->err, r->errlen, r->label, "%s length %llu exceeds the limit of %llu", what,
				    (unsigned long long)n, (unsigned long long)maxlen);
	if (len_out)
		*len_out = n;
	size_t keep = 0;
	if (out && cap > 0) {
		keep = n < cap - 1 ? (size_t)n : cap - 1;
		if (rd_bytes(r, out, keep, what))
			return -1;
		out[keep] = 0;
	}
	return rd_skip(r, n - keep, what);
}

/* value types */
enum { GT_U8, GT_I8, GT_U16, GT_I16, GT_U32, GT_I32, GT_F32, GT_BOOL, GT_STR, GT_ARR, GT_U64, GT_I64, GT_F64, GT_N };
static const unsigned gt_size[GT_N] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };

/* an integer value of any integer type, as int64 (1), or 0 when not an integer */
static int int_value(struct rd *r, uint32_t t, int64_t *v, int *rc)
{
	unsigned char b[8] = { 0 };
	*rc = 0;
	if (t >= GT_N || t == GT_STR || t == GT_ARR || t == GT_F32 || t == GT_F64)
		return 0;
	if (rd_bytes(r, b, gt_size[t], "a value")) {
		*rc = -1;
		return 0;
	}
	uint64_t u = 0;
	for (int i = (int)gt_size[t] - 1; i >= 0; i--)
		u = u << 8 | b[i];
	switch (t) {
	case GT_I8: *v = (int64_t)(u & 0x7f) - (int64_t)(u & 0x80); break; /* sign-extended */
	case GT_I16: *v = (int16_t)u; break;
	case GT_I32: *v = (int32_t)u; break;
	case GT_I64: *v = (int64_t)u; break;
	case GT_U64: *v = u > INT64_MAX ? INT64_MAX : (int64_t)u; break;
	default: *v = (int64_t)u; break;
	}
	return 1;
}

/* skip a value of type t (arrays recursively, bounded) */
static int skip_value(struct rd *r, uint32_t t, int depth, uint64_t *count_out)
{
	if (t >= GT_N)
		return sp_model_err(r->err, r->errlen, r->label, "unknown value type %u at byte %llu", t,
				    (unsigned long long)r->off);
	if (t == GT_STR)
		return rd_str(r, NULL, 0, UINT64_MAX, NULL, "a string");
	if (t != GT_ARR)
		return rd_skip(r, gt_size[t], "a value");
	if (depth >= MAX_DEPTH)
		return sp_model_err(r->err, r->errlen, r->label, "arrays nested deeper than %d", MAX_DEPTH);
	uint32_t et;
	uint64_t n;
	if (rd_u32(r, &et, "an array type") || rd_u64(r, &n, "an array count"))
		return -1;
	if (et >= GT_N)
		return sp_model_err(r->err, r->errlen, r->label, "unknown array element type %u", et);
	/* every element takes at least this many bytes: the count must fit */
	uint64_t min = et == GT_STR ? 8 : et == GT_ARR ? 12 : gt_size[et];
	if (n > left(r) / min)
		return sp_model_err(r->err, r->errlen, r->label, "array of %llu elements exceeds the %llu bytes left in the file",
				    (unsigned long long)n, (unsigned long long)left(r));
	if (n > MAX_ELEMS - r->elems)
		return sp_model_err(r->err, r->errlen, r->label,
				    "array of %llu elements: more than a GGUF header holds (%llu elements in all)",
				    (unsigned long long)n, MAX_ELEMS);
	r->elems += n;
	if (count_out)
		*count_out = n;
	if (et != GT_STR && et != GT_ARR)
		return rd_skip(r, n * min, "an array");
	for (uint64_t i = 0; i < n; i++)
		if (skip_value(r, et, depth + 1, NULL))
			return -1;
	return 0;
}

/* keys we keep: [arch].<suffix>; the arch prefix is checked at the end */
static const struct {
	const char *suffix;
	size_t off;
} arch_keys[] = {
	{ ".block_count", offsetof(struct sp_gguf_info, block_count) },
	{ ".embedding_length", offsetof(struct sp_gguf_info, embedding_length) },
	{ ".attention.head_count", offsetof(struct sp_gguf_info, head_count) },
	{ ".attention.head_count_kv", offsetof(struct sp_gguf_info, head_count_kv) },
	{ ".feed_forward_length", offsetof(struct sp_gguf_info, feed_forward_length) },
	{ ".context_length", offsetof(struct sp_gguf_info, context_length) },
	{ ".expert_count", offsetof(struct sp_gguf_info, expert_count) },
	{ ".expert_used_count", offsetof(struct sp_gguf_info, expert_used_count) },
	{ ".expert_feed_forward_length", offsetof(struct sp_gguf_info, expert_ff_length) },
	{ ".attention.key_length", offsetof(struct sp_gguf_info, key_length) },
	{ ".vocab_size", offsetof(struct sp_gguf_info, vocab) },
};
#define N_ARCH_KEYS (sizeof arch_keys / sizeof arch_keys[0])

static int tensor_class_embed(const char *n)
{
	return strncmp(n, "token_embd.", 11) == 0 || strcmp(n, "output.weight") == 0 ||
	       strncmp(n, "position_embd.", 14) == 0;
}

/* the magic, the version, the two counts (each bounded by what the rest of
 * the file can hold) */
static int read_header(struct rd *r, struct sp_gguf_info *g)
{
	unsigned char magic[4];
	if (rd_bytes(r, magic, 4, "the magic"))
		return -1;
	if (memcmp(magic, "GGUF", 4) != 0)
		return sp_model_err(r->err, r->errlen, r->label, "not a GGUF file (bad magic)");
	if (rd_u32(r, &g->version, "the version"))
		return -1;
	if (g->version != 2 && g->version != 3)
		return sp_model_err(r->err, r->errlen, r->label, "unsupported GGUF version %u (2 and 3 are known)",
				    g->version);
	if (rd_u64(r, &g->tensor_count, "the tensor count") || rd_u64(r, &g->kv_count, "the key/value count"))
		return -1;
	/* a tensor info takes >= 8+1+4+8+4+8 bytes, a key/value >= 8+1+4+1 */
	if (g->tensor_count > left(r) / 33)
		return sp_model_err(r->err, r->errlen, r->label, "tensor count %llu is more than the file can hold",
				    (unsigned long long)g->tensor_count);
	if (g->tensor_count > MAX_TENSORS)
		return sp_model_err(r->err, r->errlen, r->label, "tensor count %llu is more than a GGUF file holds (%llu)",
				    (unsigned long long)g->tensor_count, MAX_TENSORS);
	if (g->kv_count > left(r) / 14)
		return sp_model_err(r->err, r->errlen, r->label, "key/value count %llu is more than the file can hold",
				    (unsigned long long)g->kv_count);
	return 0;
}

/* An integer value: the alignment, the file type, or one of the
 * architecture's numbers ("llama.block_count"); prefix[i] remembers which
 * architecture's key set arch_keys[i]. */
static int int_kv(struct rd *r, struct sp_gguf_info *g, const char *key, int64_t v, char prefix[][64])
{
	if (strcmp(key, "general.alignment") == 0) {
		if (v <= 0 || v > 1 << 20 || (v & (v - 1)) != 0)
			return sp_model_err(r->err, r->errlen, r->label, "general.alignment %lld is not a power of two",
					    (long long)v);
		g->alignment = (uint32_t)v;
		return 0;
	}
	if (strcmp(key, "general.file_type") == 0) {
		g->file_type = v;
		return 0;
	}
	size_t kl = strlen(key);
	for (size_t i = 0; i < N_ARCH_KEYS; i++) {
		size_t sl = strlen(arch_keys[i].suffix);
		/* an architecture name has no '.': "mllama.vision.block_count"
		 * is the vision tower's; and once general.architecture
		 * is known, another prefix never replaces its value */
		if (kl > sl && kl - sl < sizeof prefix[i] && strcmp(key + kl - sl, arch_keys[i].suffix) == 0 &&
		    !memchr(key, '.', kl - sl) &&
		    (!g->arch[0] || (strlen(g->arch) == kl - sl && memcmp(key, g->arch, kl - sl) == 0))) {
			*(int64_t *)((char *)g + arch_keys[i].off) = v;
			snprintf(prefix[i], sizeof prefix[i], "%.*s", (int)(kl - sl), key);
		}
	}
	return 0;
}

/* The key/value section: the architecture, the name, the vocabulary (the
 * token list's length, when no vocab_size key says it), the numbers of
 * arch_keys; every other value skipped. */
static int read_kvs(struct rd *r, struct sp_gguf_info *g)
{
	char prefix[N_ARCH_KEYS][64] = { { 0 } };
	int64_t token_count = -1;
	char key[256];
	for (uint64_t k = 0; k < g->kv_count; k++) {
		uint64_t klen = 0;
		if (rd_str(r, key, sizeof key, MAX_KEY, &klen, "a key"))
			return -1;
		uint32_t t;
		if (rd_u32(r, &t, "a value type"))
			return -1;
		if (t >= GT_N)
			return sp_model_err(r->err, r->errlen, r->label, "key '%.80s' has an unknown value type %u", key, t);
		int long_key = klen >= sizeof key;
		if (!long_key && t == GT_STR && strcmp(key, "general.architecture") == 0) {
			if (rd_str(r, g->arch, sizeof g->arch, MAX_KEEP, NULL, "general.architecture"))
				return -1;
			continue;
		}
		if (!long_key && t == GT_STR && strcmp(key, "general.name") == 0) {
			if (rd_str(r, g->name, sizeof g->name, UINT64_MAX, NULL, "general.name"))
				return -1;
			continue;
		}
		if (!long_key && t == GT_ARR && strcmp(key, "tokenizer.ggml.tokens") == 0) {
			uint64_t n = 0;
			if (skip_value(r, t, 0, &n))
				return -1;
			token_count = n > INT32_MAX ? INT32_MAX : (int64_t)n;
			continue;
		}
		int64_t v = 0;
		int rc = 0;
		if (!long_key && int_value(r, t, &v, &rc)) {
			if (int_kv(r, g, key, v, prefix))
				return -1;
			continue;
		}
		if (rc)
			return -1;
		if (skip_value(r, t, 0, NULL))
			return -1;
	}
	/* the numbers count only under the file's own architecture */
	for (size_t i = 0; i < N_ARCH_KEYS; i++)
		if (prefix[i][0] && strcmp(prefix[i], g->arch) != 0)
			*(int64_t *)((char *)g + arch_keys[i].off) = -1;
	if (g->vocab < 0)
		g->vocab = token_count;
	return 0;
}

/* One tensor's info: its shape and type give its size, counted by type and
 * by class (embedding, linear, expert); data_offset keeps, for now, the end
 * of the furthest tensor. */
static int read_tensor(struct rd *r, struct sp_gguf_info *g)
{
	char name[256];
	uint64_t nlen;
	if (rd_str(r, name, sizeof name, MAX_KEY, &nlen, "a tensor name"))
		return -1;
	uint32_t nd;
	if (rd_u32(r, &nd, "a tensor's dimensions"))
		return -1;
	if (nd == 0 || nd > MAX_DIMS)
		return sp_model_err(r->err, r->errlen, r->label, "tensor '%.80s' has %u dimensions (1 to %d allowed)",
				    name, nd, MAX_DIMS);
	uint64_t dims[MAX_DIMS], elems = 1;
	for (uint32_t d = 0; d < nd; d++) {
		if (rd_u64(r, &dims[d], "a tensor dimension"))
			return -1;
		if (dims[d] > INT64_MAX || __builtin_mul_overflow(elems, dims[d], &elems) || elems > INT64_MAX)
			return sp_model_err(r->err, r->errlen, r->label, "tensor '%.80s': shape overflows", name);
	}
	uint32_t type;
	uint64_t off;
	if (rd_u32(r, &type, "a tensor type") || rd_u64(r, &off, "a tensor offset"))
		return -1;
	uint32_t blk, bb;
	const char *tn;
	if (!sp_ggml_type(type, &tn, &blk, &bb))
		return sp_model_err(r->err, r->errlen, r->label, "tensor '%.80s' has an unknown ggml type %u", name, type);
	if (dims[0] % blk != 0)
		return sp_model_err(r->err, r->errlen, r->label, "tensor '%.80s': row of %llu is not a multiple of %s's block of %u",
				    name, (unsigned long long)dims[0], tn, blk);
	uint64_t size;
	if (__builtin_mul_overflow(elems / blk, (uint64_t)bb, &size))
		return sp_model_err(r->err, r->errlen, r->label, "tensor '%.80s': size overflows", name);
	if (off % g->alignment != 0)
		return sp_model_err(r->err, r->errlen, r->label, "tensor '%.80s': offset %llu is not aligned to %u",
				    name, (unsigned long long)off, g->alignment);
	uint64_t end;
	if (__builtin_add_overflow(off, size, &end))
		return sp_model_err(r->err, r->errlen, r->label, "tensor '%.80s': offset overflows", name);
	g->bytes_by_type[type] += size;
	g->elems_by_type[type] += elems;
	g->data_bytes += size;
	g->params += (double)elems;
	if (blk > 1)
		g->quantized = true;
	if (strcmp(name, "output.weight") == 0)
		g->has_output = true;
	if (tensor_class_embed(name))
		g->embed_params += (double)elems;
	else if (nd >= 2)
		g->linear_params += (double)elems;
	if (strstr(name, "_exps.") || strstr(name, "_exps_"))
		g->expert_params += (double)elems;
	/* the data must lie inside the file; checked once the data start is known */
	if (end > g->data_offset)
		g->data_offset = end;
	return 0;
}

static int parse(struct rd *r, struct sp_gguf_info *g)
{
	memset(g, 0, sizeof *g);
	g->alignment = 32;
	g->file_type = -1;
	for (size_t i = 0; i < N_ARCH_KEYS; i++)
		*(int64_t *)((char *)g + arch_keys[i].off) = -1;
	if (read_header(r, g) || read_kvs(r, g))
		return -1;
	for (uint64_t i = 0; i < g->tensor_count; i++)
		if (read_tensor(r, g))
			return -1;
	/* the data start after the tensor infos, aligned */
	uint64_t data_end = g->data_offset;
	uint64_t start = r->off;
	uint64_t pad = (g->alignment - start % g->alignment) % g->alignment;
	g->data_offset = start + pad;
	if (data_end > 0 && (data_end > r->size || g->data_offset > r->size - data_end))
		return sp_model_err(r->err, r->errlen, r->label,
				    "tensor data ends at byte %llu, past the end of the file (%llu bytes)",
				    (unsigned long long)g->data_offset + data_end, (unsigned long long)r->size);
	g->bytes_read = r->mem ? r->off : r->bytes_read;
	return 0;
}

int sp_gguf_parse(const unsigned char *buf, size_t len, struct sp_gguf_info *g, const char *label, char *err,
		  size_t errlen)
{
	struct rd r = { .mem = buf, .fd = -1, .size = len, .label = label, .err = err, .errlen = errlen };
	return parse(&r, g);
}

int sp_gguf_read(const char *path, struct sp_gguf_info *g, char *err, size_t errlen)
{
	memset(g, 0, sizeof *g);
	uint64_t size;
	int fd = sp_model_open(path, &size, err, errlen);
	if (fd < 0)
		return -1;
	struct rd r = { .fd = fd, .size = size, .label = path, .err = err, .errlen = errlen };
	r.buf = malloc(RBUF);
	if (!r.buf) {
		close(fd);
		return sp_model_err(err, errlen, path, "out of memory");
	}
	int rc = parse(&r, g);
	g->bytes_read = r.bytes_read;
	free(r.buf);
	close(fd);
	return rc;
}

static int need(int64_t v, const struct sp_gguf_info *g, const char *key, const char *label, char *err, size_t errlen)
{
	if (v > 0 && v <= 100000000)
		return 0;
	if (v < 0)
		return sp_model_err(err, errlen, label, "missing %s.%s", g->arch, key);
	return sp_model_err(err, errlen, label, "%s.%s = %lld is out of range", g->arch, key, (long long)v);
}

int sp_gguf_shape(const struct sp_gguf_info *g, struct sp_model_shape *m, const char *label, char *err,
		  size_t errlen)
{
	if (!g->arch[0])
		return sp_model_err(err, errlen, label, "missing general.architecture");
	if (need(g->block_count, g, "block_count", label, err, errlen) ||
	    need(g->embedding_length, g, "embedding_length", label, err, errlen) ||
	    need(g->head_count, g, "attention.head_count", label, err, errlen))
		return -1;
	snprintf(m->arch, sizeof m->arch, "%s", g->arch);
	sp_text_clean(m->arch);
	m->n_layers = (int)g->block_count;
	m->hidden = (int)g->embedding_length;
	m->n_heads = (int)g->head_count;
	m->n_kv_heads = g->head_count_kv > 0 && g->head_count_kv <= g->head_count ? (int)g->head_count_kv : m->n_heads;
	m->head_dim = g->key_length > 0 && g->key_length <= 100000 ? (int)g->key_length : m->hidden / m->n_heads;
	m->intermediate = g->feed_forward_length > 0 && g->feed_forward_length <= 100000000 ? (int)g->feed_forward_length : 0;
	m->max_seq = g->context_length > 0 && g->context_length <= 100000000 ? (int)g->context_length : 0;
	m->vocab = g->vocab > 0 && g->vocab <= 100000000 ? (int)g->vocab : 0;
	m->tied_embeddings = !g->has_output;
	if (g->expert_count > 1 && g->expert_count <= 100000) {
		m->n_experts = (int)g->expert_count;
		m->experts_per_tok = g->expert_used_count > 0 && g->expert_used_count <= g->expert_count
					     ? (int)g->expert_used_count
					     : 0;
		m->moe_intermediate = g->expert_ff_length > 0 && g->expert_ff_length <= 100000000 ? (int)g->expert_ff_length : 0;
	}
	m->have_tensors = true;
	m->tensor_count = g->tensor_count;
	for (uint32_t t = 0; t < SP_GGML_NTYPES; t++) {
		if (!g->bytes_by_type[t] && !g->elems_by_type[t])
			continue;
		enum sp_dtype d;
		switch (t) {
		case 0: d = SP_DT_F32; break;
		case 1: d = SP_DT_F16; break;
		case 30: d = SP_DT_BF16; break;
		case 24: d = SP_DT_I8; break;
		case 25: d = SP_DT_I16; break;
		case 26: d = SP_DT_I32; break;
		case 27: d = SP_DT_I64; break;
		case 28: d = SP_DT_F64; break;
		default: d = SP_DT_GGML_QUANT; break;
		}
		m->bytes_by_dtype[d] += g->bytes_by_type[t];
		m->elems_by_dtype[d] += g->elems_by_type[t];
	}
	m->weight_bytes = g->data_bytes;
	m->params = g->params;
	m->params_from_tensors = true;
	m->embed_params = g->embed_params;
	m->linear_params = g->linear_params;
	m->expert_params = g->expert_params;
	m->params_active = m->params;
	if (m->n_experts > 0 && m->experts_per_tok > 0)
		m->params_active -= m->expert_params * (1.0 - (double)m->experts_per_tok / m->n_experts);
	if (m->n_experts > 0)
		m->n_moe_layers = m->n_layers;
	if (g->quantized) {
		m->prequantized = true;
		const char *fn = sp_gguf_ftype_name(g->file_type);
		snprintf(m->quant_method, sizeof m->quant_method, "gguf %s", fn ? fn : "quantized");
		if (m->params > 0)
			m->quant_bits = (int)(8.0 * (double)m->weight_bytes / m->params + 0.5);
	}
	return 0;
}

/* "NAME-00001-of-00003.gguf" (llama.cpp's gguf-split): the length of NAME and the count */
static int split_parts(const char *path, size_t *stem, int *count)
{
	size_t n = strlen(path);
	const size_t tail = sizeof "-00001-of-00003.gguf" - 1;
	if (n < tail)
		return 0;
	const char *t = path + n - tail;
	int a, b, used = 0;
	/* widths bound the numbers, %n checks the whole tail was the pattern */
	if (sscanf(t, "-%5d-of-%5d.gguf%n", &a, &b, &used) != 2 || // NOLINT(cert-err34-c)
	    (size_t)used != tail || b < 1 || a < 1 || a > b)
		return 0;
	*stem = (size_t)(t - path);
	*count = b;
	return 1;
}

static void add_part(struct sp_gguf_info *g, const struct sp_gguf_info *p)
{
	g->tensor_count += p->tensor_count;
	for (int t = 0; t < SP_GGML_NTYPES; t++) {
		g->bytes_by_type[t] += p->bytes_by_type[t];
		g->elems_by_type[t] += p->elems_by_type[t];
	}
	g->data_bytes += p->data_bytes;
	g->params += p->params;
	g->embed_params += p->embed_params;
	g->linear_params += p->linear_params;
	g->expert_params += p->expert_params;
	g->has_output |= p->has_output;
	g->quantized |= p->quantized;
	g->bytes_read += p->bytes_read;
}

int sp_model_load_gguf(const char *path, struct sp_model_shape *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof *m);
	struct sp_gguf_info g;
	size_t stem;
	int count = 1;
	char part[4096];
	const char *first = path;
	/* a split model: the metadata is in part 1, the tensors in every part */
	if (split_parts(path, &stem, &count) && count > 1 && stem < sizeof part - 32) {
		snprintf(part, sizeof part, "%.*s-%05d-of-%05d.gguf", (int)stem, path, 1, count);
		first = part;
	} else {
		count = 1;
	}
	int rc = sp_gguf_read(first, &g, err, errlen);
	m->bytes_read = g.bytes_read;
	m->files_read = 1;
	if (rc)
		return -1;
	for (int i = 2; i <= count; i++) {
		struct sp_gguf_info p;
		snprintf(part, sizeof part, "%.*s-%05d-of-%05d.gguf", (int)stem, path, i, count);
		rc = sp_gguf_read(part, &p, err, errlen);
		m->bytes_read += p.bytes_read;
		m->files_read++;
		if (rc)
			return -1;
		add_part(&g, &p);
	}
	if (sp_gguf_shape(&g, m, path, err, errlen))
		return -1;
	m->bytes_read = g.bytes_read;
	m->source = SP_SRC_GGUF;
	snprintf(m->path, sizeof m->path, "%s", path);
	if (g.name[0])
		snprintf(m->name, sizeof m->name, "%s", g.name);
	else
		snprintf(m->name, sizeof m->name, "%s", sp_model_basename(path));
	sp_text_clean(m->name);
	return 0;
}
