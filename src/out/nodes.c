// SPDX-License-Identifier: MIT
/* Nodes side by side: links as JSON, a node's row, the rows as text. See nodes.h. */
#include "out/nodes.h"

#include "util/json.h"
#include "util/text.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static json_t *u64_or_null(struct sp_u64 f)
{
	return sp_ok(f.why) ? json_integer((json_int_t)f.v) : json_null();
}

static void why_into(json_t *un, const char *key, enum sp_why w)
{
	if (!sp_ok(w))
		json_object_set_new(un, key, json_string(sp_why_key(w)));
}

json_t *sp_links_json(const struct sp_links *l)
{
	json_t *a = json_array();
	for (int i = 0; l && i < l->n; i++) {
		const struct sp_link *k = &l->l[i];
		json_t *o = json_object(), *un = json_object();
		json_object_set_new(o, "interface", sp_json_text(k->ifname));
		json_object_set_new(o, "driver", k->driver[0] ? sp_json_text(k->driver) : json_null());
		json_object_set_new(o, "operstate", k->operstate[0] ? sp_json_text(k->operstate) : json_null());
		json_object_set_new(o, "speed_mbps", sp_ok(k->speed_mbps.why) ? json_integer(k->speed_mbps.v) : json_null());
		why_into(un, "speed_mbps", k->speed_mbps.why);
		json_object_set_new(o, "mtu", sp_ok(k->mtu.why) ? json_integer(k->mtu.v) : json_null());
		json_object_set_new(o, "carrier_changes", u64_or_null(k->carrier_changes));
		for (int c = 0; c < SP_NET_CTR_N; c++) {
			json_object_set_new(o, sp_net_ctr_name((enum sp_net_ctr)c), u64_or_null(k->net[c]));
			why_into(un, sp_net_ctr_name((enum sp_net_ctr)c), k->net[c].why);
		}
		json_object_set_new(o, "rx_bytes_per_s", k->rate_ok ? json_real(round(k->rx_bps)) : json_null());
		json_object_set_new(o, "tx_bytes_per_s", k->rate_ok ? json_real(round(k->tx_bps)) : json_null());
		if (!k->rate_ok)
			json_object_set_new(un, "bytes_per_s", json_string("one_reading"));
		if (k->ib_dev[0]) {
			json_t *r = json_object(), *ctr = json_object();
			json_object_set_new(r, "device", sp_json_text(k->ib_dev));
			json_object_set_new(r, "port", k->ib_port > 0 ? json_integer(k->ib_port) : json_null());
			json_object_set_new(r, "state", k->ib_state[0] ? sp_json_text(k->ib_state) : json_null());
			json_object_set_new(r, "phys_state", k->ib_phys_state[0] ? sp_json_text(k->ib_phys_state) : json_null());
			json_object_set_new(r, "rate", k->ib_rate[0] ? sp_json_text(k->ib_rate) : json_null());
			for (int c = 0; c < SP_IB_CTR_N; c++)
				if (sp_ok(k->ib[c].why))
					json_object_set_new(ctr, sp_ib_ctr_name((enum sp_ib_ctr)c), json_integer((json_int_t)k->ib[c].v));
			json_object_set_new(r, "counters", ctr);
			json_object_set_new(o, "rdma", r);
		} else {
			json_object_set_new(o, "rdma", json_null());
		}
		json_object_set_new(o, "unavailable", un);
		json_array_append_new(a, o);
	}
	return a;
}

/* ---- a node's row from its document --------------------------------------------- */

static double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static void copy_clean(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
	sp_text_clean(dst);
}

/* a sensor hotter than the best so far (and physically plausible) */
static void hotter(struct sp_node_row *r, double c, const char *name)
{
	if (!isfinite(c) || c < -50 || c > 200)
		return;
	if (!isnan(r->hottest_c) && c <= r->hottest_c)
		return;
	r->hottest_c = c;
	copy_clean(r->hottest, sizeof r->hottest, name);
}

