// SPDX-License-Identifier: MIT
/* The memory cgroup the caller lives in (v1 and v2): its limit, usage and
 * OOM counters. In a container the budget follows the tighter of the two. */
#include "probe/kept.h"
#include "probe/probe.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "util/paths.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int sp_cgroup_parse_self(const char *buf, size_t len, char *path, size_t pathcap)
{
	const char *p = buf, *end = buf + len;
	int v1 = 0;
	char v1path[256] = "";
	int v2 = 0;
	char v2path[256] = "";
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		/* hierarchy-ID:controller-list:path */
		const char *c1 = memchr(p, ':', (size_t)(le - p));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(le - c1 - 1)) : NULL;
		if (c2 && c2 + 1 < le && c2[1] == '/') {
			size_t plen = (size_t)(le - c2 - 1);
			if (plen >= sizeof v2path)
				plen = sizeof v2path - 1;
			if (c1 - p == 1 && p[0] == '0' && c2 == c1 + 1) {
				memcpy(v2path, c2 + 1, plen);
				v2path[plen] = 0;
				v2 = 1;
			} else {
				/* the controller list is comma-separated: find "memory" */
				const char *q = c1 + 1;
				while (q < c2) {
					const char *comma = memchr(q, ',', (size_t)(c2 - q));
					const char *ce = comma ? comma : c2;
					if (ce - q == 6 && memcmp(q, "memory", 6) == 0) {
						memcpy(v1path, c2 + 1, plen);
						v1path[plen] = 0;
						v1 = 1;
					}
					q = ce + 1;
				}
			}
		}
		p = nl ? nl + 1 : end;
	}
	if (v1) {
		snprintf(path, pathcap, "%s", v1path);
		return 1;
	}
	if (v2) {
		snprintf(path, pathcap, "%s", v2path);
		return 2;
	}
	return 0;
}

int sp_cgroup_parse_limit(const char *buf, uint64_t *val, int *unlimited)
{
	*unlimited = 0;
	while (*buf == ' ')
		buf++;
	if (strncmp(buf, "max", 3) == 0 && (buf[3] == 0 || buf[3] == '\n')) {
		*unlimited = 1;
		*val = UINT64_MAX;
		return 0;
	}
	return sp_parse_u64(buf, val) == 0 ? 0 : -1;
}

int sp_kv_lookup(const char *buf, size_t len, const char *key, uint64_t *val)
{
	size_t kl = strlen(key);
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if ((size_t)(le - p) > kl && memcmp(p, key, kl) == 0 && p[kl] == ' ') {
			char tmp[32];
			size_t n = (size_t)(le - p) - kl - 1;
			if (n >= sizeof tmp)
				return -1;
			memcpy(tmp, p + kl + 1, n);
			tmp[n] = 0;
			return sp_parse_u64(tmp, val) == 0 ? 0 : -1;
		}
		p = nl ? nl + 1 : end;
	}
	return -1;
}

static void set_u64(struct sp_u64 *f, int r, uint64_t v)
{
	f->v = r == 0 ? v : 0;
	f->why = r == 0 ? SP_OK : (r == -1 ? SP_MALFORMED : sp_why_from_errno(r));
}

/* Read one file of the cgroup folder `dir` into buf: kept open (our own
 * folder's, read every sample), or opened for this read (the folders above,
 * read when resolved). */
static bool cg_keep = true;

static int cg_file(const char *dir, const char *name, char *buf, size_t cap, size_t *len)
{
	char path[1024];
	if (sp_path_join(path, sizeof path, dir, name) < 0)
		return -ENAMETOOLONG;
	return cg_keep ? sp_kept_read(path, buf, cap, len) : sp_read_file(path, buf, cap, len);
}

static int cg_u64(const char *dir, const char *name, uint64_t *v, int *unlimited)
{
	char buf[64];
	int r = cg_file(dir, name, buf, sizeof buf, NULL);
	if (r < 0)
		return r;
	int un = 0;
	if (sp_cgroup_parse_limit(buf, v, &un) < 0)
		return -1;
	if (unlimited)
		*unlimited = un;
	else if (un)
		return -1;
	return 0;
}

