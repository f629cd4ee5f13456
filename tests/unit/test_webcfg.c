// SPDX-License-Identifier: MIT
/* serve --web-config: the keys supported, everything else refused by line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "out/webcfg.h"

#define H1 "$2y$04$abcdefghijklmnopqrstuuJ6ZBq9xP2S8zW0YlUvV4CqGvAe2YSPa"
#define H2 "$2b$10$0123456789012345678901J6ZBq9xP2S8zW0YlUvV4CqGvAe2YSPa"

static struct sp_webcfg c;
static char err[256];

static int parse(const char *s)
{
	return sp_webcfg_parse(s, strlen(s), &c, err, sizeof err);
}

static void full(void **st)
{
	(void)st;
	if (parse("---\n# sparkops\ntls_server_config:\n  cert_file: /etc/s/cert.pem\n"
		  "  key_file: \"/etc/s/key file.pem\"   # quoted\r\n\nbasic_auth_users:\n"
		  "  prometheus: " H1 "\n  'grafana': '" H2 "' # a comment\n") != 0)
		fail_msg("refused: %s", err);
	assert_string_equal(c.cert_file, "/etc/s/cert.pem");
	assert_string_equal(c.key_file, "/etc/s/key file.pem");
	assert_int_equal(c.n_users, 2);
	assert_string_equal(c.user[0], "prometheus");
	assert_string_equal(c.hash[0], H1);
	assert_string_equal(c.user[1], "grafana");
	assert_string_equal(c.hash[1], H2);
	/* nothing at all is fine: neither TLS nor users */
	assert_int_equal(parse(""), 0);
	assert_int_equal(parse("# nothing\n\n"), 0);
	assert_int_equal(c.n_users, 0);
	assert_string_equal(c.cert_file, "");
	/* one of the two alone */
	assert_int_equal(parse("basic_auth_users:\n    u: " H1 "\n"), 0);
	assert_int_equal(c.n_users, 1);
	assert_string_equal(c.cert_file, "");
}

static void refused(void **st)
{
	(void)st;
	static const struct {
		const char *in, *why;
	} bad[] = {
		{ "tls_server_config:\n  cert_file: c\n  key_file: k\n  client_auth_type: RequireAndVerifyClientCert\n",
		  "line 4: 'client_auth_type' is not supported (tls_server_config takes cert_file and key_file only)" },
		{ "http_server_config:\n  http2: false\n",
		  "line 1: 'http_server_config' is not supported (sparkops reads tls_server_config and basic_auth_users only)" },
		{ "tls_server_config:\n  cert_file: c\n", "tls_server_config needs both cert_file and key_file" },
		{ "basic_auth_users:\n  u: plaintext\n", "line 2: user 'u': the password must be a bcrypt hash ($2y$..., 60 characters)" },
		{ "basic_auth_users:\n  u: $1$abc$def\n", "line 2: user 'u': the password must be a bcrypt hash ($2y$..., 60 characters)" },
		{ "basic_auth_users:\n  u: " H1 "\n  u: " H2 "\n", "line 3: user 'u' given twice" },
		{ "basic_auth_users:\n", "basic_auth_users lists no user" },
		{ "basic_auth_users: {u: x}\n", "line 1: 'basic_auth_users': flow style, anchors and block scalars are not supported" },
		{ "tls_server_config:\n  cipher_suites:\n    - TLS_AES_128_GCM_SHA256\n",
		  "line 2: 'cipher_suites' is not supported (tls_server_config takes cert_file and key_file only)" },
		{ "\tbasic_auth_users:\n", "line 1: a tab: indent with spaces" },
		{ "  u: " H1 "\n", "line 1: 'u' is indented under nothing" },
		{ "tls_server_config:\n  cert_file: 'c\n", "line 2: the value of 'cert_file' is too long or badly quoted" },
		{ "tls_server_config:\n  cert_file: c\n    key_file: k\n", "line 3: 'key_file': nested settings are not supported" },
		{ "tls_server_config: yes\n", "line 1: 'tls_server_config' takes its settings on the lines below it" },
		{ "just words\n", "line 1: not 'key: value'" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (parse(bad[i].in) != -1 || strcmp(err, bad[i].why) != 0)
			fail_msg("case %zu: got '%s'", i, err);
	}
	/* a NUL inside the buffer */
	assert_int_equal(sp_webcfg_parse("basic_auth_users:\n  u\0: x\n", 25, &c, err, sizeof err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full),
		cmocka_unit_test(refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
