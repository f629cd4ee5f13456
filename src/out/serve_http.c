// SPDX-License-Identifier: MIT
/* The /metrics endpoint on libmicrohttpd: one internal epoll thread (so the
 * fill callback never runs twice at once), our own listening socket (so a
 * port in use is a clear EADDRINUSE, and port 0 works), and every limit MHD
 * offers set: connections, connections per address, idle timeout, and the
 * per-connection memory that bounds a request's line and headers.
 *
 * Two limits MHD does not have are ours (struct conn, one per connection,
 * kept from MHD's connection notifications):
 *  - a whole-request deadline: MHD's timeout is an idle one, which headers
 *    trickled one line every few seconds never trip (slowloris). A reaper
 *    thread shuts down (shutdown(2), never close: the fd stays MHD's) every
 *    connection whose request line and headers are not all in within
 *    request_timeout_s of its opening or of its previous answer; MHD then
 *    sees the end of the stream and frees it.
 *  - per-address admission: the first per_ip connections from an address are
 *    served; the next ones (up to MHD's hard per-address limit, twice that)
 *    are answered 503 with Retry-After: 1, not dropped without an answer.
 * Optional TLS (MHD_USE_TLS, PEM in memory) and basic authentication
 * (crypt(3) against bcrypt hashes, results compared in constant time).
 * Wrong passwords are slowed per client address: after SP_SERVE_FAIL_FREE
 * wrong tries an address waits 1 s, then 2, 4 ... up to 60 s between tries,
 * answered 429 with Retry-After at once (no bcrypt is run for it), so a
 * flood costs the server a few checks, not one per guess, and a right
 * password from another address is not queued behind it. The table of
 * addresses is fixed (SP_SERVE_FAIL_SLOTS; the longest quiet one is
 * forgotten first), an entry forgotten after 10 minutes without a wrong try.
 *
 * libmicrohttpd is loaded with dlopen when a server starts, not linked: on
 * Debian it pulls in GnuTLS, p11-kit and nettle, whose start-up costs every
 * sparkops command about 1 ms of CPU and 3 MiB of RSS (measured), although
 * only `serve` and `run --metrics-listen` use HTTP at all. */
#include "out/serve_http.h"
#include "out/webpage.h"
#include "util/clock.h"
#include "util/envlib.h"

#include <arpa/inet.h>
#include <crypt.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <sys/mman.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
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
	const union MHD_ConnectionInfo *(*conn_info)(struct MHD_Connection *, enum MHD_ConnectionInfoType, ...);
	enum MHD_Result (*feature)(enum MHD_FEATURE); /* optional: missing means no TLS */
	int err;
} mhd_lib;
static pthread_once_t M_once = PTHREAD_ONCE_INIT;

/* ---- what a server without TLS does not keep resident ----------------------------
 * Debian's libmicrohttpd links GnuTLS, and GnuTLS its chain (p11-kit, nettle,
 * hogweed, gmp, tasn1, idn2, unistring, ffi). Loading them (the relocations
 * read their symbol tables) and gnutls_global_init, which libmicrohttpd's
 * constructor runs, make ~2 MiB of their text and read-only data resident:
 * half of serve's PSS (measured: 2.2 of 4.2 MiB), which a server without
 * TLS never runs again. So the objects that came with libmicrohttpd (those
 * dl_iterate_phdr lists after its dlopen and did not before), not
 * libmicrohttpd itself, are noted at the load, and once a daemon without TLS
 * runs, their read-only segments (no PF_W: the loader never writes them, so
 * the page cache holds the same bytes; RELRO lies in a writable segment) are
 * released: munlock (serve's mlockall locked them on fault), MADV_DONTNEED,
 * then MADV_RANDOM. A later use faults them back from the page cache, a
 * page at a time. */
