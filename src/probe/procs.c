// SPDX-License-Identifier: MIT
/* The memory-heavy processes that compete for the pool: the process view (a
 * cached scan of /proc, below) and the parsers of the files it reads. Which
 * of them are servers or trainers, and their caps, is procclass.c's policy. */
#include "probe/container.h"
#include "probe/jobtree.h"
#include "probe/procclass.h"
#include "probe/probe.h"
#include "util/clock.h"
#include "util/dirscan.h"
#include "util/fileio.h"
#include "util/pagesize.h"
#include "util/paths.h"
#include "util/sort.h"
#include "util/text.h"
#include "util/units.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int sp_statm_parse(const char *buf, uint64_t *resident_pages)
{
	/* size resident shared text lib data dt */
	const char *p = buf;
	while (*p == ' ')
		p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p != ' ')
		return -1;
	p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	char *e;
	errno = 0;
	unsigned long long v = strtoull(p, &e, 10);
	if (errno || (*e != ' ' && *e != '\n' && *e != 0))
		return -1;
	*resident_pages = v;
	return 0;
}

static int is_pid(const char *name)
{
	if (!*name)
		return 0;
	for (const char *p = name; *p; p++)
		if (!isdigit((unsigned char)*p))
			return 0;
	return 1;
}

/* comm and resident memory of /proc/PID; returns 0, or -1 when it vanished. */
static int read_proc_brief(int pid, struct sp_proc *p)
{
	char path[600], buf[256];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->gpu_mem.why = SP_MISSING;
	p->kind = SP_PROC_OTHER;
	sp_proc_path(path, sizeof path, "%d/comm", pid);
	if (sp_read_line(path, p->comm, sizeof p->comm) < 0)
		return -1;
	sp_text_clean(p->comm); /* a process names itself: no escapes to root's terminal */
	snprintf(p->name, sizeof p->name, "%s", p->comm);
	sp_proc_path(path, sizeof path, "%d/statm", pid);
	uint64_t pages = 0;
	if (sp_read_file(path, buf, sizeof buf, NULL) == 0 && sp_statm_parse(buf, &pages) == 0) {
		uint64_t page = sp_page_size();
		/* no process holds 64 PiB: a wrapped or forged count is left out */
		if (pages > (1ULL << 56) / page)
			return -1;
		p->rss_bytes = pages * page;
	}
	return 0;
}

/* The command line: NUL-separated argv into argv[], and its start for people. */
static void cmdline_show(struct sp_proc *p, const char *argv, size_t argv_len)
{
	size_t n = argv_len < sizeof p->cmdline - 1 ? argv_len : sizeof p->cmdline - 1;
	/* cppcheck follows one caller's argv_len of 0 and concludes n < 1 */
	// cppcheck-suppress knownConditionTrueFalse
	for (size_t i = 0; i < n; i++)
		p->cmdline[i] = argv[i] ? (isprint((unsigned char)argv[i]) ? argv[i] : '?') : ' ';
	while (n > 0 && p->cmdline[n - 1] == ' ')
		n--;
	p->cmdline[n] = 0;
}

static void read_cmdline(int pid, struct sp_proc *p, char *argv, size_t argv_cap, size_t *argv_len)
{
	char path[600];
	*argv_len = 0;
	sp_proc_path(path, sizeof path, "%d/cmdline", pid);
	if (sp_read_file(path, argv, argv_cap, argv_len) < 0)
		*argv_len = 0;
	cmdline_show(p, argv, *argv_len);
}

static int read_proc(int pid, struct sp_proc *p, char *argv, size_t argv_cap, size_t *argv_len)
{
	*argv_len = 0;
	if (read_proc_brief(pid, p) < 0)
		return -1;
	read_cmdline(pid, p, argv, argv_cap, argv_len);
	return 0;
}

static int cmp_rss(const void *a, const void *b)
{
	const struct sp_proc *x = a, *y = b;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	return x->rss_bytes < y->rss_bytes ? 1 : x->rss_bytes > y->rss_bytes ? -1 : 0;
}

