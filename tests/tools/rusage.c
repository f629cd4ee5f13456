// SPDX-License-Identifier: MIT
/* rusage N CMD ARGS... : runs CMD N times (stdout and stderr to /dev/null) and
 * prints "wall_ms_p50=X cpu_ms_mean=X maxrss_kib=X fails=N" from wait4()'s
 * rusage: CPU in microseconds, not the 10 ms of /usr/bin/time. For benches. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0;
	if (n < 1 || n > 100000) {
		fprintf(stderr, "usage: rusage N CMD [ARGS...]\n");
		return 2;
	}
	double *wall = calloc((size_t)n, sizeof *wall), cpu = 0;
	long maxrss = 0;
	int fails = 0;
	for (int i = 0; i < n; i++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		pid_t pid = fork();
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);
			dup2(fd, 1);
			dup2(fd, 2);
			execvp(argv[2], argv + 2);
			_exit(127);
		}
		int st;
		struct rusage ru;
		if (pid < 0 || wait4(pid, &st, 0, &ru) < 0)
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		wall[i] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		cpu += (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
		if (ru.ru_maxrss > maxrss)
			maxrss = ru.ru_maxrss;
		if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 1))
			fails++;
	}
	qsort(wall, (size_t)n, sizeof *wall, cmp);
	printf("wall_ms_p50=%.3f cpu_ms_mean=%.3f maxrss_kib=%ld fails=%d\n", wall[n / 2], cpu / n, maxrss, fails);
	free(wall);
	return 0;
}