static void hottest(const json_t *doc, struct sp_node_row *r)
{
	char name[48];
	const json_t *a = json_object_get(doc, "gpus"), *x;
	size_t i;
	json_array_foreach(a, i, x) {
		snprintf(name, sizeof name, "GPU %zu", i);
		hotter(r, num(x, "temperature_c"), name);
	}
	const json_t *k = json_object_get(doc, "spark");
	hotter(r, num(k, "die_temp_c"), "die");
	json_array_foreach(json_object_get(doc, "thermal_zones"), i, x) {
		const char *t = str(x, "type");
		double z = num(x, "zone");
		if (z >= 0 && z < 100000)
			snprintf(name, sizeof name, "%.20s zone %d", t ? t : "?", (int)z);
		else
			snprintf(name, sizeof name, "%.20s zone ?", t ? t : "?");
		hotter(r, num(x, "temp_c"), name);
	}
	json_array_foreach(json_object_get(doc, "hwmon"), i, x) {
		const char *kind = str(x, "kind");
		if (!kind || strcmp(kind, "temp") != 0)
			continue;
		const char *chip = str(x, "chip"), *lab = str(x, "label");
		snprintf(name, sizeof name, "%.20s %.20s", chip ? chip : "?", lab && lab[0] ? lab : "");
		hotter(r, num(x, "temp_c"), name);
	}
}

static void gpu_text(const json_t *doc, struct sp_node_row *r)
{
	const char *st = str(doc, "gpu_status");
	const json_t *g = json_array_get(json_object_get(doc, "gpus"), 0);
	if (!g) {
		snprintf(r->gpu, sizeof r->gpu, "%s", st && strcmp(st, "ok") != 0 ? st : "no GPU");
		sp_text_clean(r->gpu);
		return;
	}
	if (st && strcmp(st, "ok") != 0) {
		snprintf(r->gpu, sizeof r->gpu, "%.40s", st);
		sp_text_clean(r->gpu);
		return;
	}
	char t[16] = "?C", p[16] = "?W", u[16] = "?%", c[16] = "?MHz";
	double v;
	if (!isnan(v = num(g, "temperature_c")))
		snprintf(t, sizeof t, "%.0fC", v);
	if (!isnan(v = num(g, "power_w")))
		snprintf(p, sizeof p, "%.1fW", v);
	if (!isnan(v = num(g, "utilization_pct")))
		snprintf(u, sizeof u, "%.0f%%", v);
	if (!isnan(v = num(g, "sm_clock_mhz")))
		snprintf(c, sizeof c, "%.0fMHz", v);
	snprintf(r->gpu, sizeof r->gpu, "%s %s %s %s", t, p, u, c);
}

static void links(const json_t *doc, struct sp_node_row *r)
{
	const json_t *x;
	size_t i;
	json_array_foreach(json_object_get(doc, "links"), i, x) {
		if (r->nlinks >= SP_NODE_LINKS)
			break;
		struct sp_node_link *k = &r->link[r->nlinks++];
		copy_clean(k->ifname, sizeof k->ifname, str(x, "interface"));
		copy_clean(k->operstate, sizeof k->operstate, str(x, "operstate"));
		k->speed_mbps = num(x, "speed_mbps");
		k->rx_bps = num(x, "rx_bytes_per_s");
		k->tx_bps = num(x, "tx_bytes_per_s");
		static const char *const errs[] = { "rx_errors", "tx_errors" };
		k->errors = 0;
		for (size_t e = 0; e < sizeof errs / sizeof errs[0]; e++)
			k->errors += num(x, errs[e]);
		const json_t *rd = json_object_get(x, "rdma");
		if (json_is_object(rd)) {
			copy_clean(k->ib_dev, sizeof k->ib_dev, str(rd, "device"));
			copy_clean(k->ib_state, sizeof k->ib_state, str(rd, "state"));
			copy_clean(k->ib_rate, sizeof k->ib_rate, str(rd, "rate"));
			const char *key;
			const json_t *v;
			json_t *ctr = json_object_get(rd, "counters");
			json_object_foreach(ctr, key, v)
				if (json_is_integer(v) && strcmp(key, "link_downed") != 0)
					k->errors += (double)json_integer_value(v);
		}
	}
}

void sp_node_row_from_doc(const json_t *doc, struct sp_node_row *r)
{
	r->total = r->used = r->free = r->budget_now = r->budget_flush = NAN;
	r->hottest_c = NAN;
	r->hottest[0] = 0;
	r->gpu[0] = 0;
	r->nlinks = 0;
	if (!json_is_object(doc))
		return;
	const char *h = str(doc, "host");
	if (h && h[0])
		copy_clean(r->name, sizeof r->name, h);
	const json_t *p = json_object_get(doc, "pool"), *b = json_object_get(doc, "budget");
	r->total = num(p, "total_bytes");
	r->used = num(p, "used_bytes");
	r->free = num(p, "free_bytes");
	r->budget_now = num(b, "now_bytes");
	r->budget_flush = num(b, "after_flush_bytes");
	gpu_text(doc, r);
	hottest(doc, r);
	links(doc, r);
}

