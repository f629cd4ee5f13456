// SPDX-License-Identifier: MIT
/* --cohost SPEC: an inference server sharing the box. */
#include "account/budget.h"
#include "util/units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int sp_cohost_parse(const char *buf, size_t len, struct sp_cohost *c, char *err, size_t errlen)
{
	char s[600];
	memset(c, 0, sizeof *c);
	if (!buf || len == 0) {
		snprintf(err, errlen, "--cohost: empty spec (want vllm:FRACTION, ollama:SIZE or ollama:FILE.gguf)");
		return -1;
	}
	if (len >= sizeof s) {
		snprintf(err, errlen, "--cohost: spec longer than %zu bytes", sizeof s - 1);
		return -1;
	}
	memcpy(s, buf, len);
	s[len] = 0;
	if (strlen(s) != len) {
		snprintf(err, errlen, "--cohost: spec contains a NUL byte");
		return -1;
	}
	char *colon = strchr(s, ':');
	if (!colon || colon[1] == 0) {
		snprintf(err, errlen, "--cohost: '%.40s' is not SERVER:VALUE (vllm:0.5, ollama:12GiB, ollama:FILE.gguf)", s);
		return -1;
	}
	*colon = 0;
	const char *v = colon + 1;
	if (strcasecmp(s, "vllm") == 0) {
		char *end;
		double f = strtod(v, &end);
		if (end == v || *end || !isfinite(f) || !(f > 0) || f > 1) {
			snprintf(err, errlen, "--cohost: vllm's gpu_memory_utilization '%.40s' is not a fraction in (0, 1]", v);
			return -1;
		}
		c->kind = SP_COHOST_VLLM;
		c->frac = f;
		return 0;
	}
	if (strcasecmp(s, "ollama") == 0) {
		size_t n = strlen(v);
		if (n > 5 && strcasecmp(v + n - 5, ".gguf") == 0) {
			if (n >= sizeof c->path) {
				snprintf(err, errlen, "--cohost: ollama file name too long");
				return -1;
			}
			c->kind = SP_COHOST_OLLAMA_FILE;
			memcpy(c->path, v, n + 1);
			return 0;
		}
		uint64_t b;
		int pr = sp_parse_size_unit(v, &b);
		if (pr == -2) {
			snprintf(err, errlen, "--cohost: is not a size: give a unit (e.g. ollama:%.20sGiB)", v);
			return -1;
		}
		if (pr < 0 || b == 0) {
			snprintf(err, errlen, "--cohost: ollama '%.40s' is neither a SIZE (12GiB) nor a .gguf file", v);
			return -1;
		}
		c->kind = SP_COHOST_OLLAMA_SIZE;
		c->bytes = b;
		return 0;
	}
	snprintf(err, errlen, "--cohost: unknown server '%.20s' (vllm or ollama)", s);
	return -1;
}

uint64_t sp_cohost_bytes(const struct sp_cohost *c, uint64_t pool_total)
{
	if (c->kind == SP_COHOST_VLLM)
		return (uint64_t)llround(c->frac * (double)pool_total);
	return c->bytes;
}