#define SP_DL_OBJS_MAX 128
struct dl_obj {
	uintptr_t base;
	const ElfW(Phdr) *phdr;
	ElfW(Half) phnum;
};
static struct dl_obj tls_deps[SP_DL_OBJS_MAX];
static size_t n_tls_deps;
struct dl_list {
	struct dl_obj o[SP_DL_OBJS_MAX];
	size_t n;
};

static int dl_note(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct dl_list *l = arg;
	if (l->n < SP_DL_OBJS_MAX)
		l->o[l->n++] = (struct dl_obj){ info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum };
	return 0;
}

/* the objects in after that are not in before, nor the library lib itself */
static void note_tls_deps(const struct dl_list *before, const struct dl_list *after, void *lib)
{
	struct link_map *own = NULL;
	if (dlinfo(lib, RTLD_DI_LINKMAP, &own) != 0)
		return; /* cannot tell libmicrohttpd's own segments: keep everything */
	for (size_t i = 0; i < after->n; i++) {
		bool old = after->o[i].base == own->l_addr;
		for (size_t k = 0; k < before->n && !old; k++)
			old = before->o[k].base == after->o[i].base;
		if (!old && n_tls_deps < SP_DL_OBJS_MAX)
			tls_deps[n_tls_deps++] = after->o[i];
	}
}

/* dl_iterate_phdr gives a load base as an integer: the one cast back */
static void *seg_addr(uintptr_t a)
{
	return (void *)a; // NOLINT(performance-no-int-to-ptr): the loader hands addresses over as integers
}

static void release_tls_deps(void)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	for (size_t i = 0; i < n_tls_deps; i++)
		for (ElfW(Half) k = 0; k < tls_deps[i].phnum; k++) {
			const ElfW(Phdr) *ph = &tls_deps[i].phdr[k];
			if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) || ph->p_memsz == 0)
				continue;
			uintptr_t a = (tls_deps[i].base + ph->p_vaddr) & ~(pg - 1);
			uintptr_t e = (tls_deps[i].base + ph->p_vaddr + ph->p_memsz + pg - 1) & ~(pg - 1);
			(void)munlock(seg_addr(a), e - a);
			(void)madvise(seg_addr(a), e - a, MADV_DONTNEED);
			/* the loader still reads a name or a header there now and
			 * then (each later dlopen compares sonames): one page, not
			 * the kernel's 64 KiB of fault-around each time */
			(void)madvise(seg_addr(a), e - a, MADV_RANDOM);
		}
}

static void mhd_load(void)
{
	static const char *const cands[] = { "libmicrohttpd.so.12", "libmicrohttpd.so" };
	const char *env = getenv("SPARKOPS_MHD_LIB"); /* tests: a missing or wrong library */
	static char env_real[PATH_MAX];
	/* as root, only a library root owns in folders only root may write */
	if (env && *env && !sp_env_lib_ok("SPARKOPS_MHD_LIB", env, env_real, sizeof env_real))
		env = NULL;
	static struct dl_list before, after;
	dl_iterate_phdr(dl_note, &before);
	if (env && *env)
		mhd_lib.lib = dlopen(env_real, RTLD_NOW | RTLD_LOCAL);
	for (size_t i = 0; i < sizeof cands / sizeof cands[0] && !mhd_lib.lib && !(env && *env); i++)
		mhd_lib.lib = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL);
	if (!mhd_lib.lib) {
		mhd_lib.err = -ELIBACC;
		return;
	}
	dl_iterate_phdr(dl_note, &after);
	note_tls_deps(&before, &after, mhd_lib.lib);
#define SYM(field, name) (mhd_lib.field = (__typeof__(mhd_lib.field))dlsym(mhd_lib.lib, name))
	if (!SYM(start_daemon, "MHD_start_daemon") || !SYM(stop_daemon, "MHD_stop_daemon") ||
	    !SYM(from_buffer, "MHD_create_response_from_buffer") ||
	    !SYM(from_buffer_free, "MHD_create_response_from_buffer_with_free_callback") ||
	    !SYM(add_header, "MHD_add_response_header") || !SYM(queue, "MHD_queue_response") ||
	    !SYM(destroy, "MHD_destroy_response") || !SYM(lookup, "MHD_lookup_connection_value") ||
	    !SYM(conn_info, "MHD_get_connection_info"))
		mhd_lib.err = -ELIBBAD; /* the library is kept: its threads may not exist, but dlclose gains nothing */
	SYM(feature, "MHD_is_feature_supported");
