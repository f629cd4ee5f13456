// SPDX-License-Identifier: MIT
/* bench/bench_guard.sh's driver: `cost N` times N reads of /proc/buddyinfo
 * (sp_buddyinfo_read) and of /proc/meminfo, in ns per read; `cross BYTES S`
 * polls MemFree every 2 ms for up to S seconds and prints the Unix time it
 * first fell under BYTES. */
#include "probe/pool.h"
#include "probe/probe.h"
#include "util/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "cost") == 0) {
		long n = atol(argv[2]);
		struct sp_contig c;
		struct sp_meminfo m;
		double t0 = sp_mono_now();
		for (long i = 0; i < n; i++)
			sp_buddyinfo_read(&c);
		double t1 = sp_mono_now();
		for (long i = 0; i < n; i++)
			sp_meminfo_read(&m);
		double t2 = sp_mono_now();
		printf("buddyinfo_ns %.0f meminfo_ns %.0f status %s\n", (t1 - t0) / (double)n * 1e9,
		       (t2 - t1) / (double)n * 1e9, sp_why_key(c.why));
		return 0;
	}
	if (argc >= 4 && strcmp(argv[1], "cross") == 0) {
		double floor_b = atof(argv[2]), until = sp_mono_now() + atof(argv[3]);
		struct timespec ts = { 0, 2000000 };
		while (sp_mono_now() < until) {
			struct sp_meminfo m;
			sp_meminfo_read(&m);
			if (m.why == SP_OK && (double)m.v[SP_MI_FREE] < floor_b) {
				printf("%.3f\n", sp_wall_now());
				return 0;
			}
			nanosleep(&ts, NULL);
		}
		return 1;
	}
	fprintf(stderr, "usage: guard_probe cost N | cross BYTES SECONDS\n");
	return 2;
}
