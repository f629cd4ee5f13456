// SPDX-License-Identifier: MIT
/* Other nodes' status over HTTP, polled behind a deadline. See peer.h. */
#include "out/peer.h"

#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define PEERS_MAX 8
#define HEAD_MAX ((size_t)16 * 1024)

static void say(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *err, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, cap, fmt, ap);
	va_end(ap);
}

static bool host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
	       c == '_';
}

int sp_peer_url_parse(const char *s, struct sp_peer_url *u, char *err, size_t errcap)
{
	memset(u, 0, sizeof *u);
	if (strncasecmp(s, "https://", 8) == 0) {
		say(err, errcap, "https is not supported: the peers are read over http (a private link, or an ssh tunnel)");
		return -1;
	}
	if (strncasecmp(s, "http://", 7) != 0) {
		say(err, errcap, "is not http://HOST[:PORT] (e.g. http://10.0.0.2:9851)");
		return -1;
	}
	const char *p = s + 7, *h, *he;
	if (*p == '[') {
		h = p + 1;
		he = strchr(h, ']');
		if (!he || he == h) {
			say(err, errcap, "has an unclosed '[' in its address");
			return -1;
		}
		for (const char *c = h; c < he; c++)
			if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') || (*c >= 'A' && *c <= 'F') || *c == ':' ||
			      *c == '.')) {
				say(err, errcap, "is not an IPv6 address in brackets");
				return -1;
			}
		p = he + 1;
	} else {
		h = p;
		while (host_char(*p))
			p++;
		he = p;
		if (he == h) {
			say(err, errcap, "has no host (http://HOST[:PORT])");
			return -1;
		}
	}
	if ((size_t)(he - h) >= sizeof u->host) {
		say(err, errcap, "has a host name too long");
		return -1;
	}
	memcpy(u->host, h, (size_t)(he - h));
	snprintf(u->port, sizeof u->port, "%s", SP_PEER_DEFAULT_PORT);
	if (*p == ':') {
		p++;
		const char *ps = p;
		long v = 0;
		while (*p >= '0' && *p <= '9' && p - ps < 6)
			v = v * 10 + (*p++ - '0');
		if (p == ps || v < 1 || v > 65535 || (*p >= '0' && *p <= '9')) {
			say(err, errcap, "has a port that is not 1-65535");
			return -1;
		}
		snprintf(u->port, sizeof u->port, "%ld", v);
	}
	if (*p == '/' && p[1] == 0)
		p++;
	if (*p) {
		say(err, errcap, "has more than http://HOST[:PORT] (no user, path or query: the node's /api/status is read)");
		return -1;
	}
	bool v6 = strchr(u->host, ':') != NULL;
	snprintf(u->url, sizeof u->url, "http://%s%s%s:%s", v6 ? "[" : "", u->host, v6 ? "]" : "", u->port);
	return 0;
}

/* wait for fd (events) until the deadline; 1 ready, 0 time is up, -1 stopped */
static int wait_fd(int fd, short events, double deadline, int stopfd)
{
	for (;;) {
		double left = deadline - sp_mono_now();
		if (left <= 0)
			return 0;
		struct pollfd p[2] = { { .fd = fd, .events = events }, { .fd = stopfd, .events = POLLIN } };
		int r = poll(p, stopfd >= 0 ? 2 : 1, (int)ceil(left * 1000.0));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (stopfd >= 0 && (p[1].revents & POLLIN))
			return -1;
		if (r > 0)
			return 1;
	}
}

/* the Content-Length of a head ending at he, or -1 when none */
static long long content_length(const char *buf, const char *he)
{
	for (const char *l = memmem(buf, (size_t)(he - buf), "\r\n", 2); l && l < he;
	     l = memmem(l + 2, (size_t)(he - l - 2), "\r\n", 2)) {
		if ((size_t)(he - l) > 17 && strncasecmp(l + 2, "Content-Length:", 15) == 0) {
			char *end;
			long long v = strtoll(l + 17, &end, 10);
			return end == l + 17 || v < 0 ? -1 : v;
		}
		if (l + 2 >= he)
			break;
	}
	return -1;
}

/* the head and a body of its Content-Length are all in */
static bool whole(const char *buf, size_t n)
{
	const char *he = memmem(buf, n, "\r\n\r\n", 4);
	if (!he)
		return false;
	long long cl = content_length(buf, he);
	return cl >= 0 && (unsigned long long)(n - (size_t)(he + 4 - buf)) >= (unsigned long long)cl;
}

/* a connected socket to the peer, or -1 with why in err; the deadline is
 * for the whole request */
