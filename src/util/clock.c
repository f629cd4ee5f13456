// SPDX-License-Identifier: MIT
/* The clocks. See clock.h. */
#include "util/clock.h"

#include <time.h>

static double clock_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double sp_mono_now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

double sp_wall_now(void)
{
	return clock_s(CLOCK_REALTIME);
}
