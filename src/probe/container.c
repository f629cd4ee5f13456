// SPDX-License-Identifier: MIT
/* The container, pod or systemd unit of a process, from its cgroup file, and
 * the container's name from files only: its own /etc/hostname through the
 * procfs root, the kubelet's pod folders. Never a daemon or a socket. */
#include "probe/container.h"
#include "probe/probe.h"
#include "util/dirscan.h"
#include "util/fileio.h"
#include "util/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *sp_ct_runtime_name(enum sp_ct_runtime r)
{
	switch (r) {
	case SP_CT_DOCKER: return "docker";
	case SP_CT_PODMAN: return "podman";
	case SP_CT_CONTAINERD: return "containerd";
	case SP_CT_CRIO: return "cri-o";
	case SP_CT_KUBE: return "kubernetes";
	default: return NULL;
	}
}

static bool is_hex64(const char *s, size_t n)
{
	if (n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool starts(const char *s, size_t n, const char *pre)
{
	size_t l = strlen(pre);
	return n >= l && memcmp(s, pre, l) == 0;
}

static bool ends(const char *s, size_t n, const char *suf)
{
	size_t l = strlen(suf);
	return n >= l && memcmp(s + n - l, suf, l) == 0;
}

/* a pod uid: hex digits and dashes (the systemd driver writes '_' for '-') */
static bool put_uid(char *out, size_t cap, const char *s, size_t n)
{
	if (n == 0 || n >= cap)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i] == '_' ? '-' : s[i];
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || ch == '-'))
			return false;
		out[i] = ch;
	}
	out[n] = 0;
	return true;
}

static void put_str(char *out, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(out, s, n);
	out[n] = 0;
}

/* the line to read: v1's memory controller, else v2's, else the first v1 */
static bool pick_line(const char *buf, size_t len, const char **path, size_t *plen, int *version)
{
	const char *p = buf, *end = buf + len;
	const char *v1 = NULL, *v2 = NULL, *any = NULL;
	size_t v1l = 0, v2l = 0, anyl = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *c1 = memchr(p, ':', (size_t)(le - p));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(le - c1 - 1)) : NULL;
		if (c2 && c2 + 1 < le && c2[1] == '/') {
			const char *ps = c2 + 1;
			size_t pl = (size_t)(le - ps);
			if (c1 - p == 1 && p[0] == '0' && c2 == c1 + 1) {
				if (!v2) {
					v2 = ps;
					v2l = pl;
				}
				p = nl ? nl + 1 : end;
				continue;
			}
			for (const char *q = c1 + 1; q < c2;) {
				const char *comma = memchr(q, ',', (size_t)(c2 - q));
				const char *ce = comma ? comma : c2;
				if (ce - q == 6 && memcmp(q, "memory", 6) == 0 && !v1) {
					v1 = ps;
					v1l = pl;
				}
				q = ce + 1;
			}
			if (!any) {
				any = ps;
				anyl = pl;
			}
		}
		p = nl ? nl + 1 : end;
	}
	/* the hybrid layout has both: memory is v1's there (as probe/cgroup.c reads it) */
	if (v1) {
		*path = v1;
		*plen = v1l;
		*version = 1;
	} else if (v2) {
		*path = v2;
		*plen = v2l;
		*version = 2;
	} else if (any) {
		*path = any;
		*plen = anyl;
		*version = 0; /* a v1 line without memory: names only, no memory folder */
	} else {
		return false;
	}
	return true;
}

