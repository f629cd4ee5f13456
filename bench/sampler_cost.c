// SPDX-License-Identifier: MIT
/* What one sample costs, in a steady state:
 *   sampler_cost SAMPLES INTERVAL_MS [nogpu|noprocs]
 * reads SAMPLES samples (every source, or all but the GPU or the processes;
 * the roots and NVML library from the environment) INTERVAL_MS apart on an absolute clock, after one warm-up
 * sample, and prints the CPU time per sample (user + system, getrusage) and
 * the process count. An interval of 0 samples back to back. */
#include "probe/probe.h"
#include "util/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
	long ms = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	sp_paths_init(NULL, NULL);
	static struct sp_sample s;
	struct sp_read_opts o;
	sp_read_opts_init(&o);
	if (argc > 3 && strcmp(argv[3], "nogpu") == 0)
		o.what &= ~(unsigned)SP_READ_GPU;
	if (argc > 3 && strcmp(argv[3], "noprocs") == 0)
		o.what &= ~(unsigned)SP_READ_PROCS;
	sp_sample_read(&s, &o); /* warm-up: dlopen, nvmlInit, the first full scans */
	double c0 = cpu_s();
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long i = 0; i < n; i++) {
		if (ms > 0) {
			next.tv_nsec += (ms % 1000) * 1000000L;
			next.tv_sec += ms / 1000 + next.tv_nsec / 1000000000L;
			next.tv_nsec %= 1000000000L;
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		}
		sp_sample_read(&s, &o);
	}
	double c1 = cpu_s();
	printf("samples=%ld interval_ms=%ld cpu_ms_per_sample=%.4f procs_seen=%d procs_listed=%d\n", n, ms,
	       n ? (c1 - c0) * 1e3 / (double)n : 0.0, s.procs_seen, s.nprocs);
	sp_nvml_release();
	return 0;
}
