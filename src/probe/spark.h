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
	bool usb_pd_safety;  /* PL1 capped at 20 W: the supply's USB-PD safety mode */
	double die_temp_c;   /* hottest acpitz zone */
};
#define SP_SPARK_AT_CAP_PCT 97.0
#define SP_SPARK_SAFETY_CAP_W 20.0

void sp_spark_derive(const struct sp_sample *s, struct sp_spark *k);
#endif
