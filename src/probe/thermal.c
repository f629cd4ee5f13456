// SPDX-License-Identifier: MIT
/* Thermal zones (/sys/class/thermal) and hwmon sensors (/sys/class/hwmon).
 * On GB10 the `acpitz` zones track the GPU die; the community `spbm` driver
 * gives system/SoC/GPU power and the firmware's PL1/PL2 limit channels. */
#include "probe/probe.h"
#include "util/dirscan.h"
#include "util/fileio.h"
#include "util/paths.h"
#include "util/sort.h"
#include "util/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "thermal_zone12" -> 12 ; -1 when the name does not have that shape */
static int suffix_index(const char *name, const char *prefix)
{
	size_t pl = strlen(prefix);
	if (strncmp(name, prefix, pl) != 0 || !name[pl])
		return -1;
	int64_t v;
	if (sp_parse_i64(name + pl, &v) < 0 || v < 0 || v > 100000)
		return -1;
	return (int)v;
}

static void set_i64(struct sp_i64 *f, int r, int64_t v)
{
	f->v = r == 0 ? v : 0;
	f->why = r == 0 ? SP_OK : (r == -EINVAL ? SP_MALFORMED : sp_why_from_errno(r));
}

static int cmp_zone(const void *a, const void *b)
{
	return ((const struct sp_zone *)a)->index - ((const struct sp_zone *)b)->index;
}

void sp_thermal_read(struct sp_sample *s)
{
	s->nzones = 0;
	char dir[600];
	sp_sys_path(dir, sizeof dir, "class/thermal");
	struct sp_dir d;
	if (sp_dir_open(&d, dir) < 0)
		return;
	const char *name;
	while ((name = sp_dir_next(&d)) && s->nzones < SP_MAX_ZONES) {
		int idx = suffix_index(name, "thermal_zone");
		if (idx < 0)
			continue;
		struct sp_zone *z = &s->zones[s->nzones];
		memset(z, 0, sizeof *z);
		z->index = idx;
		char p[900];
		snprintf(p, sizeof p, "%s/%s/type", dir, name);
		if (sp_read_line(p, z->type, sizeof z->type) < 0)
			snprintf(z->type, sizeof z->type, "zone%d", idx);
		sp_text_clean(z->type);
		snprintf(p, sizeof p, "%s/%s/temp", dir, name);
		int64_t v = 0;
		int r = sp_read_i64(p, &v);
		set_i64(&z->temp_mc, r, v);
		/* a die between -60 and 200 degC; anything else is a broken sensor */
		if (r == 0 && (v < -60000 || v > 200000))
			z->temp_mc.why = SP_IMPLAUSIBLE;
		s->nzones++;
	}
	sp_dir_close(&d);
	sp_sort(s->zones, (size_t)s->nzones, sizeof s->zones[0], cmp_zone);
}

static int cmp_hw(const void *a, const void *b)
{
	const struct sp_hwchan *x = a, *y = b;
	if (x->hwmon != y->hwmon)
		return x->hwmon - y->hwmon;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	return x->chan - y->chan;
}

/* Parse "temp3_input" / "power11_average" / "energy2_input":
 * kind, channel, and whether it is the reading we want. */
static int hw_attr(const char *name, enum sp_hw_kind *kind, int *chan, int *is_avg)
{
	static const struct {
		const char *pfx;
		enum sp_hw_kind k;
	} pf[] = { { "temp", SP_HW_TEMP }, { "power", SP_HW_POWER }, { "energy", SP_HW_ENERGY } };
	for (size_t i = 0; i < 3; i++) {
		size_t pl = strlen(pf[i].pfx);
		if (strncmp(name, pf[i].pfx, pl) != 0)
			continue;
		const char *q = name + pl;
		char *end;
		long n = strtol(q, &end, 10);
		if (end == q || n < 0 || n > 1000)
			return -1;
		if (strcmp(end, "_input") == 0)
			*is_avg = 0;
		else if (pf[i].k == SP_HW_POWER && strcmp(end, "_average") == 0)
			*is_avg = 1;
		else
			return -1;
		*kind = pf[i].k;
		*chan = (int)n;
		return 0;
	}
	return -1;
}