#undef SYM
}

const char *sp_serve_strerror(int err)
{
	if (err == -ELIBACC)
		return "libmicrohttpd.so.12 cannot be loaded (install the package libmicrohttpd12)";
	if (err == -ELIBBAD)
		return "libmicrohttpd is too old (0.9.63 or later is needed)";
	if (err == -EPROTONOSUPPORT)
		return "the libmicrohttpd loaded has no TLS support (Debian's libmicrohttpd12 has it, through GnuTLS)";
	if (err == -EKEYREJECTED)
		return "libmicrohttpd refused the TLS certificate or key (PEM, and the key must match the certificate)";
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
static const char busy[] = "too many connections from this address: retry in a second\n";
static const char unauthorized[] = "authentication required\n";
static const char too_many[] = "too many wrong passwords from this address: retry later\n";

/* One per connection MHD holds (its socket context), in a table of
 * max_conns; guarded by conn_mu (the reaper thread reads it). */
struct conn {
	bool used;
	bool admitted; /* within per_ip: served; otherwise answered 503 */
	bool waiting;  /* the request's line and headers are not all in yet */
	bool cut;      /* shut down by the reaper once already */
	int fd;
	double since;  /* monotonic: waiting since (opened, or the previous answer sent) */
	struct sockaddr_storage addr;
};

#define AUTH_CACHE 4
#define AUTH_MAX 512 /* an Authorization header longer than this is refused */
#define FAIL_WAIT_MAX 60.0    /* the longest wait between wrong tries from one address */
#define FAIL_FORGET_S 600.0   /* an address quiet this long starts afresh */

/* an address that sent wrong passwords: how many in a row, and until when it waits */
struct fail {
	bool used;
	unsigned n;
	double until, last; /* monotonic */
	struct sockaddr_storage addr;
};

struct sp_server {
	struct MHD_Daemon *d;
	sp_serve_fill_fn fill;
	void *ctx;
	sp_serve_fill_fn api_status, api_history, api_nodes; /* the live page's JSON; NULL: no page */
	void *api_ctx;
	double cache_s;
	/* the last body, shared by every scrape within cache_s: MHD counts the
	 * references, so a slow client keeps its copy while a new one is made */
	struct MHD_Response *cached;
	double cached_at;
	size_t size_hint;
	unsigned long renders;
	struct MHD_Response *r_index, *r_400, *r_401, *r_404, *r_405, *r_500, *r_503;
	char addr[80];
	bool tls;
	/* admission and the request deadline */
	unsigned per_ip;
	double request_timeout_s;
	struct conn *conns;
	unsigned n_conns;
	pthread_mutex_t conn_mu;
	pthread_cond_t reaper_cv;
	bool reaper_stop, reaper_started;
	double reaper_wake_at; /* monotonic: when the reaper wakes next (INFINITY: when poked) */
	pthread_t reaper;
	/* basic authentication (server thread only) */
	const struct sp_serve_user *users;
	unsigned n_users;
	struct crypt_data *cd;
	char auth_ok[AUTH_CACHE][AUTH_MAX]; /* headers that passed: bcrypt costs ~50 ms a check */
	unsigned auth_next;
	struct fail *fails; /* SP_SERVE_FAIL_SLOTS addresses (server thread only) */
	unsigned long refused_429;
};

void sp_serve_opts_init(struct sp_serve_opts *o)
{
	o->listen = SP_SERVE_DEFAULT_LISTEN;
	o->cache_s = SP_SERVE_DEFAULT_CACHE_S;
	o->max_conns = SP_SERVE_DEFAULT_MAX_CONNS;
	o->per_ip = SP_SERVE_DEFAULT_PER_IP;
	o->timeout_s = SP_SERVE_DEFAULT_TIMEOUT_S;
	o->request_timeout_s = SP_SERVE_DEFAULT_REQUEST_TIMEOUT_S;
	o->conn_mem = SP_SERVE_DEFAULT_CONN_MEM;
	o->tls_cert_pem = o->tls_key_pem = NULL;
	o->users = NULL;
	o->n_users = 0;
}

int sp_serve_addr_is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
		return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
		if (IN6_IS_ADDR_LOOPBACK(&a->sin6_addr))
			return 1;
		return IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && a->sin6_addr.s6_addr[12] == 127;
	}
	return 0;
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
			struct MHD_Response *r = mhd_lib.from_buffer_free(n, buf, free);
			if (!r) {
				free(buf);
				return NULL;
			}
			mhd_lib.add_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
			mhd_lib.add_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
			mhd_lib.add_header(r, "X-Content-Type-Options", "nosniff");
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
		return mhd_lib.queue(c, MHD_HTTP_INTERNAL_SERVER_ERROR, srv->r_500);
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
		return mhd_lib.queue(c, MHD_HTTP_INTERNAL_SERVER_ERROR, srv->r_500);
	sp_webpage_csp(csp, sizeof csp, nonce);
	mhd_lib.add_header(r, "Content-Security-Policy", csp);
	mhd_lib.add_header(r, "Referrer-Policy", "no-referrer");
	mhd_lib.add_header(r, "X-Frame-Options", "DENY");
	enum MHD_Result q = mhd_lib.queue(c, MHD_HTTP_OK, r);
	mhd_lib.destroy(r);
	return q;
}

