/* SPDX-License-Identifier: MIT */
/* Private to out/serve_*.c, the /metrics endpoint's files: serve_http.c (the
 * HTTP machinery: libmicrohttpd loaded, the listening socket, connections,
 * admission and the reaper, start and stop), serve_routes.c (what each URL
 * answers: the fixed answers, the live page and its JSON, the cached
 * exposition) and serve_auth.c (basic authentication, the waits after wrong
 * passwords). The server's state and the few functions they call across. */
#ifndef SP_SERVE_INT_H
#define SP_SERVE_INT_H
#include "out/serve_http.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct crypt_data;

/* libmicrohttpd's functions, loaded on first use (serve_http.c: mhd_load) */
struct srv_mhd {
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
};
extern struct srv_mhd srv_mhd;

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

enum auth { AUTH_NO, AUTH_OK, AUTH_WAIT };

/* serve_http.c: the connection machinery */
bool srv_same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b);
struct conn *srv_conn_of(struct MHD_Connection *c);
void srv_conn_set_waiting(struct sp_server *srv, struct conn *k, bool waiting);

/* serve_routes.c: the answers (MHD's access handler, the fixed answers) */
enum MHD_Result srv_handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			    const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls);
bool srv_make_fixed(struct sp_server *srv);
void srv_free_fixed(struct sp_server *srv);

/* serve_auth.c: basic authentication */
enum auth srv_authorized(struct sp_server *srv, struct MHD_Connection *c, const struct conn *k, double *wait);
enum MHD_Result srv_answer_wait(struct sp_server *srv, struct MHD_Connection *c, double wait);
#endif
