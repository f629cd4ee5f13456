// SPDX-License-Identifier: MIT
/* A stand-in for a training job, for the run/watch tests.
 *   progress_child tqdm RATE1 AT RATE2 TOTAL   tqdm-style bars (\r redraws) on
 *       stderr whose rate is RATE1 it/s until AT seconds, then RATE2, for TOTAL s;
 *       AT as @FILE: RATE1 until FILE exists (the test's cue), then RATE2 for TOTAL s
 *   progress_child hf N                         N Hugging Face Trainer log dicts on stdout
 *   progress_child alloc STEP_MIB EVERY_MS MAX_MIB   allocate and touch memory step
 *       by step, saying how much on stdout, until MAX_MIB (then sleep until killed)
 *   progress_child sleep S                      sleep, exit 0 (SIGTERM: exit 143 by default)
 *   progress_child trap S                       print the signals it gets for S seconds
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) < 0)
		;
}

static volatile sig_atomic_t got[65];
static void on_sig(int s)
{
	got[s]++;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	setvbuf(stdout, NULL, _IONBF, 0);
	if (strcmp(argv[1], "tqdm") == 0 && argc >= 6) {
		double r1 = atof(argv[2]), at = atof(argv[3]), r2 = atof(argv[4]), total = atof(argv[5]);
		const char *cue = argv[3][0] == '@' ? argv[3] + 1 : NULL;
		double t0 = now(), t_cue = -1;
		int i = 0;
		while (cue ? t_cue < 0 || now() - t_cue < total : now() - t0 < total) {
			double t = now() - t0;
			if (cue && t_cue < 0 && access(cue, F_OK) == 0)
				t_cue = now();
			double r = (cue ? t_cue < 0 : t < at) ? r1 : r2;
			if (r >= 1)
				fprintf(stderr, "\r\033[32mEpoch 1\033[0m:  %2d%%|###   | %d/1000 [00:%02d<05:23, %.2fit/s, loss=0.5]",
					i % 100, i, (int)t % 60, r);
			else
				fprintf(stderr, "\rEpoch 1:  %2d%%|###   | %d/1000 [00:%02d<05:23, %.2fs/it]", i % 100, i,
					(int)t % 60, 1.0 / r);
			i++;
			nap(0.05);
		}
		fprintf(stderr, "\n");
		return 0;
	}
	if (strcmp(argv[1], "hf") == 0 && argc >= 3) {
		int n = atoi(argv[2]);
		for (int i = 0; i < n; i++) {
			printf("{'loss': '%.4f', 'grad_norm': 0.81, 'learning_rate': 2e-05, 'epoch': %.2f}\n", 1.5 - i * 0.01,
			       i * 0.01);
			nap(0.05);
		}
		printf("{'train_runtime': 12.5, 'train_samples_per_second': 41.25, 'train_steps_per_second': 5.1, 'epoch': 1.0}\n");
		return 0;
	}
	if (strcmp(argv[1], "alloc") == 0 && argc >= 5) {
		size_t step = (size_t)atol(argv[2]) << 20;
		double every = atof(argv[3]) / 1000.0;
		long max = atol(argv[4]), have = 0;
		while (have + atol(argv[2]) <= max) {
			char *p = malloc(step);
			if (!p)
				return 1;
			for (size_t o = 0; o < step; o += 4096)
				p[o] = 1;
			have += atol(argv[2]);
			printf("allocated %ld MiB\n", have);
			nap(every);
		}
		printf("reached %ld MiB\n", have);
		for (;;)
			pause();
	}
	if (strcmp(argv[1], "sleep") == 0 && argc >= 3) {
		nap(atof(argv[2]));
		return 0;
	}
	if (strcmp(argv[1], "trap") == 0 && argc >= 3) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_sig;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		printf("ready\n");
		double t0 = now(), lim = atof(argv[2]);
		while (now() - t0 < lim) {
			nap(0.02);
			if (got[SIGINT] || got[SIGTERM] || got[SIGHUP]) {
				nap(0.3); /* a second copy would arrive now */
				printf("INT=%d TERM=%d HUP=%d\n", (int)got[SIGINT], (int)got[SIGTERM], (int)got[SIGHUP]);
				return 7;
			}
		}
		return 0;
	}
	return 2;
}
