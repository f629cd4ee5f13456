// SPDX-License-Identifier: MIT
/* The /metrics endpoint on libmicrohttpd: one internal epoll thread (so the
 * fill callback never runs twice at once), our own listening socket (so a
 * port in use is a clear EADDRINUSE, and port 0 works), and every limit MHD
 * offers set: connections, connections per address, idle timeout, and the
 * per-connection memory that bounds a request's line and headers.
 *
 * libmicrohttpd is loaded with dlopen when a server starts, not linked: on
 * Debian it pulls in GnuTLS, p11-kit and nettle, whose start-up costs every
 * sparkops command about 1 ms of CPU and 3 MiB of RSS (measured), although
 * only `serve` and `run --metrics-listen` use HTTP at all. */
#include "out/serve_http.h"
#include "util/clock.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CONTENT_TYPE_PROM "text/plain; version=0.0.4; charset=utf-8"

/* ---- libmicrohttpd, loaded on first use ----------------------------------------- */

static struct {
	void *lib;
	struct MHD_Daemon *(*start_daemon)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
					   MHD_AccessHandlerCallback, void *, ...);
	void (*stop_daemon)(struct MHD_Daemon *);
	struct MHD_Response *(*from_buffer)(size_t, void *, enum MHD_ResponseMemoryMode);
	struct MHD_Response *(*from_buffer_free)(size_t, void *, MHD_ContentReaderFreeCallback);
	enum MHD_Result (*add_header)(struct MHD_Response *, const char *, const char *);
	enum MHD_Result (*queue)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
	void (*destroy)(struct MHD_Response *);
	const char *(*lookup)(struct MHD_Connection *, enum MHD_ValueKind, const char *);
	int err;
} mhd_lib;
static pthread_once_t M_once = PTHREAD_ONCE_INIT;

static void mhd_load(void)
{
	static const char *const cands[] = { "libmicrohttpd.so.12", "libmicrohttpd.so" };
	const char *env = getenv("SPARKOPS_MHD_LIB"); /* tests: a missing or wrong library */
	if (env && *env)
		mhd_lib.lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
	for (size_t i = 0; i < sizeof cands / sizeof cands[0] && !mhd_lib.lib && !(env && *env); i++)
		mhd_lib.lib = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL);
	if (!mhd_lib.lib) {
		mhd_lib.err = -ELIBACC;
		return;
	}
#define SYM(field, name) (mhd_lib.field = (__typeof__(mhd_lib.field))dlsym(mhd_lib.lib, name))
	if (!SYM(start_daemon, "MHD_start_daemon") || !SYM(stop_daemon, "MHD_stop_daemon") ||
	    !SYM(from_buffer, "MHD_create_response_from_buffer") ||
	    !SYM(from_buffer_free, "MHD_create_response_from_buffer_with_free_callback") ||
	    !SYM(add_header, "MHD_add_response_header") || !SYM(queue, "MHD_queue_response") ||
	    !SYM(destroy, "MHD_destroy_response") || !SYM(lookup, "MHD_lookup_connection_value"))
		mhd_lib.err = -ELIBBAD; /* the library is kept: its threads may not exist, but dlclose gains nothing */
#undef SYM
}

const char *sp_serve_strerror(int err)
{
	if (err == -ELIBACC)
		return "libmicrohttpd.so.12 cannot be loaded (install the package libmicrohttpd12)";
	if (err == -ELIBBAD)
		return "libmicrohttpd is too old (0.9.63 or later is needed)";
	return strerror(-err);
}

/* ---- the answers ------------------------------------------------------------------- */

static const char index_html[] =
	"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>sparkops</title></head>\n"
	"<body><h1>sparkops</h1><p><a href=\"/metrics\">/metrics</a>: memory pool, budget, "
	"pressure, sensors and GPU readings in the Prometheus text format.</p></body></html>\n";
static const char not_found[] = "not found: try /metrics\n";
static const char not_allowed[] = "method not allowed: only GET and HEAD\n";
static const char failed[] = "the exposition could not be written\n";
static const char bad_request[] = "bad request: GET and HEAD take no body\n";

struct sp_server {
	struct MHD_Daemon *d;
	sp_serve_fill_fn fill;
	void *ctx;
	double cache_s;
	/* the last body, shared by every scrape within cache_s: MHD counts the
	 * references, so a slow client keeps its copy while a new one is made */
	struct MHD_Response *cached;
	double cached_at;
	size_t size_hint;
	unsigned long renders;
	struct MHD_Response *r_index, *r_400, *r_404, *r_405, *r_500;
	char addr[80];
};