int sp_pidstat_parse(const char *buf, size_t len, char *comm, size_t comm_cap, uint64_t *start,
		     uint64_t *rss_pages)
{
	/* pid (comm) state ppid ... field 22 starttime ... field 24 rss; comm
	 * may hold spaces and parentheses: it ends at the last ')' */
	const char *open = memchr(buf, '(', len);
	const char *after = sp_stat_after_comm(buf, len);
	const char *close = after ? after - 1 : NULL;
	if (!open || !close || close < open)
		return -1;
	size_t cl = (size_t)(close - open - 1);
	if (cl >= comm_cap)
		cl = comm_cap - 1;
	memcpy(comm, open + 1, cl);
	comm[cl] = 0;
	const char *p = close + 1, *end = buf + len;
	uint64_t v22 = 0, v24 = 0;
	for (int field = 3; field <= 24; field++) {
		while (p < end && *p == ' ')
			p++;
		if (p >= end)
			return -1;
		uint64_t v = 0;
		int digits = 0;
		bool neg = *p == '-';
		if (neg)
			p++;
		while (p < end && *p >= '0' && *p <= '9') {
			if (v > (UINT64_MAX - 9) / 10)
				return -1;
			v = v * 10 + (uint64_t)(*p++ - '0');
			digits++;
		}
		if (field == 3) { /* the state letter */
			while (p < end && *p != ' ')
				p++;
			continue;
		}
		if (!digits || (p < end && *p != ' ' && *p != '\n'))
			return -1;
		if (field == 22)
			v22 = v;
		if (field == 24)
			v24 = neg ? 0 : v;
	}
	*start = v22;
	*rss_pages = v24;
	return 0;
}

/* ---- the process view ----------------------------------------------------------------
 * A scan lists /proc and reads statm of each process first (its resident
 * pages: the cheapest file it has); only one at or above SP_PROC_FLOOR gets
 * /proc/PID/stat too (comm, start time and resident pages in one read;
 * trees without it, such as the test fixtures, give comm and statm), and
 * the command line only of interpreters, launchers, known names and
 * processes above the RSS threshold; kernel threads get no read at all;
 * after the first, only the pids it has not seen and, in turn, one in
 * SP_PROC_RECHECK of the known ones (the pid table below). Its result is
 * kept: between scans a sample re-reads only the processes it listed (one
 * stat each: a process whose start time changed is another one that reuses
 * the pid, and is dropped). Scans come on an adaptive period,
 * o->proc_scan_cost_x times the CPU time the last one took (10,000; top
 * 2,000), between o->proc_scan_min_s (5 s; top 2 s) and
 * SP_PROC_SCAN_MAX_S: a new heavy process is seen
 * within that period, one that exec'd or grew past the threshold within
 * SP_PROC_RECHECK of them; a listed one that ended is gone at the next
 * sample. The first sample of a process (a one-shot status) reads them all. */
#define SP_PROC_SCAN_MAX_S 60.0

struct heavy {
	struct sp_proc p;  /* as classified at the last full scan; rss re-read */
	uint64_t start;    /* /proc/PID/stat field 22 (0: the tree has no stat) */
	bool hit;          /* a recognised server or trainer (listed whatever its size) */
};
static pthread_mutex_t view_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool valid;
	char root[512];
	uint64_t min_rss;
	double last_full, next_full, period;
	int procs_seen;
	int n;
	struct heavy h[SP_MAX_PROCS];
} view;

/* "1234/" into rel; returns its length */
static size_t pid_dir(char *rel, int pid)
{
	size_t n = sp_u64_digits(rel, (unsigned)pid);
	rel[n] = '/';
	return n + 1;
}

/* /proc/PID/stat of the live procfs: a kernel file, never a FIFO, so
 * neither sp_read_at's fstat nor its O_NONBLOCK is needed; and a one-record
 * seq_file (single_open), whose first read hands over the whole record when
 * it fits the count, so the read that would only say "end of file" is
 * skipped: open, one read, close (five system calls a process were two
 * fewer). A moved root (--procfs, a fixture) is read through sp_read_at. */