/* ---- text ---------------------------------------------------------------------------- */

static const char *gib2(char *buf, size_t n, double a, double b)
{
	if (isnan(a) && isnan(b))
		snprintf(buf, n, "unknown");
	else if (isnan(a))
		snprintf(buf, n, "?/%.1f GiB", b / 1073741824.0);
	else if (isnan(b))
		snprintf(buf, n, "%.1f/? GiB", a / 1073741824.0);
	else
		snprintf(buf, n, "%.1f/%.1f GiB", a / 1073741824.0, b / 1073741824.0);
	return buf;
}

static const char *rate(char *buf, size_t n, double bps)
{
	if (isnan(bps))
		snprintf(buf, n, "?");
	else if (bps >= 1e9)
		snprintf(buf, n, "%.2f GB/s", bps / 1e9);
	else if (bps >= 1e6)
		snprintf(buf, n, "%.1f MB/s", bps / 1e6);
	else if (bps >= 1e3)
		snprintf(buf, n, "%.1f kB/s", bps / 1e3);
	else
		snprintf(buf, n, "%.0f B/s", bps);
	return buf;
}

static const char *age(char *buf, size_t n, double s)
{
	if (isnan(s))
		snprintf(buf, n, "never answered");
	else if (s < 60)
		snprintf(buf, n, "last answer %.0fs ago", s);
	else
		snprintf(buf, n, "last answer %.0fm ago", s / 60);
	return buf;
}

int sp_nodes_text(const struct sp_node_row *rows, int n, char (*lines)[SP_NODE_LINE], int max)
{
	int o = 0;
	if (max <= 0)
		return 0;
	snprintf(lines[o++], SP_NODE_LINE, "%-18s %-5s %-19s %-17s %-24s %s", "NODE", "STATE", "POOL USED/TOTAL",
		 "BUDGET NOW/FLUSH", "GPU", "HOTTEST");
	for (int i = 0; i < n && o < max; i++) {
		const struct sp_node_row *r = &rows[i];
		char a[40], b[40], h[80], g[40];
		if (!r->figures) {
			snprintf(lines[o++], SP_NODE_LINE, "%-18.18s %-5s %s (%s)", r->name, r->state,
				 r->error[0] ? r->error : "no answer", age(g, sizeof g, r->age_s));
			continue;
		}
		if (isnan(r->hottest_c))
			snprintf(h, sizeof h, "unknown");
		else
			snprintf(h, sizeof h, "%.1fC %s", r->hottest_c, r->hottest);
		snprintf(lines[o++], SP_NODE_LINE, "%-18.18s %-5s %-19s %-17s %-24.24s %s", r->name, r->state,
			 gib2(a, sizeof a, r->used, r->total), gib2(b, sizeof b, r->budget_now, r->budget_flush), r->gpu, h);
	}
	bool head = false;
	for (int i = 0; i < n && o < max; i++) {
		const struct sp_node_row *r = &rows[i];
		if (!r->figures)
			continue;
		if (!head && r->nlinks && o < max) {
			snprintf(lines[o++], SP_NODE_LINE, "%-18s %-13s %-5s %-9s %-13s %-13s %-9s %s", "LINK", "INTERFACE",
				 "STATE", "SPEED", "RX", "TX", "ERRORS", "RDMA");
			head = true;
		}
		for (int j = 0; j < r->nlinks && o < max; j++) {
			const struct sp_node_link *k = &r->link[j];
			char sp[24], rx[24], tx[24], er[24], ib[120] = "";
			if (isnan(k->speed_mbps))
				snprintf(sp, sizeof sp, "no speed");
			else
				snprintf(sp, sizeof sp, "%.0f Gb/s", k->speed_mbps / 1000.0);
			if (isnan(k->errors))
				snprintf(er, sizeof er, "?");
			else
				snprintf(er, sizeof er, "%.0f", k->errors);
			if (k->ib_dev[0])
				snprintf(ib, sizeof ib, "%s %s %s", k->ib_dev, k->ib_state[0] ? k->ib_state : "?", k->ib_rate);
			else
				snprintf(ib, sizeof ib, "none");
			snprintf(lines[o++], SP_NODE_LINE, "%-18.18s %-13.13s %-5s %-9s %-13s %-13s %-9s %s", r->name,
				 k->ifname, k->operstate[0] ? k->operstate : "?", sp, rate(rx, sizeof rx, k->rx_bps),
				 rate(tx, sizeof tx, k->tx_bps), er, ib);
		}
	}
	return o;
}