static enum MHD_Result answer_json(struct sp_server *srv, struct MHD_Connection *c, sp_serve_fill_fn fn)
{
	struct MHD_Response *r = render_with(fn, srv->api_ctx, "application/json", (size_t)64 * 1024, NULL);
	if (!r)
		return mhd_lib.queue(c, MHD_HTTP_INTERNAL_SERVER_ERROR, srv->r_500);
	enum MHD_Result q = mhd_lib.queue(c, MHD_HTTP_OK, r);
	mhd_lib.destroy(r);
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

/* ---- connections: admission and the whole-request deadline ------------------------- */

static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
			      sizeof(struct in6_addr)) == 0;
	return false;
}

/* The limit a waiting request has now: request_timeout_s, or 1 s while MHD
 * holds as many connections as it may. Under conn_mu. */
static double wait_limit(const struct sp_server *srv)
{
	unsigned used = 0;
	for (unsigned i = 0; i < srv->n_conns; i++)
		used += srv->conns[i].used;
	double limit = srv->request_timeout_s;
	return used >= srv->n_conns && limit > 1.0 ? 1.0 : limit;
}

/* k has begun waiting: wake the reaper only when it sleeps past k's
 * deadline (it sleeps until the earliest one, or, none waiting, until
 * poked), so a kept-alive scraper costs it one wake-up a deadline, and an
 * idle server none. Under conn_mu. */
static void reaper_poke(struct sp_server *srv, const struct conn *k)
{
	double due = k->since + wait_limit(srv);
	if (due < srv->reaper_wake_at) {
		srv->reaper_wake_at = due;
		pthread_cond_signal(&srv->reaper_cv);
	}
}

