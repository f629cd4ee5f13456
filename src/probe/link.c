// SPDX-License-Identifier: MIT
/* The ConnectX/RoCE link's health through the --sysfs root. See link.h. */
#include "probe/link.h"

#include "util/clock.h"
#include "util/dirscan.h"
#include "util/fileio.h"
#include "util/paths.h"
#include "util/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ib_names[SP_IB_CTR_N] = {
	"symbol_error", "link_downed", "link_error_recovery", "port_rcv_errors",
	"port_rcv_remote_physical_errors", "port_xmit_discards", "local_link_integrity_errors",
	"excessive_buffer_overrun_errors",
};
static const char *const net_names[SP_NET_CTR_N] = {
	"rx_bytes", "tx_bytes", "rx_errors", "tx_errors", "rx_dropped", "tx_dropped",
};

const char *sp_ib_ctr_name(enum sp_ib_ctr c)
{
	return (unsigned)c < SP_IB_CTR_N ? ib_names[c] : "?";
}

const char *sp_net_ctr_name(enum sp_net_ctr c)
{
	return (unsigned)c < SP_NET_CTR_N ? net_names[c] : "?";
}

static enum sp_why why_of(int r)
{
	return r == -EINVAL ? SP_MALFORMED : sp_why_from_errno(r);
}

static void read_u64(const char *path, struct sp_u64 *f)
{
	int64_t v = 0;
	int r = sp_read_i64(path, &v);
	if (r == 0 && v < 0)
		r = -EINVAL;
	f->v = r == 0 ? (uint64_t)v : 0;
	f->why = r == 0 ? SP_OK : why_of(r);
}

/* a short text file, cleaned of control bytes; "" when unreadable */
static void read_text(const char *path, char *out, size_t cap)
{
	if (sp_read_line(path, out, cap) < 0)
		out[0] = 0;
	sp_text_clean(out);
}

/* device/uevent's DRIVER= value into drv ("" none) */
static void read_driver(const char *ifname, char *drv, size_t cap)
{
	char p[512], buf[2048];
	size_t len = 0;
	drv[0] = 0;
	if (sp_sys_path(p, sizeof p, "class/net/%s/device/uevent", ifname) < 0 ||
	    sp_read_file(p, buf, sizeof buf, &len) < 0)
		return;
	for (const char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, "DRIVER=", 7) == 0) {
			size_t n = strcspn(l + 7, "\n");
			if (n >= cap)
				n = cap - 1;
			memcpy(drv, l + 7, n);
			drv[n] = 0;
			sp_text_clean(drv);
			return;
		}
	}
}

/* the first entry of a folder that is a safe name into out; 0 or -1 */
static int first_entry(const char *dir, char *out, size_t cap, int *lowest_num)
{
	struct sp_dir d;
	if (sp_dir_open(&d, dir) < 0)
		return -1;
	const char *e;
	int best = -1;
	if (!lowest_num)
		out[0] = 0;
	while ((e = sp_dir_next(&d))) {
		if ((!lowest_num && strlen(e) >= cap) || strchr(e, '/'))
			continue;
		if (lowest_num) {
			char *end;
			long v = strtol(e, &end, 10);
			if (*end || v < 0 || v > 255)
				continue;
			if (best < 0 || v < best)
				best = (int)v;
		} else if (!out[0] || strcmp(e, out) < 0) {
			snprintf(out, cap, "%s", e);
		}
	}
	sp_dir_close(&d);
	if (lowest_num) {
		*lowest_num = best;
		return best < 0 ? -1 : 0;
	}
	return out[0] ? 0 : -1;
}

/* "4: ACTIVE" -> "ACTIVE" */
static void after_colon(char *s)
{
	char *c = strchr(s, ':');
	if (!c)
		return;
	c++;
	while (*c == ' ')
		c++;
	memmove(s, c, strlen(c) + 1);
}

static void read_ib(struct sp_link *k)
{
	char p[512];
	for (int c = 0; c < SP_IB_CTR_N; c++)
		k->ib[c].why = SP_MISSING;
	if (sp_sys_path(p, sizeof p, "class/net/%s/device/infiniband", k->ifname) < 0 ||
	    first_entry(p, k->ib_dev, sizeof k->ib_dev, NULL) < 0) {
		k->ib_dev[0] = 0;
		return;
	}
	int port = -1;
	if (sp_sys_path(p, sizeof p, "class/infiniband/%s/ports", k->ib_dev) < 0 || first_entry(p, NULL, 0, &port) < 0)
		return;
	k->ib_port = port;
	sp_sys_path(p, sizeof p, "class/infiniband/%s/ports/%d/state", k->ib_dev, port);
	read_text(p, k->ib_state, sizeof k->ib_state);
	after_colon(k->ib_state);
	sp_sys_path(p, sizeof p, "class/infiniband/%s/ports/%d/phys_state", k->ib_dev, port);
	read_text(p, k->ib_phys_state, sizeof k->ib_phys_state);
	after_colon(k->ib_phys_state);
	sp_sys_path(p, sizeof p, "class/infiniband/%s/ports/%d/rate", k->ib_dev, port);
	read_text(p, k->ib_rate, sizeof k->ib_rate);
	for (int c = 0; c < SP_IB_CTR_N; c++) {
		sp_sys_path(p, sizeof p, "class/infiniband/%s/ports/%d/counters/%s", k->ib_dev, port, ib_names[c]);
		read_u64(p, &k->ib[c]);
	}
}