void sp_serve_opts_init(struct sp_serve_opts *o)
{
	o->listen = SP_SERVE_DEFAULT_LISTEN;
	o->cache_s = SP_SERVE_DEFAULT_CACHE_S;
	o->max_conns = SP_SERVE_DEFAULT_MAX_CONNS;
	o->per_ip = SP_SERVE_DEFAULT_PER_IP;
	o->timeout_s = SP_SERVE_DEFAULT_TIMEOUT_S;
	o->conn_mem = SP_SERVE_DEFAULT_CONN_MEM;
}

static int parse_port(const char *p, unsigned *port)
{
	if (!*p || strlen(p) > 5)
		return -EINVAL;
	unsigned v = 0;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (v > 65535)
		return -EINVAL;
	*port = v;
	return 0;
}

int sp_serve_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *port_s;
	memset(ss, 0, sizeof *ss);
	if (!s)
		return -EINVAL;
	if (s[0] == '[') {
		const char *end = strchr(s, ']');
		if (!end || end[1] != ':' || (size_t)(end - s - 1) >= sizeof host)
			return -EINVAL;
		memcpy(host, s + 1, (size_t)(end - s - 1));
		host[end - s - 1] = 0;
		port_s = end + 2;
		unsigned port;
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
		if (parse_port(port_s, &port) < 0 || inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
			return -EINVAL;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		*len = sizeof *a6;
		return 0;
	}
	const char *colon = strrchr(s, ':');
	if (!colon || strchr(s, ':') != colon || (size_t)(colon - s) >= sizeof host)
		return -EINVAL; /* a bare IPv6 address needs its brackets */
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	if (strcmp(host, "localhost") == 0)
		strcpy(host, "127.0.0.1");
	unsigned port;
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	if (parse_port(colon + 1, &port) < 0 || inet_pton(AF_INET, host, &a4->sin_addr) != 1)
		return -EINVAL;
	a4->sin_family = AF_INET;
	a4->sin_port = htons((uint16_t)port);
	*len = sizeof *a4;
	return 0;
}

static void quiet_log(void *cls, const char *fm, va_list ap)
{
	(void)cls;
	(void)fm;
	(void)ap;
}

/* A fresh body from the callback, in a buffer the response owns. */
static struct MHD_Response *render(struct sp_server *srv)
{
	size_t cap = srv->size_hint ? srv->size_hint : (size_t)64 * 1024;
	for (int tries = 0; tries < 3; tries++) {
		char *buf = malloc(cap);
		if (!buf)
			return NULL;
		size_t n = srv->fill(buf, cap, srv->ctx);
		__atomic_fetch_add(&srv->renders, 1, __ATOMIC_RELAXED); /* read from other threads */
		if (n == 0) {
			free(buf);
			return NULL;
		}
		if (n < cap) {
			/* room for a little growth next time without a second call */
			srv->size_hint = n + n / 4 + 4096;
			struct MHD_Response *r = mhd_lib.from_buffer_free(n, buf, free);
			if (!r) {
				free(buf);
				return NULL;
			}
			mhd_lib.add_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE_PROM);
			mhd_lib.add_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
			return r;
		}
		free(buf);
		cap = n + 4096;
	}
	return NULL;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			       const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct sp_server *srv = cls;
	static int seen;
	(void)version;
	(void)upload_data;
	bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0;
	bool head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	/* answered at once (and the connection closed): nothing of a body is read */
	if (!get && !head)
		return mhd_lib.queue(c, MHD_HTTP_METHOD_NOT_ALLOWED, srv->r_405);
	if (!*con_cls) {
		const char *cl = mhd_lib.lookup(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if ((cl && strcmp(cl, "0") != 0) || mhd_lib.lookup(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
			return mhd_lib.queue(c, MHD_HTTP_BAD_REQUEST, srv->r_400);
	} else if (*upload_data_size) {
		return MHD_NO; /* a body after all: close */
	}
	/* the first call only says the headers are in; answering on the second
	 * lets libmicrohttpd keep the connection alive for the next scrape */
	if (!*con_cls) {
		*con_cls = &seen;
		return MHD_YES;
	}
	if (strcmp(url, "/") == 0)
		return mhd_lib.queue(c, MHD_HTTP_OK, srv->r_index);
	if (strcmp(url, "/metrics") != 0)
		return mhd_lib.queue(c, MHD_HTTP_NOT_FOUND, srv->r_404);
	double t = sp_mono_now();
	if (!srv->cached || t - srv->cached_at >= srv->cache_s || t < srv->cached_at) {
		struct MHD_Response *r = render(srv);
		if (!r)
			return mhd_lib.queue(c, MHD_HTTP_INTERNAL_SERVER_ERROR, srv->r_500);
		if (srv->cached)
			mhd_lib.destroy(srv->cached); /* in-flight sends keep their reference */
		srv->cached = r;
		srv->cached_at = t;
	}
	return mhd_lib.queue(c, MHD_HTTP_OK, srv->cached);
}

static struct MHD_Response *fixed(const char *body, const char *type)
{
	/* PERSISTENT: MHD only reads it; its API takes void * */
	struct MHD_Response *r = mhd_lib.from_buffer(strlen(body), (void *)(uintptr_t)body, // NOLINT(performance-no-int-to-ptr)
					       MHD_RESPMEM_PERSISTENT);
	if (r)
		mhd_lib.add_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	return r;
}

static void fmt_addr(char *out, size_t n, const struct sockaddr_storage *ss)
{
	char h[INET6_ADDRSTRLEN] = "?";
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &a->sin6_addr, h, sizeof h);
		snprintf(out, n, "[%s]:%u", h, ntohs(a->sin6_port));
	} else {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &a->sin_addr, h, sizeof h);
		snprintf(out, n, "%s:%u", h, ntohs(a->sin_port));
	}
}

