// SPDX-License-Identifier: MIT
/* The HTTP endpoint as a library (what run/watch --metrics-listen reuse):
 * addresses, the fill callback, its cache, growing the buffer, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "qemu_skip.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "out/prom.h"
#include "out/serve_http.h"

#include <pthread.h>

static void parse_addr(void **st)
{
	(void)st;
	struct sockaddr_storage ss;
	socklen_t l;
	assert_int_equal(sp_serve_parse_addr("127.0.0.1:9851", &ss, &l), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9851);
	assert_int_equal(sp_serve_parse_addr("[::1]:1", &ss, &l), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(sp_serve_parse_addr("localhost:80", &ss, &l), 0);
	assert_int_equal(sp_serve_parse_addr("0.0.0.0:0", &ss, &l), 0);
	assert_int_equal(sp_serve_parse_addr("[::]:65535", &ss, &l), 0);
	const char *bad[] = { "", "1.2.3.4", ":80", "1.2.3.4:", "1.2.3.4:65536", "[::1]", "::1:80", "host:80",
			      "1.2.3.4:-1", "1.2.3.4: 80", "1.2.3.4:80 ", "[::1]:", "[::1]x:80", "1.2.3:80",
			      "[1.2.3.4]:80", "1.2.3.4:0080000" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(sp_serve_parse_addr(bad[i], &ss, &l), -EINVAL);
	assert_int_equal(sp_serve_parse_addr(NULL, &ss, &l), -EINVAL);
}

struct ctx {
	int calls;
	size_t body_len; /* 0: fail */
};

static size_t fill(char *buf, size_t cap, void *p)
{
	struct ctx *c = p;
	c->calls++;
	if (!c->body_len)
		return 0;
	/* body: "calls=N\n" padded with '#' lines up to body_len */
	if (c->body_len >= cap)
		return c->body_len; /* ask for more room */
	memset(buf, '#', c->body_len);
	int n = snprintf(buf, cap, "calls=%d\n", c->calls);
	buf[n] = '#';
	buf[c->body_len - 1] = '\n';
	return c->body_len;
}

/* one request; the answer (up to cap) into out; returns its length */
static size_t http(const char *addr, const char *req, char *out, size_t cap)
{
	struct sockaddr_storage ss;
	socklen_t l;
	assert_int_equal(sp_serve_parse_addr(addr, &ss, &l), 0);
	int fd = socket(ss.ss_family, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&ss, l), 0);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	size_t got = 0;
	ssize_t r;
	while (got + 1 < cap && (r = read(fd, out + got, cap - 1 - got)) > 0)
		got += (size_t)r;
	out[got] = 0;
	close(fd);
	return got;
}

static char resp[1 << 20];

