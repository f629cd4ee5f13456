// SPDX-License-Identifier: MIT
/* The job's process tree and the kernel log's OOM-kill record. See jobtree.h. */
#include "probe/jobtree.h"
#include "util/dirscan.h"
#include "util/fileio.h"
#include "util/pagesize.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *sp_stat_after_comm(const char *buf, size_t len)
{
	for (size_t i = len; i > 0; i--)
		if (buf[i - 1] == ')')
			return buf + i;
	return NULL;
}

int sp_stat_parse(const char *buf, size_t len, pid_t *ppid, uint64_t *rss_pages)
{
	const char *p = sp_stat_after_comm(buf, len);
	if (!p)
		return -1;
	const char *end = buf + len;
	/* after ')': state(3) ppid(4) ... rss(24) */
	int field = 2;
	int64_t vppid = -1;
	uint64_t vrss = 0;
	bool have_rss = false;
	while (p < end && field < 24) {
		while (p < end && *p == ' ')
			p++;
		if (p >= end)
			break;
		field++;
		const char *q = p;
		while (q < end && *q != ' ' && *q != '\n')
			q++;
		if (field == 4 || field == 24) {
			uint64_t v = 0;
			const char *d = p;
			if (d < q && *d == '-')
				return -1;
			for (; d < q; d++) {
				if (!isdigit((unsigned char)*d) || v > UINT64_MAX / 10 - 10)
					return -1;
				v = v * 10 + (uint64_t)(*d - '0');
			}
			if (q == p)
				return -1;
			if (field == 4)
				vppid = (int64_t)(v > INT32_MAX ? -1 : (int64_t)v);
			else {
				vrss = v;
				have_rss = true;
			}
		}
		p = q;
	}
	if (vppid < 0 || !have_rss)
		return -1;
	*ppid = (pid_t)vppid;
	*rss_pages = vrss;
	return 0;
}

int sp_stat_majflt(const char *buf, size_t len, uint64_t *majflt)
{
	const char *p = sp_stat_after_comm(buf, len);
	if (!p)
		return -1;
	const char *end = buf + len;
	/* after ')': state(3) ppid(4) pgrp(5) session(6) tty(7) tpgid(8) flags(9)
	 * minflt(10) cminflt(11) majflt(12) */
	for (int field = 3; field <= 12; field++) {
		while (p < end && *p == ' ')
			p++;
		const char *q = p;
		while (q < end && *q != ' ' && *q != '\n')
			q++;
		if (q == p)
			return -1;
		if (field == 12) {
			uint64_t v = 0;
			for (const char *d = p; d < q; d++) {
				if (!isdigit((unsigned char)*d) || v > UINT64_MAX / 10 - 10)
					return -1;
				v = v * 10 + (uint64_t)(*d - '0');
			}
			*majflt = v;
			return 0;
		}
		p = q;
	}
	return -1;
}

uint64_t sp_tree_majflt(const struct sp_tree *t, const char *proc)
{
	char path[512], buf[1024];
	uint64_t sum = 0;
	for (int i = 0; i < t->n; i++) {
		snprintf(path, sizeof path, "%s/%d/stat", proc, (int)t->pids[i]);
		size_t len;
		uint64_t m;
		if (sp_read_file(path, buf, sizeof buf, &len) == 0 && sp_stat_majflt(buf, len, &m) == 0)
			sum += m;
	}
	return sum;
}

