// SPDX-License-Identifier: MIT
/* sparkops top — the live view of a unified-memory machine: the pool and
 * its budget, the GPU and GB10's sensors, their history, pressure, the
 * processes competing for the pool and a running sparkops job. The option
 * table and the loop; the screen is a model (out/topview.c) painted by
 * cmd/topterm.c. */
#include "cmd/cli.h"
#include "cmd/cmdutil.h"
#include "cmd/status.h"
#include "cmd/topterm.h"
#include "out/nodes.h"
#include "out/peer.h"
#include "out/topview.h"
#include "probe/link.h"
#include "probe/flush.h"
#include "probe/probe.h"
#include "probe/spark.h"
#include "probe/sysctl.h"
#include "util/clock.h"
#include "util/msg.h"
#include "util/opt.h"
#include "util/text.h"
#include "util/units.h"
#include "watch/jobstat.h"

#include <curses.h> /* the key codes */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const struct sp_cmdspec spec = {
	.name = "top",
	.usage = "usage: sparkops top [--interval DURATION] [--no-color] [--ascii] [--procfs DIR --sysfs DIR]\n"
		 "                    [--node URL]... [--once]\n"
		 "\n"
		 "A full-screen live view: the pool split into what processes hold, page cache\n"
		 "and free, with the budget now and after a flush; each GPU's temperature,\n"
		 "power, clock and the clock-event reasons lit; GB10's die temperature and PL1;\n"
		 "sparklines of the last minutes; pressure; the processes competing for the\n"
		 "pool; a running 'sparkops run' or 'watch' job.\n"
		 "\n"
		 "With --node URL (another Spark's 'sparkops serve'), the nodes side by side\n"
		 "at the top: this machine first, then each node's pool, budget, GPU and\n"
		 "hottest sensor in one row, and the ConnectX link of each; a node that does\n"
		 "not answer is marked down at once, never shown with its old figures.\n"
		 "--once prints those rows once, without a terminal (for scripts).\n"
		 "\n"
		 "keys: q quit, s cycle the sort, p pause, f flush the page cache (root, y/n),\n"
		 "      h or ? help\n"
		 "\n",
	.tail = "environment: NO_COLOR (any value) turns colour off; SPARKOPS_NVML_LIB=PATH\n"
		"exit: 0 quit with q, 2 usage error or stdout not a terminal (use 'status' or 'watch');\n"
		"      with --once: 0 every node answered, 1 a node is down or stale\n",
};

#define MSG_S 8.0 /* how long a result stays on the keys line */
/* The scan of every process for servers and trainers is most of a
 * sample's cost on a busy machine (2,000 processes: ~60 ms against ~1 ms
 * for everything else), so at short intervals it runs at most this often,
 * as the run/watch engine's does; in between the list is kept and its GPU
 * memory refreshed from NVML. */
#define PROC_SCAN_S 5.0

#define NODE_ARGS_MAX (SP_NODES_MAX - 1)
#define NODE_LINES 16
struct node_list {
	struct sp_peer_url u[NODE_ARGS_MAX];
	int n;
	bool self; /* --node self: this machine, which is always the first row */
};

struct top { // NOLINT(clang-analyzer-optin.performance.Padding): one instance, grouped by purpose
	struct sp_read_opts ro;
	/* --node: the peers (read in threads of their own), this machine's link
	 * (two readings for bytes per second), the rows as lines */
	struct node_list nodes;
	bool once, want_nodes;
	struct sp_peers *peers;
	struct sp_links links[2];
	int lcur;
	char node_lines[NODE_LINES][SP_NODE_LINE];
	bool node_alert[NODE_LINES];
	int n_node_lines;
	bool nodes_bad;
	double interval_s;
	bool no_color, ascii;
	struct sp_topterm term;
	struct sp_sample s;
	struct sp_spark k;
	bool have_sample;
	struct sp_top_hist h;
	/* the GPU's last answered readings, for the STALE pane */
	struct sp_gpu gpu_last[SP_MAX_GPUS];
	int gpu_last_n;
	double gpu_last_t;
	bool gpu_stale;
	struct sp_jobstat jobs[SP_JOBSTAT_MAX];
	int njobs;
	/* the last full process scan */
	struct sp_proc procs[SP_MAX_PROCS];
	int nprocs, procs_seen;
	double last_scan;
	bool scanned;
	char host[64];
	long samples;
	enum sp_top_sort sort;
	bool paused, help, confirm, quit;
	char msg[256];
	bool msg_alert;
	double msg_until;
	struct sp_tv_grid grid; /* last: large, touched only as far as the screen reaches */
};