static void serve_and_cache(void **st)
{
	SKIP_UNDER_QEMU(QEMU_THREADS);
	(void)st;
	struct sp_serve_opts o;
	sp_serve_opts_init(&o);
	o.listen = "127.0.0.1:0";
	o.cache_s = 3600;
	struct ctx c = { 0, 100 };
	int err = 0;
	struct sp_server *srv = sp_serve_start(&o, fill, &c, &err);
	assert_non_null(srv);
	const char *a = sp_serve_address(srv);
	assert_true(strncmp(a, "127.0.0.1:", 10) == 0 && strcmp(a, "127.0.0.1:0") != 0);
	http(a, "GET /metrics HTTP/1.0\r\n\r\n", resp, sizeof resp);
	assert_non_null(strstr(resp, "HTTP/1.0 200") ? resp : strstr(resp, "HTTP/1.1 200"));
	assert_non_null(strstr(resp, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	assert_non_null(strstr(resp, "\r\n\r\ncalls=1\n"));
	/* within the cache: the same body, no second reading */
	http(a, "GET /metrics HTTP/1.0\r\n\r\n", resp, sizeof resp);
	assert_non_null(strstr(resp, "\r\n\r\ncalls=1\n"));
	http(a, "HEAD /metrics HTTP/1.0\r\n\r\n", resp, sizeof resp);
	assert_null(strstr(resp, "calls="));
	assert_int_equal(sp_serve_renders(srv), 1);
	/* the other answers never call fill */
	http(a, "GET / HTTP/1.0\r\n\r\n", resp, sizeof resp);
	assert_non_null(strstr(resp, "href=\"/metrics\""));
	http(a, "GET /x HTTP/1.0\r\n\r\n", resp, sizeof resp);
	assert_non_null(strstr(resp, " 404 "));
	http(a, "DELETE /metrics HTTP/1.0\r\n\r\n", resp, sizeof resp);
	assert_non_null(strstr(resp, " 405 "));
	assert_int_equal(c.calls, 1);

	/* the same address again: EADDRINUSE */
	struct sp_serve_opts o2 = o;
	char again[80];
	snprintf(again, sizeof again, "%s", a);
	o2.listen = again;
	struct ctx c2 = { 0, 10 };
	assert_null(sp_serve_start(&o2, fill, &c2, &err));
	assert_int_equal(err, -EADDRINUSE);
	sp_serve_stop(srv);
	sp_serve_stop(NULL);
}

static void grows_and_fails(void **st)
{
	SKIP_UNDER_QEMU(QEMU_THREADS);
	(void)st;
	struct sp_serve_opts o;
	sp_serve_opts_init(&o);
	o.listen = "127.0.0.1:0";
	o.cache_s = 0;
	struct ctx c = { 0, 300000 }; /* bigger than the first buffer */
	int err = 0;
	struct sp_server *srv = sp_serve_start(&o, fill, &c, &err);
	assert_non_null(srv);
	const char *a = sp_serve_address(srv);
	size_t n = http(a, "GET /metrics HTTP/1.0\r\n\r\n", resp, sizeof resp);
	const char *body = strstr(resp, "\r\n\r\n");
	assert_non_null(body);
	assert_int_equal(n - (size_t)(body + 4 - resp), 300000);
	assert_int_equal(c.calls, 2); /* asked for room once, then filled */
	http(a, "GET /metrics HTTP/1.0\r\n\r\n", resp, sizeof resp);
	assert_int_equal(c.calls, 3); /* the size is remembered */
	c.body_len = 0;
	http(a, "GET /metrics HTTP/1.0\r\n\r\n", resp, sizeof resp);
	assert_non_null(strstr(resp, " 500 "));
	sp_serve_stop(srv);
}

static void bad_address(void **st)
{
	SKIP_UNDER_QEMU(QEMU_THREADS);
	(void)st;
	struct sp_serve_opts o;
	sp_serve_opts_init(&o);
	struct ctx c = { 0, 10 };
	int err = 0;
	o.listen = "nonsense";
	assert_null(sp_serve_start(&o, fill, &c, &err));
	assert_int_equal(err, -EINVAL);
	o.listen = "192.0.2.1:9851"; /* TEST-NET: not on this machine */
	assert_null(sp_serve_start(&o, fill, &c, &err));
	assert_int_equal(err, -EADDRNOTAVAIL);
}

/* the pattern docs/metrics.md gives run/watch: the loop's sample and job
 * behind a mutex, served from the server thread */
struct metrics_ctx {
	pthread_mutex_t mu;
	struct sp_sample s;
	struct sp_prom_job job;
	char command[64];
};

static size_t job_fill(char *buf, size_t cap, void *p)
{
	struct metrics_ctx *m = p;
	struct sp_prom_info info = { .version = "1.2.3", .read_seconds = -1 };
	pthread_mutex_lock(&m->mu);
	size_t n = sp_prom_render(buf, cap, &m->s, &info, &m->job);
	pthread_mutex_unlock(&m->mu);
	return n;
}

static void run_watch_hook(void **st)
{
	SKIP_UNDER_QEMU(QEMU_THREADS);
	(void)st;
	static struct metrics_ctx m = { .mu = PTHREAD_MUTEX_INITIALIZER };
	m.s.mem.why = SP_OK;
	m.s.mem.v[SP_MI_TOTAL] = 1000;
	m.s.mem.have = 1ULL << SP_MI_TOTAL;
	for (int r = 0; r < SP_PSI_N; r++)
		m.s.psi[r].why = SP_MISSING;
	m.s.gpu_status = SP_NO_DRIVER;
	snprintf(m.command, sizeof m.command, "python");
	m.job = (struct sp_prom_job){ .pid = 77, .command = m.command, .start_unix = -1, .rate_ok = true, .rate = 3,
				      .baseline_ok = true, .baseline = 4, .cause_ok = true, .cause = SP_CAUSE_THERMAL };
	struct sp_serve_opts o;
	sp_serve_opts_init(&o);
	o.listen = "127.0.0.1:0";
	o.cache_s = 0;
	int err = 0;
	struct sp_server *srv = sp_serve_start(&o, job_fill, &m, &err);
	assert_non_null(srv);
	http(sp_serve_address(srv), "GET /metrics HTTP/1.0\r\n\r\n", resp, sizeof resp);
	assert_non_null(strstr(resp, "\nsparkops_pool_total_bytes 1000\n"));
	assert_non_null(strstr(resp, "\nsparkops_job_throughput_ratio 0.75\n"));
	assert_non_null(strstr(resp, "\nsparkops_job_slowdown_cause{cause=\"thermal\"} 1\n"));
	/* the loop updates under the lock; the next scrape sees it */
	pthread_mutex_lock(&m.mu);
	m.job.rate = 4;
	m.job.cause = SP_CAUSE_NONE;
	pthread_mutex_unlock(&m.mu);
	http(sp_serve_address(srv), "GET /metrics HTTP/1.0\r\n\r\n", resp, sizeof resp);
	assert_non_null(strstr(resp, "\nsparkops_job_throughput_ratio 1\n"));
	assert_non_null(strstr(resp, "\nsparkops_job_slowdown_cause{cause=\"none\"} 1\n"));
	sp_serve_stop(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_addr),
		cmocka_unit_test(serve_and_cache),
		cmocka_unit_test(grows_and_fails),
		cmocka_unit_test(bad_address),
		cmocka_unit_test(run_watch_hook),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
