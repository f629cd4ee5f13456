// SPDX-License-Identifier: MIT
/* Several nodes: the peer URL rules, a peer's answer parsed with bounds, a
 * node's row from a status document (the hottest sensor, no figures for a
 * node that is not ok, a hostile name cleaned), the link probe on a tree
 * (ConnectX only, bytes per second from two readings, a counter that went
 * back is no rate). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include "qemu_skip.h"

#include "out/nodes.h"
#include "out/peer.h"
#include "out/topview.h"
#include "probe/link.h"
#include "util/paths.h"

static void urls(void **st)
{
	(void)st;
	struct sp_peer_url u;
	char err[240];
	assert_int_equal(sp_peer_url_parse("http://10.0.0.2:9851", &u, err, sizeof err), 0);
	assert_string_equal(u.host, "10.0.0.2");
	assert_string_equal(u.port, "9851");
	assert_string_equal(u.url, "http://10.0.0.2:9851");
	assert_int_equal(sp_peer_url_parse("http://spark-b/", &u, err, sizeof err), 0);
	assert_string_equal(u.url, "http://spark-b:9851");
	assert_int_equal(sp_peer_url_parse("HTTP://[::1]:80", &u, err, sizeof err), 0);
	assert_string_equal(u.host, "::1");
	assert_string_equal(u.url, "http://[::1]:80");
	static const char *const bad[] = {
		"https://10.0.0.2", "ftp://x", "10.0.0.2:9851", "http://", "http://:80", "http://a:0", "http://a:65536",
		"http://a:123456", "http://a:80/api", "http://a?x", "http://u@a", "http://a b", "http://[::1", "http://[x]:1",
		"http://a:80#f", "http://a%0d%0aX:80",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = 0;
		assert_int_equal(sp_peer_url_parse(bad[i], &u, err, sizeof err), -1);
		assert_true(err[0] != 0);
	}
	sp_peer_url_parse("https://x", &u, err, sizeof err);
	assert_non_null(strstr(err, "https is not supported"));
}

static void answers(void **st)
{
	(void)st;
	char err[200];
	const char ok[] = "{\"version\":\"0.1.0\",\"pool\":{}}";
	json_t *d = sp_peer_parse(ok, strlen(ok), err, sizeof err);
	assert_non_null(d);
	json_decref(d);
	static const char *const bad[] = {
		"", "[]", "{\"pool\":{}}", "{\"version\":1,\"pool\":{}}", "{\"version\":\"x\",\"pool\":[]}",
		"{\"version\":\"x\",\"version\":\"y\",\"pool\":{}}", "{\"version\":\"x\",\"pool\":{}", "<html>",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_null(sp_peer_parse(bad[i], strlen(bad[i]), err, sizeof err));
}

static void rows(void **st)
{
	(void)st;
	const char doc[] =
		"{\"version\":\"0.1.0\",\"host\":\"evil\\u001b[2J\\u0007<b>\",\"pool\":{\"total_bytes\":10737418240,"
		"\"used_bytes\":1073741824},\"budget\":{\"now_bytes\":5368709120,\"after_flush_bytes\":null},"
		"\"gpu_status\":\"ok\",\"gpus\":[{\"temperature_c\":61,\"power_w\":12.5,\"utilization_pct\":3,"
		"\"sm_clock_mhz\":900}],\"spark\":{\"die_temp_c\":70.5},\"thermal_zones\":[{\"zone\":2,\"type\":\"acpitz\","
		"\"temp_c\":72}],\"hwmon\":[{\"chip\":\"spbm\",\"kind\":\"temp\",\"label\":\"soc\",\"temp_c\":4000},"
		"{\"chip\":\"spbm\",\"kind\":\"power\",\"label\":\"x\",\"power_w\":999}],"
		"\"links\":[{\"interface\":\"enp1s0f0np0\",\"operstate\":\"up\",\"speed_mbps\":200000,\"rx_errors\":1,"
		"\"tx_errors\":2,\"rx_bytes_per_s\":2500000000,\"tx_bytes_per_s\":null,\"rdma\":{\"device\":\"rocep1s0f0\","
		"\"state\":\"ACTIVE\",\"rate\":\"200 Gb/sec (4X HDR)\",\"counters\":{\"symbol_error\":4,\"link_downed\":9}}}]}";
	json_error_t je;
	json_t *d = json_loads(doc, 0, &je);
	assert_non_null(d);
	struct sp_node_row r[2];
	memset(r, 0, sizeof r);
	sp_node_row_from_doc(d, &r[0]);
	json_decref(d);
	snprintf(r[0].state, sizeof r[0].state, "ok");
	r[0].figures = true;
	assert_null(strchr(r[0].name, '\033'));
	assert_null(strchr(r[0].name, '\007'));
	assert_true(r[0].total == 10737418240.0 && isnan(r[0].budget_flush));
	/* the hottest plausible sensor: the zone at 72 C, not hwmon's 4000 C */
	assert_true(r[0].hottest_c == 72.0);
	assert_string_equal(r[0].hottest, "acpitz zone 2");
	assert_string_equal(r[0].gpu, "61C 12.5W 3% 900MHz");
	assert_int_equal(r[0].nlinks, 1);
	assert_true(r[0].link[0].errors == 7.0); /* 1 + 2 + 4; link_downed is not an error count */
	/* a node that is down: its last figures are not shown */
	sp_node_row_from_doc(NULL, &r[1]);
	snprintf(r[1].name, sizeof r[1].name, "10.0.0.3:9851");
	snprintf(r[1].state, sizeof r[1].state, "down");
	snprintf(r[1].error, sizeof r[1].error, "cannot connect: Connection refused");
	r[1].age_s = 12;
	r[1].total = 10737418240.0; /* even with old figures at hand */
	char lines[8][SP_NODE_LINE];
	int n = sp_nodes_text(r, 2, lines, 8);
	assert_int_equal(n, 5); /* header, two nodes, the link header, one link */
	assert_non_null(strstr(lines[1], "1.0/10.0 GiB"));
	assert_non_null(strstr(lines[1], "5.0/? GiB"));
	assert_non_null(strstr(lines[1], "72.0C acpitz zone 2"));
	assert_non_null(strstr(lines[2], "down  cannot connect: Connection refused (last answer 12s ago)"));
	assert_null(strstr(lines[2], "GiB"));
	assert_non_null(strstr(lines[4], "enp1s0f0np0"));
	assert_non_null(strstr(lines[4], "2.50 GB/s"));
	assert_non_null(strstr(lines[4], "rocep1s0f0 ACTIVE 200 Gb/sec (4X HDR)"));
	assert_int_equal(sp_nodes_text(r, 2, lines, 1), 1);
}