static void say(struct top *t, bool alert, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(struct top *t, bool alert, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof t->msg, fmt, ap);
	va_end(ap);
	t->msg_alert = alert;
	t->msg_until = sp_mono_now() + MSG_S;
}

/* The processes: a full scan every PROC_SCAN_S, else the last scan's list
 * with this sample's GPU memory (NVML's per-process figures). */
static void sample_procs(struct top *t, bool full, double now)
{
	struct sp_sample *s = &t->s;
	if (full) {
		t->nprocs = s->nprocs;
		t->procs_seen = s->procs_seen;
		memcpy(t->procs, s->procs, sizeof t->procs[0] * (size_t)s->nprocs);
		t->last_scan = now;
		t->scanned = true;
		return;
	}
	for (int i = 0; i < t->nprocs; i++) {
		struct sp_proc *p = &t->procs[i];
		for (int j = 0; j < s->nprocs; j++)
			if (s->procs[j].pid == p->pid)
				p->gpu_mem = s->procs[j].gpu_mem;
	}
	memcpy(s->procs, t->procs, sizeof t->procs[0] * (size_t)t->nprocs);
	s->nprocs = t->nprocs;
	s->procs_seen = t->procs_seen;
}

static void links_read(struct top *t)
{
	int prev = t->lcur;
	t->lcur = !prev;
	sp_links_read(&t->links[t->lcur], t->links[prev].t > 0 ? &t->links[prev] : NULL);
}

/* The rows: this machine from its own sample (the document status --json
 * gives), then each peer's last answer, shown only while it is current. */
static void nodes_refresh(struct top *t)
{
	struct sp_node_row rows[SP_NODES_MAX];
	int n = 0;
	memset(rows, 0, sizeof rows);
	struct sp_node_row *r = &rows[n++];
	snprintf(r->name, sizeof r->name, "%s", t->host);
	json_t *d = sp_status_document(&t->s, (t->ro.what & SP_READ_PROCS) != 0);
	if (d)
		json_object_set_new(d, "links", sp_links_json(&t->links[t->lcur]));
	sp_node_row_from_doc(d, r);
	json_decref(d);
	snprintf(r->state, sizeof r->state, "ok");
	r->figures = true;
	r->age_s = 0;
	t->nodes_bad = false;
	for (int i = 0; i < sp_peers_n(t->peers) && n < SP_NODES_MAX; i++) {
		struct sp_peer_view v;
		sp_peers_view(t->peers, i, &v);
		r = &rows[n++];
		snprintf(r->name, sizeof r->name, "%.63s", v.url + 7);
		sp_node_row_from_doc(v.doc, r);
		json_decref(v.doc);
		snprintf(r->state, sizeof r->state, "%s", v.state);
		snprintf(r->error, sizeof r->error, "%.159s", v.error);
		sp_text_clean(r->error);
		r->age_s = v.age_s;
		r->figures = strcmp(v.state, "ok") == 0;
		if (!r->figures)
			t->nodes_bad = true;
	}
	t->n_node_lines = sp_nodes_text(rows, n, t->node_lines, NODE_LINES);
	for (int i = 0; i < t->n_node_lines; i++)
		t->node_alert[i] = i >= 1 && i <= n && !rows[i - 1].figures;
}

/* One sample: the machine (the GPU behind its deadline), the history, the
 * jobs. A GPU that did not answer in time leaves its last answer, marked stale. */
