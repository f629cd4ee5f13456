// SPDX-License-Identifier: MIT
/* How a boot ended (bootend.h): line classes, the run-up window, the verdict. */
#include "ladder/bootend.h"
#include "util/text.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a cap at or under this is the adapter's safety cap (20 W or 30 W), not a
 * platform limit */
#define PD_SAFETY_CAP_W 30.5

static const char *const kind_names[] = { "driver_wedge", "kernel_oom", "userspace_kill", "thermal",
					  "power",        "panic",      "clean",          "unknown" };
static const char *const class_names[] = { "none",     "nvrm_oom", "xid",   "kernel_oom", "oom_invoked", "userspace_kill",
					   "thermal",  "power",    "shutdown", "ready", "kernel_fault", "panic" };
static const char *const phase_names[] = { "none", "startup", "load", "run" };

const char *sp_end_kind_name(enum sp_end_kind k)
{
	return (unsigned)k < sizeof kind_names / sizeof kind_names[0] ? kind_names[k] : "unknown";
}

const char *sp_be_class_name(enum sp_be_class c)
{
	return (unsigned)c < sizeof class_names / sizeof class_names[0] ? class_names[c] : "none";
}

const char *sp_drv_phase_name(enum sp_drv_phase p)
{
	return (unsigned)p < sizeof phase_names / sizeof phase_names[0] ? phase_names[p] : "none";
}

/* case-insensitive search of needle in msg[0..len) */
static const char *has(const char *msg, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	if (n == 0 || n > len)
		return NULL;
	for (size_t i = 0; i + n <= len; i++) {
		size_t k = 0;
		while (k < n && tolower((unsigned char)msg[i + k]) == tolower((unsigned char)needle[k]))
			k++;
		if (k == n)
			return msg + i;
	}
	return NULL;
}

static bool ident_is(const char *ident, const char *name)
{
	return ident && strcmp(ident, name) == 0;
}

/* The patterns are data: the wording of the kernel, the NVIDIA driver and
 * each killer as they print it. */
struct pat {
	enum sp_be_class cls;
	bool kernel;          /* only a kernel line (pstore counts as kernel) */
	const char *ident;    /* only from this SYSLOG_IDENTIFIER (NULL: any) */
	const char *who;      /* who it names; NULL: the identifier */
	const char *all[3];   /* every one must be in the line (case-insensitive) */
};