static char root[256];

static void put(const char *rel, const char *text)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	for (char *s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(p, 0755);
		*s = '/';
	}
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void link_probe(void **st)
{
	(void)st;
	snprintf(root, sizeof root, "/tmp/sparkops-test-nodes.XXXXXX");
	assert_non_null(mkdtemp(root));
	put("sys/class/net/enp1s0f0np0/operstate", "up\n");
	put("sys/class/net/enp1s0f0np0/speed", "200000\n");
	put("sys/class/net/enp1s0f0np0/statistics/rx_bytes", "1000\n");
	put("sys/class/net/enp1s0f0np0/statistics/tx_bytes", "5000\n");
	put("sys/class/net/enp1s0f0np0/device/uevent", "DRIVER=mlx5_core\n");
	put("sys/class/net/eth9/operstate", "up\n");
	put("sys/class/net/eth9/device/uevent", "DRIVER=r8169\n");
	put("sys/class/net/lo/operstate", "unknown\n");
	/* an RDMA side without an mlx driver named counts too */
	put("sys/class/net/ib0/operstate", "down\n");
	put("sys/class/net/ib0/speed", "-1\n");
	put("sys/class/net/ib0/device/infiniband/mlx5_0/node_type", "1: CA\n");
	put("sys/class/infiniband/mlx5_0/ports/1/state", "1: DOWN\n");
	put("sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error", "garbage\n");
	char sys[300];
	snprintf(sys, sizeof sys, "%s/sys", root);
	sp_paths_init(NULL, sys);
	static struct sp_links a, c;
	sp_links_read(&a, NULL);
	assert_int_equal(a.n, 2);
	assert_string_equal(a.l[0].ifname, "enp1s0f0np0");
	assert_string_equal(a.l[1].ifname, "ib0");
	assert_false(a.l[0].rate_ok);
	assert_true(sp_ok(a.l[0].speed_mbps.why) && a.l[0].speed_mbps.v == 200000);
	assert_int_equal(a.l[1].speed_mbps.why, SP_NOT_SUPPORTED);
	assert_string_equal(a.l[1].ib_dev, "mlx5_0");
	assert_string_equal(a.l[1].ib_state, "DOWN");
	assert_int_equal(a.l[1].ib[SP_IB_SYMBOL_ERROR].why, SP_MALFORMED);
	assert_int_equal(a.l[1].ib[SP_IB_LINK_DOWNED].why, SP_MISSING);
	put("sys/class/net/enp1s0f0np0/statistics/rx_bytes", "3000\n");
	struct sp_links a2 = a;
	a2.t -= 2.0; /* the first reading two seconds back */
	sp_links_read(&c, &a2);
	assert_true(c.l[0].rate_ok);
	assert_true(c.l[0].rx_bps > 0 && c.l[0].tx_bps == 0);
	/* a counter that went back (the driver reloaded): no rate, not a negative one */
	put("sys/class/net/enp1s0f0np0/statistics/rx_bytes", "10\n");
	struct sp_links d;
	sp_links_read(&d, &c);
	assert_false(d.l[0].rate_ok);
	json_t *j = sp_links_json(&d);
	assert_true(json_is_null(json_object_get(json_array_get(j, 0), "rx_bytes_per_s")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_array_get(j, 1), "rdma"), "state")),
			    "DOWN");
	json_decref(j);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* top's screen: the NODES lines under the title, a node not ok in red,
 * the pool right below; an 80x24 screen keeps the pool and the GPU */
