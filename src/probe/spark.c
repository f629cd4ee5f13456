// SPDX-License-Identifier: MIT
#include "probe/spark.h"

#include <math.h>
#include <string.h>

static bool power(const struct sp_sample *s, const char *label, double *w, double *cap_w, bool *cap_ok)
{
	const struct sp_hwchan *c = sp_hw_find(s, "spbm", SP_HW_POWER, label);
	if (!c)
		return false;
	if (cap_w && cap_ok) {
		*cap_ok = sp_ok(c->cap.why);
		*cap_w = *cap_ok ? (double)c->cap.v / 1e6 : NAN;
	}
	if (!sp_ok(c->value.why))
		return false;
	*w = (double)c->value.v / 1e6;
	return true;
}

void sp_spark_derive(const struct sp_sample *s, struct sp_spark *k)
{
	memset(k, 0, sizeof *k);
	k->sys_power_ok = power(s, "sys_total", &k->sys_power_w, NULL, NULL);
	k->soc_power_ok = power(s, "soc_pkg", &k->soc_power_w, NULL, NULL);
	k->gpu_power_ok = power(s, "gpu", &k->gpu_power_w, NULL, NULL);
	k->pl1_ok = power(s, "pl1", &k->pl1_w, &k->pl1_cap_w, &k->pl1_cap_ok);
	if (k->pl1_ok && k->pl1_cap_ok && k->pl1_cap_w > 0) {
		k->pl1_pct = 100.0 * k->pl1_w / k->pl1_cap_w;
		k->at_pl1_cap = k->pl1_pct >= SP_SPARK_AT_CAP_PCT;
	}
	if (k->pl1_cap_ok && k->pl1_cap_w > 0 && k->pl1_cap_w < SP_SPARK_LOW_CAP_W)
		k->usb_pd_safety = true;
	double best = -1e9;
	for (int i = 0; i < s->nzones; i++)
		if (strcmp(s->zones[i].type, "acpitz") == 0 && sp_ok(s->zones[i].temp_mc.why) &&
		    s->zones[i].temp_mc.v / 1e3 > best)
			best = (double)s->zones[i].temp_mc.v / 1e3;
	for (int i = 0; i < s->nhw; i++)
		if (s->hw[i].kind == SP_HW_TEMP && strcmp(s->hw[i].chip, "acpitz") == 0 &&
		    sp_ok(s->hw[i].value.why) && s->hw[i].value.v / 1e3 > best)
			best = (double)s->hw[i].value.v / 1e3;
	if (best > -1e9) {
		k->die_temp_ok = true;
		k->die_temp_c = best;
	}
	k->present = k->sys_power_ok || k->pl1_ok || k->pl1_cap_ok || k->die_temp_ok ||
		     sp_hw_find(s, "spbm", SP_HW_POWER, NULL) != NULL;
}
