// SPDX-License-Identifier: MIT
/* A tiny HTTP client for the serve tests and bench (loopback only, bounded
 * in count and time). Not part of sparkops.
 *
 *   httpc get ADDR PORT PATH N [SRC]     N sequential GETs on fresh connections;
 *                                        prints "ok=N fail=N p50_ms=X p99_ms=X"
 *   httpc getk ADDR PORT PATH N          N GETs on one kept-alive HTTP/1.1 connection
 *                                        (as Prometheus scrapes); same output
 *   httpc flood ADDR PORT N MODE HOLD_MS [SRC]
 *        opens N connections at once and holds them HOLD_MS at most; MODE:
 *        full     send a whole GET /metrics, count the answers
 *        partial  send half a request line and stall (slowloris)
 *        idle     send nothing
 *        prints "connected=N answered=N status200=N closed=N status503=N retry_after=N"
 *        (retry_after: the 503s that carried "Retry-After: 1")
 *   httpc trickle ADDR PORT N EVERY_MS HOLD_MS SRC
 *        slowloris: keeps N connections from SRC, each sending a request line and
 *        then one header line every EVERY_MS, never the blank line that ends
 *        them; a connection the server closes is opened again at once. Stops
 *        after HOLD_MS. Prints "opened=N cut=N max_life_ms=X" (cut: closed by
 *        the server; max_life_ms: the longest a connection lasted until cut)
 *   httpc raw ADDR PORT                  send stdin, print the answer (or "closed")
 * SRC binds the client side to another loopback address (127.0.0.2) so a
 * per-address limit on the server can be told apart. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int mksock(const char *addr, int port, const char *src, int nonblock)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
	if (fd < 0)
		return -1;
	if (src) {
		struct sockaddr_in s = { .sin_family = AF_INET };
		inet_pton(AF_INET, src, &s.sin_addr);
		if (bind(fd, (struct sockaddr *)&s, sizeof s) < 0) {
			close(fd);
			return -1;
		}
	}
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	if (inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
		close(fd);
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int do_get(const char *addr, int port, const char *path, int n, const char *src)
{
	double *lat = calloc((size_t)n, sizeof *lat);
	char req[512], buf[65536];
	snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, addr);
	int ok = 0, fail = 0;
	for (int i = 0; i < n; i++) {
		double t0 = now_ms();
		int fd = mksock(addr, port, src, 0);
		if (fd < 0) {
			fail++;
			continue;
		}
		struct timeval tv = { 5, 0 };
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
			close(fd);
			fail++;
			continue;
		}
		size_t got = 0;
		ssize_t r;
		while ((r = read(fd, buf + (got < 64 ? got : 64), sizeof buf - 64)) > 0)
			got += (size_t)r;
		close(fd);
		lat[i] = now_ms() - t0;
		/* the status line is in the first bytes */
		if (got > 12 && strncmp(buf + 9, "200", 3) == 0)
			ok++;
		else
			fail++;
	}
	qsort(lat, (size_t)n, sizeof *lat, cmp);
	printf("ok=%d fail=%d p50_ms=%.3f p99_ms=%.3f\n", ok, fail, lat[n / 2], lat[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1]);
	free(lat);
	return fail ? 1 : 0;
}

/* Read exactly one HTTP/1.1 response (Content-Length or chunked) from fd,
 * buffered in b (len/pos kept across responses). Returns the status or -1. */
struct rbuf {
	char b[1 << 16];
	size_t len, pos;
};