static struct sp_hwchan *hw_slot(struct sp_sample *s, int hwmon, enum sp_hw_kind k, int chan)
{
	for (int i = 0; i < s->nhw; i++)
		if (s->hw[i].hwmon == hwmon && s->hw[i].kind == k && s->hw[i].chan == chan)
			return &s->hw[i];
	if (s->nhw >= SP_MAX_HWMON)
		return NULL;
	struct sp_hwchan *c = &s->hw[s->nhw++];
	memset(c, 0, sizeof *c);
	c->hwmon = hwmon;
	c->kind = k;
	c->chan = chan;
	c->cap.why = c->max.why = SP_MISSING;
	c->value.why = SP_MISSING;
	return c;
}

static const char *kind_pfx(enum sp_hw_kind k)
{
	return k == SP_HW_TEMP ? "temp" : k == SP_HW_POWER ? "power" : "energy";
}

static void read_chip(struct sp_sample *s, const char *dir, int hwmon)
{
	char p[1100], chip[32] = "";
	snprintf(p, sizeof p, "%s/name", dir);
	if (sp_read_line(p, chip, sizeof chip) < 0)
		snprintf(chip, sizeof chip, "hwmon%d", hwmon);
	sp_text_clean(chip);
	struct sp_dir d;
	if (sp_dir_open(&d, dir) < 0)
		return;
	const char *name;
	while ((name = sp_dir_next(&d))) {
		enum sp_hw_kind k;
		int chan, is_avg;
		if (hw_attr(name, &k, &chan, &is_avg) < 0)
			continue;
		struct sp_hwchan *c = hw_slot(s, hwmon, k, chan);
		if (!c)
			break;
		/* a power channel may have both _input and _average: prefer _average
		 * (the firmware's own smoothing, what PL1 is judged against) */
		if (c->value.why == SP_OK && !is_avg)
			continue;
		snprintf(c->chip, sizeof c->chip, "%s", chip);
		snprintf(p, sizeof p, "%s/%s", dir, name);
		int64_t v = 0;
		int r = sp_read_i64(p, &v);
		set_i64(&c->value, r, v);
		if (r == 0 && k == SP_HW_TEMP && (v < -60000 || v > 200000))
			c->value.why = SP_IMPLAUSIBLE;
		if (r == 0 && k == SP_HW_POWER && (v < 0 || v > 10000000000LL))
			c->value.why = SP_IMPLAUSIBLE;
	}
	sp_dir_close(&d);
	/* labels, caps and maxima for the channels found */
	for (int i = 0; i < s->nhw; i++) {
		struct sp_hwchan *c = &s->hw[i];
		if (c->hwmon != hwmon)
			continue;
		const char *kp = kind_pfx(c->kind);
		snprintf(p, sizeof p, "%s/%s%d_label", dir, kp, c->chan);
		if (sp_read_line(p, c->label, sizeof c->label) < 0)
			c->label[0] = 0;
		sp_text_clean(c->label);
		if (c->kind == SP_HW_POWER) {
			int64_t v = 0;
			snprintf(p, sizeof p, "%s/power%d_cap", dir, c->chan);
			int r = sp_read_i64(p, &v);
			set_i64(&c->cap, r, v);
			snprintf(p, sizeof p, "%s/power%d_max", dir, c->chan);
			r = sp_read_i64(p, &v);
			if (r < 0) {
				snprintf(p, sizeof p, "%s/power%d_cap_max", dir, c->chan);
				r = sp_read_i64(p, &v);
			}
			set_i64(&c->max, r, v);
		}
	}
}

void sp_hwmon_read(struct sp_sample *s)
{
	s->nhw = 0;
	char dir[600];
	sp_sys_path(dir, sizeof dir, "class/hwmon");
	struct sp_dir d;
	if (sp_dir_open(&d, dir) < 0)
		return;
	const char *name;
	while ((name = sp_dir_next(&d))) {
		int idx = suffix_index(name, "hwmon");
		if (idx < 0)
			continue;
		char sub[900];
		snprintf(sub, sizeof sub, "%s/%s", dir, name);
		read_chip(s, sub, idx);
	}
	sp_dir_close(&d);
	sp_sort(s->hw, (size_t)s->nhw, sizeof s->hw[0], cmp_hw);
}

const struct sp_hwchan *sp_hw_find(const struct sp_sample *s, const char *chip,
				   enum sp_hw_kind kind, const char *label)
{
	for (int i = 0; i < s->nhw; i++) {
		const struct sp_hwchan *c = &s->hw[i];
		if (c->kind == kind && (!chip || strcmp(c->chip, chip) == 0) &&
		    (!label || strcmp(c->label, label) == 0))
			return c;
	}
	return NULL;
}
