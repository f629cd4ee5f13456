// SPDX-License-Identifier: MIT
/* What the /metrics endpoint answers, URL by URL (serve_http.c is the HTTP
 * machinery under it): the checks every request passes first (admission,
 * basic authentication, GET or HEAD without a body), the fixed answers, the
 * live page with a fresh nonce and its JSON (/api/status, /api/history,
 * /api/nodes) when the server has a page, and /metrics, rendered by the
 * fill callback at most once per cache_s and shared by every scrape. */
#include "out/serve_http.h"
#include "out/serve_int.h"
#include "out/webpage.h"
#include "util/clock.h"

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define CONTENT_TYPE_PROM "text/plain; version=0.0.4; charset=utf-8"

/* ---- the answers ------------------------------------------------------------------- */

static const char index_html[] =
	"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>sparkops</title></head>\n"
	"<body><h1>sparkops</h1><p><a href=\"/metrics\">/metrics</a>: memory pool, budget, "
	"pressure, sensors and GPU readings in the Prometheus text format.</p></body></html>\n";
static const char not_found[] = "not found: try /metrics\n";
static const char not_allowed[] = "method not allowed: only GET and HEAD\n";
static const char failed[] = "the exposition could not be written\n";
static const char bad_request[] = "bad request: GET and HEAD take no body\n";
static const char busy[] = "too many connections from this address: retry in a second\n";
static const char unauthorized[] = "authentication required\n";

/* A fresh body from the callback, in a buffer the response owns. */
/* A body a fill-style callback writes, in a buffer grown until it fits
 * (the live page's JSON and the page itself); NULL when it fails. */
static struct MHD_Response *render_with(sp_serve_fill_fn fn, void *ctx, const char *type, size_t cap, size_t *len)
{
	for (int tries = 0; tries < 3; tries++) {
		char *buf = malloc(cap);
		if (!buf)
			return NULL;
		size_t n = fn(buf, cap, ctx);
		if (n == 0) {
			free(buf);
			return NULL;
		}
		if (n < cap) {
			if (len)
				*len = n;
			struct MHD_Response *r = srv_mhd.from_buffer_free(n, buf, free);
			if (!r) {
				free(buf);
				return NULL;
			}
			srv_mhd.add_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
			srv_mhd.add_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
			srv_mhd.add_header(r, "X-Content-Type-Options", "nosniff");
			return r;
		}
		free(buf);
		cap = n + 4096;
	}
	return NULL;
}

/* the page with a fresh nonce: only its own inline script and style run */
static size_t page_fill(char *buf, size_t cap, void *ctx)
{
	return sp_webpage_render(buf, cap, ctx);
}

static enum MHD_Result answer_page(struct sp_server *srv, struct MHD_Connection *c)
{
	unsigned char raw[18];
	char nonce[32], csp[512];
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		return srv_mhd.queue(c, MHD_HTTP_INTERNAL_SERVER_ERROR, srv->r_500);
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t o = 0;
	for (size_t i = 0; i < sizeof raw; i += 3) {
		unsigned v = (unsigned)raw[i] << 16 | (unsigned)raw[i + 1] << 8 | raw[i + 2];
		for (int k = 3; k >= 0; k--)
			nonce[o++] = b64[(v >> (6 * k)) & 63];
	}
	nonce[o] = 0;
	struct MHD_Response *r = render_with(page_fill, nonce, "text/html; charset=utf-8", (size_t)32 * 1024, NULL);
	if (!r)
		return srv_mhd.queue(c, MHD_HTTP_INTERNAL_SERVER_ERROR, srv->r_500);
	sp_webpage_csp(csp, sizeof csp, nonce);
	srv_mhd.add_header(r, "Content-Security-Policy", csp);
	srv_mhd.add_header(r, "Referrer-Policy", "no-referrer");
	srv_mhd.add_header(r, "X-Frame-Options", "DENY");
	enum MHD_Result q = srv_mhd.queue(c, MHD_HTTP_OK, r);
	srv_mhd.destroy(r);
	return q;
}

static enum MHD_Result answer_json(struct sp_server *srv, struct MHD_Connection *c, sp_serve_fill_fn fn)
{
	struct MHD_Response *r = render_with(fn, srv->api_ctx, "application/json", (size_t)64 * 1024, NULL);
	if (!r)
		return srv_mhd.queue(c, MHD_HTTP_INTERNAL_SERVER_ERROR, srv->r_500);
	enum MHD_Result q = srv_mhd.queue(c, MHD_HTTP_OK, r);
	srv_mhd.destroy(r);
	return q;
}

/* the exposition's fill, counted (renders, not scrapes: read from other threads) */
static size_t counted_fill(char *buf, size_t cap, void *ctx)
{
	struct sp_server *srv = ctx;
	__atomic_fetch_add(&srv->renders, 1, __ATOMIC_RELAXED);
	return srv->fill(buf, cap, srv->ctx);
}

