// SPDX-License-Identifier: MIT
/* Basic authentication for the /metrics endpoint: the Authorization header
 * decoded, the password checked with crypt(3) against the user's bcrypt hash
 * and compared in constant time, headers that passed cached (bcrypt costs
 * ~50 ms a check), and the waits after wrong passwords, per client address
 * (serve_http.c's opening comment has the rules). */
#include "out/serve_http.h"
#include "out/serve_int.h"
#include "util/clock.h"

#include <crypt.h>
#include <math.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char too_many[] = "too many wrong passwords from this address: retry later\n";

#define FAIL_WAIT_MAX 60.0    /* the longest wait between wrong tries from one address */
#define FAIL_FORGET_S 600.0   /* an address quiet this long starts afresh */

/* ---- basic authentication ----------------------------------------------------------- */

static bool ct_equal(const char *a, size_t na, const char *b, size_t nb)
{
	/* time depends on the lengths only, never on where the bytes differ */
	volatile unsigned char d = (unsigned char)(na != nb);
	size_t n = na < nb ? na : nb;
	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

static int b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* standard base64 with padding; -1 when malformed or too long */
static long b64decode(const char *in, char *out, size_t cap)
{
	size_t n = strlen(in), o = 0;
	if (n == 0 || n % 4 != 0)
		return -1;
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		for (int j = 0; j < 4; j++) {
			unsigned char ch = (unsigned char)in[i + (size_t)j];
			v[j] = ch == '=' && i + 4 == n && j >= 2 ? 0 : b64val(ch);
			if (v[j] < 0)
				return -1;
		}
		if (in[i + 2] == '=' && in[i + 3] != '=')
			return -1;
		unsigned w = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 | (unsigned)v[3];
		int take = in[i + 2] == '=' ? 1 : in[i + 3] == '=' ? 2 : 3;
		if (o + (size_t)take >= cap)
			return -1;
		out[o++] = (char)(w >> 16);
		if (take > 1)
			out[o++] = (char)(w >> 8);
		if (take > 2)
			out[o++] = (char)w;
	}
	out[o] = 0;
	return (long)o;
}

static bool check_password(struct sp_server *srv, const char *pass, const char *hash)
{
	memset(srv->cd, 0, sizeof *srv->cd);
	const char *h = crypt_r(pass, hash, srv->cd);
	/* libxcrypt answers "*0"/"*1" (or NULL) for a hash it cannot use: never equal */
	return h && ct_equal(h, strlen(h), hash, strlen(hash));
}

/* the address's entry (NULL: none), or with make a free or the quietest one */
static struct fail *fail_of(struct sp_server *srv, const struct sockaddr_storage *a, bool make, double now)
{
	struct fail *quiet = NULL;
	for (unsigned i = 0; i < SP_SERVE_FAIL_SLOTS; i++) {
		struct fail *f = &srv->fails[i];
		if (f->used && now - f->last > FAIL_FORGET_S)
			f->used = false;
		if (f->used && srv_same_host(&f->addr, a))
			return f;
		if (!f->used) {
			if (!quiet || quiet->used)
				quiet = f; /* a free slot first */
		} else if (!quiet || (quiet->used && f->last < quiet->last)) {
			quiet = f; /* else the address quiet the longest */
		}
	}
	if (!make || !quiet)
		return NULL;
	memset(quiet, 0, sizeof *quiet);
	quiet->used = true;
	quiet->addr = *a;
	return quiet;
}

double sp_serve_fail_wait(unsigned n)
{
	if (n <= SP_SERVE_FAIL_FREE)
		return 0;
	unsigned k = n - SP_SERVE_FAIL_FREE - 1;
	return k >= 6 ? FAIL_WAIT_MAX : (double)(1u << k) < FAIL_WAIT_MAX ? (double)(1u << k) : FAIL_WAIT_MAX;
}

/* AUTH_OK when the request names a configured user with the right
 * password; AUTH_WAIT (*wait seconds) when its address must wait before it
 * may try again (nothing checked) */
enum auth srv_authorized(struct sp_server *srv, struct MHD_Connection *c, const struct conn *k, double *wait)
{
	const char *v = srv_mhd.lookup(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (!v || strncasecmp(v, "Basic ", 6) != 0 || strlen(v) >= AUTH_MAX)
		return AUTH_NO;
	size_t vl = strlen(v);
	double now = sp_mono_now();
	struct fail *f = fail_of(srv, &k->addr, false, now);
	for (unsigned i = 0; i < AUTH_CACHE; i++)
		if (srv->auth_ok[i][0] && ct_equal(v, vl, srv->auth_ok[i], strlen(srv->auth_ok[i]))) {
			if (f)
				f->used = false; /* a right password: the address starts afresh */
			return AUTH_OK;
		}
	/* a header not seen to pass: its address may have to wait first */
	if (f && now < f->until) {
		*wait = f->until - now;
		srv->refused_429++;
		return AUTH_WAIT;
	}
	char plain[AUTH_MAX];
	const char *b = v + 6;
	while (*b == ' ')
		b++;
	if (b64decode(b, plain, sizeof plain) < 0)
		return AUTH_NO;
	char *colon = strchr(plain, ':');
	if (!colon)
		return AUTH_NO;
	*colon = 0;
	const char *hash = NULL;
	for (unsigned i = 0; i < srv->n_users; i++)
		if (strcmp(srv->users[i].name, plain) == 0)
			hash = srv->users[i].hash;
	/* an unknown user costs the same bcrypt as a known one */
	bool ok = check_password(srv, colon + 1, hash ? hash : srv->users[0].hash) && hash;
	explicit_bzero(plain, sizeof plain);
	if (ok) {
		snprintf(srv->auth_ok[srv->auth_next], AUTH_MAX, "%s", v);
		srv->auth_next = (srv->auth_next + 1) % AUTH_CACHE;
		if (f)
			f->used = false; /* the right password: the address starts afresh */
		return AUTH_OK;
	}
	/* a wrong one: counted for its address, which may now have to wait */
	f = f ? f : fail_of(srv, &k->addr, true, now);
	if (f) {
		f->n++;
		f->last = now;
		f->until = now + sp_serve_fail_wait(f->n);
	}
	return AUTH_NO;
}

/* 429 with Retry-After: the seconds the address must still wait */
enum MHD_Result srv_answer_wait(struct sp_server *srv, struct MHD_Connection *c, double wait)
{
	(void)srv;
	struct MHD_Response *r = srv_mhd.from_buffer(sizeof too_many - 1, (void *)(uintptr_t)too_many, // NOLINT(performance-no-int-to-ptr)
						     MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	char ra[16];
	snprintf(ra, sizeof ra, "%.0f", ceil(wait));
	srv_mhd.add_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	srv_mhd.add_header(r, MHD_HTTP_HEADER_RETRY_AFTER, ra);
	enum MHD_Result q = srv_mhd.queue(c, 429, r);
	srv_mhd.destroy(r);
	return q;
}
