// SPDX-License-Identifier: MIT
/* More facts from a failed job's log (facts.h): a line at a time, bounded. */
#include "ladder/facts.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *find(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle));
}

static void copy_text(char *dst, size_t cap, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		dst[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	dst[o] = 0;
}

/* a plain decimal at p (no sign, no exponent); 0 and *used 0 when none */
static double decimal_at(const char *p, const char *end, size_t *used)
{
	char buf[32];
	size_t k = 0;
	bool dot = false;
	while (p + k < end && k + 1 < sizeof buf && (isdigit((unsigned char)p[k]) || (p[k] == '.' && !dot))) {
		dot |= p[k] == '.';
		buf[k] = p[k];
		k++;
	}
	buf[k] = 0;
	*used = k && isdigit((unsigned char)buf[0]) ? k : 0;
	return *used ? strtod(buf, NULL) : 0;
}

/* the memory-share flags a server names, and how the ladder spells each */
static const struct {
	const char *as_printed, *flag;
} share_flags[] = {
	{ "mem-fraction-static", "--mem-fraction-static" },
	{ "mem_fraction_static", "--mem-fraction-static" },
	{ "gpu-memory-utilization", "--gpu-memory-utilization" },
	{ "gpu_memory_utilization", "--gpu-memory-utilization" },
	{ "GPU memory utilization", "--gpu-memory-utilization" },
	{ "cuda-memory-fraction", "--cuda-memory-fraction" },
	{ "cuda_memory_fraction", "--cuda-memory-fraction" },
};

static const char *const down_words[] = { "smaller", "decreas", "Decreas", "lower", "Lower", "reduc", "Reduc" };
static const char *const up_words[] = { "increas", "Increas", "larger", "higher", "raise", "Raise" };

/* the distance from the flag (at [a, b)) to the nearest of words in the
 * window around it; SIZE_MAX when none */
static size_t nearest(const char *s, size_t n, size_t a, size_t b, const char *const *words, size_t nw)
{
	const size_t before = 40, after = 32;
	size_t lo = a > before ? a - before : 0, hi = b + after < n ? b + after : n, best = (size_t)-1;
	for (size_t w = 0; w < nw; w++) {
		size_t m = strlen(words[w]);
		for (const char *q = s + lo; (q = memmem(q, (size_t)(s + hi - q), words[w], m)); q++) {
			size_t at = (size_t)(q - s), d, e = at + m;
			while (e < a && isalpha((unsigned char)s[e]))
				e++; /* "increasing `flag`": from the word's end */
			if (e <= a)
				d = a - e;
			else if (at >= b)
				d = at - b;
			else
				continue;
			if (d < best)
				best = d;
		}
	}
	return best;
}

static void share_line(struct sp_log_facts *f, const char *s, size_t n, uint64_t lineno)
{
	const char *end = s + n;
	for (size_t i = 0; i < sizeof share_flags / sizeof share_flags[0]; i++) {
		const char *k = find(s, n, share_flags[i].as_printed);
		if (!k)
			continue;
		size_t a = (size_t)(k - s), b = a + strlen(share_flags[i].as_printed);
		/* the value it ran with: "mem_fraction_static=0.88", "'gpu_memory_utilization': 0.9",
		 * "--gpu-memory-utilization 0.9", "utilization (0.9, 107.73 GiB)" */
		const char *v = s + b;
		while (v < end && (*v == '=' || *v == ':' || *v == ' ' || *v == '\'' || *v == '"' || *v == '(' || *v == '`'))
			v++;
		size_t used;
		double x = decimal_at(v, end, &used);
		if (used && x > 0 && x <= 1) {
			f->frac_used = x;
			snprintf(f->frac_used_flag, sizeof f->frac_used_flag, "%s", share_flags[i].flag);
		}
		size_t down = nearest(s, n, a, b, down_words, sizeof down_words / sizeof down_words[0]);
		size_t up = nearest(s, n, a, b, up_words, sizeof up_words / sizeof up_words[0]);
		if (down == (size_t)-1 && up == (size_t)-1)
			continue;
		f->frac_hint = down <= up ? -1 : 1;
		snprintf(f->frac_hint_flag, sizeof f->frac_hint_flag, "%s", share_flags[i].flag);
		size_t t0 = 0;
		while (t0 < n && (s[t0] == ' ' || s[t0] == '\t'))
			t0++;
		copy_text(f->frac_hint_text, sizeof f->frac_hint_text, s + t0, n - t0);
		f->frac_hint_line = lineno;
		return;
	}
}

static void cuda_graph_line(struct sp_log_facts *f, const char *s, size_t n)
{
	if (find(s, n, "Capture cuda graph failed") || find(s, n, "Capture CUDA graph failed"))
		f->cuda_graph_failed = true;
	const char *k = find(s, n, "cuda-graph-max-bs");
	if (!k)
		return;
	f->cuda_graph_bs_hint = true;
	const char *eg = find(k, (size_t)(s + n - k), "e.g.");
	if (eg) {
		const char *p = eg + 4;
		while (p < s + n && (*p == ',' || *p == ' '))
			p++;
		size_t used;
		double x = decimal_at(p, s + n, &used);
		if (used && x >= 1 && x < 1e6)
			f->cuda_graph_bs_example = (uint64_t)x;
	}
}

/* "113.52GB" (Ray prints GB as 10^9 bytes) */
static uint64_t ray_gb(const char *p, const char *end, size_t *used)
{
	double x = decimal_at(p, end, used);
	if (!*used || p + *used + 2 > end || strncmp(p + *used, "GB", 2) != 0) {
		*used = 0;
		return 0;
	}
	*used += 2;
	return (uint64_t)(x * 1e9);
}

static bool ray_line(struct sp_log_facts *f, const char *s, size_t n, uint64_t lineno)
{
	const char *end = s + n;
	if (f->ray_in_table) {
		/* "PID\tMEM(GB)\tCOMMAND", then "5521\t60.12\tollama serve" rows */
		const char *p = s;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (find(p, (size_t)(end - p), "MEM(GB)"))
			return true;
		size_t used;
		decimal_at(p, end, &used);
		const char *q = p + used;
		if (used && q < end && (*q == '\t' || *q == ' ')) {
			while (q < end && (*q == '\t' || *q == ' '))
				q++;
			double gb = decimal_at(q, end, &used);
			if (used) {
				q += used;
				while (q < end && (*q == '\t' || *q == ' '))
					q++;
				f->ray_rows++;
				if ((uint64_t)(gb * 1e9) > f->ray_top_bytes) {
					f->ray_top_bytes = (uint64_t)(gb * 1e9);
					copy_text(f->ray_top, sizeof f->ray_top, q, (size_t)(end - q));
				}
				return true;
			}
		}
		f->ray_in_table = false;
	}
	if (find(s, n, "killed due to the node running low on memory") ||
	    find(s, n, "killed due to memory pressure (OOM)")) {
		if (!f->ray_oom)
			f->ray_line = lineno;
		f->ray_oom = true;
	}
	const char *k;
	/* "... was running was 113.52GB / 119.50GB (0.949968), which exceeds the memory usage threshold of 0.95." */
	if ((k = find(s, n, "was running was "))) {
		size_t u1, u2;
		const char *p = k + 16;
		uint64_t used = ray_gb(p, end, &u1);
		if (u1 && p + u1 + 3 <= end && strncmp(p + u1, " / ", 3) == 0) {
			uint64_t total = ray_gb(p + u1 + 3, end, &u2);
			if (u2 && total) {
				f->ray_used = used;
				f->ray_total = total;
			}
		}
	}
	if ((k = find(s, n, "memory usage threshold of "))) {
		size_t u;
		double x = decimal_at(k + 26, end, &u);
		if (u && x > 0 && x <= 1)
			f->ray_threshold = x;
	}
	if (find(s, n, "memory users:"))
		f->ray_in_table = true;
	return false;
}

/* "ImportError: cannot import name ...": an unindented Python exception line
 * (a name ending in Error or Exception, then ':'), or a CLI's "Error: ..." */
static void error_line(struct sp_log_facts *f, const char *s, size_t n, uint64_t lineno)
{
	if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return;
	size_t i = 0;
	while (i < n && i < 80 && (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.'))
		i++;
	if (i >= n || s[i] != ':' || i < 5)
		return;
	if (!(i >= 5 && memcmp(s + i - 5, "Error", 5) == 0) && !(i >= 9 && memcmp(s + i - 9, "Exception", 9) == 0))
		return;
	copy_text(f->last_error, sizeof f->last_error, s, n);
	f->last_error_line = lineno;
}

/* a whole number right after p (blanks and ':' '=' skipped), 0: none */
static uint64_t number_after(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == ':' || *p == '='))
		p++;
	uint64_t v = 0;
	int k = 0;
	while (p < end && isdigit((unsigned char)*p) && k++ < 12)
		v = v * 10 + (uint64_t)(*p++ - '0');
	return v;
}

/* llama.cpp's model file and context, TGI's prefill batch */
static void sizes_line(struct sp_log_facts *f, const char *s, size_t n)
{
	const char *end = s + n, *p;
	if ((p = find(s, n, "n_ctx ")) != NULL || (p = find(s, n, "n_ctx=")) != NULL) {
		uint64_t v = number_after(p + 5, end);
		if (v >= 256 && v > f->n_ctx)
			f->n_ctx = v;
	}
	if ((p = find(s, n, "max_batch_prefill_tokens")) != NULL) {
		uint64_t v = number_after(p + 24, end);
		if (v)
			f->prefill_tokens = v;
	}
	if ((p = find(s, n, "to handle ")) != NULL && find(s, n, "prefill tokens")) {
		uint64_t v = number_after(p + 10, end);
		if (v)
			f->prefill_tokens = v;
	}
	/* its command line: "-c 8192" / "--ctx-size 8192" beside the .gguf */
	if (!f->n_ctx && find(s, n, ".gguf"))
		for (const char *q = s; q + 4 < end; q++)
			if ((q == s || q[-1] == ' ') && (memcmp(q, "-c ", 3) == 0 || (q + 11 < end && memcmp(q, "--ctx-size ", 11) == 0))) {
				uint64_t v = number_after(q + (q[1] == 'c' ? 3 : 11), end);
				if (v >= 256)
					f->n_ctx = v;
				break;
			}
	/* the file: "loading model '/models/x.gguf'", or "-m /models/x.gguf" */
	if (f->model_file[0] || !find(s, n, ".gguf"))
		return;
	const char *q = find(s, n, "loading model '");
	if (q) {
		q += 15;
		const char *e = memchr(q, '\'', (size_t)(end - q));
		if (e && e > q)
			copy_text(f->model_file, sizeof f->model_file, q, (size_t)(e - q));
		return;
	}
	for (q = s; q + 3 < end; q++)
		if ((q == s || q[-1] == ' ') && (memcmp(q, "-m ", 3) == 0 || (q + 8 < end && memcmp(q, "--model ", 8) == 0))) {
			q += q[1] == 'm' ? 3 : 8;
			const char *e = q;
			while (e < end && *e != ' ' && *e != '"' && *e != '\'')
				e++;
			if (e - q > 5 && memcmp(e - 5, ".gguf", 5) == 0)
				copy_text(f->model_file, sizeof f->model_file, q, (size_t)(e - q));
			return;
		}
}

bool sp_log_facts_line(struct sp_log_facts *f, const char *s, size_t n, uint64_t lineno)
{
	error_line(f, s, n, lineno); /* unindented only */
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	if (!n)
		return false;
	if (find(s, n, "n_ctx") || find(s, n, "prefill") || find(s, n, ".gguf"))
		sizes_line(f, s, n);
	/* every needle below holds "mem" or "graph" (Ray's figures share the
	 * line of its "memory usage threshold"), or is a row of Ray's table: a
	 * cheap gate for the lines that hold none */
	if (!f->ray_in_table && !find(s, n, "mem") && !find(s, n, "MEM") && !find(s, n, "graph"))
		return false;
	if (ray_line(f, s, n, lineno))
		return true;
	share_line(f, s, n, lineno);
	cuda_graph_line(f, s, n);
	return false;
}