static const struct pat pats[] = {
	{ SP_BC_PANIC, true, NULL, "kernel", { "Kernel panic - not syncing" } },
	{ SP_BC_XID, true, NULL, "kernel", { "NVRM: Xid" } },
	{ SP_BC_NVRM_OOM, true, NULL, "kernel", { "NV_ERR_NO_MEMORY" } },
	{ SP_BC_NVRM_OOM, true, NULL, "kernel", { "NVRM:", "out of memory" } },
	{ SP_BC_NVRM_OOM, true, NULL, "kernel", { "NVRM:", "failed to allocate" } },
	{ SP_BC_KERNEL_OOM, true, NULL, "kernel", { "Out of memory: Killed process" } },
	{ SP_BC_KERNEL_OOM, true, NULL, "kernel", { "Killed process", "total-vm" } },
	{ SP_BC_OOM_INVOKED, true, NULL, "kernel", { "invoked oom-killer" } },
	{ SP_BC_THERMAL, true, NULL, "kernel", { "critical temperature reached" } },
	{ SP_BC_THERMAL, true, NULL, "kernel", { "reached critical temperature" } },
	{ SP_BC_THERMAL, true, NULL, "kernel", { "thermal shutdown" } },
	{ SP_BC_THERMAL, false, NULL, NULL, { "critical temperature", "shutting down" } },
	{ SP_BC_FAULT, true, NULL, "kernel", { "soft lockup" } },
	{ SP_BC_FAULT, true, NULL, "kernel", { "hard LOCKUP" } },
	{ SP_BC_FAULT, true, NULL, "kernel", { "blocked for more than" } },
	{ SP_BC_FAULT, true, NULL, "kernel", { "detected stalls" } },
	{ SP_BC_FAULT, true, NULL, "kernel", { "Internal error: Oops" } },
	{ SP_BC_FAULT, true, NULL, "kernel", { "BUG: unable to handle" } },
	{ SP_BC_POWER, false, NULL, NULL, { "USB-PD", "safety" } },
	{ SP_BC_POWER, false, NULL, NULL, { "power delivery", "cap" } },
	/* userspace killers */
	{ SP_BC_USER_KILL, false, "earlyoom", "earlyoom", { "sending SIGTERM to process" } },
	{ SP_BC_USER_KILL, false, "earlyoom", "earlyoom", { "sending SIGKILL to process" } },
	{ SP_BC_USER_KILL, false, "earlyoom", "earlyoom", { "killing process" } },
	{ SP_BC_USER_KILL, false, "systemd-oomd", "systemd-oomd", { "Killed ", "due to " } },
	{ SP_BC_USER_KILL, false, "systemd-oomd", "systemd-oomd", { "oomd attempting to kill" } },
	{ SP_BC_USER_KILL, false, "systemd", "systemd-oomd", { "systemd-oomd killed" } },
	{ SP_BC_USER_KILL, false, NULL, "ray", { "Ray killed this worker" } },
	{ SP_BC_USER_KILL, false, NULL, "ray", { "running low on memory" } },
	{ SP_BC_USER_KILL, false, "kubelet", "kubernetes", { "OOMKilled" } },
	{ SP_BC_USER_KILL, false, "kubelet", "kubernetes", { "low on resource: memory" } },
	{ SP_BC_USER_KILL, false, "kubelet", "kubernetes", { "eviction manager", "evict" } },
	{ SP_BC_USER_KILL, false, "containerd", "docker", { "TaskOOM" } },
	{ SP_BC_USER_KILL, false, "dockerd", "docker", { "OOMKilled" } },
	{ SP_BC_USER_KILL, false, "dockerd", "docker", { "/tasks/oom" } },
	/* an orderly end */
	{ SP_BC_SHUTDOWN, false, "systemd", NULL, { "Reached target", "Power-Off" } },
	{ SP_BC_SHUTDOWN, false, "systemd", NULL, { "Reached target", "Power Off" } },
	{ SP_BC_SHUTDOWN, false, "systemd", NULL, { "Reached target", "Reboot" } },
	{ SP_BC_SHUTDOWN, false, "systemd", NULL, { "Reached target", "Shutdown" } },
	{ SP_BC_SHUTDOWN, false, "systemd", NULL, { "Reached target", "Halt" } },
	{ SP_BC_SHUTDOWN, false, "systemd-journald", NULL, { "Journal stopped" } },
	{ SP_BC_SHUTDOWN, false, "systemd-shutdown", NULL, { "Syncing filesystems" } },
	{ SP_BC_SHUTDOWN, true, NULL, "kernel", { "reboot: Power down" } },
	{ SP_BC_SHUTDOWN, true, NULL, "kernel", { "reboot: Restarting system" } },
	/* a server (or trainer) said it is ready */
	{ SP_BC_READY, false, NULL, NULL, { "Application startup complete" } },
	{ SP_BC_READY, false, NULL, NULL, { "Uvicorn running on" } },
	{ SP_BC_READY, false, NULL, NULL, { "ready to roll" } },
	{ SP_BC_READY, false, NULL, NULL, { "server is listening on" } },
};

enum sp_be_class sp_be_classify(bool kernel, const char *ident, const char *msg, size_t len, char *who, size_t whon)
{
	/* the kernel's own words are never a service's */
	for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++) {
		const struct pat *p = &pats[i];
		if (p->kernel && !kernel)
			continue;
		if (p->ident && !ident_is(ident, p->ident))
			continue;
		if (!p->kernel && kernel && p->cls != SP_BC_POWER && p->cls != SP_BC_THERMAL)
			continue;
		bool ok = true;
		for (int k = 0; k < 3 && p->all[k]; k++)
			if (!has(msg, len, p->all[k])) {
				ok = false;
				break;
			}
		if (!ok)
			continue;
		if (who && whon)
			snprintf(who, whon, "%s", p->who ? p->who : (kernel ? "kernel" : (ident && *ident ? ident : "?")));
		return p->cls;
	}
	if (who && whon)
		snprintf(who, whon, "%s", kernel ? "kernel" : (ident && *ident ? ident : "?"));
	return SP_BC_NONE;
}