static int peer_connect(const struct sp_peer_url *u, double deadline, double timeout_s, int stopfd, char *err,
			size_t errcap)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	int g = getaddrinfo(u->host, u->port, &hints, &ai);
	if (g != 0) {
		say(err, errcap, "cannot resolve '%s': %s", u->host, gai_strerror(g));
		return -1;
	}
	int fd = -1;
	int last = ETIMEDOUT;
	for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0) {
			last = errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS) {
			last = errno;
			close(fd);
			fd = -1;
			continue;
		}
		int w = wait_fd(fd, POLLOUT, deadline, stopfd);
		int soerr = 0;
		socklen_t sl = sizeof soerr;
		if (w <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
			last = w == 0 ? ETIMEDOUT : w < 0 ? ECANCELED : soerr ? soerr : errno;
			close(fd);
			fd = -1;
			if (w <= 0)
				break; /* the deadline is for the whole request */
		}
	}
	freeaddrinfo(ai);
	if (fd < 0) {
		if (last == ETIMEDOUT)
			say(err, errcap, "no connection within %.1fs", timeout_s);
		else
			say(err, errcap, "cannot connect: %s", strerror(last));
	}
	return fd;
}

/* the GET request for path, whole; 0 or -1 with why in err */
static int peer_send(int fd, const struct sp_peer_url *u, const char *path, double deadline, int stopfd, char *err,
		     size_t errcap)
{
	char req[512];
	int rl = snprintf(req, sizeof req,
			  "GET %s HTTP/1.0\r\nHost: %s\r\nAccept: application/json\r\nUser-Agent: sparkops\r\n"
			  "Connection: close\r\n\r\n",
			  path, u->url + 7);
	size_t sent = 0;
	while (sent < (size_t)rl) {
		ssize_t k = send(fd, req + sent, (size_t)rl - sent, MSG_NOSIGNAL);
		if (k > 0) {
			sent += (size_t)k;
			continue;
		}
		if (k < 0 && (errno == EAGAIN || errno == EINTR) && wait_fd(fd, POLLOUT, deadline, stopfd) == 1)
			continue;
		say(err, errcap, "cannot send the request: %s", k < 0 ? strerror(errno) : "closed");
		return -1;
	}
	return 0;
}

/* the answer, head and body, read until the close or a whole body, at most
 * SP_PEER_BODY_MAX + HEAD_MAX bytes: a NUL-terminated heap buffer and its
 * length in *n, or NULL with why in err */
static char *peer_read(int fd, double deadline, double timeout_s, int stopfd, size_t *n, char *err, size_t errcap)
{
	size_t cap = (size_t)64 * 1024;
	*n = 0;
	char *buf = malloc(cap + 1);
	if (!buf) {
		say(err, errcap, "out of memory");
		return NULL;
	}
	for (;;) {
		if (*n == cap) {
			if (cap >= SP_PEER_BODY_MAX + HEAD_MAX) {
				say(err, errcap, "an answer over %zu MiB (refused)", SP_PEER_BODY_MAX >> 20);
				break;
			}
			cap *= 2;
			if (cap > SP_PEER_BODY_MAX + HEAD_MAX)
				cap = SP_PEER_BODY_MAX + HEAD_MAX;
			char *nb = realloc(buf, cap + 1);
			if (!nb) {
				say(err, errcap, "out of memory");
				break;
			}
			buf = nb;
		}
		ssize_t k = recv(fd, buf + *n, cap - *n, 0);
		if (k > 0) {
			*n += (size_t)k;
			/* a server that keeps the connection open after a whole body
			 * with its Content-Length: done, without waiting for the close */
			if (whole(buf, *n))
				goto done;
			continue;
		}
		if (k == 0)
			goto done;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			int w = wait_fd(fd, POLLIN, deadline, stopfd);
			if (w == 1)
				continue;
			say(err, errcap, w == 0 ? "no whole answer within %.1fs" : "stopped", timeout_s);
			break;
		}
		say(err, errcap, "cannot read the answer: %s", strerror(errno));
		break;
	}
	free(buf);
	return NULL;
done:
	buf[*n] = 0;
	return buf;
}

/* the body of a whole answer in buf (n bytes), moved to buf's start: its
 * length, or -1 with why in err (not HTTP, not 200, chunked, cut short, too
 * big) */
