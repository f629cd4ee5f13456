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
#endif