void sp_bootend_init(struct sp_bootend *b, double window_s)
{
	memset(b, 0, sizeof *b);
	b->window_s = window_s > 0 ? window_s : 300;
}

static void fill_line(struct sp_be_line *l, double t, enum sp_be_class cls, const char *who, const char *msg, size_t len)
{
	l->t = t;
	l->cls = cls;
	snprintf(l->who, sizeof l->who, "%s", who);
	sp_text_clean(l->who);
	size_t n = len < sizeof l->text - 1 ? len : sizeof l->text - 1;
	memcpy(l->text, msg, n);
	l->text[n] = 0;
	/* a message's own trailing newline is not part of it */
	while (n > 0 && (l->text[n - 1] == '\n' || l->text[n - 1] == '\r'))
		l->text[--n] = 0;
	sp_text_clean(l->text);
}

static void keep(struct sp_bootend *b, const struct sp_be_line *l)
{
	b->keep[b->keep_head] = *l;
	b->keep_head = (b->keep_head + 1) % SP_BE_KEEP;
	if (b->nkeep < SP_BE_KEEP)
		b->nkeep++;
}

const struct sp_be_line *sp_bootend_kept(const struct sp_bootend *b, int i)
{
	if (i < 0 || i >= b->nkeep)
		return NULL;
	int start = (b->keep_head - b->nkeep + SP_BE_KEEP) % SP_BE_KEEP;
	return &b->keep[(start + i) % SP_BE_KEEP];
}

static void note_class(struct sp_bootend *b, const struct sp_be_line *l)
{
	if (b->count[l->cls]++ == 0)
		b->first_of[l->cls] = *l;
	b->last_of[l->cls] = *l;
	keep(b, l);
}

static void ready_at(struct sp_bootend *b, double t)
{
	b->ready_t[b->ready_head] = t;
	b->ready_head = (b->ready_head + 1) % SP_BE_READY;
	if (b->nready < SP_BE_READY)
		b->nready++;
}

static int xid_code(const char *msg, size_t len)
{
	const char *p = has(msg, len, "Xid");
	if (!p)
		return -1;
	const char *e = msg + len;
	const char *q = memchr(p, ')', (size_t)(e - p));
	if (!q || q + 1 >= e || q[1] != ':')
		return -1;
	q += 2;
	while (q < e && *q == ' ')
		q++;
	int v = 0, nd = 0;
	while (q < e && isdigit((unsigned char)*q) && nd < 6) {
		v = v * 10 + (*q++ - '0');
		nd++;
	}
	return nd ? v : -1;
}

void sp_bootend_feed(struct sp_bootend *b, double t, bool kernel, const char *ident, const char *msg, size_t len)
{
	char who[32];
	enum sp_be_class c = sp_be_classify(kernel, ident, msg, len, who, sizeof who);
	if (b->entries++ == 0)
		b->first_t = t;
	if (t >= b->last_t) {
		b->last_t = t;
		fill_line(&b->last, t, c, who, msg, len);
	}
	if (c == SP_BC_NONE)
		return;
	struct sp_be_line l;
	fill_line(&l, t, c, who, msg, len);
	note_class(b, &l);
	if (c == SP_BC_NVRM_OOM || c == SP_BC_XID) {
		b->drv_t[b->drv_head] = t;
		b->drv_head = (b->drv_head + 1) % SP_BE_DRV;
		if (b->ndrv < SP_BE_DRV)
			b->ndrv++;
	}
	if (c == SP_BC_XID) {
		int x = xid_code(msg, len);
		bool seen = false;
		for (int i = 0; i < b->nxid; i++)
			seen |= b->xids[i] == x;
		if (x >= 0 && !seen && b->nxid < 8)
			b->xids[b->nxid++] = x;
	}
	if (c == SP_BC_READY)
		ready_at(b, t);
}

void sp_bootend_ready(struct sp_bootend *b, double t)
{
	ready_at(b, t);
}

