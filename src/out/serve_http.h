/* SPDX-License-Identifier: MIT */
/* A small, bounded HTTP endpoint for the Prometheus exposition (libmicrohttpd).
 * GET/HEAD /metrics answers the body a fill callback writes, reused for
 * cache_s seconds so a burst of scrapes costs one reading; GET / is a tiny
 * page linking to /metrics; anything else is 404, other methods 405.
 * Nothing a request says reaches the callback: it cannot run a command or
 * write a file. `sparkops serve` uses it in the foreground; `run`/`watch`
 * start it beside their own loop with --metrics-listen. */
#ifndef SP_SERVE_HTTP_H
#define SP_SERVE_HTTP_H
#include <stddef.h>
#include <sys/socket.h>

/* Write the /metrics body into buf (cap bytes). Return the length the whole
 * body needs (snprintf style): a return >= cap makes the server grow its
 * buffer and call again; 0 answers 500. Called from the server's own thread,
 * one call at a time: protect what it shares with the caller's thread. */
typedef size_t (*sp_serve_fill_fn)(char *buf, size_t cap, void *ctx);

/* A user allowed in by HTTP basic authentication: the password is checked
 * with crypt(3) against a bcrypt hash ("$2y$10$..."). */
struct sp_serve_user {
	const char *name;
	const char *hash;
};

struct sp_serve_opts {
	const char *listen;   /* "127.0.0.1:9851", "[::1]:9851", "0.0.0.0:9851"; port 0 picks one */
	double cache_s;       /* reuse a body for this long; 0 reads on every scrape */
	unsigned max_conns;   /* connections held at once (MHD_OPTION_CONNECTION_LIMIT); more wait in the kernel queue */
	unsigned per_ip;      /* connections served at once from one address; more are answered 503
			       * (Retry-After: 1) up to twice this, and closed at once past that */
	unsigned timeout_s;   /* an idle connection is closed after this long */
	double request_timeout_s; /* a request's line and headers must all arrive within this long of
				   * the connection opening or of the previous answer (slowloris) */
	size_t conn_mem;      /* per-connection memory: bounds the request line and headers */
	/* TLS: both PEM texts (NUL-terminated), or neither */
	const char *tls_cert_pem, *tls_key_pem;
	/* basic authentication: every request needs one of these users (n_users 0: none) */
	const struct sp_serve_user *users;
	unsigned n_users;
	/* the live page (out/webpage.h): with api_status set, GET / is the page,
	 * /api/status and /api/history answer the JSON these write (fill style;
	 * called from the server's thread, one call at a time, as fill is);
	 * NULL: / is a link to /metrics, /api/... is 404; api_nodes (serve
	 * --peer's nodes side by side) answers /api/nodes */
	sp_serve_fill_fn api_status, api_history, api_nodes;
	void *api_ctx;
};
#define SP_SERVE_DEFAULT_LISTEN "127.0.0.1:9851"
#define SP_SERVE_DEFAULT_CACHE_S 1.0
#define SP_SERVE_DEFAULT_MAX_CONNS 128
#define SP_SERVE_DEFAULT_PER_IP 32
#define SP_SERVE_DEFAULT_TIMEOUT_S 10
#define SP_SERVE_DEFAULT_REQUEST_TIMEOUT_S 5.0
#define SP_SERVE_DEFAULT_CONN_MEM ((size_t)32 * 1024)
void sp_serve_opts_init(struct sp_serve_opts *o);

/* Wrong passwords (basic authentication), per client address: the first
 * SP_SERVE_FAIL_FREE are answered 401 at once; after the Nth an address
 * waits sp_serve_fail_wait(N) seconds (1, 2, 4 ... 60) before its next try
 * is checked, and a try within the wait is answered 429 with Retry-After
 * (no bcrypt run). A right password clears its address. At most
 * SP_SERVE_FAIL_SLOTS addresses are remembered. */
#define SP_SERVE_FAIL_FREE 3
#define SP_SERVE_FAIL_SLOTS 256
double sp_serve_fail_wait(unsigned n);

/* "ADDR:PORT" with a numeric IPv4 address, "[IPv6]:PORT", or "localhost:PORT".
 * 0, or -EINVAL for anything else. */
int sp_serve_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len);
/* 1 when the address is a loopback one (127.0.0.0/8, ::1, ::ffff:127.x.y.z):
 * only this machine can connect. */
int sp_serve_addr_is_loopback(const struct sockaddr_storage *ss);

struct sp_server;
/* Bind, listen and serve from a background thread (which blocks every signal,
 * so SIGINT/SIGTERM reach the caller). NULL on failure with -errno in *err:
 * -EINVAL a bad address, -EADDRINUSE, -EACCES, -EADDRNOTAVAIL ...;
 * -ELIBACC when libmicrohttpd cannot be loaded; -EPROTONOSUPPORT when TLS
 * is asked for and the library has none; -EKEYREJECTED when it refuses the
 * certificate or key. */
struct sp_server *sp_serve_start(const struct sp_serve_opts *o, sp_serve_fill_fn fill, void *ctx, int *err);
/* Words for an error of sp_serve_start: strerror, or what is wrong with
 * libmicrohttpd (it is loaded at run time, -ELIBACC / -ELIBBAD). */
const char *sp_serve_strerror(int err);
/* The address actually bound, "127.0.0.1:40123" or "[::1]:9851" */
const char *sp_serve_address(const struct sp_server *srv);
/* "https" or "http" */
const char *sp_serve_scheme(const struct sp_server *srv);
/* How many times the fill callback ran (renders, not scrapes) */
unsigned long sp_serve_renders(const struct sp_server *srv);
/* Stop serving, close every connection, free everything. NULL is fine. */
void sp_serve_stop(struct sp_server *srv);
#endif
