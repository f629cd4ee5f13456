// SPDX-License-Identifier: MIT
/* --web-config for serve and --metrics-listen. See webload.h. */
#include "cmd/webload.h"
#include "util/fileio.h"
#include "util/input.h"
#include "util/msg.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WEBCFG_MAX ((size_t)64 * 1024) /* the config file */
#define PEM_MAX ((size_t)256 * 1024)   /* a certificate chain or a key */

/* a path in the config is relative to the config file's folder (as node_exporter) */
static void resolve(char *out, size_t cap, const char *cfg_path, const char *p)
{
	if (p[0] == '/') {
		snprintf(out, cap, "%s", p);
		return;
	}
	char dir[SP_WEBCFG_PATH_MAX];
	snprintf(dir, sizeof dir, "%s", cfg_path);
	snprintf(out, cap, "%s/%s", dirname(dir), p);
}

/* a whole file into a new buffer, or exit 2 with why */
static char *read_whole(const char *what, const char *path, size_t max)
{
	char *buf = malloc(max + 1);
	if (!buf)
		sp_die(SP_EXIT_TROUBLE, "out of memory");
	/* never blocks: a FIFO, a folder or a device is refused before a read */
	int fd = sp_input_open(path);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -SP_EINPUT_NOTREG;
	}
	if (fd < 0)
		sp_die(SP_EXIT_USAGE, "--web-config: %s '%s': %s", what, path, sp_input_strerror(fd));
	ssize_t len = sp_read_full(fd, buf, max + 1);
	int e = errno;
	close(fd);
	if (len < 0)
		sp_die(SP_EXIT_USAGE, "--web-config: %s '%s': %s", what, path, strerror(e));
	if ((size_t)len >= max)
		sp_die(SP_EXIT_USAGE, "--web-config: %s '%s' is over %zu KiB", what, path, max / 1024);
	if (memchr(buf, '\0', (size_t)len))
		sp_die(SP_EXIT_USAGE, "--web-config: %s '%s': %s", what, path, sp_input_strerror(-SP_EINPUT_NOTTEXT));
	buf[len] = '\0';
	return buf;
}

/* Read --web-config and what it names into w and so; exits 2 on a bad one. */
void sp_web_load(const char *path, struct sp_web *w, struct sp_serve_opts *so)
{
	char *text = read_whole("file", path, WEBCFG_MAX);
	char err[256];
	int rc = sp_webcfg_parse(text, strlen(text), &w->cfg, err, sizeof err);
	free(text);
	if (rc < 0)
		sp_die(SP_EXIT_USAGE, "--web-config '%s': %s", path, err);
	if (w->cfg.cert_file[0]) {
		char p[2 * SP_WEBCFG_PATH_MAX + 2];
		resolve(p, sizeof p, path, w->cfg.cert_file);
		w->cert = read_whole("cert_file", p, PEM_MAX);
		resolve(p, sizeof p, path, w->cfg.key_file);
		w->key = read_whole("key_file", p, PEM_MAX);
		if (!strstr(w->cert, "-----BEGIN CERTIFICATE-----"))
			sp_die(SP_EXIT_USAGE, "--web-config: cert_file '%s' holds no PEM certificate", w->cfg.cert_file);
		if (!strstr(w->key, "PRIVATE KEY-----"))
			sp_die(SP_EXIT_USAGE, "--web-config: key_file '%s' holds no PEM private key", w->cfg.key_file);
		so->tls_cert_pem = w->cert;
		so->tls_key_pem = w->key;
	}
	for (unsigned i = 0; i < w->cfg.n_users; i++) {
		w->users[i].name = w->cfg.user[i];
		w->users[i].hash = w->cfg.hash[i];
	}
	so->users = w->users;
	so->n_users = w->cfg.n_users;
}

void sp_web_free(struct sp_web *w)
{
	free(w->cert);
	if (w->key) {
		explicit_bzero(w->key, strlen(w->key));
		free(w->key);
	}
}