/* one path component against the container forms; true when it is one */
static bool container_part(const char *c, size_t n, const char *prev, size_t pn, bool kube,
			   struct sp_container *out)
{
	static const struct {
		const char *pre;
		enum sp_ct_runtime rt;
	} forms[] = {
		{ "libpod-conmon-", SP_CT_NONE }, { "crio-conmon-", SP_CT_NONE },
		{ "docker-", SP_CT_DOCKER },       { "libpod-", SP_CT_PODMAN },
		{ "cri-containerd-", SP_CT_CONTAINERD }, { "crio-", SP_CT_CRIO },
	};
	size_t core = ends(c, n, ".scope") ? n - 6 : n;
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		size_t l = strlen(forms[i].pre);
		if (!starts(c, core, forms[i].pre))
			continue;
		if (forms[i].rt == SP_CT_NONE || !is_hex64(c + l, core - l))
			return false;
		out->runtime = forms[i].rt;
		put_str(out->id, sizeof out->id, c + l, 64);
		return true;
	}
	if (!is_hex64(c, n))
		return false;
	/* a bare id: /docker/<id> (v1, cgroupfs driver), or a pod's container
	 * under the kubelet's cgroupfs driver (/kubepods/QOS/pod<uid>/<id>) */
	if (pn == 6 && memcmp(prev, "docker", 6) == 0)
		out->runtime = SP_CT_DOCKER;
	else if (kube && starts(prev, pn, "pod"))
		out->runtime = SP_CT_KUBE;
	else
		return false;
	put_str(out->id, sizeof out->id, c, 64);
	return true;
}

int sp_container_parse(const char *buf, size_t len, struct sp_container *c)
{
	memset(c, 0, sizeof *c);
	c->pod_why = c->ns_why = SP_MISSING;
	c->name_src = NULL;
	const char *path;
	size_t plen;
	int version;
	if (!pick_line(buf, len, &path, &plen, &version))
		return -1;
	size_t ct_end = plen; /* the container's own folder ends here (podman nests one below it) */
	const char *prev = "";
	size_t pn = 0;
	bool kube = false;
	char pod_uid[sizeof c->pod_uid] = "";
	for (const char *p = path, *end = path + plen; p < end;) {
		const char *sl = memchr(p, '/', (size_t)(end - p));
		const char *ce = sl ? sl : end;
		size_t n = (size_t)(ce - p);
		if (n > 0) {
			if (starts(p, n, "kubepods")) {
				kube = true;
				/* the systemd driver: kubepods[-QOS]-pod<uid>.slice */
				const char *pod = NULL;
				for (const char *q = p; q + 4 <= ce; q++)
					if (memcmp(q, "-pod", 4) == 0)
						pod = q + 4;
				if (pod && ends(p, n, ".slice"))
					put_uid(pod_uid, sizeof pod_uid, pod, (size_t)(ce - 6 - pod));
			} else if (kube && starts(p, n, "pod")) {
				put_uid(pod_uid, sizeof pod_uid, p + 3, n - 3); /* the cgroupfs driver */
			}
			struct sp_container t;
			memset(&t, 0, sizeof t);
			if (container_part(p, n, prev, pn, kube, &t)) {
				c->runtime = t.runtime;
				memcpy(c->id, t.id, sizeof c->id);
				snprintf(c->pod_uid, sizeof c->pod_uid, "%s", pod_uid);
				ct_end = (size_t)(ce - path);
			} else if (ends(p, n, ".service") || (starts(p, n, "session-") && ends(p, n, ".scope"))) {
				put_str(c->unit, sizeof c->unit, p, n);
			}
			prev = p;
			pn = n;
		}
		p = sl ? sl + 1 : end;
	}
	if (c->runtime == SP_CT_NONE)
		ct_end = plen;
	if (ct_end < sizeof c->cg_path) {
		put_str(c->cg_path, sizeof c->cg_path, path, ct_end);
		c->cg_version = version;
	}
	if (c->runtime != SP_CT_NONE) {
		memcpy(c->short_id, c->id, 12);
		c->short_id[12] = 0;
		c->unit[0] = 0; /* a unit above the container (containerd.service) is not the process's */
	}
	return 0;
}

