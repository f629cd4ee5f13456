/* SPDX-License-Identifier: MIT */
/* serve --web-config FILE: the subset of Prometheus' web configuration file
 * (node_exporter's --web.config.file) that sparkops supports:
 *
 *   tls_server_config:
 *     cert_file: /etc/sparkops/cert.pem
 *     key_file: /etc/sparkops/key.pem
 *   basic_auth_users:
 *     prometheus: $2y$10$...   # bcrypt (htpasswd -nBC 10 "" | tr -d ':\n')
 *
 * Block style only, two levels, spaces for indentation, '#' comments,
 * values plain or quoted ('...', "..."). Any other key (client_auth_type,
 * min_version, http_server_config, ...) is refused with the line that names
 * it: an option silently ignored would be a protection silently missing.
 * A parser of a buffer, no I/O, no allocation. */
#ifndef SP_WEBCFG_H
#define SP_WEBCFG_H
#include <stddef.h>

#define SP_WEBCFG_MAX_USERS 32
#define SP_WEBCFG_PATH_MAX 1024
#define SP_WEBCFG_NAME_MAX 128
#define SP_WEBCFG_HASH_MAX 128

struct sp_webcfg {
	char cert_file[SP_WEBCFG_PATH_MAX]; /* "" unless tls_server_config was given */
	char key_file[SP_WEBCFG_PATH_MAX];
	unsigned n_users;
	char user[SP_WEBCFG_MAX_USERS][SP_WEBCFG_NAME_MAX];
	char hash[SP_WEBCFG_MAX_USERS][SP_WEBCFG_HASH_MAX];
};

/* 0, or -1 with one line in err: "line 3: 'client_auth_type' is not
 * supported (tls_server_config takes cert_file and key_file)". */
int sp_webcfg_parse(const char *buf, size_t len, struct sp_webcfg *c, char *err, size_t errlen);
#endif
