// SPDX-License-Identifier: MIT
/* jansson helpers. See json.h. */
#include "util/json.h"

#include <limits.h>

json_t *sp_json_text(const char *txt)
{
	if (!txt)
		return json_null();
	json_t *j = json_string(txt);
	if (j)
		return j;
	char buf[PATH_MAX];
	size_t i = 0;
	for (; txt[i] && i + 1 < sizeof buf; i++)
		buf[i] = (unsigned char)txt[i] >= 0x20 && (unsigned char)txt[i] < 0x7f ? txt[i] : '?';
	buf[i] = 0;
	return json_string(buf);
}

int sp_json_print(FILE *f, const json_t *j)
{
	int rc = json_dumpf(j, f, SP_JSON_FLAGS);
	fputc('\n', f);
	return rc;
}

char *sp_json_format(const json_t *j)
{
	return json_dumps(j, SP_JSON_FLAGS);
}
