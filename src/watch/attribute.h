/* SPDX-License-Identifier: MIT */
/* Why did the job slow down? Pure: fed one observation per sample (scripted
 * time in tests), it keeps the early-throughput baseline, opens a slowdown
 * episode when the rate stays below it, and names the cause from the
 * evidence in the same window. Rules: docs/run.md "Attribution". */
#ifndef SP_ATTRIBUTE_H
#define SP_ATTRIBUTE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "watch/cause.h"

#define SP_ATTR_DEFAULT_WINDOW_S 300.0 /* --baseline-window */
#define SP_ATTR_DEFAULT_SLOWDOWN_PCT 15.0 /* --slowdown */
#define SP_ATTR_CONFIRM 3          /* consecutive samples below (or back above) */
#define SP_ATTR_HOT_C 85.0         /* GPU temperature that counts as hot */
#define SP_ATTR_SOC_HOT_C 90.0     /* SoC (acpitz) temperature that counts as hot */
#define SP_ATTR_PL1_AT_CAP 0.97    /* PL1 average / cap */
#define SP_ATTR_PSI_MEM 10.0       /* PSI memory some avg10, % */
#define SP_ATTR_PSI_CPU 25.0       /* PSI cpu some avg10, % */
#define SP_ATTR_PSI_IO 20.0        /* PSI io some avg10, % */
#define SP_ATTR_MAX_BASE 512
#define SP_ATTR_PLATEAU_N 4        /* samples of flat power that make a plateau */

/* The causes attribution names (enum sp_cause, watch/cause.h), by their
 * short names here; it never names SP_CAUSE_NONE. */
#define SP_AC_THERMAL SP_CAUSE_THERMAL
#define SP_AC_POWER_CAP SP_CAUSE_POWER_CAP
#define SP_AC_MEMORY SP_CAUSE_MEMORY_PRESSURE
#define SP_AC_COMPETING SP_CAUSE_COMPETING_PROCESS
#define SP_AC_CPU SP_CAUSE_CPU_CONTENTION
#define SP_AC_IO SP_CAUSE_IO_CONTENTION
#define SP_AC_UNKNOWN SP_CAUSE_UNKNOWN
#define SP_AC_N SP_CAUSE_N
#define sp_attr_cause_name sp_cause_name /* "thermal", "power_cap", ... */

/* One sample's evidence. Every double is NAN when unknown. */
struct sp_attr_obs {
	double t;               /* seconds (any clock, increasing) */
	double rate;            /* NAN: no rate yet */
	char unit[16];          /* the rate's unit; only the baseline's unit counts */
	bool rate_fresh;        /* a new rate was parsed since the last sample */
	bool reasons_ok;
	uint64_t reasons;       /* clocks event reasons */
	double viol_thermal_s, viol_power_s;
	double gpu_temp_c, soc_temp_c;
	double gpu_power_w, pl1_w, pl1_cap_w;
	double psi_mem_some, psi_mem_full, psi_cpu_some, psi_io_some;
	double swap_used, page_cache; /* bytes */
	bool process_appeared;  /* a memory-heavy process appeared at this sample */
};

/* EPISODE_UPDATE: the episode's dominant cause changed while it lasts */
enum sp_attr_event { SP_ATTR_NONE, SP_ATTR_EPISODE_START, SP_ATTR_EPISODE_UPDATE, SP_ATTR_EPISODE_END };

/* An episode judged over its whole length (docs/run.md "Attribution"): the
 * seconds each cause's evidence was present, PSI averaged over the episode,
 * the temperature and power trend since it started. */
struct sp_attr_episode {
	double last_t;              /* the previous sample's time */
	double total_s;             /* seconds judged (the detection's window + every sample since) */
	double sec[SP_CAUSE_N];     /* seconds under each cause's evidence */
	double bit_s[9];            /* seconds under each clocks event reason */
	double pl1_s, plateau_s, viol_thermal_s;
	double psi_sum[3];          /* memory some, cpu some, io some: sums over the samples */
	int psi_n[3];
	double temp0, pow0;         /* at the episode's start */
	double swap0, cache0;       /* swap use and page cache before the drop */
	bool competing;
	struct sp_attr_obs prev;    /* the previous sample */
};

struct sp_attr { // NOLINT(clang-analyzer-optin.performance.Padding): one per run, grouped by purpose
	double window_s, slowdown_pct;
	/* baseline */
	double first_t;           /* time of the first rate; NAN before */
	int nbase;
	double base[SP_ATTR_MAX_BASE];
	bool have_baseline;
	double baseline;
	char unit[16];
	/* episode */
	int below, above;         /* consecutive samples below / back above */
	bool in_episode;
	enum sp_cause cause;
	double episode_start_t;
	double drop_pct, last_rate;
	char evidence[160];       /* "thermal reason sw_thermal_slowdown on; ..." */
	char shares[96];          /* the other causes' shares: "power_cap 9%, memory_pressure 4%"; "" when none */
	int share_pct;            /* the dominant cause's share of the episode, % */
	struct sp_attr_episode ep;
	/* the last healthy sample, the start of the window the evidence comes from */
	bool have_ref;
	struct sp_attr_obs ref;   /* the oldest of the last healthy samples */
	struct sp_attr_obs hist[SP_ATTR_CONFIRM + 1];
	int nhist;
	bool competing_since_ref;
	double temp_min_since_ref;
	/* the plateau test looks further back: since the baseline was set */
	double temp_min_since_base, power_at_base;
	struct sp_attr_obs base_obs; /* the sample that set the baseline: the job at full speed */
	double pow_ring[SP_ATTR_PLATEAU_N];
	int npow;
};

void sp_attr_init(struct sp_attr *a, double window_s, double slowdown_pct);
/* Feed one sample; returns what happened (the cause and evidence are in *a). */
enum sp_attr_event sp_attr_feed(struct sp_attr *a, const struct sp_attr_obs *o);
/* Judge a window (exposed for tests): ref = the last healthy sample, now = the
 * current one. Writes the evidence words to ev. */
enum sp_cause sp_attr_judge(const struct sp_attr *a, const struct sp_attr_obs *ref, const struct sp_attr_obs *now,
			    char *ev, size_t evlen);
void sp_attr_obs_clear(struct sp_attr_obs *o);
/* The detail of an episode_update / episode_end row: "cause=C share_pct=P
 * shares=C:P,C:P rate=R" (shares: the other causes, "-" when none). */
void sp_attr_detail(const struct sp_attr *a, char *d, size_t n);
/* The detail of an episode_start row: "cause=C drop_pct=D baseline=B rate=R
 * evidence=TEXT", the evidence last and as said (spaces kept: the log writer
 * quotes the field as CSV needs; sp_detail_get reads it to the end). */
void sp_attr_start_detail(const struct sp_attr *a, char *d, size_t n);
/* The evidence present at one sample of an episode, as a set of causes
 * (1u << cause); what is new since the baseline, else what was already on.
 * Exposed for tests. */
unsigned sp_attr_sample_causes(const struct sp_attr *a, const struct sp_attr_obs *prev, const struct sp_attr_obs *o);
#endif