static void pane(void **st)
{
	(void)st;
	static struct sp_sample s;
	static struct sp_top_hist h;
	static struct sp_tv_grid g;
	struct sp_spark k;
	memset(&s, 0, sizeof s);
	s.mem.why = SP_OK;
	s.mem.v[SP_MI_TOTAL] = 120ULL << 30;
	s.mem.v[SP_MI_FREE] = 10ULL << 30;
	s.mem.have = ~0ULL;
	s.gpu_status = SP_NO_GPU;
	sp_top_hist_init(&h);
	sp_spark_derive(&s, &k);
	char lines[4][SP_NODE_LINE] = { "NODE   STATE", "spark-a ok", "spark-b down  cannot connect", "LINK" };
	bool alert[4] = { false, false, true, false };
	struct sp_topview_in in = { .s = &s, .k = &k, .h = &h, .host = "spark-a", .interval_s = 1,
				    .node_lines = (const char (*)[SP_NODE_LINE])lines, .node_alert = alert, .n_node_lines = 4 };
	char buf[512];
	sp_topview_render(&g, 24, 80, &in);
	sp_tv_line(&g, 1, buf, sizeof buf);
	assert_string_equal(buf, "NODE   STATE");
	assert_int_equal(g.c[1][0].attr, SP_TVA_BOLD);
	sp_tv_line(&g, 3, buf, sizeof buf);
	assert_string_equal(buf, "spark-b down  cannot connect");
	assert_int_equal(g.c[3][0].attr, SP_TVA_ALERT);
	assert_int_equal(g.c[2][0].attr, SP_TVA_NONE);
	sp_tv_line(&g, 5, buf, sizeof buf);
	assert_true(strncmp(buf, "POOL", 4) == 0);
	/* without nodes the pool is right under the title, as before */
	in.n_node_lines = 0;
	sp_topview_render(&g, 24, 80, &in);
	sp_tv_line(&g, 1, buf, sizeof buf);
	assert_true(strncmp(buf, "POOL", 4) == 0);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* connections accepted (and held, never answered) on ls for secs */
static int accepts(int ls, double secs, int *held, int *nheld)
{
	int n = 0;
	double end = now_s() + secs;
	while (now_s() < end) {
		struct pollfd p = { .fd = ls, .events = POLLIN };
		if (poll(&p, 1, 20) > 0) {
			int c = accept(ls, NULL, NULL);
			if (c >= 0) {
				n++;
				if (*nheld < 64)
					held[(*nheld)++] = c;
				else
					close(c);
			}
		}
	}
	return n;
}

/* a peer that accepts and never answers: down within the deadline; nobody
 * looking: no more polls; a view: polls again */
static void deadline_and_idle(void **st)
{
	(void)st;
	SKIP_UNDER_QEMU(QEMU_THREADS);
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof a;
	assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(ls, 64), 0);
	assert_int_equal(getsockname(ls, (struct sockaddr *)&a, &al), 0);
	char url[64], err[200];
	snprintf(url, sizeof url, "http://127.0.0.1:%d", ntohs(a.sin_port));
	struct sp_peer_url u;
	assert_int_equal(sp_peer_url_parse(url, &u, err, sizeof err), 0);
	int held[64], nheld = 0;
	double t0 = now_s();
	struct sp_peers *p = sp_peers_start(&u, 1, 0.05, 0.2, 0.3);
	assert_non_null(p);
	int first = accepts(ls, 1.0, held, &nheld);
	assert_true(first >= 1);
	struct sp_peer_view v;
	int idle = accepts(ls, 1.0, held, &nheld);
	assert_int_equal(idle, 0); /* nobody looked for 0.3 s: no poll */
	sp_peers_view(p, 0, &v);
	assert_string_equal(v.state, "down");
	assert_non_null(strstr(v.error, "no whole answer within 0.2s"));
	assert_null(v.doc);
	int again = accepts(ls, 0.5, held, &nheld);
	assert_true(again >= 1); /* a view: polling again */
	double t1 = now_s();
	sp_peers_stop(p);
	assert_true(now_s() - t1 < 1.0); /* stopping interrupts a poll in flight */
	assert_true(t1 - t0 < 10);
	for (int i = 0; i < nheld; i++)
		close(held[i]);
	close(ls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(urls),
		cmocka_unit_test(answers),
		cmocka_unit_test(rows),
		cmocka_unit_test(link_probe),
		cmocka_unit_test(pane),
		cmocka_unit_test(deadline_and_idle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