void sp_bootend_power_cap(struct sp_bootend *b, double t, double w)
{
	if (!(w > 0) || w > PD_SAFETY_CAP_W)
		return;
	if (b->pcap_w == 0 || w < b->pcap_w) {
		b->pcap_w = w;
		b->pcap_t = t;
	}
}

void sp_bootend_pstore(struct sp_bootend *b, double t, bool panic, bool oops, const char *file, const char *line)
{
	b->pstore_panic = panic;
	b->pstore_oops = oops && !panic;
	char text[SP_BE_TEXT];
	snprintf(text, sizeof text, "%s: %s", file, line);
	fill_line(&b->pstore, t, panic ? SP_BC_PANIC : SP_BC_FAULT, "pstore", text, strlen(text));
}

/* ---- the judgement ------------------------------------------------------------ */

static enum sp_drv_phase phase_of(const struct sp_bootend *b, double t)
{
	bool after = false, before = false;
	for (int i = 0; i < b->nready; i++) {
		if (b->ready_t[i] > t)
			after = true;
		else
			before = true;
	}
	/* a readiness after the line: it was the start-up's; else after a readiness: the run's */
	return after ? SP_PH_STARTUP : before ? SP_PH_RUN : SP_PH_LOAD;
}

static void add_ev(struct sp_end *e, const struct sp_be_line *l)
{
	if (e->nevidence >= SP_BE_EVID)
		return;
	for (int i = 0; i < e->nevidence; i++)
		if (e->evidence[i].t == l->t && strcmp(e->evidence[i].text, l->text) == 0)
			return;
	e->evidence[e->nevidence++] = *l;
}

/* the kept lines of a class since a time: the first one, then the newest (up to max in all) */
static void add_class(struct sp_end *e, const struct sp_bootend *b, enum sp_be_class cls, double since, int max)
{
	int idx[SP_BE_KEEP], n = 0;
	for (int i = 0; i < b->nkeep; i++) {
		const struct sp_be_line *l = sp_bootend_kept(b, i);
		if (l->cls == cls && l->t >= since)
			idx[n++] = i;
	}
	if (n == 0 || max <= 0)
		return;
	add_ev(e, sp_bootend_kept(b, idx[0]));
	for (int k = n - max + 1 > 1 ? n - max + 1 : 1; k < n; k++)
		add_ev(e, sp_bootend_kept(b, idx[k]));
}

static void sort_ev(struct sp_end *e)
{
	for (int i = 1; i < e->nevidence; i++) {
		struct sp_be_line x = e->evidence[i];
		int k = i;
		while (k > 0 && e->evidence[k - 1].t > x.t) {
			e->evidence[k] = e->evidence[k - 1];
			k--;
		}
		e->evidence[k] = x;
	}
}

/* "Killed process 1234 (python3)" / "process 1234 uid 0 \"python3\"" */
static void victim_of(const char *text, int *pid, char *name, size_t n)
{
	*pid = 0;
	name[0] = 0;
	const char *p = strstr(text, "process ");
	if (!p) {
		/* systemd-oomd: "Killed /a/b/c.scope due to memory pressure ..." (the cgroup) */
		const char *k = strstr(text, "Killed /"), *d = k ? strstr(k, " due to") : NULL;
		if (k && d) {
			size_t l = (size_t)(d - k - 7);
			const char *base = memrchr(k + 7, '/', l);
			if (base) {
				l -= (size_t)(base + 1 - (k + 7));
				k = base + 1 - 7;
			}
			if (l >= n)
				l = n - 1;
			memcpy(name, k + 7, l);
			name[l] = 0;
		}
		return;
	}
	p += 8;
	char *end;
	long v = strtol(p, &end, 10);
	if (end == p || v <= 0 || v > 4194304)
		return;
	*pid = (int)v;
	const char *o = strpbrk(end, "(\"");
	if (!o)
		return;
	char close = *o == '(' ? ')' : '"';
	const char *c = strchr(o + 1, close);
	if (!c)
		return;
	size_t l = (size_t)(c - o - 1);
	if (l >= n)
		l = n - 1;
	memcpy(name, o + 1, l);
	name[l] = 0;
}

