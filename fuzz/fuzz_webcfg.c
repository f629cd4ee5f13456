// SPDX-License-Identifier: MIT
/* libFuzzer harness: serve --web-config's reader (sp_webcfg_parse). */
#include "fuzz.h"
#include "out/webcfg.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sp_webcfg c;
	char err[256];
	if (sp_webcfg_parse((const char *)data, size, &c, err, sizeof err) == 0) {
		/* what it accepts is whole: both TLS files or neither, bounded users */
		if ((c.cert_file[0] != 0) != (c.key_file[0] != 0) || c.n_users > SP_WEBCFG_MAX_USERS)
			abort();
		for (unsigned i = 0; i < c.n_users; i++)
			if (strlen(c.hash[i]) != 60 || !c.user[i][0])
				abort();
	} else if (!err[0]) {
		abort(); /* a refusal always says why */
	}
	return 0;
}
