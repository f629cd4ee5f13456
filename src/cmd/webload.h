/* SPDX-License-Identifier: MIT */
/* --web-config (node_exporter's web.config.file: TLS and basic
 * authentication) read into a server's options: serve's and the
 * --metrics-listen endpoint of run and watch take the same file. */
#ifndef SP_CMD_WEBLOAD_H
#define SP_CMD_WEBLOAD_H
#include "out/serve_http.h"
#include "out/webcfg.h"

struct sp_web {
	struct sp_webcfg cfg;
	struct sp_serve_user users[SP_WEBCFG_MAX_USERS];
	char *cert, *key; /* PEM texts */
};
/* Read PATH and what it names (paths relative to its folder) into w, and
 * point so's TLS and users at them; exits 2 with one line on a bad file
 * (missing, not a regular file, too big, a key it does not know, ...). */
void sp_web_load(const char *path, struct sp_web *w, struct sp_serve_opts *so);
/* free what sp_web_load took (the key wiped first) */
void sp_web_free(struct sp_web *w);
#endif