/* the victim named by the newest line of a class that names one */
static void newest_victim(const struct sp_bootend *b, enum sp_be_class cls, struct sp_end *e)
{
	for (int i = b->nkeep - 1; i >= 0; i--) {
		const struct sp_be_line *l = sp_bootend_kept(b, i);
		if (l->cls != cls)
			continue;
		victim_of(l->text, &e->victim_pid, e->victim, sizeof e->victim);
		if (e->victim_pid > 0 || e->victim[0])
			return;
	}
}

static void driver_facts(const struct sp_bootend *b, struct sp_end *e, double since)
{
	e->drv_lines = b->count[SP_BC_NVRM_OOM] + b->count[SP_BC_XID];
	double f = INFINITY, l = -INFINITY, fa = INFINITY, la = -INFINITY;
	for (int i = 0; i < b->ndrv; i++) {
		double t = b->drv_t[i];
		switch (phase_of(b, t)) {
		case SP_PH_STARTUP: e->drv_startup++; break;
		case SP_PH_LOAD: e->drv_load++; break;
		default: e->drv_run++; break;
		}
		fa = t < fa ? t : fa;
		la = t > la ? t : la;
		if (t >= since) {
			e->drv_final++;
			f = t < f ? t : f;
			l = t > l ? t : l;
		}
	}
	if (e->drv_final > 0) {
		e->drv_first = f;
		e->drv_last = l;
		double span = l - f;
		e->drv_rate_per_min = (double)e->drv_final / (span > 1.0 ? span : 1.0) * 60.0;
		e->drv_phase = phase_of(b, l);
		e->drv_harmless = e->drv_phase == SP_PH_STARTUP;
	} else if (b->ndrv > 0) {
		e->drv_first = fa;
		e->drv_last = la;
		e->drv_phase = phase_of(b, la);
		/* none near the end: whatever they were, they did not end the boot */
		e->drv_harmless = true;
	}
}

static char *ftime(char *buf, size_t n, double s)
{
	if (s < 90)
		snprintf(buf, n, "%.0f s", s);
	else if (s < 5400)
		snprintf(buf, n, "%.0f min", s / 60);
	else
		snprintf(buf, n, "%.1f h", s / 3600);
	return buf;
}