const char *sp_container_label(const struct sp_container *c, char *buf, size_t n)
{
	if (c->runtime != SP_CT_NONE && c->pod_uid[0] && sp_ok(c->pod_why) && sp_ok(c->ns_why))
		snprintf(buf, n, "%s/%s", c->ns, c->pod);
	else if (c->runtime != SP_CT_NONE && c->pod_uid[0] && sp_ok(c->pod_why))
		snprintf(buf, n, "%s", c->pod);
	else if (c->runtime != SP_CT_NONE)
		snprintf(buf, n, "%s", c->name[0] ? c->name : c->short_id);
	else if (c->unit[0])
		snprintf(buf, n, "%s", c->unit);
	else
		snprintf(buf, n, "-");
	return buf;
}

const char *sp_container_word(const struct sp_container *c, char *buf, size_t n)
{
	if (n == 0)
		return buf;
	buf[0] = 0;
	if (c->runtime == SP_CT_NONE && !c->unit[0])
		return buf;
	char l[96];
	sp_container_label(c, l, sizeof l);
	for (char *q = l; *q; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || strchr("._:@/-", *q)))
			*q = '_';
	snprintf(buf, n, " container=%s", l);
	return buf;
}

/* ---- names ----------------------------------------------------------------------- */

/* a host name as RFC 1123 allows it (and '_'): what a person may be shown */
static bool host_name_ok(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
		      ch == '.' || ch == '_'))
			return false;
	}
	return true;
}

int sp_pod_logdir_parse(const char *dirname, const char *uid, char *ns, size_t ns_cap, char *name,
			size_t name_cap)
{
	size_t n = strlen(dirname), ul = strlen(uid);
	if (ul == 0 || n < ul + 4 || dirname[n - ul - 1] != '_' || memcmp(dirname + n - ul, uid, ul) != 0)
		return -1;
	const char *us = memchr(dirname, '_', n - ul - 1);
	if (!us)
		return -1;
	size_t nsl = (size_t)(us - dirname), nml = n - ul - 1 - nsl - 1;
	if (!host_name_ok(dirname, nsl) || !host_name_ok(us + 1, nml) || nsl >= ns_cap || nml >= name_cap)
		return -1;
	put_str(ns, ns_cap, dirname, nsl);
	put_str(name, name_cap, us + 1, nml);
	return 0;
}

int sp_pod_hosts_parse(const char *buf, size_t len, char *name, size_t cap)
{
	static const char hdr[] = "# Kubernetes-managed hosts file";
	if (len < sizeof hdr - 1 || memcmp(buf, hdr, sizeof hdr - 1) != 0)
		return -1;
	for (const char *p = buf, *end = buf + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (p < le && *p != '#') {
			/* address, then names */
			const char *q = p;
			while (q < le && *q != ' ' && *q != '\t')
				q++;
			while (q < le && (*q == ' ' || *q == '\t'))
				q++;
			const char *ne = q;
			while (ne < le && *ne != ' ' && *ne != '\t')
				ne++;
			size_t n = (size_t)(ne - q);
			if (n > 0 && !starts(q, n, "localhost") && !starts(q, n, "ip6-")) {
				const char *dot = memchr(q, '.', n); /* hostname.subdomain.ns.svc...: the host part */
				if (dot)
					n = (size_t)(dot - q);
				if (!host_name_ok(q, n) || n >= cap)
					return -1;
				put_str(name, cap, q, n);
				return 0;
			}
		}
		p = nl ? nl + 1 : end;
	}
	return -1;
}

const char *sp_host_root(void)
{
	static char root[512];
	const char *pf = sp_procfs();
	if (strcmp(pf, "/proc") == 0)
		return "/";
	snprintf(root, sizeof root, "%s", pf);
	size_t n = strlen(root);
	while (n > 1 && root[n - 1] == '/')
		root[--n] = 0;
	char *sl = strrchr(root, '/');
	if (!sl || sl == root)
		return "/";
	*sl = 0;
	return root;
}

