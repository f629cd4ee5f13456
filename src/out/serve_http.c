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
 * only `serve` and `run --metrics-listen` use HTTP at all.
 *
 * This file is the HTTP machinery; what each URL answers is serve_routes.c,
 * basic authentication serve_auth.c (they share out/serve_int.h). */
#include "out/serve_http.h"
#include "out/serve_int.h"
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

/* ---- libmicrohttpd, loaded on first use ----------------------------------------- */

struct srv_mhd srv_mhd; /* shared with serve_routes.c and serve_auth.c (serve_int.h) */

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
		srv_mhd.lib = dlopen(env_real, RTLD_NOW | RTLD_LOCAL);
	for (size_t i = 0; i < sizeof cands / sizeof cands[0] && !srv_mhd.lib && !(env && *env); i++)
		srv_mhd.lib = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL);
	if (!srv_mhd.lib) {
		srv_mhd.err = -ELIBACC;
		return;
	}
	dl_iterate_phdr(dl_note, &after);
	note_tls_deps(&before, &after, srv_mhd.lib);
#define SYM(field, name) (srv_mhd.field = (__typeof__(srv_mhd.field))dlsym(srv_mhd.lib, name))
	if (!SYM(start_daemon, "MHD_start_daemon") || !SYM(stop_daemon, "MHD_stop_daemon") ||
	    !SYM(from_buffer, "MHD_create_response_from_buffer") ||
	    !SYM(from_buffer_free, "MHD_create_response_from_buffer_with_free_callback") ||
	    !SYM(add_header, "MHD_add_response_header") || !SYM(queue, "MHD_queue_response") ||
	    !SYM(destroy, "MHD_destroy_response") || !SYM(lookup, "MHD_lookup_connection_value") ||
	    !SYM(conn_info, "MHD_get_connection_info"))
		srv_mhd.err = -ELIBBAD; /* the library is kept: its threads may not exist, but dlclose gains nothing */
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

/* ---- connections: admission and the whole-request deadline ------------------------- */

bool srv_same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
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
	const union MHD_ConnectionInfo *fi = srv_mhd.conn_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ai = srv_mhd.conn_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
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
		} else if (e->admitted && srv_same_host(&e->addr, &addr)) {
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

struct conn *srv_conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = srv_mhd.conn_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i ? i->socket_context : NULL;
}

void srv_conn_set_waiting(struct sp_server *srv, struct conn *k, bool waiting)
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
	srv_conn_set_waiting(cls, srv_conn_of(c), true);
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
	srv_free_fixed(srv);
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

struct sp_server *sp_serve_start(const struct sp_serve_opts *o, sp_serve_fill_fn fill, void *ctx, int *err)
{
	pthread_once(&M_once, mhd_load);
	if (srv_mhd.err) {
		*err = srv_mhd.err;
		return NULL;
	}
	bool tls = o->tls_cert_pem && o->tls_key_pem;
	if (tls && (!srv_mhd.feature || srv_mhd.feature(MHD_FEATURE_TLS) != MHD_YES)) {
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
	if (!srv->conns || (srv->n_users && (!srv->cd || !srv->fails)) || !srv_make_fixed(srv)) {
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
		srv->d = srv_mhd.start_daemon(flags, 0, NULL, NULL, srv_handler, srv, MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
	int start_errno = rc ? rc : errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!srv->d) {
		server_free(srv);
		close(fd);
		/* a refused certificate leaves no errno of its own */
		*err = tls && (start_errno == 0 || start_errno == EINVAL) ? -EKEYREJECTED
		       : start_errno ? -start_errno : -EIO;
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
	srv_mhd.stop_daemon(srv->d); /* closes the listening socket and every connection */
	server_free(srv);
}