static int cg_kv(const char *dir, const char *name, const char *key, uint64_t *v)
{
	char buf[4096];
	size_t len;
	int r = cg_file(dir, name, buf, sizeof buf, &len);
	if (r < 0)
		return r;
	return sp_kv_lookup(buf, len, key, v) == 0 ? 0 : -ENOENT;
}

/* v1 reports "no limit" as a huge page-aligned number */
#define V1_UNLIMITED (1ULL << 62)

/* Where our cgroup is, and the tightest limit above it: what
 * /proc/self/cgroup says and the ancestors' limit files change only when the
 * process is moved or an administrator changes a parent's limit, so they are
 * resolved at most every SP_CGROUP_RESOLVE_S seconds (and at once when the
 * roots change or our folder's usage file is gone). The folder's own usage,
 * file pages, OOM counters and limit are read every time. */
#define SP_CGROUP_RESOLVE_S 10.0

static struct {
	pthread_mutex_t mu;
	bool valid;
	double at;             /* when resolved (monotonic) */
	char proc[600], sys[600]; /* the roots it was resolved under */
	int version;
	char path[256];        /* as in struct sp_cgroup */
	char dir[1024], root[1024];
	uint64_t above;        /* the tightest limit strictly above dir, or UINT64_MAX */
	bool above_garbage;
	bool had_usage;        /* dir's usage file was there when resolved */
} where = { .mu = PTHREAD_MUTEX_INITIALIZER };

static const char *limit_name(int version)
{
	return version == 2 ? "memory.max" : "memory.limit_in_bytes";
}

/* one folder's limit into *best (the tighter one kept); garbage noted */
static void limit_at(const char *dir, int version, uint64_t *best, bool *garbage)
{
	uint64_t v = 0;
	int un = 0;
	int r = cg_u64(dir, limit_name(version), &v, &un);
	if (r == -1)
		*garbage = true;
	else if (r == 0 && !un && !(version == 1 && v >= V1_UNLIMITED) && v < *best)
		*best = v;
}

/* Resolve `where` under the current roots. false: no memory cgroup. */
static bool resolve(double now, const char *proc, const char *sys)
{
	where.valid = false;
	char path[600], buf[2048];
	size_t len;
	sp_proc_path(path, sizeof path, "self/cgroup");
	if (sp_read_file(path, buf, sizeof buf, &len) < 0)
		return false;
	where.version = sp_cgroup_parse_self(buf, len, where.path, sizeof where.path);
	if (!where.version)
		return false;
	const char *mnt = where.version == 2 ? "fs/cgroup" : "fs/cgroup/memory";

	/* The caller's own folder; inside a cgroup namespace the path we see may
	 * not exist under the mount, whose root is then our cgroup. */
	sp_sys_path(where.dir, sizeof where.dir, "%s%s", mnt, where.path);
	char probe[1100];
	snprintf(probe, sizeof probe, "%s/%s", where.dir,
		 where.version == 2 ? "memory.current" : "memory.usage_in_bytes");
	/* one access(2), not a read: the usage file is read every sample anyway */
	if (access(probe, R_OK) < 0) {
		sp_sys_path(where.dir, sizeof where.dir, "%s", mnt);
		snprintf(where.path, sizeof where.path, "/");
	}
	sp_sys_path(where.root, sizeof where.root, "%s", mnt);

	/* The tightest limit above our folder, up to the mount root. */
	where.above = UINT64_MAX;
	where.above_garbage = false;
	size_t rootlen = strlen(where.root);
	char cur[1024];
	snprintf(cur, sizeof cur, "%s", where.dir);
	for (int depth = 0; depth < 64; depth++) {
		if (strlen(cur) <= rootlen)
			break;
		char *slash = strrchr(cur, '/');
		if (!slash || (size_t)(slash - cur) < rootlen)
			break;
		*slash = 0;
		cg_keep = false; /* under where.mu */
		limit_at(cur, where.version, &where.above, &where.above_garbage);
		cg_keep = true;
	}
	snprintf(where.proc, sizeof where.proc, "%s", proc);
	snprintf(where.sys, sizeof where.sys, "%s", sys);
	where.at = now;
	where.valid = true;
	return true;
}