/* <procfs>/PID/root/etc/hostname: the magic root link is followed (it is the
 * process's root), nothing below it: etc and hostname are opened with
 * O_NOFOLLOW, and only a regular file is read, at most cap - 1 bytes */
static int read_hostname(int pid, char *out, size_t cap)
{
	char rel[32];
	snprintf(rel, sizeof rel, "%d/root", pid);
	int pfd = open(sp_procfs(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	int rfd = openat(pfd, rel, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int e = errno;
	close(pfd);
	if (rfd < 0)
		return -e;
	int efd = openat(rfd, "etc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	e = errno;
	close(rfd);
	if (efd < 0)
		return -e;
	/* a regular file before it is opened (the root is the container's: a
	 * device node there is never opened), and the same file after */
	struct sp_stat_pre { dev_t dev; ino_t ino; } pre;
	struct stat st;
	int sr = fstatat(efd, "hostname", &st, AT_SYMLINK_NOFOLLOW);
	if (sr < 0 || !S_ISREG(st.st_mode)) {
		e = sr < 0 ? errno : EINVAL;
		close(efd);
		return -e;
	}
	pre.dev = st.st_dev;
	pre.ino = st.st_ino;
	int fd = openat(efd, "hostname", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	e = errno;
	close(efd);
	if (fd < 0)
		return -e;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != pre.dev || st.st_ino != pre.ino) {
		close(fd);
		return -EINVAL;
	}
	char buf[256];
	ssize_t r = sp_read_full(fd, buf, sizeof buf - 1);
	close(fd);
	if (r <= 0)
		return -EINVAL;
	size_t n = (size_t)r;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	if (!host_name_ok(buf, n) || n >= cap)
		return -EINVAL;
	put_str(out, cap, buf, n);
	return 0;
}

static void read_pod(struct sp_container *c)
{
	char dir[700];
	const char *root = sp_host_root();
	const char *sep = strcmp(root, "/") == 0 ? "" : "/";
	/* the kubelet's pod logs: var/log/pods/NAMESPACE_NAME_UID */
	snprintf(dir, sizeof dir, "%s%svar/log/pods", root, sep);
	struct sp_dir d;
	if (sp_dir_open(&d, dir) == 0) {
		const char *n;
		while ((n = sp_dir_next(&d))) {
			if (sp_pod_logdir_parse(n, c->pod_uid, c->ns, sizeof c->ns, c->pod, sizeof c->pod) == 0) {
				c->pod_why = c->ns_why = SP_OK;
				break;
			}
		}
		sp_dir_close(&d);
		if (c->pod_why == SP_OK)
			return;
	}
	/* the pod's hosts file: its hostname (the pod's name), no namespace */
	char buf[4096];
	size_t len;
	snprintf(dir, sizeof dir, "%s%svar/lib/kubelet/pods/%s/etc-hosts", root, sep, c->pod_uid);
	int r = sp_read_file(dir, buf, sizeof buf, &len);
	if (r == 0 && sp_pod_hosts_parse(buf, len, c->pod, sizeof c->pod) == 0)
		c->pod_why = SP_OK;
	else
		c->pod_why = r < 0 ? sp_why_from_errno(r) : SP_MALFORMED;
	c->ns_why = c->pod_why == SP_OK ? SP_MISSING : c->pod_why;
}

void sp_container_read(int pid, struct sp_container *c)
{
	char path[600], buf[4096];
	size_t len;
	sp_proc_path(path, sizeof path, "%d/cgroup", pid);
	if (sp_read_file(path, buf, sizeof buf, &len) < 0 || sp_container_parse(buf, len, c) < 0) {
		memset(c, 0, sizeof *c);
		c->pod_why = c->ns_why = SP_MISSING;
		return;
	}
	if (c->runtime == SP_CT_NONE)
		return;
	if (read_hostname(pid, c->name, sizeof c->name) == 0) {
		c->name_src = "hostname";
	} else {
		snprintf(c->name, sizeof c->name, "%s", c->short_id);
		c->name_src = "short_id";
	}
	if (c->pod_uid[0])
		read_pod(c);
}

/* ---- what each container holds ------------------------------------------------- */

/* v1 reports "no limit" as a huge page-aligned number */
#define V1_UNLIMITED (1ULL << 62)

static void ct_u64(const char *dir, const char *name, struct sp_u64 *f, bool *unlimited)
{
	char path[900], buf[64];
	f->v = 0;
	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
		f->why = SP_MISSING;
		return;
	}
	int r = sp_read_file(path, buf, sizeof buf, NULL);
	if (r < 0) {
		f->why = sp_why_from_errno(r);
		return;
	}
	int un = 0;
	uint64_t v = 0;
	if (sp_cgroup_parse_limit(buf, &v, &un) < 0 || (un && !unlimited)) {
		f->why = SP_MALFORMED;
		return;
	}
	if (unlimited && (un || v >= V1_UNLIMITED)) {
		*unlimited = true;
		f->why = SP_MISSING;
		return;
	}
	f->v = v;
	f->why = SP_OK;
}

static void ct_file(const char *dir, int version, struct sp_u64 *f)
{
	char path[900], buf[8192];
	size_t len;
	f->v = 0;
	if (snprintf(path, sizeof path, "%s/memory.stat", dir) >= (int)sizeof path) {
		f->why = SP_MISSING;
		return;
	}
	int r = sp_read_file(path, buf, sizeof buf, &len);
	if (r < 0) {
		f->why = sp_why_from_errno(r);
		return;
	}
	f->why = sp_kv_lookup(buf, len, version == 2 ? "file" : "cache", &f->v) == 0 ? SP_OK : SP_MALFORMED;
}

static void ct_memory(struct sp_ctmem *m)
{
	const struct sp_container *c = &m->ct;
	m->current.why = m->peak.why = m->limit.why = m->file.why = SP_MISSING;
	m->unlimited = false;
	if (c->cg_version != 1 && c->cg_version != 2)
		return;
	char dir[800];
	if (sp_sys_path(dir, sizeof dir, "%s%s", c->cg_version == 2 ? "fs/cgroup" : "fs/cgroup/memory", c->cg_path) < 0)
		return;
	bool v2 = c->cg_version == 2;
	ct_u64(dir, v2 ? "memory.current" : "memory.usage_in_bytes", &m->current, NULL);
	ct_u64(dir, v2 ? "memory.peak" : "memory.max_usage_in_bytes", &m->peak, NULL);
	ct_u64(dir, v2 ? "memory.max" : "memory.limit_in_bytes", &m->limit, &m->unlimited);
	ct_file(dir, c->cg_version, &m->file);
}

void sp_containers_read(struct sp_sample *s)
{
	s->ncontainers = 0;
	s->containers_dropped = 0;
	for (int i = 0; i < s->nprocs; i++) {
		const struct sp_proc *p = &s->procs[i];
		if (p->ct.runtime == SP_CT_NONE)
			continue;
		struct sp_ctmem *m = NULL;
		for (int k = 0; k < s->ncontainers && !m; k++)
			if (strcmp(s->containers[k].ct.id, p->ct.id) == 0)
				m = &s->containers[k];
		if (!m) {
			if (s->ncontainers == SP_MAX_CONTAINERS) {
				s->containers_dropped++;
				continue;
			}
			m = &s->containers[s->ncontainers++];
			memset(m, 0, sizeof *m);
			m->ct = p->ct;
			m->gpu_mem.why = SP_MISSING;
			ct_memory(m);
		}
		m->nprocs++;
		m->rss_bytes += p->rss_bytes;
		if (sp_ok(p->gpu_mem.why)) {
			m->gpu_mem.v += p->gpu_mem.v;
			m->gpu_mem.why = SP_OK;
		}
	}
}
