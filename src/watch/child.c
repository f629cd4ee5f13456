// SPDX-License-Identifier: MIT
/* Starting the job, the output relay, and the job's process tree. */
#include "watch/child.h"
#include "util/dirscan.h"
#include "util/fileio.h"
#include "util/pagesize.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* write all of buf to a blocking-or-not fd; -1 when the fd is gone */
static int put_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd p = { .fd = fd, .events = POLLOUT };
				poll(&p, 1, 1000);
				continue;
			}
			return -1;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The relay: copy the job's stdout/stderr to ours, byte for byte, and a copy
 * to sparkops. It ignores the terminal's signals (the job decides when to
 * end; the relay ends when the job's pipes close) and never blocks on
 * sparkops: a full or closed progress pipe only loses the copy. */
static void __attribute__((noreturn)) relay_main(int in_out, int in_err, int cp_out, int cp_err)
{
	static char buf[65536];
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_NAME, "sparkops-relay", 0, 0, 0);
	int in[2] = { in_out, in_err }, cp[2] = { cp_out, cp_err };
	bool dead[2] = { false, false };
	while (in[0] >= 0 || in[1] >= 0) {
		struct pollfd p[2];
		for (int i = 0; i < 2; i++)
			p[i] = (struct pollfd){ .fd = in[i], .events = POLLIN };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (in[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = read(in[i], buf, sizeof buf);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				close(in[i]);
				in[i] = -1;
				continue;
			}
			if (!dead[i] && put_all(i + 1, buf, (size_t)n) < 0) {
				if (errno == EPIPE) {
					/* the reader went away (`sparkops run -- cmd | head`): pass
					 * that on, as if the job wrote to that pipe itself */
					close(in[i]);
					in[i] = -1;
					continue;
				}
				/* a hung-up terminal: keep draining, so the job is never
				 * blocked on our account */
				dead[i] = true;
			}
			if (cp[i] >= 0) {
				ssize_t w = write(cp[i], buf, (size_t)n);
				if (w < 0 && errno != EAGAIN && errno != EINTR) {
					close(cp[i]);
					cp[i] = -1;
				}
			}
		}
	}
	_exit(0);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int sp_child_spawn(struct sp_child *c, char *const argv[], const sigset_t *orig_mask)
{
	int out[2] = { -1, -1 }, err[2] = { -1, -1 }, po[2] = { -1, -1 }, pe[2] = { -1, -1 }, st[2] = { -1, -1 };
	int rc;
	c->pid = c->relay = 0;
	c->prog_fd[0] = c->prog_fd[1] = -1;
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(po, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    pipe2(pe, O_CLOEXEC | O_NONBLOCK) < 0 || pipe2(st, O_CLOEXEC) < 0) {
		rc = -errno;
		goto fail;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		rc = -errno;
		goto fail;
	}
	if (pid == 0) {
		/* the job: only async-signal-safe calls until exec */
		if (dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
			_exit(127);
		signal(SIGPIPE, SIG_DFL); /* sparkops ignores it; the job must not inherit that */
		sigprocmask(SIG_SETMASK, orig_mask, NULL);
		execvp(argv[0], argv);
		int e = errno;
		ssize_t w = write(st[1], &e, sizeof e);
		(void)w;
		_exit(127);
	}
	c->pid = pid;
	close_fd(&out[1]);
	close_fd(&err[1]);
	close_fd(&st[1]);
	int e = 0;
	ssize_t n;
	do
		n = read(st[0], &e, sizeof e);
	while (n < 0 && errno == EINTR);
	close_fd(&st[0]);
	if (n == (ssize_t)sizeof e) {
		/* exec failed: reap the child, report its errno */
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		c->pid = 0;
		rc = -e;
		goto fail;
	}
	pid_t r = fork();
	if (r < 0) {
		rc = -errno;
		/* no relay: the job would block on a full pipe; stop it */
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		c->pid = 0;
		goto fail;
	}
	if (r == 0) {
		close(po[0]);
		close(pe[0]);
		relay_main(out[0], err[0], po[1], pe[1]);
	}
	c->relay = r;
	close_fd(&out[0]);
	close_fd(&err[0]);
	close_fd(&po[1]);
	close_fd(&pe[1]);
	c->prog_fd[0] = po[0];
	c->prog_fd[1] = pe[0];
	return 0;
fail:
	close_fd(&out[0]);
	close_fd(&out[1]);
	close_fd(&err[0]);
	close_fd(&err[1]);
	close_fd(&po[0]);
	close_fd(&po[1]);
	close_fd(&pe[0]);
	close_fd(&pe[1]);
	close_fd(&st[0]);
	close_fd(&st[1]);
	return rc;
}

int sp_stat_parse(const char *buf, size_t len, pid_t *ppid, uint64_t *rss_pages)
{
	/* comm may hold spaces and ')': fields start after the last ')' */
	const char *p = NULL;
	for (size_t i = len; i > 0; i--)
		if (buf[i - 1] == ')') {
			p = buf + i;
			break;
		}
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

int sp_tree_signal(const struct sp_tree *t, int sig)
{
	int n = 0;
	for (int i = 0; i < t->n; i++)
		if (t->pids[i] > 1 && kill(t->pids[i], sig) == 0)
			n++;
	return n;
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
