// SPDX-License-Identifier: MIT
/* Starting the job, the output relay, and the job's process tree. */
#include "watch/child.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
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

bool sp_ttyline_lock(struct sp_ttyline *t, int tries)
{
	for (int i = 0; i < tries; i++) {
		int z = 0;
		if (atomic_compare_exchange_strong(&t->lock, &z, 1))
			return true;
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
	return false;
}

void sp_ttyline_unlock(struct sp_ttyline *t)
{
	atomic_store(&t->lock, 0);
}

/* A chunk of the job's output to fd: off the status line's way first. */
static int relay_put(struct sp_ttyline *t, int i, const char *buf, size_t n)
{
	if (!t || !t->same[i])
		return put_all(i + 1, buf, n);
	bool locked = sp_ttyline_lock(t, 2000); /* sparkops killed holding it: go on after 0.2 s */
	if (atomic_load(&t->shown)) {
		put_all(i + 1, "\r\033[K", 4);
		atomic_store(&t->shown, 0);
	}
	int rc = put_all(i + 1, buf, n);
	atomic_store(&t->dirty, buf[n - 1] != '\n');
	if (locked)
		sp_ttyline_unlock(t);
	return rc;
}

/* The relay: copy the job's stdout/stderr to ours, byte for byte, and a copy
 * to sparkops. It ignores the terminal's signals (the job decides when to
 * end; the relay ends when the job's pipes close) and never blocks on
 * sparkops: a full or closed progress pipe only loses the copy. */
static void __attribute__((noreturn)) relay_main(struct sp_ttyline *tty, int in_out, int in_err, int cp_out, int cp_err)
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
			if (!dead[i] && relay_put(tty, i, buf, (size_t)n) < 0) {
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
		relay_main(c->tty, out[0], err[0], po[1], pe[1]);
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

int sp_tree_signal(const struct sp_tree *t, int sig)
{
	int n = 0;
	for (int i = 0; i < t->n; i++)
		if (t->pids[i] > 1 && kill(t->pids[i], sig) == 0)
			n++;
	return n;
}
