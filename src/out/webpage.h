/* SPDX-License-Identifier: MIT */
/* The live page `serve` answers at `/`: one self-contained HTML document (no
 * external scripts, fonts or CDNs: the box may be offline) that polls
 * `api/status` (the same document as `status --json`) and `api/history` (the
 * ring of recent samples serve keeps) once a second and draws the pool, the
 * GPU, GB10's sensors, pressure, the processes and sparklines on fixed
 * scales; with `serve --peer`, `api/nodes` too (the nodes side by side: a
 * NODES table, a node not ok in red without its old figures). It fetches
 * nothing but these paths of its own server. Every figure from the machine is put in with textContent, never as
 * markup; the inline script and style run under a per-response nonce, so the
 * Content-Security-Policy allows nothing else. Pure: no I/O. */
#ifndef SP_WEBPAGE_H
#define SP_WEBPAGE_H
#include <stddef.h>

/* The page with NONCE (base64url, <= 64 bytes) in its script and style tags
 * into buf (cap bytes): the length the whole page needs (snprintf style). */
size_t sp_webpage_render(char *buf, size_t cap, const char *nonce);
/* The Content-Security-Policy header for a page rendered with NONCE. */
size_t sp_webpage_csp(char *buf, size_t cap, const char *nonce);
#endif