void sp_cgroup_read(struct sp_cgroup *cg)
{
	memset(cg, 0, sizeof *cg);
	cg->limit.why = cg->usage.why = cg->file.why = cg->oom_kill.why = cg->oom.why =
		cg->failcnt.why = cg->swap_max.why = SP_MISSING;
	char sys[600];
	sp_sys_path(sys, sizeof sys, "%s", "");
	const char *proc = sp_procfs();
	double now = sp_mono_now();
	pthread_mutex_lock(&where.mu);
	bool again = !where.valid || now - where.at >= SP_CGROUP_RESOLVE_S || now < where.at ||
		     strcmp(where.proc, proc) != 0 || strcmp(where.sys, sys) != 0;
	for (int pass = 0; pass < 2; pass++) {
		if (again && !resolve(now, proc, sys))
			break;
		cg->version = where.version;
		snprintf(cg->path, sizeof cg->path, "%s", where.path);
		const char *dir = where.dir;
		uint64_t v = 0;
		int r;
		if (where.version == 2) {
			r = cg_u64(dir, "memory.current", &v, NULL);
			set_u64(&cg->usage, r, v);
			r = cg_kv(dir, "memory.stat", "file", &v);
			set_u64(&cg->file, r, v);
			char ev[1024];
			size_t elen;
			r = cg_file(dir, "memory.events", ev, sizeof ev, &elen);
			int r2 = r;
			if (r == 0) { /* one read for both counters */
				r = sp_kv_lookup(ev, elen, "oom_kill", &v) == 0 ? 0 : -ENOENT;
				set_u64(&cg->oom_kill, r, v);
				r2 = sp_kv_lookup(ev, elen, "oom", &v) == 0 ? 0 : -ENOENT;
				set_u64(&cg->oom, r2, v);
			} else {
				set_u64(&cg->oom_kill, r, 0);
				set_u64(&cg->oom, r2, 0);
			}
			int un = 0;
			r = cg_u64(dir, "memory.swap.max", &v, &un);
			if (r == 0 && !un)
				set_u64(&cg->swap_max, 0, v);
		} else {
			r = cg_u64(dir, "memory.usage_in_bytes", &v, NULL);
			set_u64(&cg->usage, r, v);
			r = cg_kv(dir, "memory.stat", "cache", &v);
			set_u64(&cg->file, r, v);
			r = cg_kv(dir, "memory.oom_control", "oom_kill", &v);
			set_u64(&cg->oom_kill, r, v);
			r = cg_u64(dir, "memory.failcnt", &v, NULL);
			set_u64(&cg->failcnt, r, v);
		}
		if (again)
			where.had_usage = cg->usage.why != SP_MISSING;
		/* our folder gone (moved, or the cgroup removed): resolve now, once */
		if (!again && where.had_usage && cg->usage.why == SP_MISSING) {
			again = true;
			memset(cg, 0, sizeof *cg);
			cg->limit.why = cg->usage.why = cg->file.why = cg->oom_kill.why = cg->oom.why =
				cg->failcnt.why = cg->swap_max.why = SP_MISSING;
			continue;
		}
		uint64_t best = where.above;
		bool garbage = where.above_garbage;
		limit_at(dir, where.version, &best, &garbage);
		if (best != UINT64_MAX) {
			cg->limit.v = best;
			cg->limit.why = SP_OK;
		} else {
			cg->limit.why = garbage ? SP_MALFORMED : SP_MISSING;
		}
		break;
	}
	pthread_mutex_unlock(&where.mu);
}