static long long peer_body(char *buf, size_t n, char *err, size_t errcap)
{
	/* the status line and headers */
	char *he = memmem(buf, n, "\r\n\r\n", 4);
	if (!he || (size_t)(he - buf) > HEAD_MAX) {
		say(err, errcap, "not an HTTP answer");
		return -1;
	}
	*he = 0;
	if (strncmp(buf, "HTTP/1.", 7) != 0 || (buf[7] != '0' && buf[7] != '1') || buf[8] != ' ' ||
	    !(buf[9] >= '1' && buf[9] <= '5') || !(buf[10] >= '0' && buf[10] <= '9') ||
	    !(buf[11] >= '0' && buf[11] <= '9')) {
		say(err, errcap, "not an HTTP answer");
		return -1;
	}
	int code = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	if (code != 200) {
		say(err, errcap, code >= 300 && code < 400 ? "HTTP %d (redirects are not followed)" : "HTTP %d", code);
		return -1;
	}
	for (char *l = strstr(buf, "\r\n"); l; l = strstr(l + 2, "\r\n")) {
		if (strncasecmp(l + 2, "Transfer-Encoding:", 18) == 0) {
			say(err, errcap, "a chunked answer (refused)");
			return -1;
		}
	}
	size_t bl = n - (size_t)(he + 4 - buf);
	long long cl = content_length(buf, he);
	if (cl >= 0 && (unsigned long long)bl < (unsigned long long)cl) {
		say(err, errcap, "the answer was cut short");
		return -1;
	}
	if (cl >= 0)
		bl = (size_t)cl; /* bytes past the body are not the body */
	if (bl > SP_PEER_BODY_MAX) {
		say(err, errcap, "an answer over %zu MiB (refused)", SP_PEER_BODY_MAX >> 20);
		return -1;
	}
	memmove(buf, he + 4, bl);
	buf[bl] = 0;
	return (long long)bl;
}

static int get_impl(const struct sp_peer_url *u, const char *path, double timeout_s, int stopfd, char **body,
		    size_t *len, char *err, size_t errcap)
{
	*body = NULL;
	*len = 0;
	double deadline = sp_mono_now() + timeout_s;
	int fd = peer_connect(u, deadline, timeout_s, stopfd, err, errcap);
	if (fd < 0)
		return -1;
	if (peer_send(fd, u, path, deadline, stopfd, err, errcap) < 0) {
		close(fd);
		return -1;
	}
	size_t n = 0;
	char *buf = peer_read(fd, deadline, timeout_s, stopfd, &n, err, errcap);
	close(fd);
	if (!buf)
		return -1;
	long long bl = peer_body(buf, n, err, errcap);
	if (bl < 0) {
		free(buf);
		return -1;
	}
	*body = buf;
	*len = (size_t)bl;
	return 0;
}

int sp_peer_get(const struct sp_peer_url *u, const char *path, double timeout_s, char **body, size_t *len, char *err,
		size_t errcap)
{
	return get_impl(u, path, timeout_s, -1, body, len, err, errcap);
}

json_t *sp_peer_parse(const char *body, size_t len, char *err, size_t errcap)
{
	json_error_t je;
	json_t *d = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!d) {
		say(err, errcap, "not JSON (line %d: %.80s)", je.line, je.text);
		return NULL;
	}
	if (!json_is_object(d) || !json_is_string(json_object_get(d, "version")) ||
	    !json_is_object(json_object_get(d, "pool"))) {
		json_decref(d);
		say(err, errcap, "not a sparkops status document");
		return NULL;
	}
	return d;
}

/* ---- the pollers ----------------------------------------------------------------- */

struct peer {
	struct sp_peers *all;
	struct sp_peer_url u;
	pthread_t th;
	bool started;
	/* under all->lock */
	json_t *doc;
	double good_at;   /* mono of the last good answer; 0 never */
	double ended_at;  /* mono of the last poll's end; 0 never */
	bool last_ok;
	char error[200];
};

struct sp_peers {
	int n;
	double interval_s, timeout_s, idle_s;
	int stopfd; /* an eventfd: written once to stop */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	double wanted_at; /* mono of the last view (or the start): polls run while recent */
	struct peer p[PEERS_MAX];
};