void sp_bootend_judge(const struct sp_bootend *b, struct sp_end *e)
{
	memset(e, 0, sizeof *e);
	e->last_t = b->last_t;
	double since = b->last_t - b->window_s;
	driver_facts(b, e, since);
	char w[32];
	ftime(w, sizeof w, b->window_s);
	bool in_win[SP_BC_N];
	for (int c = 0; c < SP_BC_N; c++)
		in_win[c] = b->count[c] > 0 && b->last_of[c].t >= since;
	double last_bad = -INFINITY;
	const enum sp_be_class bad[] = { SP_BC_NVRM_OOM, SP_BC_XID, SP_BC_KERNEL_OOM, SP_BC_USER_KILL, SP_BC_FAULT };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (b->count[bad[i]] && b->last_of[bad[i]].t > last_bad)
			last_bad = b->last_of[bad[i]].t;

	if (b->entries == 0 && !b->pstore_panic) {
		e->kind = SP_END_UNKNOWN;
		snprintf(e->detail, sizeof e->detail, "the boot has no journal entries to judge");
		return;
	}
	if (b->pstore_panic || b->count[SP_BC_PANIC]) {
		e->kind = SP_END_PANIC;
		if (b->pstore_panic)
			add_ev(e, &b->pstore);
		if (b->count[SP_BC_PANIC])
			add_ev(e, &b->last_of[SP_BC_PANIC]);
		snprintf(e->detail, sizeof e->detail, "the kernel panicked%s",
			 b->pstore_panic ? " (pstore kept the record)" : "");
	} else if (in_win[SP_BC_THERMAL]) {
		e->kind = SP_END_THERMAL;
		add_class(e, b, SP_BC_THERMAL, since, 3);
		add_class(e, b, SP_BC_SHUTDOWN, since, 2);
		snprintf(e->detail, sizeof e->detail, "a critical temperature ended the boot (a thermal shutdown)");
	} else if (in_win[SP_BC_SHUTDOWN] && b->last_of[SP_BC_SHUTDOWN].t >= last_bad) {
		e->kind = SP_END_CLEAN;
		add_class(e, b, SP_BC_SHUTDOWN, since, 4);
		snprintf(e->detail, sizeof e->detail, "an orderly shutdown or reboot");
	} else if (in_win[SP_BC_XID] || (e->drv_final > 0 && !e->drv_harmless)) {
		e->kind = SP_END_DRIVER_WEDGE;
		add_class(e, b, SP_BC_XID, since, 2);
		add_class(e, b, SP_BC_NVRM_OOM, since, 3);
		add_class(e, b, SP_BC_USER_KILL, since, 1);
		add_ev(e, &b->last);
		snprintf(e->detail, sizeof e->detail,
			 "the NVIDIA driver failed (%ld out-of-memory or Xid line%s in the last %s, during %s), then "
			 "silence: no shutdown, no panic record",
			 e->drv_final, e->drv_final == 1 ? "" : "s", w,
			 e->drv_phase == SP_PH_RUN ? "the job's run, after it was ready" : "a load, before any readiness");
	} else if (in_win[SP_BC_KERNEL_OOM]) {
		e->kind = SP_END_KERNEL_OOM;
		newest_victim(b, SP_BC_KERNEL_OOM, e);
		add_class(e, b, SP_BC_OOM_INVOKED, since, 1);
		add_class(e, b, SP_BC_KERNEL_OOM, since, 3);
		add_ev(e, &b->last);
		snprintf(e->detail, sizeof e->detail, "the kernel's OOM killer struck%s%s%s, then the journal stops",
			 e->victim[0] ? " (victim " : "", e->victim, e->victim[0] ? ")" : "");
	} else if (in_win[SP_BC_USER_KILL]) {
		e->kind = SP_END_USERSPACE_KILL;
		snprintf(e->killer, sizeof e->killer, "%s", b->last_of[SP_BC_USER_KILL].who);
		newest_victim(b, SP_BC_USER_KILL, e);
		add_class(e, b, SP_BC_USER_KILL, since, 3);
		add_ev(e, &b->last);
		snprintf(e->detail, sizeof e->detail, "a userspace killer (%s) acted%s%s, then the journal stops",
			 e->killer, e->victim[0] ? " on " : "", e->victim);
	} else if (in_win[SP_BC_FAULT] || b->pstore_oops) {
		e->kind = SP_END_UNKNOWN;
		add_class(e, b, SP_BC_FAULT, since, 3);
		if (b->pstore_oops)
			add_ev(e, &b->pstore);
		add_ev(e, &b->last);
		snprintf(e->detail, sizeof e->detail,
			 "a kernel fault (lockup, hung task or oops) without a panic record: the end itself is not recorded");
	} else if (b->pcap_w > 0 || in_win[SP_BC_POWER]) {
		e->kind = SP_END_POWER;
		add_class(e, b, SP_BC_POWER, since, 2);
		add_ev(e, &b->last);
		if (b->pcap_w > 0)
			snprintf(e->detail, sizeof e->detail,
				 "power: a %.0f W power-delivery cap was in force (USB-PD safety mode: a wrong or weak "
				 "adapter), and the journal stops with no shutdown",
				 b->pcap_w);
		else
			snprintf(e->detail, sizeof e->detail,
				 "power: a power-delivery fault was logged, and the journal stops with no shutdown");
	} else {
		e->kind = SP_END_POWER;
		add_ev(e, &b->last);
		snprintf(e->detail, sizeof e->detail,
			 "power (most likely): the journal just stops, with no shutdown and no driver, killer, thermal "
			 "or fault line in its last %s",
			 w);
	}
	if (e->drv_lines > 0 && e->drv_harmless && e->kind != SP_END_DRIVER_WEDGE) {
		size_t l = strlen(e->detail);
		snprintf(e->detail + l, sizeof e->detail - l, "; the driver's %ld out-of-memory line%s %s",
			 e->drv_lines, e->drv_lines == 1 ? " was" : "s were",
			 e->drv_phase == SP_PH_STARTUP || e->drv_startup > 0 ? "start-up probes (harmless)"
										: "long before the end");
	}
	sort_ev(e);
}
