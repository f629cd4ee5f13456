/* SPDX-License-Identifier: MIT */
/* Shared by the libFuzzer harnesses (fuzz/fuzz_<name>.c). Each harness feeds
 * the fuzzer's bytes to one parser. Copies are exact-size heap buffers, so
 * ASan sees any read past the input; fuzz_cstr adds the NUL that string
 * parsers expect (and cuts at an embedded NUL, as a C string would). */
#ifndef SP_FUZZ_H
#define SP_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline char *fuzz_copy(const uint8_t *data, size_t size)
{
	char *p = malloc(size ? size : 1);
	if (p && size)
		memcpy(p, data, size);
	return p;
}

static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *p = malloc(size + 1);
	if (p) {
		if (size)
			memcpy(p, data, size);
		p[size] = 0;
	}
	return p;
}

/* The whole harness for a parser of one buffer: FUZZ_ON_COPY(one) calls
 * one(char *buf, size_t size) on an exact-size copy of the input,
 * FUZZ_ON_CSTR(one) calls one(char *s) on a NUL-terminated copy; the copy
 * is freed after (out of memory: the input is not run). */
#define FUZZ_ON_COPY(one)                                             \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)  \
	{                                                             \
		char *buf_ = fuzz_copy(data, size);                   \
		if (buf_)                                             \
			one(buf_, size);                              \
		free(buf_);                                           \
		return 0;                                             \
	}
#define FUZZ_ON_CSTR(one)                                             \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)  \
	{                                                             \
		char *s_ = fuzz_cstr(data, size);                     \
		if (s_)                                               \
			one(s_);                                      \
		free(s_);                                             \
		return 0;                                             \
	}
#endif
