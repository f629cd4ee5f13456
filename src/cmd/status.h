/* SPDX-License-Identifier: MIT */
/* `status --json`'s document for a sample, for whoever serves it too
 * (serve's live page answers it at /api/status: one document, one set of
 * keys). The caller json_decref()s it. */
#ifndef SP_CMD_STATUS_H
#define SP_CMD_STATUS_H
#include "probe/sample.h"

#include <jansson.h>
#include <stdbool.h>

json_t *sp_status_document(const struct sp_sample *s, bool procs_scanned);
#endif