static void take_sample(struct top *t)
{
	double now = sp_mono_now();
	bool want = (t->ro.what & SP_READ_PROCS) != 0;
	bool full = want && (!t->scanned || now - t->last_scan >= PROC_SCAN_S || t->interval_s >= PROC_SCAN_S);
	struct sp_read_opts ro = t->ro;
	if (!full)
		ro.what &= ~(unsigned)SP_READ_PROCS;
	sp_sample_read(&t->s, &ro);
	if (want)
		sample_procs(t, full, now);
	sp_spark_derive(&t->s, &t->k);
	if (t->s.gpu_status == SP_TIMEOUT) {
		t->gpu_stale = true;
	} else {
		t->gpu_stale = false;
		if (t->s.gpu_status == SP_OK) {
			t->gpu_last_n = t->s.ngpu;
			memcpy(t->gpu_last, t->s.gpus, sizeof t->gpu_last[0] * (size_t)t->s.ngpu);
			t->gpu_last_t = now;
		}
	}
	sp_top_hist_push(&t->h, &t->s, &t->k);
	if (t->want_nodes) {
		links_read(t);
		nodes_refresh(t);
	}
	t->njobs = sp_jobstat_find(t->jobs, SP_JOBSTAT_MAX, t->s.wall);
	t->samples++;
	t->have_sample = true;
	if (t->msg[0] && !t->confirm && now > t->msg_until)
		t->msg[0] = 0;
}

static void draw(struct top *t)
{
	int rows, cols;
	sp_topterm_size(&rows, &cols);
	struct sp_topview_in in = {
		.s = t->have_sample ? &t->s : NULL,
		.k = &t->k,
		.h = &t->h,
		.gpu_stale = t->gpu_stale,
		.gpu_last = t->gpu_last_n ? t->gpu_last : NULL,
		.gpu_last_n = t->gpu_last_n,
		.gpu_stale_s = t->gpu_last_n ? sp_mono_now() - t->gpu_last_t : 0,
		.jobs = t->jobs,
		.njobs = t->njobs,
		.host = t->host,
		.now_unix = t->s.wall,
		.samples = t->samples,
		.interval_s = t->interval_s,
		.sort = t->sort,
		.paused = t->paused,
		.ascii = t->ascii,
		.help = t->help,
		.message = t->msg,
		.message_alert = t->msg_alert,
		.node_lines = t->want_nodes ? (const char (*)[SP_NODE_LINE])t->node_lines : NULL,
		.node_alert = t->node_alert,
		.n_node_lines = t->want_nodes ? t->n_node_lines : 0,
	};
	sp_topview_render(&t->grid, rows, cols, &in);
	sp_topterm_paint(&t->term, &t->grid);
}

/* f, then y: the one flush (probe/flush.c), and what it freed. */
static void flush_now(struct top *t)
{
	char a[32], b[32], c[32];
	say(t, false, "flushing the page cache (sync; drop_caches 3)...");
	draw(t);
	struct sp_flush_result r;
	int e = sp_flush_page_cache(&r);
	if (e < 0 && e != -EIO)
		say(t, true, "flush failed: '%s': %s", r.path, sp_procsys_strerror(e));
	else if (e < 0)
		say(t, true, "flushed, but the pool could not be read afterwards");
	else
		say(t, false, "flushed: page cache %s -> %s, %s freed; MemFree %+.1f GiB",
		    sp_fmt_gib(a, sizeof a, (double)r.cache_before), sp_fmt_gib(b, sizeof b, (double)r.cache_after),
		    sp_fmt_gib(c, sizeof c, (double)r.freed_bytes), (double)r.mem_free_gain / 1073741824.0);
}

