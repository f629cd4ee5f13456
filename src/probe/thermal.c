// SPDX-License-Identifier: MIT
/* Thermal zones (/sys/class/thermal) and hwmon sensors (/sys/class/hwmon).
 * On GB10 the `acpitz` zones track the GPU die; the community `spbm` driver
 * gives system/SoC/GPU power and the firmware's PL1/PL2 limit channels. */
#include "probe/kept.h"
#include "probe/probe.h"
#include "util/clock.h"
#include "util/dirscan.h"
#include "util/fileio.h"
#include "util/paths.h"
#include "util/sort.h"
#include "util/text.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ---- static metadata, read once ---------------------------------------------------
 * Zone types, hwmon chip names, labels, caps and maxima do not change while a
 * driver is loaded; only the readings do. They are read on the first sample
 * and again when the class directory changes (its inode or mtime: a driver
 * loaded or unloaded adds or removes an entry), when a reading's file has gone,
 * when the root moves (--sysfs), or after SP_SENSOR_META_S seconds (a cap set
 * by hand is seen within that). In between a sample opens one file per
 * reading, and the two class directories are fstat'd (kept open with O_PATH
 * when they are sysfs's, so no path is walked; a fixture's are stat'd by
 * path) at most every SP_SENSOR_RECHECK_S: a driver loaded is seen within
 * that, a reading gone at once. (At --interval 1 the two stats, one of them
 * of a hwmon class that most machines' containers lack, were a tenth of a
 * sample's reads.) */
#define SP_SENSOR_META_S 60.0
#define SP_SENSOR_RECHECK_S 5.0

struct tree_id {
	char root[512];
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	double at;      /* when the cache was built */
	double checked; /* when the directory was last seen unchanged */
	bool valid;
	bool has_fd; /* fd: the directory, O_PATH, when the kernel's (sysfs) */
	int fd;
};

static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;

/* 1 when the tree at dir is the one the cache was built from, recent enough */
static bool tree_same(struct tree_id *t, const char *dir, struct tree_id *now)
{
	struct stat st;
	double at = sp_mono_now();
	bool same_root = t->valid && strcmp(t->root, dir) == 0;
	if (same_root && at >= t->checked && at - t->checked < SP_SENSOR_RECHECK_S && at >= t->at &&
	    at - t->at < SP_SENSOR_META_S)
		return true; /* looked at a moment ago */
	memset(now, 0, sizeof *now);
	snprintf(now->root, sizeof now->root, "%s", dir);
	now->at = now->checked = at;
	if (same_root && t->has_fd ? fstat(t->fd, &st) == 0 : stat(dir, &st) == 0) {
		now->dev = st.st_dev;
		now->ino = st.st_ino;
		now->mtime = st.st_mtim;
	}
	now->valid = true;
	bool same = same_root && t->dev == now->dev && t->ino == now->ino && t->mtime.tv_sec == now->mtime.tv_sec &&
		    t->mtime.tv_nsec == now->mtime.tv_nsec && now->at >= t->at && now->at - t->at < SP_SENSOR_META_S;
	if (same)
		t->checked = at;
	if (!same) {
		/* the cache is rebuilt from now: its directory is kept open
		 * when sysfs holds it (a kernel directory is never replaced,
		 * only changed, which its mtime tells) */
		if (t->has_fd)
			close(t->fd);
		int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0 && sp_kept_kernel_fs(fd)) {
			now->fd = fd;
			now->has_fd = true;
		} else if (fd >= 0) {
			close(fd);
		}
	}
	return same;
}

struct zone_meta {
	struct sp_zone z;  /* index and type; the temperature is read per sample */
	char dir[32];      /* thermal_zoneN */
};
static struct {
	struct tree_id id;
	int n;
	struct zone_meta m[SP_MAX_ZONES];
} zones;

static int cmp_zone_meta(const void *a, const void *b)
{
	return ((const struct zone_meta *)a)->z.index - ((const struct zone_meta *)b)->z.index;
}

static void zones_rebuild(const char *dir)
{
	zones.n = 0;
	struct sp_dir d;
	if (sp_dir_open(&d, dir) < 0)
		return;
	const char *name;
	while ((name = sp_dir_next(&d)) && zones.n < SP_MAX_ZONES) {
		int idx = suffix_index(name, "thermal_zone");
		if (idx < 0 || strlen(name) >= sizeof zones.m[0].dir)
			continue;
		struct zone_meta *m = &zones.m[zones.n];
		memset(m, 0, sizeof *m);
		m->z.index = idx;
		snprintf(m->dir, sizeof m->dir, "%s", name);
		char p[900];
		snprintf(p, sizeof p, "%s/%s/type", dir, name);
		if (sp_read_line(p, m->z.type, sizeof m->z.type) < 0)
			snprintf(m->z.type, sizeof m->z.type, "zone%d", idx);
		sp_text_clean(m->z.type);
		zones.n++;
	}
	sp_dir_close(&d);
	sp_sort(zones.m, (size_t)zones.n, sizeof zones.m[0], cmp_zone_meta);
}

