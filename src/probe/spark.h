/* SPDX-License-Identifier: MIT */
/* What GB10's own sensors say, derived from hwmon/thermal readings:
 * the `spbm` power channels (by label) and the `acpitz` die zones. */
#ifndef SP_SPARK_H
#define SP_SPARK_H
#include "probe/sample.h"

struct sp_spark {
	bool present;        /* spbm channels or acpitz zones were found */
	bool sys_power_ok, soc_power_ok, gpu_power_ok, pl1_ok, pl1_cap_ok, die_temp_ok;
	double sys_power_w, soc_power_w, gpu_power_w;
	double pl1_w, pl1_cap_w, pl1_pct; /* PL1's average and its cap */
	bool at_pl1_cap;     /* the sustained limit is in force (>= 97% of the cap) */
	bool usb_pd_safety;  /* PL1 capped far below the platform's (SP_SPARK_LOW_CAP_W):
			      * the supply's USB-PD safety mode or a stuck low-power state */
	double die_temp_c;   /* hottest acpitz zone */
};
#define SP_SPARK_AT_CAP_PCT 97.0
/* GB10's stock PL1 cap is 140 W. Field reports show the power-delivery
 * safety mode at 20 W and at 30 W, and a low-power state stuck until AC is
 * unplugged: any cap under SP_SPARK_LOW_CAP_W is far below the platform's
 * and is reported with the cap it has, not only an exact 20 W. */
#define SP_SPARK_STOCK_CAP_W 140.0
#define SP_SPARK_LOW_CAP_W 50.0

void sp_spark_derive(const struct sp_sample *s, struct sp_spark *k);
#endif