static void on_key(struct top *t, int ch)
{
	if (t->confirm) {
		t->confirm = false;
		if (ch == 'y' || ch == 'Y')
			flush_now(t);
		else
			say(t, false, "flush cancelled");
		return;
	}
	if (ch == 'q' || ch == 'Q') {
		t->quit = true;
		return;
	}
	if (t->help && ch != KEY_RESIZE) {
		t->help = false;
		return;
	}
	switch (ch) {
	case 's':
	case 'S':
		t->sort = (enum sp_top_sort)((t->sort + 1) % SP_TOP_SORT_N);
		break;
	case 'p':
	case 'P':
		t->paused = !t->paused;
		break;
	case 'h':
	case 'H':
	case '?':
		t->help = true;
		break;
	case 'f':
	case 'F':
		if (geteuid() != 0) {
			say(t, true, "flushing the page cache needs root");
		} else {
			t->confirm = true;
			say(t, false, "flush the page cache now (sync; echo 3 > drop_caches)? y/n");
		}
		break;
	case 12: /* Ctrl-L */
		sp_topterm_redraw();
		break;
	default:
		break;
	}
}

/* Wait for a key, a signal or the next sample; false when the loop ends. */
static bool wait_input(struct top *t, double next)
{
	double now = sp_mono_now();
	int ms = t->paused ? 1000 : (int)ceil((next - now) * 1000.0);
	if (ms < 0)
		ms = 0;
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	int r = poll(&p, 1, ms);
	if (r < 0 && errno != EINTR)
		return false;
	if (r > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL)) && !(p.revents & POLLIN))
		return false; /* the terminal went away */
	return true;
}

static int top_loop(struct top *t)
{
	double next = sp_mono_now();
	bool dirty = true;
	while (!t->quit && !sp_topterm_signal()) {
		double now = sp_mono_now();
		if (!t->paused && now >= next) {
			take_sample(t);
			dirty = true;
			next += t->interval_s;
			now = sp_mono_now();
			if (next < now)
				next = now + t->interval_s; /* fell behind: no burst */
		}
		if (dirty)
			draw(t);
		dirty = false;
		if (!wait_input(t, next))
			break;
		int ch;
		while ((ch = sp_topterm_key()) >= 0 && !t->quit) {
			on_key(t, ch);
			dirty = true;
		}
		if (t->paused && t->msg[0] && !t->confirm && sp_mono_now() > t->msg_until) {
			t->msg[0] = 0;
			dirty = true;
		}
	}
	return 0;
}

static const char *opt_node(void *target, const char *arg)
{
	static char why[240];
	struct node_list *nl = target;
	if (strcmp(arg, "self") == 0) {
		nl->self = true;
		return NULL;
	}
	if (nl->n >= NODE_ARGS_MAX)
		return "is one too many: top shows four nodes (this one and three); " SP_NODES_MORE_NOTE;
	if (sp_peer_url_parse(arg, &nl->u[nl->n], why, sizeof why) < 0)
		return why;
	for (int i = 0; i < nl->n; i++)
		if (strcmp(nl->u[i].url, nl->u[nl->n].url) == 0)
			return "is named twice";
	nl->n++;
	return NULL;
}

/* --once: one sample and the peers' first answers (each behind its
 * deadline), the rows on stdout */
static int top_once(struct top *t)
{
	double t0 = sp_mono_now();
	take_sample(t);
	sp_peers_wait_first(t->peers, SP_PEER_TIMEOUT_S + 0.5);
	double left = 0.5 - (sp_mono_now() - t0); /* the link's second reading, for bytes per second */
	if (left > 0) {
		struct timespec ts = { 0, (long)(left * 1e9) };
		nanosleep(&ts, NULL);
	}
	links_read(t);
	nodes_refresh(t);
	for (int i = 0; i < t->n_node_lines; i++)
		printf("%s\n", t->node_lines[i]);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		sp_error("cannot write to stdout");
		return SP_EXIT_IO;
	}
	return t->nodes_bad ? SP_EXIT_TROUBLE : SP_EXIT_OK;
}