static struct MHD_Response *render(struct sp_server *srv)
{
	size_t n = 0;
	struct MHD_Response *r = render_with(counted_fill, srv, CONTENT_TYPE_PROM,
					     srv->size_hint ? srv->size_hint : (size_t)64 * 1024, &n);
	if (r) /* room for a little growth next time without a second call */
		srv->size_hint = n + n / 4 + 4096;
	return r;
}

enum MHD_Result srv_handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			       const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct sp_server *srv = cls;
	static int seen;
	(void)version;
	(void)upload_data;
	bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0;
	bool head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	/* answered at once (and the connection closed): nothing of a body is read */
	if (!*con_cls) {
		/* the request's line and headers are in: the deadline is met */
		struct conn *k = srv_conn_of(c);
		srv_conn_set_waiting(srv, k, false);
		if (!k || !k->admitted)
			return srv_mhd.queue(c, MHD_HTTP_SERVICE_UNAVAILABLE, srv->r_503);
		double wait = 0;
		enum auth a = srv->n_users ? srv_authorized(srv, c, k, &wait) : AUTH_OK;
		if (a == AUTH_WAIT)
			return srv_answer_wait(srv, c, wait);
		if (a == AUTH_NO)
			return srv_mhd.queue(c, MHD_HTTP_UNAUTHORIZED, srv->r_401);
	}
	if (!get && !head)
		return srv_mhd.queue(c, MHD_HTTP_METHOD_NOT_ALLOWED, srv->r_405);
	if (!*con_cls) {
		const char *cl = srv_mhd.lookup(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if ((cl && strcmp(cl, "0") != 0) || srv_mhd.lookup(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
			return srv_mhd.queue(c, MHD_HTTP_BAD_REQUEST, srv->r_400);
	} else if (*upload_data_size) {
		return MHD_NO; /* a body after all: close */
	}
	/* the first call only says the headers are in; answering on the second
	 * lets libmicrohttpd keep the connection alive for the next scrape */
	if (!*con_cls) {
		*con_cls = &seen;
		return MHD_YES;
	}
	if (srv->api_status) {
		if (strcmp(url, "/") == 0)
			return answer_page(srv, c);
		if (strcmp(url, "/api/status") == 0)
			return answer_json(srv, c, srv->api_status);
		if (strcmp(url, "/api/history") == 0 && srv->api_history)
			return answer_json(srv, c, srv->api_history);
		if (strcmp(url, "/api/nodes") == 0 && srv->api_nodes)
			return answer_json(srv, c, srv->api_nodes);
	}
	if (strcmp(url, "/") == 0)
		return srv_mhd.queue(c, MHD_HTTP_OK, srv->r_index);
	if (strcmp(url, "/metrics") != 0)
		return srv_mhd.queue(c, MHD_HTTP_NOT_FOUND, srv->r_404);
	double t = sp_mono_now();
	if (!srv->cached || t - srv->cached_at >= srv->cache_s || t < srv->cached_at) {
		struct MHD_Response *r = render(srv);
		if (!r)
			return srv_mhd.queue(c, MHD_HTTP_INTERNAL_SERVER_ERROR, srv->r_500);
		if (srv->cached)
			srv_mhd.destroy(srv->cached); /* in-flight sends keep their reference */
		srv->cached = r;
		srv->cached_at = t;
	}
	return srv_mhd.queue(c, MHD_HTTP_OK, srv->cached);
}

static struct MHD_Response *fixed(const char *body, const char *type)
{
	/* PERSISTENT: MHD only reads it; its API takes void * */
	struct MHD_Response *r = srv_mhd.from_buffer(strlen(body), (void *)(uintptr_t)body, // NOLINT(performance-no-int-to-ptr)
					       MHD_RESPMEM_PERSISTENT);
	if (r)
		srv_mhd.add_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	return r;
}

void srv_free_fixed(struct sp_server *srv)
{
	struct MHD_Response **rs[] = { &srv->r_index, &srv->r_400, &srv->r_401, &srv->r_404,
				       &srv->r_405, &srv->r_500, &srv->r_503, &srv->cached };
	for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++)
		if (*rs[i]) {
			srv_mhd.destroy(*rs[i]);
			*rs[i] = NULL;
		}
}

/* the fixed answers; false when one could not be made */
bool srv_make_fixed(struct sp_server *srv)
{
	const char *txt = "text/plain; charset=utf-8";
	srv->r_index = fixed(index_html, "text/html; charset=utf-8");
	srv->r_400 = fixed(bad_request, txt);
	srv->r_401 = fixed(unauthorized, txt);
	srv->r_404 = fixed(not_found, txt);
	srv->r_405 = fixed(not_allowed, txt);
	srv->r_500 = fixed(failed, txt);
	srv->r_503 = fixed(busy, txt);
	if (!srv->r_index || !srv->r_400 || !srv->r_401 || !srv->r_404 || !srv->r_405 || !srv->r_500 || !srv->r_503)
		return false;
	srv_mhd.add_header(srv->r_405, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	srv_mhd.add_header(srv->r_401, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Basic realm=\"sparkops\"");
	srv_mhd.add_header(srv->r_503, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	srv_mhd.add_header(srv->r_503, MHD_HTTP_HEADER_CONNECTION, "close");
	return true;
}
