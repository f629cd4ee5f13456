/* SPDX-License-Identifier: MIT */
/* The link between Sparks: the ConnectX (mlx5) interfaces and their RoCE
 * devices, read through the --sysfs root. An interface counts when its PCI
 * device's driver is an mlx driver (device/uevent's DRIVER=) or the device
 * has an RDMA side (device/infiniband/DEV); loopback, bridges, veths and the
 * other NICs are left out. Per interface: /sys/class/net/IF/{operstate,
 * speed, mtu, carrier_changes, statistics/{rx,tx}_{bytes,errors,dropped}}
 * and, where present, /sys/class/infiniband/DEV/ports/N/{state, phys_state,
 * rate, counters/NAME} (the error counters by name). Bytes per second need two
 * readings: pass the previous one (NULL: none, the rates are unknown).
 * No heap: the result is fixed size. */
#ifndef SP_LINK_H
#define SP_LINK_H
#include "probe/sample.h"

#include <stdbool.h>

#define SP_LINK_MAX 8
/* the RDMA port's error counters read by name (counters/NAME) */
enum sp_ib_ctr {
	SP_IB_SYMBOL_ERROR,
	SP_IB_LINK_DOWNED,
	SP_IB_LINK_ERROR_RECOVERY,
	SP_IB_RCV_ERRORS,
	SP_IB_RCV_REMOTE_PHYSICAL_ERRORS,
	SP_IB_XMIT_DISCARDS,
	SP_IB_LOCAL_LINK_INTEGRITY_ERRORS,
	SP_IB_EXCESSIVE_BUFFER_OVERRUN_ERRORS,
	SP_IB_CTR_N
};
const char *sp_ib_ctr_name(enum sp_ib_ctr c); /* "symbol_error", ... (the file's name) */

enum sp_net_ctr { SP_NET_RX_BYTES, SP_NET_TX_BYTES, SP_NET_RX_ERRORS, SP_NET_TX_ERRORS,
		  SP_NET_RX_DROPPED, SP_NET_TX_DROPPED, SP_NET_CTR_N };
const char *sp_net_ctr_name(enum sp_net_ctr c); /* "rx_bytes", ... (statistics/NAME) */

struct sp_link {
	char ifname[32];
	char driver[32];            /* "mlx5_core"; "" when the device says none */
	char operstate[16];         /* "up", "down", "dormant", ...; "" unknown */
	struct sp_i64 speed_mbps;   /* not_supported while the link is down (the kernel says -1) */
	struct sp_i64 mtu;
	struct sp_u64 carrier_changes;
	struct sp_u64 net[SP_NET_CTR_N];
	double rx_bps, tx_bps;      /* bytes per second since the previous reading */
	bool rate_ok;               /* false: no previous reading of this interface (or a counter went back) */
	/* the RDMA (RoCE) side, when the device has one */
	char ib_dev[32];            /* "rocep1s0f0"; "" none */
	int ib_port;                /* the port read (the lowest) */
	char ib_state[32];          /* "ACTIVE" (the number before ':' dropped) */
	char ib_phys_state[32];     /* "LinkUp" */
	char ib_rate[48];           /* "200 Gb/sec (4X HDR)" */
	struct sp_u64 ib[SP_IB_CTR_N];
};

struct sp_links {
	double t;                   /* monotonic time of the reading */
	enum sp_why why;            /* SP_MISSING: no /sys/class/net here */
	int n;
	struct sp_link l[SP_LINK_MAX];
};

/* Read every ConnectX interface into out; rates from prev (may be NULL, or out itself is not allowed). */
void sp_links_read(struct sp_links *out, const struct sp_links *prev);
#endif