int cmd_top(int argc, char **argv)
{
	struct top *t = calloc(1, sizeof *t);
	if (!t)
		sp_die(SP_EXIT_IO, "out of memory");
	sp_read_opts_init(&t->ro);
	t->interval_s = 1.0;
	const struct sp_option opts[] = {
		SP_OPT_GROUP("options:"),
		SP_OPT_DURATION("interval", &t->interval_s, "DURATION", 0.1, 3600, 0,
				"time between samples (default 1s, at least 100ms)"),
		SP_OPT_FLAG(0, "no-color", &t->no_color, "no colour (bold and reverse only); NO_COLOR does the same"),
		SP_OPT_FLAG(0, "ascii", &t->ascii, "plain ASCII bars and sparklines, for terminals without\n"
						  "Unicode block characters"),
		SP_OPT_CALLBACK("node", &t->nodes, "URL", opt_node,
				"another node's 'sparkops serve', http://HOST[:PORT] (repeatable,\n"
				"up to three: four nodes with this one, which is always the\n"
				"first row; 'self' names it too): its /api/status is read once a\n"
				"second in a thread of its own behind a 2s deadline"),
		SP_OPT_FLAG(0, "once", &t->once, "print the nodes' rows once and exit (no terminal needed)"),
		SP_OPT_READ(&t->ro),
		SP_OPT_END(),
	};
	int i = sp_opt_parse(&spec, opts, argc, argv);
	if (i < 0) {
		free(t);
		return 0;
	}
	if (i < argc)
		sp_usage_error("top", "unexpected argument '%s'", argv[i]);
	if (!t->once && !isatty(STDOUT_FILENO)) {
		free(t);
		sp_error("'top' needs a terminal on stdout");
		sp_note("for one snapshot use 'sparkops status' (--json for scripts), or 'top --once' for the nodes' rows; "
			"for a log over time 'sparkops watch'");
		return SP_EXIT_USAGE;
	}
	t->want_nodes = t->once || t->nodes.n > 0 || t->nodes.self;
	if (t->nodes.n) {
		t->peers = sp_peers_start(t->nodes.u, t->nodes.n, SP_PEER_INTERVAL_S, SP_PEER_TIMEOUT_S, SP_PEER_IDLE_S);
		if (!t->peers) {
			free(t);
			sp_die(SP_EXIT_TROUBLE, "cannot start the threads that read the nodes");
		}
	}
	/* the screen must never stall on the driver: a short deadline, and a
	 * hung call turns the GPU pane stale (probe/gpuwatch.c) */
	t->ro.gpu_timeout_s = t->interval_s / 2 < 0.5 ? t->interval_s / 2 : 0.5;
	/* a person is watching: a new process shows within 2 s, not 5 */
	t->ro.proc_scan_min_s = SP_TOP_PROC_SCAN_MIN_S;
	t->ro.proc_scan_cost_x = SP_TOP_PROC_SCAN_COST_X;
	if (sp_hostname_read(t->host, sizeof t->host) < 0)
		gethostname(t->host, sizeof t->host - 1);
	sp_text_clean(t->host);
	sp_top_hist_init(&t->h);
	if (t->once) {
		int rc = top_once(t);
		sp_peers_stop(t->peers);
		free(t);
		return rc;
	}

	char err[200];
	if (sp_topterm_open(&t->term, !t->no_color && sp_color(STDOUT_FILENO), err, sizeof err) < 0) {
		sp_peers_stop(t->peers);
		free(t);
		sp_error("%s", err);
		return SP_EXIT_USAGE;
	}
	if (!t->term.utf8)
		t->ascii = true; /* a locale without UTF-8 cannot show the block characters */
	/* a status folder planted by another user would hide every job: said
	 * once, on the screen (and on stderr when top ends) */
	char sdwhy[300];
	bool sdbad = sp_jobstat_dir_refused(sdwhy, sizeof sdwhy);
	if (sdbad)
		say(t, true, "status folder refused: %s", sdwhy);
	top_loop(t);
	int sig = sp_topterm_signal();
	sp_topterm_close(&t->term);
	sp_peers_stop(t->peers);
	free(t);
	if (sdbad)
		sp_warn("status folder refused: %s: jobs of 'sparkops run' and 'watch' were not shown", sdwhy);
	if (sig) {
		/* the terminal is back: end the way the signal asks */
		signal(sig, SIG_DFL);
		raise(sig);
	}
	return 0;
}