static void *poll_main(void *arg)
{
	struct peer *pe = arg;
	struct sp_peers *all = pe->all;
	for (;;) {
		char err[200] = "";
		char *body = NULL;
		size_t len = 0;
		json_t *doc = NULL;
		if (get_impl(&pe->u, "/api/status", all->timeout_s, all->stopfd, &body, &len, err, sizeof err) == 0) {
			doc = sp_peer_parse(body, len, err, sizeof err);
			free(body);
		}
		pthread_mutex_lock(&all->lock);
		if (all->stop) {
			pthread_mutex_unlock(&all->lock);
			json_decref(doc);
			break;
		}
		double now = sp_mono_now();
		pe->ended_at = now;
		pe->last_ok = doc != NULL;
		if (doc) {
			json_decref(pe->doc);
			pe->doc = doc;
			pe->good_at = now;
			pe->error[0] = 0;
		} else {
			snprintf(pe->error, sizeof pe->error, "%s", err);
		}
		pthread_cond_broadcast(&all->cond);
		/* the next poll after the interval, or at once on stop */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		double w = all->interval_s;
		ts.tv_sec += (time_t)w;
		ts.tv_nsec += (long)((w - floor(w)) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		while (!all->stop && pthread_cond_timedwait(&all->cond, &all->lock, &ts) != ETIMEDOUT)
			;
		/* nobody looking: wait until someone does (a view wakes the thread) */
		while (!all->stop && sp_mono_now() - all->wanted_at > all->idle_s)
			pthread_cond_wait(&all->cond, &all->lock);
		bool stop = all->stop;
		pthread_mutex_unlock(&all->lock);
		if (stop)
			break;
	}
	return NULL;
}

struct sp_peers *sp_peers_start(const struct sp_peer_url *urls, int n, double interval_s, double timeout_s,
				double idle_s)
{
	if (n < 0 || n > PEERS_MAX)
		return NULL;
	struct sp_peers *all = calloc(1, sizeof *all);
	if (!all)
		return NULL;
	all->n = n;
	all->interval_s = interval_s;
	all->timeout_s = timeout_s;
	all->idle_s = idle_s;
	all->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	all->wanted_at = sp_mono_now();
	pthread_mutex_init(&all->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&all->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* the pollers take no signal: SIGINT/SIGTERM stay the caller's */
	sigset_t all_sig, old;
	sigfillset(&all_sig);
	pthread_sigmask(SIG_SETMASK, &all_sig, &old);
	for (int i = 0; i < n; i++) {
		all->p[i].all = all;
		all->p[i].u = urls[i];
		all->p[i].started = pthread_create(&all->p[i].th, NULL, poll_main, &all->p[i]) == 0;
		if (!all->p[i].started)
			snprintf(all->p[i].error, sizeof all->p[i].error, "no thread to poll it");
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return all;
}

int sp_peers_n(const struct sp_peers *p)
{
	return p ? p->n : 0;
}

void sp_peers_wait_first(struct sp_peers *p, double timeout_s)
{
	if (!p)
		return;
	double deadline = sp_mono_now() + timeout_s;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		bool all = true;
		for (int i = 0; i < p->n; i++)
			if (p->p[i].started && p->p[i].ended_at == 0)
				all = false;
		double left = deadline - sp_mono_now();
		if (all || left <= 0)
			break;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)(fmin(left, 0.1) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p->cond, &p->lock, &ts);
	}
	pthread_mutex_unlock(&p->lock);
}

void sp_peers_view(struct sp_peers *p, int i, struct sp_peer_view *v)
{
	memset(v, 0, sizeof *v);
	v->age_s = NAN;
	if (!p || i < 0 || i >= p->n)
		return;
	struct peer *pe = &p->p[i];
	snprintf(v->url, sizeof v->url, "%s", pe->u.url);
	pthread_mutex_lock(&p->lock);
	double now = sp_mono_now();
	if (now - p->wanted_at > p->idle_s)
		pthread_cond_broadcast(&p->cond); /* the pollers were idle: poll again */
	p->wanted_at = now;
	if (pe->good_at > 0)
		v->age_s = now - pe->good_at;
	if (pe->doc)
		v->doc = json_incref(pe->doc);
	double last_end = pe->ended_at;
	if (pe->started && last_end == 0) {
		snprintf(v->state, sizeof v->state, "stale");
		snprintf(v->error, sizeof v->error, "no answer yet");
	} else if (!pe->started || !pe->last_ok) {
		snprintf(v->state, sizeof v->state, "down");
		snprintf(v->error, sizeof v->error, "%s", pe->error);
	} else if (now - last_end > p->interval_s + p->timeout_s + 1.0) {
		/* a poll that outlived its deadline (a name that does not resolve), or
		 * the first view after the pollers were idle */
		snprintf(v->state, sizeof v->state, "stale");
		snprintf(v->error, sizeof v->error, "no reading for %.0fs", now - last_end);
	} else {
		snprintf(v->state, sizeof v->state, "ok");
	}
	pthread_mutex_unlock(&p->lock);
}

void sp_peers_stop(struct sp_peers *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	if (p->stopfd >= 0) {
		uint64_t one = 1;
		ssize_t w = write(p->stopfd, &one, sizeof one);
		(void)w;
	}
	/* a thread still inside getaddrinfo (a name server that does not
	 * answer) cannot be interrupted: it is left to end on its own, and what
	 * it reads is kept, rather than making the caller wait for it */
	bool left = false;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 1;
	for (int i = 0; i < p->n; i++) {
		if (!p->p[i].started)
			continue;
		if (pthread_timedjoin_np(p->p[i].th, NULL, &until) != 0) {
			pthread_detach(p->p[i].th);
			left = true;
		}
	}
	if (left)
		return;
	for (int i = 0; i < p->n; i++)
		json_decref(p->p[i].doc);
	if (p->stopfd >= 0)
		close(p->stopfd);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