/* MHD_OPTION_NOTIFY_CONNECTION: in the server thread, as MHD accepts and frees */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct sp_server *srv = cls;
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		struct conn *k = *socket_context;
		if (!k)
			return;
		/* before MHD closes the fd: the reaper never shuts down a reused one */
		pthread_mutex_lock(&srv->conn_mu);
		k->used = false;
		pthread_mutex_unlock(&srv->conn_mu);
		*socket_context = NULL;
		return;
	}
	if (toe != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	const union MHD_ConnectionInfo *fi = mhd_lib.conn_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ai = mhd_lib.conn_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	struct sockaddr_storage addr;
	memset(&addr, 0, sizeof addr);
	if (ai && ai->client_addr) {
		size_t n = ai->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
		memcpy(&addr, ai->client_addr, n);
	}
	pthread_mutex_lock(&srv->conn_mu);
	struct conn *k = NULL;
	unsigned from_addr = 0;
	for (unsigned i = 0; i < srv->n_conns; i++) {
		struct conn *e = &srv->conns[i];
		if (!e->used) {
			if (!k)
				k = e;
		} else if (e->admitted && same_host(&e->addr, &addr)) {
			from_addr++;
		}
	}
	if (k) {
		k->used = true;
		k->admitted = from_addr < srv->per_ip;
		k->waiting = true;
		k->cut = false;
		k->fd = fi ? fi->connect_fd : -1;
		k->since = sp_mono_now();
		k->addr = addr;
		reaper_poke(srv, k);
	}
	pthread_mutex_unlock(&srv->conn_mu);
	*socket_context = k; /* NULL (the table is full: never, MHD holds at most max_conns): answered 503 */
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = mhd_lib.conn_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i ? i->socket_context : NULL;
}

static void conn_set_waiting(struct sp_server *srv, struct conn *k, bool waiting)
{
	if (!k)
		return;
	pthread_mutex_lock(&srv->conn_mu);
	k->waiting = waiting;
	if (waiting) {
		k->since = sp_mono_now();
		reaper_poke(srv, k);
	}
	pthread_mutex_unlock(&srv->conn_mu);
}

/* MHD_OPTION_NOTIFY_COMPLETED: an answer went out (or the request ended):
 * a kept-alive connection's next request has the same deadline */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	(void)con_cls;
	(void)toe;
	conn_set_waiting(cls, conn_of(c), true);
}

/* The reaper: shut down the connections whose request has been coming for
 * longer than request_timeout_s, each when its time is up (it sleeps until
 * the earliest deadline; with nothing waiting, until poked). While MHD holds as many
 * connections as it may, new ones wait in the kernel's queue: then a request
 * still coming after 1 s is shed (a real client sends its request at once),
 * so a slowloris that fills every slot delays a scrape by about a second,
 * not by the whole deadline. */
static void *reaper_main(void *p)
{
	struct sp_server *srv = p;
	pthread_mutex_lock(&srv->conn_mu);
	while (!srv->reaper_stop) {
		double t = sp_mono_now();
		double limit = wait_limit(srv);
		double next = INFINITY;
		for (unsigned i = 0; i < srv->n_conns; i++) {
			struct conn *e = &srv->conns[i];
			if (!e->used || !e->waiting || e->cut || e->fd < 0)
				continue;
			if (t - e->since > limit) {
				shutdown(e->fd, SHUT_RDWR); /* MHD sees the end and frees it; the fd stays its own */
				e->cut = true;
			} else if (e->since + limit < next) {
				next = e->since + limit;
			}
		}
		/* until the earliest deadline (and a little past it: "longer
		 * than"), or, none waiting, until a connection pokes us */
		srv->reaper_wake_at = next;
		if (isinf(next)) {
			pthread_cond_wait(&srv->reaper_cv, &srv->conn_mu);
			continue;
		}
		double at = next + 0.01;
		struct timespec ts = { (time_t)at, (long)((at - (double)(time_t)at) * 1e9) };
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&srv->reaper_cv, &srv->conn_mu, &ts);
	}
	pthread_mutex_unlock(&srv->conn_mu);
	return NULL;
}

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
		if (f->used && same_host(&f->addr, a))
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

enum auth { AUTH_NO, AUTH_OK, AUTH_WAIT };

/* AUTH_OK when the request names a configured user with the right
 * password; AUTH_WAIT (*wait seconds) when its address must wait before it
 * may try again (nothing checked) */