static int stat_at(int dfd, const char *rel, char *buf, size_t cap, size_t *len)
{
	if (strcmp(sp_procfs(), "/proc") != 0)
		return sp_read_at(dfd, rel, buf, cap, len);
	buf[0] = 0;
	*len = 0;
	int fd = openat(dfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	ssize_t r;
	do
		r = read(fd, buf, cap - 1);
	while (r < 0 && errno == EINTR);
	int e = errno;
	close(fd);
	if (r < 0)
		return -e;
	buf[r] = 0;
	*len = (size_t)r;
	return 0;
}

/* resident bytes and start time of the process under dfd/rel ("PID/"); comm
 * into comm when asked. 0, -1 when it is gone or its count is forged. */
static int brief_at(int dfd, char *rel, size_t rl, char *comm, size_t comm_cap, uint64_t *rss,
		    uint64_t *start, bool *has_comm)
{
	char buf[1024];
	size_t len;
	uint64_t pages = 0;
	*rss = 0;
	*start = 0;
	*has_comm = false;
	memcpy(rel + rl, "stat", 5);
	int r = stat_at(dfd, rel, buf, sizeof buf, &len);
	if (r == 0) {
		char c[64];
		if (sp_pidstat_parse(buf, len, c, sizeof c, start, &pages) < 0)
			return -1;
		if (comm) {
			size_t cl = strnlen(c, comm_cap - 1);
			memcpy(comm, c, cl);
			comm[cl] = 0;
			*has_comm = true;
		}
	} else if (r == -ENOENT) {
		/* no stat (a fixture tree): statm, and comm below */
		memcpy(rel + rl, "statm", 6);
		if (sp_read_at(dfd, rel, buf, sizeof buf, NULL) < 0 || sp_statm_parse(buf, &pages) < 0)
			pages = 0;
	} else {
		return -1;
	}
	/* no process holds 64 PiB: a wrapped or forged count is left out */
	if (pages > (1ULL << 56) / sp_page_size())
		return -1;
	*rss = pages * sp_page_size();
	return 0;
}

/* Every pid the last scan saw, with its directory's inode number (from
 * getdents, free): a scan reads only the pids it has not seen (or whose inode
 * changed: a new process on a reused pid) and, in rotation, one in
 * SP_PROC_RECHECK of the known ones (a process that exec'd into a launcher,
 * or grew past the threshold, is seen within that many scans).
 * Two tables sorted by pid, the last scan's and the one being written: /proc
 * lists pids in ascending order, so a scan writes its table in order and
 * looks each pid up in the last one by binary search. Only as much of them
 * as the box has processes is ever touched (16 bytes a process; a hash table
 * spread over all its slots made every page of it resident). */
#define SP_PROC_RECHECK 8u
#define PID_SLOTS 16384u
struct pid_ent {
	int pid;
	bool read;               /* this scan reads it */
	unsigned long long ino;
};
static struct pid_ent pid_tab[2][PID_SLOTS];
static uint32_t pid_n[2];
static unsigned pid_last; /* pid_tab[pid_last]: the last scan's */
static uint32_t scan_gen;

static const struct pid_ent *pid_known(int pid)
{
	const struct pid_ent *t = pid_tab[pid_last];
	uint32_t lo = 0, hi = pid_n[pid_last];
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pid_n[pid_last] && t[lo].pid == pid ? &t[lo] : NULL;
}

static int cmp_pid_ent(const void *a, const void *b)
{
	int x = ((const struct pid_ent *)a)->pid, y = ((const struct pid_ent *)b)->pid;
	return (x > y) - (x < y);
}

/* the view's entry for pid, or -1 */
static int view_index(int pid)
{
	for (int i = 0; i < view.n; i++)
		if (view.h[i].p.pid == pid)
			return i;
	return -1;
}

static void view_put(const struct heavy *h)
{
	int i = view_index(h->p.pid);
	if (i >= 0) {
		view.h[i] = *h;
	} else if (view.n < SP_MAX_PROCS) {
		view.h[view.n++] = *h;
	} else {
		/* full: keep the largest */
		int small = 0;
		for (int k = 1; k < view.n; k++)
			if (view.h[k].p.rss_bytes < view.h[small].p.rss_bytes)
				small = k;
		if (view.h[small].p.rss_bytes < h->p.rss_bytes)
			view.h[small] = *h;
	}
}

static void view_drop(int pid)
{
	int i = view_index(pid);
	if (i >= 0)
		view.h[i] = view.h[--view.n];
}

/* Below this a process holds none of the pool and runs no server or
 * trainer: an interpreter alone is more (python3 ~13 MiB resident on 4 KiB
 * pages, a shell ~3 MiB, sleep ~2 MiB). A scan reads only statm of such a
 * process: no stat, command line or cgroup. */
#define SP_PROC_FLOOR (3ULL << 20)

/* resident bytes from dfd/rel ("PID/") statm: 0, or -1 when it cannot be
 * read or is garbage (the caller then looks at the process in full) */
static int statm_at(int dfd, char *rel, size_t rl, uint64_t *rss)
{
	char buf[256];
	size_t len;
	uint64_t pages;
	memcpy(rel + rl, "statm", 6);
	if (stat_at(dfd, rel, buf, sizeof buf, &len) < 0 || sp_statm_parse(buf, &pages) < 0 ||
	    pages > (1ULL << 56) / sp_page_size())
		return -1;
	*rss = pages * sp_page_size();
	return 0;
}

/* One process's first look: statm first (the resident pages: a counter
 * read, the cheapest file a process has), and only for one at or above
 * SP_PROC_FLOOR (or whose statm cannot be read) its stat (comm, start,
 * resident pages), the command line for interpreters, launchers and known
 * names, or big processes, and its cgroup when listed. True when it belongs
 * in the view (h filled). */
static bool look(int dfd, int pid, const struct sp_read_opts *o, struct heavy *h)
{
	char argv[4096], rel[64];
	size_t rl = pid_dir(rel, pid);
	struct sp_proc *p = &h->p;
	uint64_t rss;
	bool has_comm;
	char comm[sizeof p->comm];
	if (statm_at(dfd, rel, rl, &rss) == 0 && rss < SP_PROC_FLOOR && rss < o->proc_min_rss)
		return false; /* (a --min-rss under the floor lowers it) */
	if (brief_at(dfd, rel, rl, comm, sizeof comm, &rss, &h->start, &has_comm) < 0)
		return false;
	if (!has_comm) {
		size_t cl;
		memcpy(rel + rl, "comm", 5);
		if (sp_read_at(dfd, rel, comm, sizeof comm, &cl) < 0)
			return false;
		char *nl = memchr(comm, '\n', cl);
		if (nl)
			*nl = 0;
	}
	sp_text_clean(comm); /* a process names itself: no escapes to root's terminal */
	bool known_comm = sp_proc_worth_argv(comm);
	if (!known_comm && rss < o->proc_min_rss)
		return false;
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->gpu_mem.why = SP_MISSING;
	p->kind = SP_PROC_OTHER;
	memcpy(p->comm, comm, sizeof p->comm);
	snprintf(p->name, sizeof p->name, "%s", p->comm);
	p->rss_bytes = rss;
	size_t alen = 0;
	memcpy(rel + rl, "cmdline", 8);
	int fd = openat(dfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0) {
		ssize_t r = sp_read_full(fd, argv, sizeof argv - 1);
		close(fd);
		alen = r > 0 ? (size_t)r : 0;
	}
	argv[alen] = 0;
	cmdline_show(p, argv, alen);
	h->hit = sp_proc_classify(p->comm, argv, alen, p);
	if (!h->hit && p->rss_bytes < o->proc_min_rss)
		return false;
	sp_container_read(pid, &p->ct); /* listed: which container or unit it is in */
	return true;
}

/* look() at one process and put it in the view or drop it from there; mu
 * (when the scan runs on several threads) guards the view */
static void read_one(int dfd, int pid, const struct sp_read_opts *o, pthread_mutex_t *mu)
{
	struct heavy h;
	bool put = look(dfd, pid, o, &h);
	if (mu)
		pthread_mutex_lock(mu);
	if (put)
		view_put(&h);
	else
		view_drop(pid);
	if (mu)
		pthread_mutex_unlock(mu);
}

static double thread_cpu_s(void)
{
	struct timespec t;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
		return 0;
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A first scan of a crowded box (a one-shot status at thousands of
 * processes: each read is an open, a read and a close, ~10 us) shares its
 * reads among a few threads: the same work, less wall time. Each worker takes
 * every k-th entry to read; its CPU time is added to the scan's cost, so the
 * adaptive period still counts all of it. */
#define SCAN_PAR_MIN 512u  /* reads below this stay on the calling thread */
#define SCAN_PAR_PER 256u  /* at least this many reads a thread */
#define SCAN_PAR_MAX 4
struct scan_work {
	const struct pid_ent *t;
	const struct sp_read_opts *o;
	pthread_mutex_t *mu;
	double cpu_s;
	int dfd;
	unsigned k, nth;
	uint32_t n;
};

static void *scan_worker(void *arg)
{
	struct scan_work *w = arg;
	double c0 = thread_cpu_s();
	for (uint32_t i = 0, seen = 0; i < w->n; i++) {
		if (!w->t[i].read)
			continue;
		if (seen++ % w->nth == w->k)
			read_one(w->dfd, w->t[i].pid, w->o, w->mu);
	}
	w->cpu_s = thread_cpu_s() - c0;
	return NULL;
}

/* the entries marked to read; returns the CPU time of the workers it used */
static double read_marked(int dfd, const struct pid_ent *t, uint32_t n, uint32_t nread, const struct sp_read_opts *o)
{
	/* glibc reads /sys/devices/system/cpu/online for the count: only asked
	 * when the scan is big enough to share */
	long cpus = nread < SCAN_PAR_MIN ? 1 : sysconf(_SC_NPROCESSORS_ONLN);
	unsigned nth = nread < SCAN_PAR_MIN || cpus < 2 ? 1 : (unsigned)(nread / SCAN_PAR_PER);
	if (nth > (unsigned)cpus)
		nth = (unsigned)cpus;
	if (nth > SCAN_PAR_MAX)
		nth = SCAN_PAR_MAX;
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	struct scan_work w[SCAN_PAR_MAX];
	pthread_t th[SCAN_PAR_MAX];
	bool started[SCAN_PAR_MAX] = { false };
	pthread_attr_t a;
	bool attr = nth > 1 && pthread_attr_init(&a) == 0;
	if (attr)
		pthread_attr_setstacksize(&a, 256u << 10); /* a read's frame is ~14 KiB */
	for (unsigned k = 0; k < nth; k++) {
		w[k] = (struct scan_work){ .t = t, .o = o, .mu = nth > 1 ? &mu : NULL, .dfd = dfd, .k = k, .nth = nth, .n = n };
		/* worker 0 is this thread */
		started[k] = k > 0 && pthread_create(&th[k], attr ? &a : NULL, scan_worker, &w[k]) == 0;
	}
	if (attr)
		pthread_attr_destroy(&a);
	for (unsigned k = 0; k < nth; k++)
		if (!started[k])
			scan_worker(&w[k]); /* this thread's share, and that of a worker that could not start */
	double extra = 0;
	for (unsigned k = 1; k < nth; k++)
		if (started[k]) {
			pthread_join(th[k], NULL);
			extra += w[k].cpu_s;
		}
	return extra;
}

/* Kernel threads have no memory of their own to count: kthreadd (pid 2 of
 * the kernel's own pid namespace, PF_KTHREAD in its stat's flags) lists its
 * children, every other kernel thread, in one file (task/2/children,
 * CONFIG_PROC_CHILDREN), so a scan skips them without a read each: ~60 of
 * the ~110 pids of an idle VM, hundreds on a many-core box. A pid 2 without
 * the flag (another pid namespace's second process) lists nothing here; a
 * usermode helper (modprobe, a core-dump pipe) is kthreadd's child too and
 * is skipped with them (it runs for seconds and holds none of the pool). */
#define PF_KTHREAD_FLAG 0x00200000ULL
#define KTHREADS_MAX 8192u
static int kthr[KTHREADS_MAX];
static uint32_t kthr_n;

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* the flags (field 9) of a /proc/PID/stat record; -1 when malformed */
static int stat_flags(const char *buf, size_t len, unsigned long long *flags)
{
	const char *p = sp_stat_after_comm(buf, len), *end = buf + len;
	if (!p)
		return -1;
	for (int field = 3; field < 9; field++) { /* state, ppid, pgrp, session, tty, tpgid */
		while (p < end && *p == ' ')
			p++;
		while (p < end && *p != ' ')
			p++;
	}
	while (p < end && *p == ' ')
		p++;
	char *e;
	errno = 0;
	unsigned long long v = strtoull(p, &e, 10);
	if (errno || e == p || (e < end && *e != ' '))
		return -1;
	*flags = v;
	return 0;
}

/* kthreadd's children into kthr[] (sorted); none when pid 2 is not kthreadd */
static void kthreads_read(int dfd)
{
	static char buf[KTHREADS_MAX * 8];
	size_t len;
	unsigned long long flags;
	kthr_n = 0;
	if (stat_at(dfd, "2/stat", buf, sizeof buf, &len) < 0 || stat_flags(buf, len, &flags) < 0 ||
	    !(flags & PF_KTHREAD_FLAG))
		return;
	if (strcmp(sp_procfs(), "/proc") != 0) {
		/* a moved root: through sp_read_at (never blocks on a FIFO) */
		if (sp_read_at(dfd, "2/task/2/children", buf, sizeof buf, &len) < 0)
			return;
	} else {
		int fd = openat(dfd, "2/task/2/children", O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return;
		ssize_t r = sp_read_full(fd, buf, sizeof buf - 1);
		close(fd);
		if (r <= 0)
			return;
		buf[r] = 0;
	}
	for (char *p = buf, *e; *p && kthr_n < KTHREADS_MAX; p = e) {
		long v = strtol(p, &e, 10);
		if (e == p)
			break;
		if (v > 0 && v <= INT32_MAX)
			kthr[kthr_n++] = (int)v;
	}
	sp_sort(kthr, kthr_n, sizeof kthr[0], cmp_int);
}

static bool is_kthread(int pid)
{
	uint32_t lo = 0, hi = kthr_n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (kthr[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return pid == 2 ? kthr_n > 0 : lo < kthr_n && kthr[lo] == pid;
}

/* A big scan of the live /proc lists it on every worker: /proc's listing
 * costs the kernel as much as a third of the statm reads (each entry's
 * dentry looked up and revalidated), and a list-then-read scan did all of
 * it on one thread before the others started. Here each worker takes the
 * next getdents64 chunk of one shared directory descriptor under a lock,
 * reserves that many slots of the pid table in the same step (chunks come
 * in /proc's ascending order, so the table stays sorted), and reads the
 * chunk's marked processes while another worker lists the next. */
struct pipe_scan {
	pthread_mutex_t mu;      /* the directory's position and the reservation */
	pthread_mutex_t view_mu; /* read_one's view */
	int dfd, self;
	struct pid_ent *t;
	uint32_t n;              /* slots reserved */
	int seen;
	bool done;
	const struct sp_read_opts *o;
};
struct pipe_worker {
	struct pipe_scan *ps;
	double cpu_s;
	bool own_files; /* a thread of the scan's own: its descriptor table unshared */
	struct sp_dir d;
};

static void *pipe_worker_run(void *arg)
{
	struct pipe_worker *w = arg;
	struct pipe_scan *ps = w->ps;
	/* Each open and close of a shared descriptor table takes its one lock,
	 * and every read on it counts a reference: a worker of its own table
	 * (a copy; the directory's descriptor names the same open directory,
	 * its position shared) opens and closes its thousands of statm files
	 * beside the others without either. Refused: the shared table, as before. */
	if (w->own_files)
		(void)unshare(CLONE_FILES);
	double c0 = thread_cpu_s();
	for (;;) {
		const char *name;
		uint32_t base = 0, cap = 0;
		pthread_mutex_lock(&ps->mu);
		if (ps->done) {
			pthread_mutex_unlock(&ps->mu);
			break;
		}
		w->d.fd = ps->dfd;
		w->d.len = w->d.pos = 0;
		name = sp_dir_next(&w->d); /* one getdents64: this chunk */
		w->d.fd = -1;              /* no more reads from here on: the chunk only */
		if (!name) {
			ps->done = true;
		} else {
			/* a slot for each record of the chunk (an upper bound) */
			uint32_t recs = 1 + (uint32_t)sp_dir_left(&w->d);
			base = ps->n;
			cap = base < PID_SLOTS ? (recs < PID_SLOTS - base ? recs : PID_SLOTS - base) : 0;
			ps->n = base + cap;
		}
		pthread_mutex_unlock(&ps->mu);
		if (!name)
			break;
		uint32_t used = 0;
		int seen = 0;
		for (; name; name = sp_dir_next(&w->d)) {
			int64_t pid64;
			if (!is_pid(name) || sp_parse_i64(name, &pid64) < 0 || pid64 > INT32_MAX)
				continue;
			int pid = (int)pid64;
			seen++;
			if (pid == ps->self)
				continue;
			const struct pid_ent *k = pid_known(pid);
			bool read = !(k && k->ino == w->d.ino && ((uint32_t)pid + scan_gen) % SP_PROC_RECHECK != 0) &&
				    !is_kthread(pid);
			if (used < cap)
				ps->t[base + used++] = (struct pid_ent){ .pid = pid, .read = read, .ino = w->d.ino };
			if (read) /* (past the table: read, not recorded, as in scan) */
				read_one(ps->dfd, pid, ps->o, &ps->view_mu);
		}
		for (uint32_t i = used; i < cap; i++)
			ps->t[base + i] = (struct pid_ent){ .pid = 0 }; /* unused: squeezed out below */
		pthread_mutex_lock(&ps->mu);
		ps->seen += seen;
		pthread_mutex_unlock(&ps->mu);
	}
	w->cpu_s = thread_cpu_s() - c0;
	return NULL;
}

/* the pipelined scan on nth threads (this one included) of d's open
 * directory into t; returns the table's length, the CPU time of the other
 * threads into *extra */
static uint32_t scan_pipelined(struct sp_sample *s, const struct sp_read_opts *o, struct sp_dir *d, struct pid_ent *t,
			       unsigned nth, double *extra)
{
	static struct pipe_worker w[SCAN_PAR_MAX];
	pthread_t th[SCAN_PAR_MAX];
	bool started[SCAN_PAR_MAX] = { false };
	struct pipe_scan ps = { .mu = PTHREAD_MUTEX_INITIALIZER, .view_mu = PTHREAD_MUTEX_INITIALIZER,
				.dfd = d->fd, .self = (int)getpid(), .t = t, .o = o };
	pthread_attr_t a;
	bool attr = pthread_attr_init(&a) == 0;
	if (attr)
		pthread_attr_setstacksize(&a, 256u << 10); /* a read's frame is ~14 KiB */
	for (unsigned k = 0; k < nth; k++) {
		w[k].ps = &ps;
		w[k].cpu_s = 0;
		w[k].own_files = k > 0;
		started[k] = k > 0 && pthread_create(&th[k], attr ? &a : NULL, pipe_worker_run, &w[k]) == 0;
	}
	if (attr)
		pthread_attr_destroy(&a);
	pipe_worker_run(&w[0]);
	*extra = 0;
	for (unsigned k = 1; k < nth; k++)
		if (started[k]) {
			pthread_join(th[k], NULL);
			*extra += w[k].cpu_s;
		}
	uint32_t n = 0;
	for (uint32_t i = 0; i < ps.n; i++)
		if (t[i].pid)
			t[n++] = t[i];
	bool sorted = true;
	for (uint32_t i = 1; i < n && sorted; i++)
		sorted = t[i - 1].pid < t[i].pid;
	if (!sorted)
		sp_sort(t, n, sizeof t[0], cmp_pid_ent);
	s->procs_seen = ps.seen;
	return n;
}

/* the workers a scan of the live /proc starts listing on: /proc's link
 * count is its static entries plus the kernel's count of tasks (threads
 * included: an upper bound of the processes), free with the directory's
 * fstat; 1 when that is under SCAN_PAR_MIN (an idle box: no thread) */
static unsigned scan_threads(int dfd)
{
	struct stat st;
	if (strcmp(sp_procfs(), "/proc") != 0 || fstat(dfd, &st) != 0 || st.st_nlink < SCAN_PAR_MIN)
		return 1;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned nth = (unsigned)(st.st_nlink / SCAN_PAR_PER);
	if (cpus < 2)
		return 1;
	if (nth > (unsigned)cpus)
		nth = (unsigned)cpus;
	return nth > SCAN_PAR_MAX ? SCAN_PAR_MAX : nth < 2 ? 1 : nth;
}

/* A scan: fresh (the first, or after the root or threshold changed) reads
 * every process; otherwise the new ones and this scan's share of the known.
 * It lists /proc into the new pid table first, marking what to read, then
 * reads those. Returns the CPU time spent on other threads. */
static double scan(struct sp_sample *s, const struct sp_read_opts *o, bool fresh)
{
	s->procs_seen = 0;
	if (fresh) {
		pid_n[0] = pid_n[1] = 0;
		view.n = 0;
	}
	scan_gen++;
	struct sp_dir d;
	if (sp_dir_open(&d, sp_procfs()) < 0) {
		view.n = 0;
		return 0;
	}
	kthreads_read(d.fd);
	unsigned cur = pid_last ^ 1u;
	struct pid_ent *t = pid_tab[cur];
	unsigned nth = scan_threads(d.fd);
	if (nth > 1) {
		double extra;
		uint32_t np = scan_pipelined(s, o, &d, t, nth, &extra);
		sp_dir_close(&d);
		pid_n[cur] = np;
		pid_last = cur;
		view.procs_seen = s->procs_seen;
		return extra;
	}
	uint32_t n = 0, nread = 0;
	bool sorted = true;
	const char *name;
	int self = (int)getpid();
	while ((name = sp_dir_next(&d))) {
		int64_t pid64;
		if (!is_pid(name) || sp_parse_i64(name, &pid64) < 0 || pid64 > INT32_MAX)
			continue;
		int pid = (int)pid64;
		s->procs_seen++;
		if (pid == self && !sp_paths_is_fixture())
			continue;
		const struct pid_ent *k = pid_known(pid);
		bool read = !(k && k->ino == d.ino && ((uint32_t)pid + scan_gen) % SP_PROC_RECHECK != 0) &&
			    !is_kthread(pid);
		if (n == PID_SLOTS) {
			if (read) /* past the table: read at once, and every scan */
				read_one(d.fd, pid, o, NULL);
			continue;
		}
		if (n && t[n - 1].pid > pid)
			sorted = false; /* a fixture's directory lists in its own order */
		t[n++] = (struct pid_ent){ .pid = pid, .read = read, .ino = d.ino };
		nread += read;
	}
	if (!sorted)
		sp_sort(t, n, sizeof t[0], cmp_pid_ent);
	pid_n[cur] = n;
	pid_last = cur;
	double extra = read_marked(d.fd, t, n, nread, o);
	sp_dir_close(&d);
	view.procs_seen = s->procs_seen;
	return extra;
}

/* between full scans: the listed processes only */
static void reread(struct sp_sample *s)
{
	s->procs_seen = view.procs_seen;
	if (view.n == 0)
		return; /* none listed: nothing to re-read, not even /proc to open */
	int dfd = open(sp_procfs(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		view.n = 0;
		return;
	}
	int w = 0;
	for (int i = 0; i < view.n; i++) {
		struct heavy *h = &view.h[i];
		char rel[64];
		size_t rl = pid_dir(rel, h->p.pid);
		uint64_t rss, start;
		bool has_comm;
		if (brief_at(dfd, rel, rl, NULL, 0, &rss, &start, &has_comm) < 0 || start != h->start)
			continue; /* ended, or the pid is another process's now */
		if (start == 0) {
			/* no start time to tell (a tree without stat): its comm must still be there */
			char c[sizeof h->p.comm];
			memcpy(rel + rl, "comm", 5);
			if (sp_read_at(dfd, rel, c, sizeof c, NULL) < 0)
				continue;
		}
		h->p.rss_bytes = rss;
		view.h[w++] = *h;
	}
	view.n = w;
	close(dfd);
}

void sp_procs_scan_due(void)
{
	pthread_mutex_lock(&view_lock);
	view.next_full = 0;
	pthread_mutex_unlock(&view_lock);
}

double sp_procs_period(void)
{
	pthread_mutex_lock(&view_lock);
	double p = view.period;
	pthread_mutex_unlock(&view_lock);
	return p;
}

void sp_procs_read(struct sp_sample *s, const struct sp_read_opts *o)
{
	pthread_mutex_lock(&view_lock);
	double now = sp_mono_now();
	if (!view.valid || strcmp(view.root, sp_procfs()) != 0 || view.min_rss != o->proc_min_rss ||
	    now >= view.next_full || now < view.last_full) {
		bool fresh = !view.valid || strcmp(view.root, sp_procfs()) != 0 || view.min_rss != o->proc_min_rss ||
			     now < view.last_full;
		if (!fresh)
			reread(s); /* the listed ones first: gone ones dropped, RSS current */
		double c0 = thread_cpu_s();
		double others = scan(s, o, fresh);
		double cost = thread_cpu_s() - c0 + others;
		double period = cost * (o->proc_scan_cost_x > 0 ? o->proc_scan_cost_x : SP_DEFAULT_PROC_SCAN_COST_X);
		double lo = o->proc_scan_min_s > 0 && o->proc_scan_min_s < SP_PROC_SCAN_MAX_S ? o->proc_scan_min_s
											  : SP_DEFAULT_PROC_SCAN_MIN_S;
		view.period = period < lo ? lo
			      : period > SP_PROC_SCAN_MAX_S ? SP_PROC_SCAN_MAX_S : period;
		view.last_full = now;
		view.next_full = now + view.period;
		view.min_rss = o->proc_min_rss;
		snprintf(view.root, sizeof view.root, "%s", sp_procfs());
		view.valid = true;
	} else {
		reread(s);
	}
	s->nprocs = 0;
	for (int i = 0; i < view.n; i++)
		if (view.h[i].hit || view.h[i].p.rss_bytes >= o->proc_min_rss)
			s->procs[s->nprocs++] = view.h[i].p;
	pthread_mutex_unlock(&view_lock);
	sp_sort(s->procs, (size_t)s->nprocs, sizeof s->procs[0], cmp_rss);
}

struct sp_proc *sp_proc_ensure(struct sp_sample *s, int pid)
{
	for (int i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	if (s->nprocs >= SP_MAX_PROCS)
		return NULL;
	struct sp_proc p;
	char argv[4096] = "";
	size_t alen = 0;
	if (read_proc(pid, &p, argv, sizeof argv, &alen) < 0) {
		alen = 0;
		/* a GPU process we cannot see (another PID namespace) */
		memset(&p, 0, sizeof p);
		p.pid = pid;
		snprintf(p.name, sizeof p.name, "pid %d", pid);
		p.gpu_mem.why = SP_MISSING;
	}
	if (!sp_proc_classify(p.comm, argv, alen, &p))
		p.kind = SP_PROC_GPU;
	sp_container_read(pid, &p.ct);
	s->procs[s->nprocs] = p;
	return &s->procs[s->nprocs++];
}
