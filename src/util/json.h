/* SPDX-License-Identifier: MIT */
/* jansson helpers shared by every layer: safe strings, and the one printer
 * every --json (and the run/watch --summary file) goes through. */
#ifndef SP_JSON_H
#define SP_JSON_H
#include <stdio.h>

#include <jansson.h>

/* A JSON string from text that may hold any bytes (a path, a process name
 * from /proc, a detail read back from a log): invalid UTF-8 and control bytes
 * become '?', so the key is never silently dropped (json_string answers NULL
 * for invalid UTF-8). NULL (no text) is JSON null. */
json_t *sp_json_text(const char *txt);

/* The format of every JSON document sparkops writes: two-space indent,
 * ASCII only (\uXXXX escapes), reals with up to 15 significant digits. */
#define SP_JSON_FLAGS (JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15))
/* j in SP_JSON_FLAGS, then a newline. Returns json_dumpf's answer (0, -1). */
int sp_json_print(FILE *f, const json_t *j);
/* The same text (without the newline) in a malloc'ed string, or NULL. */
char *sp_json_format(const json_t *j);
#endif