static void read_one(struct sp_link *k)
{
	char p[512];
	sp_sys_path(p, sizeof p, "class/net/%s/operstate", k->ifname);
	read_text(p, k->operstate, sizeof k->operstate);
	int64_t v = 0;
	sp_sys_path(p, sizeof p, "class/net/%s/speed", k->ifname);
	int r = sp_read_i64(p, &v);
	/* a link that is down answers -1 or EINVAL: no speed, not a speed of 0 */
	if (r == 0 && v <= 0)
		r = -EOPNOTSUPP;
	k->speed_mbps.v = r == 0 ? v : 0;
	k->speed_mbps.why = r == 0 ? SP_OK : r == -EINVAL || r == -EOPNOTSUPP ? SP_NOT_SUPPORTED : why_of(r);
	sp_sys_path(p, sizeof p, "class/net/%s/mtu", k->ifname);
	r = sp_read_i64(p, &v);
	k->mtu.v = r == 0 ? v : 0;
	k->mtu.why = r == 0 ? SP_OK : why_of(r);
	sp_sys_path(p, sizeof p, "class/net/%s/carrier_changes", k->ifname);
	read_u64(p, &k->carrier_changes);
	for (int c = 0; c < SP_NET_CTR_N; c++) {
		sp_sys_path(p, sizeof p, "class/net/%s/statistics/%s", k->ifname, net_names[c]);
		read_u64(p, &k->net[c]);
	}
	read_ib(k);
}

static void rates(struct sp_link *k, const struct sp_links *prev, double t)
{
	k->rate_ok = false;
	if (!prev || !(t > prev->t))
		return;
	for (int i = 0; i < prev->n; i++) {
		const struct sp_link *o = &prev->l[i];
		if (strcmp(o->ifname, k->ifname) != 0)
			continue;
		const struct sp_u64 *a = &o->net[SP_NET_RX_BYTES], *b = &k->net[SP_NET_RX_BYTES];
		const struct sp_u64 *c = &o->net[SP_NET_TX_BYTES], *d = &k->net[SP_NET_TX_BYTES];
		if (!sp_ok(a->why) || !sp_ok(b->why) || !sp_ok(c->why) || !sp_ok(d->why) || b->v < a->v || d->v < c->v)
			return; /* unknown, or a counter that went back (the driver reloaded) */
		double dt = t - prev->t;
		k->rx_bps = (double)(b->v - a->v) / dt;
		k->tx_bps = (double)(d->v - c->v) / dt;
		k->rate_ok = true;
		return;
	}
}

static int cmp_link(const void *a, const void *b)
{
	return strcmp(((const struct sp_link *)a)->ifname, ((const struct sp_link *)b)->ifname);
}

void sp_links_read(struct sp_links *out, const struct sp_links *prev)
{
	char dir[512];
	memset(out, 0, sizeof *out);
	out->t = sp_mono_now();
	out->why = SP_OK;
	struct sp_dir d;
	int r = sp_sys_path(dir, sizeof dir, "class/net") < 0 ? -ENAMETOOLONG : sp_dir_open(&d, dir);
	if (r < 0) {
		out->why = sp_why_from_errno(r);
		return;
	}
	const char *e;
	while ((e = sp_dir_next(&d)) && out->n < SP_LINK_MAX) {
		struct sp_link *k = &out->l[out->n];
		if (strlen(e) >= sizeof k->ifname || strchr(e, '/'))
			continue;
		memset(k, 0, sizeof *k);
		snprintf(k->ifname, sizeof k->ifname, "%s", e);
		read_driver(k->ifname, k->driver, sizeof k->driver);
		char p[512], ib[32];
		bool rdma = sp_sys_path(p, sizeof p, "class/net/%s/device/infiniband", k->ifname) == 0 &&
			    first_entry(p, ib, sizeof ib, NULL) == 0;
		if (strncmp(k->driver, "mlx", 3) != 0 && !rdma)
			continue; /* not a ConnectX: lo, the other NICs, bridges, veths */
		sp_text_clean(k->ifname);
		read_one(k);
		out->n++;
	}
	sp_dir_close(&d);
	qsort(out->l, (size_t)out->n, sizeof out->l[0], cmp_link);
	for (int i = 0; i < out->n; i++)
		rates(&out->l[i], prev, out->t);
}
