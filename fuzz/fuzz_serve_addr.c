// SPDX-License-Identifier: MIT
/* libFuzzer harness: the --listen ADDR:PORT parser (sp_serve_parse_addr). */
#include "fuzz.h"
#include "out/serve_http.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	struct sockaddr_storage ss;
	socklen_t len = 0;
	if (sp_serve_parse_addr(s, &ss, &len) == 0 && (len == 0 || len > sizeof ss))
		abort();
	free(s);
	return 0;
}
