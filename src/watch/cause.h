/* SPDX-License-Identifier: MIT */
/* The causes of a slowdown: one enum and one name table (watch/attribute.c),
 * used by attribution, the run/watch messages and the Prometheus job families
 * (out/prom.c), in the order the exposition lists them. */
#ifndef SP_CAUSE_H
#define SP_CAUSE_H

enum sp_cause {
	SP_CAUSE_NONE,            /* throughput is at its baseline */
	SP_CAUSE_THERMAL,
	SP_CAUSE_POWER_CAP,
	SP_CAUSE_MEMORY_PRESSURE,
	SP_CAUSE_CPU_CONTENTION,
	SP_CAUSE_IO_CONTENTION,
	SP_CAUSE_COMPETING_PROCESS,
	SP_CAUSE_UNKNOWN,         /* slower, and no evidence says why */
	SP_CAUSE_N
};
/* "none", "thermal", "power_cap", "memory_pressure", "cpu_contention",
 * "io_stall", "competing_process", "unknown"; out of range: "unknown" */
const char *sp_cause_name(enum sp_cause c);
#endif
