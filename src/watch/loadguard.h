/* SPDX-License-Identifier: MIT */
/* The load guard's decisions (run --guard-load), pure and on scripted time:
 * from launch until the job says it is ready, a deadline or a stop file,
 * whenever MemFree or the memory free in 2 MiB blocks is under its floor,
 * act (flush + compact as root, evict the job's files without), at most once
 * per SP_LG_COOLDOWN_S. After it stops it keeps counting the crossings.
 * And the readiness matcher: the job's output, line by line (bounded), against
 * --ready or the known servers' lines. Why: docs/run.md "Surviving a model load". */
#ifndef SP_LOADGUARD_H
#define SP_LOADGUARD_H
#include "probe/poolmodel.h"

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SP_LG_DEFAULT_FLOOR (8ULL << 30)        /* MemFree, on a unified-memory pool */
#define SP_LG_DEFAULT_CONTIG_FLOOR SP_POOL_LOW_CONTIG /* free in 2 MiB blocks: the pool model's low mark */
#define SP_LG_DEFAULT_DEADLINE_S (45.0 * 60)
#define SP_LG_COOLDOWN_S 1.0                   /* at most one action a second */
#define SP_LG_LOOK_S 0.25                      /* how often it looks */

struct sp_lg_cfg {
	uint64_t floor, contig_floor; /* bytes; 0: that floor is off */
	double deadline_s;
};

enum sp_lg_end { SP_LG_RUNNING, SP_LG_READY, SP_LG_DEADLINE, SP_LG_STOP_FILE, SP_LG_JOB_ENDED };
const char *sp_lg_end_name(enum sp_lg_end e); /* "ready", "deadline", "stop_file", "job_ended" */
enum sp_lg_act { SP_LG_NONE, SP_LG_ACT, SP_LG_STOP };

struct sp_lguard {
	struct sp_lg_cfg cfg;
	double t0, last_act;
	enum sp_lg_end end;
	int actions;
	long below_after;  /* crossings under a floor after it stopped */
	bool below;        /* under a floor at the last look */
	bool driver_oom;   /* set by the caller before a step: the NVIDIA driver logged out-of-memory
			    * lines since the last look (probe/kmsg.h), a trigger like a floor crossed */
	bool by_driver;    /* the last step's trigger was driver_oom alone */
};

void sp_lguard_init(struct sp_lguard *g, const struct sp_lg_cfg *c, double t0);
/* One look at time t: MemFree and contiguous bytes (NAN: unknown, never
 * counts as under), whether the job is ready, the stop file is there, the
 * job still runs. SP_LG_STOP once (g->end says why), SP_LG_ACT when an
 * action is due (the caller does it and calls sp_lguard_acted). */
enum sp_lg_act sp_lguard_step(struct sp_lguard *g, double t, double free_b, double contig_b, bool ready,
			      bool stop_file, bool job_alive);
void sp_lguard_acted(struct sp_lguard *g, double t);

/* ---- readiness ------------------------------------------------------------ */
#define SP_READY_LINE_MAX 1024
struct sp_ready {
	const regex_t *re;   /* --ready; NULL: the known servers' lines */
	char line[SP_READY_LINE_MAX];
	size_t len;
	bool overlong, matched;
	char what[48];       /* which line matched: "vLLM", "--ready" ... */
};
void sp_ready_init(struct sp_ready *r, const regex_t *re);
/* Feed output bytes; true once a line matched (then it stays true). */
bool sp_ready_feed(struct sp_ready *r, const char *buf, size_t n);
#endif
