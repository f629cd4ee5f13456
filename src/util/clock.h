/* SPDX-License-Identifier: MIT */
/* The clocks, in seconds as doubles: one helper each, used everywhere. */
#ifndef SP_CLOCK_H
#define SP_CLOCK_H

double sp_mono_now(void); /* CLOCK_MONOTONIC seconds (intervals, deadlines) */
double sp_wall_now(void); /* CLOCK_REALTIME seconds (Unix time, for logs) */
#endif