static int fill_more(int fd, struct rbuf *r)
{
	if (r->pos > 0) {
		memmove(r->b, r->b + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
	}
	if (r->len == sizeof r->b)
		return -1;
	ssize_t k = read(fd, r->b + r->len, sizeof r->b - r->len);
	if (k <= 0)
		return -1;
	r->len += (size_t)k;
	return 0;
}

static char *find_crlf(struct rbuf *r, size_t from)
{
	for (size_t i = r->pos + from; i + 1 < r->len; i++)
		if (r->b[i] == '\r' && r->b[i + 1] == '\n')
			return r->b + i;
	return NULL;
}

static int skip_bytes(int fd, struct rbuf *r, size_t n)
{
	while (n > 0) {
		if (r->pos == r->len && fill_more(fd, r) < 0)
			return -1;
		size_t have = r->len - r->pos, take = have < n ? have : n;
		r->pos += take;
		n -= take;
	}
	return 0;
}

static int read_response(int fd, struct rbuf *r)
{
	char *end;
	while (!(end = strstr(r->b + r->pos, "\r\n\r\n")) || end >= r->b + r->len) {
		r->b[r->len < sizeof r->b ? r->len : sizeof r->b - 1] = 0;
		if (fill_more(fd, r) < 0)
			return -1;
		r->b[r->len < sizeof r->b ? r->len : sizeof r->b - 1] = 0;
	}
	int status = atoi(r->b + r->pos + 9);
	*end = 0;
	const char *h = r->b + r->pos;
	long clen = -1;
	int chunked = 0;
	const char *p = strcasestr(h, "\r\ncontent-length:");
	if (p)
		clen = atol(p + 17);
	if (strcasestr(h, "\r\ntransfer-encoding: chunked"))
		chunked = 1;
	r->pos = (size_t)(end - r->b) + 4;
	if (!chunked)
		return skip_bytes(fd, r, clen > 0 ? (size_t)clen : 0) < 0 ? -1 : status;
	for (;;) {
		char *nl;
		while (!(nl = find_crlf(r, 0)))
			if (fill_more(fd, r) < 0)
				return -1;
		long n = strtol(r->b + r->pos, NULL, 16);
		r->pos = (size_t)(nl - r->b) + 2;
		if (skip_bytes(fd, r, (size_t)n + 2) < 0)
			return -1;
		if (n == 0)
			return status;
	}
}

static int do_getk(const char *addr, int port, const char *path, int n)
{
	static struct rbuf r;
	char req[512];
	snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr);
	int fd = mksock(addr, port, NULL, 0), ok = 0, fail = 0;
	if (fd < 0)
		return 1;
	double *lat = calloc((size_t)n, sizeof *lat);
	struct timeval tv = { 5, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	for (int i = 0; i < n; i++) {
		double t0 = now_ms();
		if (write(fd, req, strlen(req)) != (ssize_t)strlen(req) || read_response(fd, &r) != 200) {
			fail += n - i;
			break;
		}
		lat[i] = now_ms() - t0;
		ok++;
	}
	close(fd);
	qsort(lat, (size_t)ok, sizeof *lat, cmp);
	printf("ok=%d fail=%d p50_ms=%.3f p99_ms=%.3f\n", ok, fail, ok ? lat[ok / 2] : 0, ok ? lat[(ok * 99) / 100 < ok ? (ok * 99) / 100 : ok - 1] : 0);
	free(lat);
	return fail ? 1 : 0;
}

static int do_flood(const char *addr, int port, int n, const char *mode, int hold_ms, const char *src)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 64) {
		rl.rlim_cur = rl.rlim_max < (rlim_t)n + 64 ? rl.rlim_max : (rlim_t)n + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	struct pollfd *p = calloc((size_t)n, sizeof *p);
	int *state = calloc((size_t)n, sizeof *state); /* 0 connecting, 1 sent, 2 done */
	int connected = 0, answered = 0, st200 = 0, closed = 0, live = 0, st503 = 0, retry = 0;
	for (int i = 0; i < n; i++) {
		p[i].fd = mksock(addr, port, src, 1);
		p[i].events = POLLOUT;
		if (p[i].fd >= 0)
			live++;
	}
	const char *full = "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n";
	const char *partial = "GET /metr";
	double end = now_ms() + hold_ms;
	while (live > 0 && now_ms() < end) {
		int r = poll(p, (nfds_t)n, 50);
		if (r <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			if (state[i] == 0 && (p[i].revents & POLLOUT)) {
				int err = 0;
				socklen_t el = sizeof err;
				getsockopt(p[i].fd, SOL_SOCKET, SO_ERROR, &err, &el);
				if (err) {
					close(p[i].fd);
					p[i].fd = -1;
					live--;
					continue;
				}
				connected++;
				const char *m = strcmp(mode, "full") == 0 ? full : strcmp(mode, "partial") == 0 ? partial : "";
				if (*m && write(p[i].fd, m, strlen(m)) < 0) {
					close(p[i].fd);
					p[i].fd = -1;
					live--;
					closed++;
					continue;
				}
				state[i] = 1;
				p[i].events = POLLIN;
				continue;
			}
			if (p[i].revents & (POLLIN | POLLHUP | POLLERR)) {
				char buf[16384];
				ssize_t k = read(p[i].fd, buf, sizeof buf);
				if (k > 0) {
					if (state[i] == 1) {
						answered++;
						if (k > 12 && strncmp(buf + 9, "200", 3) == 0)
							st200++;
						if (k > 12 && strncmp(buf + 9, "503", 3) == 0) {
							st503++;
							buf[k < (ssize_t)sizeof buf ? k : k - 1] = 0;
							if (strcasestr(buf, "\r\nRetry-After: 1\r\n"))
								retry++;
						}
						state[i] = 2;
					}
					continue;
				}
				if (k == 0 || (k < 0 && errno != EAGAIN)) {
					if (state[i] != 2)
						closed++;
					close(p[i].fd);
					p[i].fd = -1;
					live--;
				}
			}
		}
	}
	for (int i = 0; i < n; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	printf("connected=%d answered=%d status200=%d closed=%d status503=%d retry_after=%d\n", connected, answered, st200,
	       closed, st503, retry);
	free(p);
	free(state);
	return 0;
}

static int do_trickle(const char *addr, int port, int n, int every_ms, int hold_ms, const char *src)
{
	struct pollfd *p = calloc((size_t)n, sizeof *p);
	double *born = calloc((size_t)n, sizeof *born), *next = calloc((size_t)n, sizeof *next);
	int opened = 0, cut = 0;
	double max_life = 0, end = now_ms() + hold_ms;
	const char *first = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
	for (int i = 0; i < n; i++)
		p[i].fd = -1;
	while (now_ms() < end) {
		double t = now_ms();
		for (int i = 0; i < n; i++) {
			if (p[i].fd < 0 && opened < 100000) {
				p[i].fd = mksock(addr, port, src, 0);
				if (p[i].fd < 0)
					continue;
				opened++;
				born[i] = t;
				next[i] = t + every_ms;
				p[i].events = POLLIN;
				if (write(p[i].fd, first, strlen(first)) < 0) {
					close(p[i].fd);
					p[i].fd = -1;
				}
				continue;
			}
			if (p[i].fd >= 0 && t >= next[i]) {
				char line[64];
				int l = snprintf(line, sizeof line, "X-Trickle-%d: %d\r\n", i, (int)(t - born[i]));
				next[i] = t + every_ms;
				if (write(p[i].fd, line, (size_t)l) < 0) {
					if (t - born[i] > max_life)
						max_life = t - born[i];
					cut++;
					close(p[i].fd);
					p[i].fd = -1;
				}
			}
		}
		if (poll(p, (nfds_t)n, 50) <= 0)
			continue;
		t = now_ms();
		for (int i = 0; i < n; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			char buf[4096];
			ssize_t k = read(p[i].fd, buf, sizeof buf);
			if (k > 0)
				continue; /* an answer (408, 503): the close follows */
			if (k < 0 && errno == EAGAIN)
				continue;
			if (t - born[i] > max_life)
				max_life = t - born[i];
			cut++;
			close(p[i].fd);
			p[i].fd = -1;
		}
	}
	for (int i = 0; i < n; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	printf("opened=%d cut=%d max_life_ms=%.0f\n", opened, cut, max_life);
	free(p);
	free(born);
	free(next);
	return 0;
}

static int do_raw(const char *addr, int port)
{
	char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf, stdin);
	int fd = mksock(addr, port, NULL, 0);
	if (fd < 0) {
		printf("connect failed\n");
		return 1;
	}
	struct timeval tv = { 5, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (write(fd, buf, n) < 0) {
		printf("write failed\n");
		close(fd);
		return 1;
	}
	shutdown(fd, SHUT_WR);
	/* the whole answer (bounded), as it came */
	size_t got = 0;
	ssize_t r;
	while (got < sizeof buf && (r = read(fd, buf + got, sizeof buf - got)) > 0)
		got += (size_t)r;
	close(fd);
	if (got == 0) {
		printf("closed\n");
		return 0;
	}
	fwrite(buf, 1, got, stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 6 && strcmp(argv[1], "get") == 0)
		return do_get(argv[2], atoi(argv[3]), argv[4], atoi(argv[5]) > 0 ? atoi(argv[5]) : 1, argc > 6 ? argv[6] : NULL);
	if (argc >= 6 && strcmp(argv[1], "getk") == 0)
		return do_getk(argv[2], atoi(argv[3]), argv[4], atoi(argv[5]) > 0 ? atoi(argv[5]) : 1);
	if (argc >= 7 && strcmp(argv[1], "flood") == 0) {
		int n = atoi(argv[4]), hold = atoi(argv[6]);
		if (n < 1 || n > 5000 || hold < 0 || hold > 60000)
			return 2;
		return do_flood(argv[2], atoi(argv[3]), n, argv[5], hold, argc > 7 ? argv[7] : NULL);
	}
	if (argc >= 8 && strcmp(argv[1], "trickle") == 0) {
		int n = atoi(argv[4]), every = atoi(argv[5]), hold = atoi(argv[6]);
		if (n < 1 || n > 1000 || every < 10 || hold < 0 || hold > 60000)
			return 2;
		return do_trickle(argv[2], atoi(argv[3]), n, every, hold, argv[7]);
	}
	if (argc == 4 && strcmp(argv[1], "raw") == 0)
		return do_raw(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: httpc get|getk|flood|trickle|raw ...\n");
	return 2;
}