static enum auth authorized(struct sp_server *srv, struct MHD_Connection *c, const struct conn *k, double *wait)
{
	const char *v = mhd_lib.lookup(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
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
static enum MHD_Result answer_wait(struct sp_server *srv, struct MHD_Connection *c, double wait)
{
	(void)srv;
	struct MHD_Response *r = mhd_lib.from_buffer(sizeof too_many - 1, (void *)(uintptr_t)too_many, // NOLINT(performance-no-int-to-ptr)
						     MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	char ra[16];
	snprintf(ra, sizeof ra, "%.0f", ceil(wait));
	mhd_lib.add_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	mhd_lib.add_header(r, MHD_HTTP_HEADER_RETRY_AFTER, ra);
	enum MHD_Result q = mhd_lib.queue(c, 429, r);
	mhd_lib.destroy(r);
	return q;
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
	if (!*con_cls) {
		/* the request's line and headers are in: the deadline is met */
		struct conn *k = conn_of(c);
		conn_set_waiting(srv, k, false);
		if (!k || !k->admitted)
			return mhd_lib.queue(c, MHD_HTTP_SERVICE_UNAVAILABLE, srv->r_503);
		double wait = 0;
		enum auth a = srv->n_users ? authorized(srv, c, k, &wait) : AUTH_OK;
		if (a == AUTH_WAIT)
			return answer_wait(srv, c, wait);
		if (a == AUTH_NO)
			return mhd_lib.queue(c, MHD_HTTP_UNAUTHORIZED, srv->r_401);
	}
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
	struct MHD_Response **rs[] = { &srv->r_index, &srv->r_400, &srv->r_401, &srv->r_404,
				       &srv->r_405, &srv->r_500, &srv->r_503, &srv->cached };
	for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++)
		if (*rs[i]) {
			mhd_lib.destroy(*rs[i]);
			*rs[i] = NULL;
		}
}

static void reaper_end(struct sp_server *srv)
{
	if (!srv->reaper_started)
		return;
	pthread_mutex_lock(&srv->conn_mu);
	srv->reaper_stop = true;
	pthread_cond_signal(&srv->reaper_cv);
	pthread_mutex_unlock(&srv->conn_mu);
	pthread_join(srv->reaper, NULL);
	srv->reaper_started = false;
}

static void server_free(struct sp_server *srv)
{
	reaper_end(srv);
	free_fixed(srv);
	pthread_mutex_destroy(&srv->conn_mu);
	pthread_cond_destroy(&srv->reaper_cv);
	free(srv->conns);
	free(srv->fails);
	if (srv->cd) {
		explicit_bzero(srv->cd, sizeof *srv->cd);
		free(srv->cd);
	}
	explicit_bzero(srv->auth_ok, sizeof srv->auth_ok);
	free(srv);
}

/* the fixed answers; false when one could not be made */
static bool make_fixed(struct sp_server *srv)
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
	mhd_lib.add_header(srv->r_405, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	mhd_lib.add_header(srv->r_401, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Basic realm=\"sparkops\"");
	mhd_lib.add_header(srv->r_503, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	mhd_lib.add_header(srv->r_503, MHD_HTTP_HEADER_CONNECTION, "close");
	return true;
}

struct sp_server *sp_serve_start(const struct sp_serve_opts *o, sp_serve_fill_fn fill, void *ctx, int *err)
{
	pthread_once(&M_once, mhd_load);
	if (mhd_lib.err) {
		*err = mhd_lib.err;
		return NULL;
	}
	bool tls = o->tls_cert_pem && o->tls_key_pem;
	if (tls && (!mhd_lib.feature || mhd_lib.feature(MHD_FEATURE_TLS) != MHD_YES)) {
		*err = -EPROTONOSUPPORT;
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
	pthread_mutex_init(&srv->conn_mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&srv->reaper_cv, &ca);
	pthread_condattr_destroy(&ca);
	socklen_t bl = sizeof ss;
	getsockname(fd, (struct sockaddr *)&ss, &bl);
	fmt_addr(srv->addr, sizeof srv->addr, &ss);
	srv->fill = fill;
	srv->ctx = ctx;
	srv->api_status = o->api_status;
	srv->api_history = o->api_history;
	srv->api_nodes = o->api_nodes;
	srv->api_ctx = o->api_ctx;
	srv->cache_s = o->cache_s;
	srv->tls = tls;
	srv->per_ip = o->per_ip ? o->per_ip : 1;
	srv->request_timeout_s = o->request_timeout_s > 0 ? o->request_timeout_s : SP_SERVE_DEFAULT_REQUEST_TIMEOUT_S;
	srv->n_conns = o->max_conns ? o->max_conns : 1;
	srv->users = o->users;
	srv->n_users = o->users ? o->n_users : 0;
	srv->conns = calloc(srv->n_conns, sizeof *srv->conns);
	if (srv->n_users) {
		srv->cd = calloc(1, sizeof *srv->cd);
		srv->fails = calloc(SP_SERVE_FAIL_SLOTS, sizeof *srv->fails);
	}
	if (!srv->conns || (srv->n_users && (!srv->cd || !srv->fails)) || !make_fixed(srv)) {
		server_free(srv);
		close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	/* MHD's own per-address limit is the hard one: past it a connection is
	 * closed at once; between per_ip and it, answered 503 */
	unsigned hard_per_ip = srv->per_ip > srv->n_conns / 2 ? srv->n_conns : srv->per_ip * 2;

	/* the server threads inherit this mask: signals stay with the caller */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(&srv->reaper, NULL, reaper_main, srv);
	srv->reaper_started = rc == 0;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (tls)
		flags |= MHD_USE_TLS;
	/* PEM texts: MHD only reads them; its API takes char * */
	void *cert = (void *)(uintptr_t)o->tls_cert_pem; // NOLINT(performance-no-int-to-ptr)
	void *key = (void *)(uintptr_t)o->tls_key_pem;   // NOLINT(performance-no-int-to-ptr)
	struct MHD_OptionItem ops[] = {
		{ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)quiet_log, NULL },
		{ MHD_OPTION_LISTEN_SOCKET, fd, NULL },
		{ MHD_OPTION_CONNECTION_LIMIT, (intptr_t)srv->n_conns, NULL },
		{ MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)hard_per_ip, NULL },
		{ MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)o->timeout_s, NULL },
		{ MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)o->conn_mem, NULL },
		{ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, srv },
		{ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, srv },
		{ tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, cert },
		{ tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, key },
		{ MHD_OPTION_END, 0, NULL },
	};
	errno = 0;
	if (rc == 0)
		srv->d = mhd_lib.start_daemon(flags, 0, NULL, NULL, handler, srv, MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
	int start_errno = rc ? rc : errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!srv->d) {
		server_free(srv);
		close(fd);
		/* a refused certificate leaves no errno of its own */
		if (tls && (start_errno == 0 || start_errno == EINVAL))
			*err = -EKEYREJECTED;
		else
			*err = start_errno ? -start_errno : -EIO;
		return NULL;
	}
	if (!tls)
		release_tls_deps();
	return srv;
}

const char *sp_serve_address(const struct sp_server *srv)
{
	return srv->addr;
}

const char *sp_serve_scheme(const struct sp_server *srv)
{
	return srv->tls ? "https" : "http";
}

unsigned long sp_serve_renders(const struct sp_server *srv)
{
	return __atomic_load_n(&srv->renders, __ATOMIC_RELAXED);
}

void sp_serve_stop(struct sp_server *srv)
{
	if (!srv)
		return;
	reaper_end(srv); /* before MHD frees the connections it looks at */
	mhd_lib.stop_daemon(srv->d); /* closes the listening socket and every connection */
	server_free(srv);
}
