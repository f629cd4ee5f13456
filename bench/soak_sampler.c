// SPDX-License-Identifier: MIT
/* The sampling loop that run/watch/serve will drive, soaked on its own:
 *   soak_sampler SECONDS INTERVAL_MS [GPU_TIMEOUT_MS]
 * hardens the process (as they will), then samples every INTERVAL_MS on an
 * absolute clock for SECONDS, reading the roots and NVML library from the
 * environment. Prints resident memory, open fds and CPU per sample after a
 * warm-up and at the end, and how many samples missed their tick (started
 * more than 10% of an interval late): with a wedged driver that must stay 0. */
#include "probe/probe.h"
#include "util/dirscan.h"
#include "probe/harden.h"
#include "util/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct fig {
	long rss_kib;
	int fds;
	double cpu_s;
	long samples;
};

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			v = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

static int nfds(void)
{
	struct sp_dir d;
	int n = 0;
	if (sp_dir_open(&d, "/proc/self/fd") < 0)
		return -1;
	while (sp_dir_next(&d))
		n++;
	sp_dir_close(&d);
	return n - 1; /* the scan's own fd */
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

static void take(struct fig *f, long samples)
{
	f->rss_kib = rss_kib();
	f->fds = nfds();
	f->cpu_s = cpu_s();
	f->samples = samples;
}

static struct sp_sample S;

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: soak_sampler SECONDS INTERVAL_MS [GPU_TIMEOUT_MS]\n");
		return 2;
	}
	double secs = atof(argv[1]), ival = atof(argv[2]) / 1000.0;
	double gto = argc > 3 ? atof(argv[3]) / 1000.0 : ival / 2;
	if (!(secs > 0) || !(ival > 0))
		return 2;
	sp_paths_init(NULL, NULL);
	char warn[256];
	unsigned done = sp_harden_process(SP_HARDEN_ALL, warn, sizeof warn);
	struct sp_read_opts o;
	sp_read_opts_init(&o);
	o.gpu_timeout_s = gto;

	double warm = secs / 4 < 60 ? secs / 4 : 60;
	double t0 = sp_mono_now();
	long n = 0, late = 0, timeouts = 0;
	struct fig w0, a = { 0 }, c = { 0 }, b;
	int have_a = 0, have_c = 0;
	take(&w0, 0);
	for (;;) {
		double tick = t0 + (double)n * ival;
		double now = sp_mono_now();
		if (now - tick > ival * 0.1)
			late++;
		sp_sample_read(&S, &o);
		timeouts += S.gpu_status == SP_TIMEOUT;
		n++;
		now = sp_mono_now();
		if (!have_a && now - t0 >= warm) {
			take(&a, n);
			have_a = 1;
		}
		if (!have_c && now - t0 >= secs - warm) {
			take(&c, n);
			have_c = 1;
		}
		if (now - t0 >= secs)
			break;
		double next = t0 + (double)n * ival;
		struct timespec ts = { (time_t)next, (long)((next - (double)(time_t)next) * 1e9) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
			;
	}
	take(&b, n);
	double first = (a.cpu_s - w0.cpu_s) / (double)(a.samples ? a.samples : 1) * 1000.0;
	double last = (b.cpu_s - c.cpu_s) / (double)(b.samples - c.samples ? b.samples - c.samples : 1) * 1000.0;
	printf("  %ld samples in %.0f s at %.0f ms (GPU deadline %.0f ms); memory locked: %s%s%s\n", n,
	       sp_mono_now() - t0, ival * 1000, gto * 1000, done & SP_HARDEN_MLOCK ? "yes" : "no",
	       warn[0] ? " -- " : "", warn);
	printf("  gpu_status %s in the last sample; %ld samples timed out on the GPU\n", sp_why_key(S.gpu_status),
	       timeouts);
	printf("  samples that missed their tick by more than 10%%: %ld\n", late);
	printf("  %-16s %10s %10s %10s\n", "", "start", "end", "end/start");
	printf("  %-16s %10ld %10ld %10.3f\n", "VmRSS KiB", a.rss_kib, b.rss_kib,
	       a.rss_kib > 0 ? (double)b.rss_kib / (double)a.rss_kib : 0.0);
	printf("  %-16s %10d %10d %10.3f\n", "open fds", a.fds, b.fds, a.fds > 0 ? (double)b.fds / a.fds : 0.0);
	printf("  %-16s %10.3f %10.3f %10.3f\n", "CPU ms/sample", first, last, first > 0 ? last / first : 0.0);
	int flat = b.rss_kib <= a.rss_kib + a.rss_kib / 20 + 256 && b.fds <= a.fds;
	printf("  verdict: %s (RSS within 5%% + 256 KiB, fds not growing)%s\n", flat ? "flat" : "GROWING",
	       late ? "; LATE samples" : "");
	int rc = flat && !late ? 0 : 1;
	if (sp_nvml_release()) { /* wedged: leave without the library's destructors */
		fflush(stdout);
		_exit(rc);
	}
	return rc;
}