static bool is_num(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

int sp_tree_scan(struct sp_tree *t, const char *proc, pid_t root, bool include_root, pid_t skip)
{
	t->n = 0;
	t->nscan = 0;
	t->rss_bytes = 0;
	t->truncated = false;
	struct sp_dir d;
	int r = sp_dir_open(&d, proc);
	if (r < 0)
		return r;
	const char *name;
	char path[512], buf[1024];
	uint64_t page = sp_page_size();
	uint64_t root_rss = 0;
	bool root_seen = false;
	while ((name = sp_dir_next(&d))) {
		if (!is_num(name))
			continue;
		snprintf(path, sizeof path, "%s/%s/stat", proc, name);
		size_t len;
		if (sp_read_file(path, buf, sizeof buf, &len) < 0)
			continue;
		pid_t pp;
		uint64_t rss;
		if (sp_stat_parse(buf, len, &pp, &rss) < 0)
			continue;
		pid_t pid = (pid_t)strtol(name, NULL, 10); /* all digits: checked above */
		if (pid == root) {
			root_seen = true;
			root_rss = rss;
			continue;
		}
		if (t->nscan >= SP_TREE_MAX_SCAN) {
			t->truncated = true;
			continue;
		}
		t->spid[t->nscan] = pid;
		t->sppid[t->nscan] = pp;
		t->srss[t->nscan] = rss;
		t->nscan++;
	}
	sp_dir_close(&d);
	if (include_root) {
		if (!root_seen)
			return -ESRCH;
		t->pids[t->n++] = root;
		t->rss_bytes += root_rss * page;
	}
	/* breadth first: add every scanned process whose parent is in the set */
	for (int head = include_root ? 0 : -1;; head++) {
		pid_t parent = head < 0 ? root : head < t->n ? t->pids[head] : 0;
		if (!parent)
			break;
		for (int i = 0; i < t->nscan; i++) {
			if (t->sppid[i] != parent || t->spid[i] == skip || t->spid[i] == 0)
				continue;
			if (t->n >= SP_TREE_MAX) {
				t->truncated = true;
				break;
			}
			t->pids[t->n++] = t->spid[i];
			t->rss_bytes += t->srss[i] * page;
			t->spid[i] = 0; /* taken */
		}
	}
	return 0;
}

void sp_tree_refresh(struct sp_tree *t, const char *proc)
{
	uint64_t page = sp_page_size();
	char path[512], buf[1024];
	int k = 0;
	t->rss_bytes = 0;
	for (int i = 0; i < t->n; i++) {
		snprintf(path, sizeof path, "%s/%d/stat", proc, (int)t->pids[i]);
		size_t len;
		pid_t pp;
		uint64_t rss;
		if (sp_read_file(path, buf, sizeof buf, &len) < 0 || sp_stat_parse(buf, len, &pp, &rss) < 0)
			continue; /* it ended */
		t->pids[k++] = t->pids[i];
		t->rss_bytes += rss * page;
	}
	t->n = k;
}

int sp_self_line(const char *proc, pid_t *out, int max)
{
	char path[512], buf[1024];
	int n = 0;
	pid_t pid = getpid();
	while (pid > 0 && n < max) {
		bool seen = false;
		for (int i = 0; i < n; i++)
			seen = seen || out[i] == pid;
		if (seen)
			break; /* a loop only a broken tree can make */
		out[n++] = pid;
		snprintf(path, sizeof path, "%s/%d/stat", proc, (int)pid);
		size_t len;
		pid_t pp;
		uint64_t rss;
		if (sp_read_file(path, buf, sizeof buf, &len) < 0 || sp_stat_parse(buf, len, &pp, &rss) < 0)
			break;
		pid = pp;
	}
	return n;
}

int sp_tree_drop_self_line(struct sp_tree *t, const char *proc)
{
	pid_t line[SP_SELF_LINE_MAX];
	int nl = sp_self_line(proc, line, SP_SELF_LINE_MAX);
	int k = 0, dropped = 0;
	for (int i = 0; i < t->n; i++) {
		bool mine = false;
		for (int j = 0; j < nl && !mine; j++)
			mine = t->pids[i] == line[j];
		if (mine)
			dropped++;
		else
			t->pids[k++] = t->pids[i];
	}
	t->n = k;
	return dropped;
}

int sp_proc_owner(const char *proc, pid_t pid, uid_t *uid)
{
	char path[256];
	struct stat st;
	snprintf(path, sizeof path, "%s/%d", proc, (int)pid);
	if (stat(path, &st) < 0)
		return -errno;
	*uid = st.st_uid;
	return 0;
}

/* pid 1, another user's, or gone while asked (then not ours to judge: kept
 * out) */
static bool foreign(const char *proc, pid_t pid, uid_t owner, uid_t *uid)
{
	if (pid == 1) {
		*uid = 0;
		return true;
	}
	uid_t u = owner;
	if (sp_proc_owner(proc, pid, &u) < 0)
		return false;
	*uid = u;
	return u != owner;
}

int sp_tree_foreign(const struct sp_tree *t, const char *proc, uid_t owner, struct sp_tree_odd *odd)
{
	int n = 0;
	for (int i = 0; i < t->n; i++) {
		uid_t u;
		if (!foreign(proc, t->pids[i], owner, &u))
			continue;
		if (n++ == 0 && odd) {
			odd->pid = t->pids[i];
			odd->uid = u;
			char path[256];
			snprintf(path, sizeof path, "%s/%d/comm", proc, (int)t->pids[i]);
			if (sp_read_line(path, odd->comm, sizeof odd->comm) < 0)
				snprintf(odd->comm, sizeof odd->comm, "?");
		}
	}
	return n;
}

int sp_tree_drop_foreign(struct sp_tree *t, const char *proc, uid_t owner)
{
	int k = 0, dropped = 0;
	for (int i = 0; i < t->n; i++) {
		uid_t u;
		if (foreign(proc, t->pids[i], owner, &u))
			dropped++;
		else
			t->pids[k++] = t->pids[i];
	}
	t->n = k;
	return dropped;
}

bool sp_kmsg_oom_killed(const char *buf, size_t len, pid_t pid)
{
	static const char key[] = "Killed process ";
	const size_t kl = sizeof key - 1;
	char want[32];
	int wl = snprintf(want, sizeof want, "%d (", (int)pid);
	for (size_t i = 0; i + kl + (size_t)wl <= len; i++) {
		if (memcmp(buf + i, key, kl) == 0 && memcmp(buf + i + kl, want, (size_t)wl) == 0)
			return true;
	}
	return false;
}

int sp_kmsg_check_oom(pid_t pid)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char rec[8192];
	int found = 0;
	/* one record per read; stop at the end of the buffer (EAGAIN), bounded */
	for (int n = 0; n < 100000; n++) {
		ssize_t r = read(fd, rec, sizeof rec);
		if (r < 0) {
			if (errno == EPIPE)
				continue; /* overwritten records: go on */
			break;
		}
		if (r == 0)
			break;
		if (sp_kmsg_oom_killed(rec, (size_t)r, pid)) {
			found = 1;
			break;
		}
	}
	close(fd);
	return found;
}