static void free_fixed(struct sp_server *srv)
{
	struct MHD_Response **rs[] = { &srv->r_index, &srv->r_400, &srv->r_404, &srv->r_405, &srv->r_500, &srv->cached };
	for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++)
		if (*rs[i]) {
			mhd_lib.destroy(*rs[i]);
			*rs[i] = NULL;
		}
}

struct sp_server *sp_serve_start(const struct sp_serve_opts *o, sp_serve_fill_fn fill, void *ctx, int *err)
{
	pthread_once(&M_once, mhd_load);
	if (mhd_lib.err) {
		*err = mhd_lib.err;
		return NULL;
	}
	struct sockaddr_storage ss;
	socklen_t slen;
	int e = sp_serve_parse_addr(o->listen, &ss, &slen);
	if (e < 0) {
		*err = e;
		return NULL;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, slen) < 0 || listen(fd, 128) < 0) {
		*err = -errno;
		close(fd);
		return NULL;
	}
	struct sp_server *srv = calloc(1, sizeof *srv);
	if (!srv) {
		*err = -ENOMEM;
		close(fd);
		return NULL;
	}
	socklen_t bl = sizeof ss;
	getsockname(fd, (struct sockaddr *)&ss, &bl);
	fmt_addr(srv->addr, sizeof srv->addr, &ss);
	srv->fill = fill;
	srv->ctx = ctx;
	srv->cache_s = o->cache_s;
	srv->r_index = fixed(index_html, "text/html; charset=utf-8");
	srv->r_400 = fixed(bad_request, "text/plain; charset=utf-8");
	srv->r_404 = fixed(not_found, "text/plain; charset=utf-8");
	srv->r_405 = fixed(not_allowed, "text/plain; charset=utf-8");
	srv->r_500 = fixed(failed, "text/plain; charset=utf-8");
	if (!srv->r_index || !srv->r_400 || !srv->r_404 || !srv->r_405 || !srv->r_500) {
		free_fixed(srv);
		free(srv);
		close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	mhd_lib.add_header(srv->r_405, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");

	/* the server thread inherits this mask: signals stay with the caller */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	srv->d = mhd_lib.start_daemon(flags, 0, NULL, NULL, handler, srv,
				  MHD_OPTION_EXTERNAL_LOGGER, quiet_log, NULL,
				  MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->max_conns,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)o->per_ip,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->timeout_s,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)o->conn_mem,
				  MHD_OPTION_END);
	int start_errno = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!srv->d) {
		free_fixed(srv);
		free(srv);
		close(fd);
		*err = start_errno ? -start_errno : -EIO;
		return NULL;
	}
	return srv;
}

const char *sp_serve_address(const struct sp_server *srv)
{
	return srv->addr;
}

unsigned long sp_serve_renders(const struct sp_server *srv)
{
	return __atomic_load_n(&srv->renders, __ATOMIC_RELAXED);
}

void sp_serve_stop(struct sp_server *srv)
{
	if (!srv)
		return;
	mhd_lib.stop_daemon(srv->d); /* closes the listening socket and every connection */
	free_fixed(srv);
	free(srv);
}
