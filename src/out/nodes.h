/* SPDX-License-Identifier: MIT */
/* One to four Sparks side by side: the link's readings as JSON (the
 * `links` array of status --json), one node's row (pool, budget, GPU,
 * hottest sensor, link) from a status --json document, and the rows as
 * text lines (top --node, on the screen and with --once). Pure: no I/O. */
#ifndef SP_NODES_H
#define SP_NODES_H
#include "probe/link.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define SP_NODES_MAX 4 /* this node and three peers; more is Prometheus's job */
#define SP_NODES_MORE_NOTE "a cluster of more than four nodes is Prometheus's job: scrape each node's /metrics " \
			   "(contrib/prometheus/prometheus.yml) and open the Grafana dashboard (contrib/grafana/sparkops.json)"

/* [{interface, driver, operstate, speed_mbps, mtu, carrier_changes, rx_bytes ...,
 * rx_bytes_per_s, tx_bytes_per_s, rdma: {device, port, state, phys_state, rate, counters} | null,
 * unavailable}] */
json_t *sp_links_json(const struct sp_links *l);

#define SP_NODE_LINKS 4
struct sp_node_link {
	char ifname[32], operstate[16], ib_dev[32], ib_state[32], ib_rate[48];
	double speed_mbps, rx_bps, tx_bps; /* NAN: unknown */
	double errors;                     /* the interface's and the port's error counters summed; NAN unknown */
};
struct sp_node_row {
	double age_s;        /* since the last good answer; NAN: never */
	double total, used, free, budget_now, budget_flush; /* bytes, NAN unknown */
	double hottest_c;
	struct sp_node_link link[SP_NODE_LINKS];
	int nlinks;
	bool figures;        /* the figures are current (state ok) */
	char state[8];       /* "ok", "stale", "down" */
	char name[64];       /* the document's host, cleaned; else the URL */
	char error[160];     /* why not ok ("" when ok) */
	char gpu[96];        /* "84C 98.6W 97% 2405MHz", or why not */
	char hottest[48];    /* the hottest sensor's name */
};
/* The figures of a status --json document into r (name, figures, links);
 * state, error and age are the caller's. doc NULL: no figures. */
void sp_node_row_from_doc(const json_t *doc, struct sp_node_row *r);

#define SP_NODE_LINE 200
/* The rows as text: a header, one line per node, then one line per
 * ConnectX interface of the nodes that answer. Returns the lines written
 * (at most max). */
int sp_nodes_text(const struct sp_node_row *rows, int n, char (*lines)[SP_NODE_LINE], int max);
#endif
