// SPDX-License-Identifier: MIT
/* serve --web-config: a strict reader of a small YAML subset (webcfg.h). */
#include "out/webcfg.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum section { SEC_NONE, SEC_TLS, SEC_USERS };

static int fail(char *err, size_t errlen, unsigned line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (line)
		snprintf(err, errlen, "line %u: %s", line, msg);
	else
		snprintf(err, errlen, "%s", msg);
	return -1;
}

/* A value: plain (up to a " #" comment, trailing blanks dropped), or
 * quoted ('it''s', "a \" b"). NULL when malformed or longer than cap. */
static const char *value(const char *v, const char *end, char *out, size_t cap)
{
	size_t n = 0;
	if (v < end && (*v == '\'' || *v == '"')) {
		char q = *v++;
		for (;; v++) {
			if (v >= end)
				return NULL; /* not closed */
			char ch = *v;
			if (ch == q) {
				if (q == '\'' && v + 1 < end && v[1] == '\'') {
					v++;
				} else {
					v++;
					break;
				}
			} else if (q == '"' && ch == '\\') {
				if (v + 1 >= end || (v[1] != '"' && v[1] != '\\'))
					return NULL; /* other escapes are not supported */
				ch = *++v;
			}
			if (n + 1 >= cap)
				return NULL;
			out[n++] = ch;
		}
		while (v < end && (*v == ' '))
			v++;
		if (v < end && *v != '#')
			return NULL; /* something after the closing quote */
		out[n] = 0;
		return out;
	}
	const char *e = v;
	while (e < end && !(*e == '#' && e > v && e[-1] == ' '))
		e++;
	while (e > v && e[-1] == ' ')
		e--;
	if ((size_t)(e - v) >= cap)
		return NULL;
	memcpy(out, v, (size_t)(e - v));
	out[e - v] = 0;
	return out;
}

static bool is_bcrypt(const char *h)
{
	if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') || h[3] != '$')
		return false;
	if (h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9' || h[6] != '$')
		return false;
	for (const char *p = h + 7; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' || *p == '/'))
			return false;
	return true;
}

int sp_webcfg_parse(const char *buf, size_t len, struct sp_webcfg *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	if (err && errlen)
		err[0] = 0;
	enum section sec = SEC_NONE;
	bool seen_tls = false, seen_users = false;
	unsigned lineno = 0;
	const char *p = buf, *end = buf + len;
	int sec_indent = -1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		lineno++;
		const char *l = p;
		p = nl ? nl + 1 : end;
		size_t ll = (size_t)(le - l);
		if (ll && l[ll - 1] == '\r')
			ll--;
		le = l + ll;
		if (memchr(l, 0, ll))
			return fail(err, errlen, lineno, "a NUL byte");
		int indent = 0;
		while (l + indent < le && l[indent] == ' ')
			indent++;
		const char *k = l + indent;
		if (k < le && *k == '\t')
			return fail(err, errlen, lineno, "a tab: indent with spaces");
		if (k == le || *k == '#')
			continue; /* blank or a comment */
		if (indent == 0 && le - k >= 3 && (memcmp(k, "---", 3) == 0 || memcmp(k, "...", 3) == 0) &&
		    (le - k == 3 || k[3] == ' '))
			continue; /* document markers */
		if (*k == '-' || *k == '{' || *k == '[' || *k == '&' || *k == '*' || *k == '!' || *k == '|' || *k == '>')
			return fail(err, errlen, lineno, "only 'key: value' lines are supported (no lists, flow style, anchors or tags)");
		/* the key ends at the first ':' followed by a blank or the end */
		const char *colon = k;
		while (colon < le && !(*colon == ':' && (colon + 1 == le || colon[1] == ' ')))
			colon++;
		if (colon == le)
			return fail(err, errlen, lineno, "not 'key: value'");
		char key[SP_WEBCFG_NAME_MAX];
		if (!value(k, colon, key, sizeof key) || !key[0])
			return fail(err, errlen, lineno, "a key that is empty, too long or badly quoted");
		const char *v = colon + 1;
		while (v < le && *v == ' ')
			v++;
		char val[SP_WEBCFG_PATH_MAX];
		if (!value(v, le, val, sizeof val))
			return fail(err, errlen, lineno, "the value of '%s' is too long or badly quoted", key);
		if (val[0] == '{' || val[0] == '[' || val[0] == '&' || val[0] == '*' || val[0] == '|' || val[0] == '>')
			return fail(err, errlen, lineno, "'%s': flow style, anchors and block scalars are not supported", key);

		if (indent == 0) {
			if (val[0])
				return fail(err, errlen, lineno, "'%s' takes its settings on the lines below it", key);
			if (strcmp(key, "tls_server_config") == 0) {
				if (seen_tls)
					return fail(err, errlen, lineno, "'tls_server_config' given twice");
				seen_tls = true;
				sec = SEC_TLS;
			} else if (strcmp(key, "basic_auth_users") == 0) {
				if (seen_users)
					return fail(err, errlen, lineno, "'basic_auth_users' given twice");
				seen_users = true;
				sec = SEC_USERS;
			} else {
				return fail(err, errlen, lineno,
					    "'%s' is not supported (sparkops reads tls_server_config and basic_auth_users only)", key);
			}
			sec_indent = -1;
			continue;
		}
		if (sec == SEC_NONE)
			return fail(err, errlen, lineno, "'%s' is indented under nothing", key);
		if (sec_indent < 0)
			sec_indent = indent;
		else if (indent != sec_indent)
			return fail(err, errlen, lineno, "'%s': nested settings are not supported", key);
		if (sec == SEC_TLS) {
			char *dst = strcmp(key, "cert_file") == 0 ? c->cert_file : strcmp(key, "key_file") == 0 ? c->key_file : NULL;
			if (!dst)
				return fail(err, errlen, lineno,
					    "'%s' is not supported (tls_server_config takes cert_file and key_file only)", key);
			if (dst[0])
				return fail(err, errlen, lineno, "'%s' given twice", key);
			if (!val[0])
				return fail(err, errlen, lineno, "'%s' is empty", key);
			snprintf(dst, SP_WEBCFG_PATH_MAX, "%s", val);
			continue;
		}
		/* basic_auth_users */
		if (strchr(key, ':'))
			return fail(err, errlen, lineno, "user '%s': a user name cannot hold ':'", key);
		for (unsigned i = 0; i < c->n_users; i++)
			if (strcmp(c->user[i], key) == 0)
				return fail(err, errlen, lineno, "user '%s' given twice", key);
		if (!is_bcrypt(val))
			return fail(err, errlen, lineno, "user '%s': the password must be a bcrypt hash ($2y$..., 60 characters)", key);
		if (c->n_users == SP_WEBCFG_MAX_USERS)
			return fail(err, errlen, lineno, "more than %d users", SP_WEBCFG_MAX_USERS);
		snprintf(c->user[c->n_users], SP_WEBCFG_NAME_MAX, "%s", key);
		snprintf(c->hash[c->n_users], SP_WEBCFG_HASH_MAX, "%s", val);
		c->n_users++;
	}
	if (seen_tls && (!c->cert_file[0] || !c->key_file[0]))
		return fail(err, errlen, 0, "tls_server_config needs both cert_file and key_file");
	if (seen_users && c->n_users == 0)
		return fail(err, errlen, 0, "basic_auth_users lists no user");
	return 0;
}
