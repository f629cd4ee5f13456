/* SPDX-License-Identifier: MIT */
/* Reading other nodes' status: `serve --peer URL` and `top --node URL` fetch
 * each peer's /api/status (the document of `status --json`) in a thread of
 * its own, behind a deadline, so a peer that hangs or is gone never blocks
 * the local view or a /metrics scrape.
 *
 * URLs are http://HOST[:PORT][/] only (PORT defaults to 9851): no TLS, no
 * user, no path, no query. A peer's answer must be 200 with the whole body
 * within the deadline; redirects are not followed, a body over
 * SP_PEER_BODY_MAX is refused, chunked answers are refused, and the body is
 * parsed by jansson (duplicate keys refused) and must be a status document. */
#ifndef SP_PEER_H
#define SP_PEER_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define SP_PEER_BODY_MAX ((size_t)4 << 20)
#define SP_PEER_DEFAULT_PORT "9851"
#define SP_PEER_TIMEOUT_S 2.0  /* the whole request: resolve, connect, send, read */
#define SP_PEER_INTERVAL_S 1.0 /* between the end of one poll and the next */
/* a peer is polled only while someone looks: for this long after the start
 * and after each sp_peers_view (serve: the page or /api/nodes asked), so a
 * serve nobody watches costs its peers nothing */
#define SP_PEER_IDLE_S 30.0

struct sp_peer_url {
	char host[256];   /* "10.0.0.2", "spark-b", "::1" (no brackets) */
	char port[8];
	char url[300];    /* normalised: http://HOST:PORT */
};
/* 0, or -1 with why in err ("https is not supported ...") */
int sp_peer_url_parse(const char *s, struct sp_peer_url *u, char *err, size_t errcap);

/* GET path from the peer within timeout_s: the body (malloc'ed, NUL-terminated)
 * in *body, its length in *len; 0, or -1 with why in err. */
int sp_peer_get(const struct sp_peer_url *u, const char *path, double timeout_s, char **body, size_t *len, char *err,
		size_t errcap);
/* A peer's /api/status body as a document (an object with "version" and
 * "pool"), or NULL with why in err. */
json_t *sp_peer_parse(const char *body, size_t len, char *err, size_t errcap);

struct sp_peers;
/* Start one polling thread per URL (at most 8), each polling every
 * interval_s behind timeout_s while a view came within idle_s
 * (SP_PEER_IDLE_S). NULL on failure (no memory, no thread). */
struct sp_peers *sp_peers_start(const struct sp_peer_url *urls, int n, double interval_s, double timeout_s,
				double idle_s);
int sp_peers_n(const struct sp_peers *p);
/* Wait until every peer has had one answer or failure, or timeout_s passed */
void sp_peers_wait_first(struct sp_peers *p, double timeout_s);

struct sp_peer_view {
	char url[300];
	char state[8];    /* "ok": the last poll answered; "down": it failed (at once, not after the
			   * old figures aged); "stale": no poll has ended within the deadline */
	char error[200];  /* why not ok */
	double age_s;     /* since the last good answer; NAN: never */
	json_t *doc;      /* the last good document (a new reference: json_decref it), or NULL */
};
/* (also keeps the polls going: SP_PEER_IDLE_S) */
void sp_peers_view(struct sp_peers *p, int i, struct sp_peer_view *v);
/* Stop the threads (each ends within its deadline) and free everything. NULL is fine. */
void sp_peers_stop(struct sp_peers *p);
#endif
