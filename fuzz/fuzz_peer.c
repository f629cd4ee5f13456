// SPDX-License-Identifier: MIT
/* libFuzzer harness: what a peer node sends. The first byte picks the
 * input: a peer URL (sp_peer_url_parse), or an /api/status body parsed
 * with bounds (sp_peer_parse) and turned into a node's row and its text
 * lines (sp_node_row_from_doc, sp_nodes_text), which must never hold a
 * control byte. */
#include "out/nodes.h"
#include "out/peer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char *s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = 0;
	char err[240];
	if (data[0] & 1) {
		struct sp_peer_url u;
		if (sp_peer_url_parse(s, &u, err, sizeof err) == 0 && strncmp(u.url, "http://", 7) != 0)
			abort();
	} else {
		json_t *d = sp_peer_parse(s, size - 1, err, sizeof err);
		struct sp_node_row r[2];
		memset(r, 0, sizeof r);
		sp_node_row_from_doc(d, &r[0]);
		json_decref(d);
		memcpy(r[0].state, "ok", 3);
		r[0].figures = true;
		r[1] = r[0];
		r[1].figures = false;
		char lines[16][SP_NODE_LINE];
		int n = sp_nodes_text(r, 2, lines, 16);
		for (int i = 0; i < n; i++)
			for (const char *c = lines[i]; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					abort();
	}
	free(s);
	return 0;
}