void sp_thermal_read(struct sp_sample *s)
{
	s->nzones = 0;
	char dir[600];
	sp_sys_path(dir, sizeof dir, "class/thermal");
	pthread_mutex_lock(&meta_lock);
	struct tree_id now;
	if (!tree_same(&zones.id, dir, &now)) {
		zones_rebuild(dir);
		zones.id = now;
	}
	bool gone = false;
	for (int i = 0; i < zones.n; i++) {
		struct sp_zone *z = &s->zones[s->nzones++];
		*z = zones.m[i].z;
		char p[900];
		snprintf(p, sizeof p, "%s/%s/temp", dir, zones.m[i].dir);
		int64_t v = 0;
		int r = sp_kept_i64(p, &v);
		gone |= r == -ENOENT;
		set_i64(&z->temp_mc, r, v);
		/* a die between -60 and 200 degC; anything else is a broken sensor */
		if (r == 0 && (v < -60000 || v > 200000))
			z->temp_mc.why = SP_IMPLAUSIBLE;
	}
	if (gone)
		zones.id.valid = false; /* a zone went away: list them again next time */
	pthread_mutex_unlock(&meta_lock);
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

struct hw_meta {
	struct sp_hwchan c; /* chip, label, cap, max; the value is read per sample */
	char dir[32];       /* hwmonN */
	bool has_input, has_avg;
};
static struct {
	struct tree_id id;
	int n;
	struct hw_meta m[SP_MAX_HWMON];
} hws;

static struct hw_meta *hw_slot(int hwmon, enum sp_hw_kind k, int chan)
{
	for (int i = 0; i < hws.n; i++)
		if (hws.m[i].c.hwmon == hwmon && hws.m[i].c.kind == k && hws.m[i].c.chan == chan)
			return &hws.m[i];
	if (hws.n >= SP_MAX_HWMON)
		return NULL;
	struct hw_meta *m = &hws.m[hws.n++];
	memset(m, 0, sizeof *m);
	m->c.hwmon = hwmon;
	m->c.kind = k;
	m->c.chan = chan;
	m->c.cap.why = m->c.max.why = SP_MISSING;
	m->c.value.why = SP_MISSING;
	return m;
}

static const char *kind_pfx(enum sp_hw_kind k)
{
	return k == SP_HW_TEMP ? "temp" : k == SP_HW_POWER ? "power" : "energy";
}

/* the channels of one chip and their static attributes */
static void chip_meta(const char *dir, const char *dname, int hwmon)
{
	char p[1100], chip[32] = "";
	snprintf(p, sizeof p, "%s/name", dir);
	if (sp_read_line(p, chip, sizeof chip) < 0)
		snprintf(chip, sizeof chip, "hwmon%d", hwmon);
	sp_text_clean(chip);
	int first = hws.n;
	struct sp_dir d;
	if (sp_dir_open(&d, dir) < 0)
		return;
	const char *name;
	while ((name = sp_dir_next(&d))) {
		enum sp_hw_kind k;
		int chan, is_avg;
		if (hw_attr(name, &k, &chan, &is_avg) < 0)
			continue;
		struct hw_meta *m = hw_slot(hwmon, k, chan);
		if (!m)
			break;
		/* a power channel may have both _input and _average: the sample
		 * prefers _average (the firmware's own smoothing, what PL1 is judged
		 * against) */
		if (is_avg)
			m->has_avg = true;
		else
			m->has_input = true;
		snprintf(m->c.chip, sizeof m->c.chip, "%s", chip);
		snprintf(m->dir, sizeof m->dir, "%s", dname);
	}
	sp_dir_close(&d);
	/* labels, caps and maxima for the channels found */
	for (int i = first; i < hws.n; i++) {
		struct sp_hwchan *c = &hws.m[i].c;
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

static int cmp_hw_meta(const void *a, const void *b)
{
	return cmp_hw(&((const struct hw_meta *)a)->c, &((const struct hw_meta *)b)->c);
}

static void hw_rebuild(const char *dir)
{
	hws.n = 0;
	struct sp_dir d;
	if (sp_dir_open(&d, dir) < 0)
		return;
	const char *name;
	while ((name = sp_dir_next(&d))) {
		int idx = suffix_index(name, "hwmon");
		if (idx < 0 || strlen(name) >= sizeof hws.m[0].dir)
			continue;
		char sub[900];
		snprintf(sub, sizeof sub, "%s/%s", dir, name);
		chip_meta(sub, name, idx);
	}
	sp_dir_close(&d);
	sp_sort(hws.m, (size_t)hws.n, sizeof hws.m[0], cmp_hw_meta);
}

/* one reading: 0 or -errno, the value in *v */
static int hw_value(const char *dir, const struct hw_meta *m, bool avg, int64_t *v)
{
	char p[1100];
	snprintf(p, sizeof p, "%s/%s/%s%d_%s", dir, m->dir, kind_pfx(m->c.kind), m->c.chan,
		 avg ? "average" : "input");
	return sp_kept_i64(p, v);
}

void sp_hwmon_read(struct sp_sample *s)
{
	s->nhw = 0;
	char dir[600];
	sp_sys_path(dir, sizeof dir, "class/hwmon");
	pthread_mutex_lock(&meta_lock);
	struct tree_id now;
	if (!tree_same(&hws.id, dir, &now)) {
		hw_rebuild(dir);
		hws.id = now;
	}
	bool gone = false;
	for (int i = 0; i < hws.n; i++) {
		const struct hw_meta *m = &hws.m[i];
		struct sp_hwchan *c = &s->hw[s->nhw++];
		*c = m->c;
		int64_t v = 0;
		int r = -ENOENT;
		if (m->has_avg)
			r = hw_value(dir, m, true, &v);
		if (r < 0 && m->has_input)
			r = hw_value(dir, m, false, &v);
		gone |= r == -ENOENT;
		set_i64(&c->value, r, v);
		if (r == 0 && c->kind == SP_HW_TEMP && (v < -60000 || v > 200000))
			c->value.why = SP_IMPLAUSIBLE;
		if (r == 0 && c->kind == SP_HW_POWER && (v < 0 || v > 10000000000LL))
			c->value.why = SP_IMPLAUSIBLE;
	}
	if (gone)
		hws.id.valid = false; /* a sensor went away: list them again next time */
	pthread_mutex_unlock(&meta_lock);
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
