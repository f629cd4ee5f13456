/* SPDX-License-Identifier: MIT */
/* Internals shared by the model readers (not for commands). */
#ifndef SP_MODEL_INT_H
#define SP_MODEL_INT_H
#include "model/model.h"

#include <jansson.h>
#include <stdarg.h>

/* Caps on untrusted sizes, checked before any allocation. */
#define SP_CONFIG_MAX_BYTES   ((size_t)16 * 1024 * 1024)    /* config.json, index.json */
#define SP_CATALOG_MAX_BYTES  ((size_t)16 * 1024 * 1024)
#define SP_ST_HEADER_MAX      100000000ull           /* the safetensors reference limit */

/* err = "'label': problem" (label may be NULL: just the problem). Returns -1. */
int sp_model_err(char *err, size_t errlen, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Fill the architecture of m from a parsed config.json object (the catalog
 * entries use the same keys). Computes the parameter estimates. label names
 * the file in messages. */
int sp_hfconfig_from_json(json_t *root, struct sp_model_shape *m, const char *label, char *err, size_t errlen);

/* Read a whole small file (config.json, index.json) into a malloc'ed,
 * NUL-terminated buffer; refuses files over cap. Adds to *bytes_read. */
int sp_model_slurp(const char *path, size_t cap, char **buf, size_t *len, uint64_t *bytes_read,
		   char *err, size_t errlen);

/* Open a file to read its header: O_CLOEXEC, and O_NONBLOCK so that a FIFO
 * named as a model cannot block the open; anything but a regular file is
 * refused. The fd, or -1 with err set; *size is the file's size. */
int sp_model_open(const char *path, uint64_t *size, char *err, size_t errlen);

/* The last path component, for messages and names. */
const char *sp_model_basename(const char *path);

/* Parse a JSON buffer the strict way: duplicate keys rejected. NULL + err on failure. */
json_t *sp_model_json(const char *buf, size_t len, const char *label, char *err, size_t errlen);
#endif
