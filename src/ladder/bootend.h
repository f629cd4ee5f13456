/* SPDX-License-Identifier: MIT */
/* How a boot ended, judged from its messages: a pure classifier (no I/O,
 * no clock). The caller feeds the boot's journal entries oldest first
 * (kernel and service lines), what pstore kept, and the run log's hints
 * (the job became ready, a power-delivery cap); sp_bootend_judge gives the
 * verdict, the deciding lines and what the driver's lines were. Fixed size
 * (a few tens of KiB): the caller allocates it once. */
#ifndef SP_BOOTEND_H
#define SP_BOOTEND_H
#include <stdbool.h>
#include <stddef.h>

#define SP_BE_TEXT 320
#define SP_BE_KEEP 128  /* the notable lines kept, the newest */
#define SP_BE_DRV 1024  /* the driver lines' times kept, the newest */
#define SP_BE_READY 64  /* the readiness marks kept, the newest */
#define SP_BE_EVID 8

/* what a line is */
enum sp_be_class {
	SP_BC_NONE,
	SP_BC_NVRM_OOM,    /* NVRM: ... Out of memory [NV_ERR_NO_MEMORY], failed to allocate */
	SP_BC_XID,         /* NVRM: Xid (PCI:...): N, ... */
	SP_BC_KERNEL_OOM,  /* Out of memory: Killed process N (name) */
	SP_BC_OOM_INVOKED, /* NAME invoked oom-killer */
	SP_BC_USER_KILL,   /* earlyoom, systemd-oomd, Ray, Docker, Kubernetes */
	SP_BC_THERMAL,     /* critical temperature reached, thermal shutdown */
	SP_BC_POWER,       /* a power-delivery cap */
	SP_BC_SHUTDOWN,    /* Reached target ... Power-Off / Reboot, Journal stopped */
	SP_BC_READY,       /* a server said it is ready (or the run log did) */
	SP_BC_FAULT,       /* soft lockup, hung task, oops */
	SP_BC_PANIC,       /* Kernel panic - not syncing (journal or pstore) */
	SP_BC_N
};

enum sp_end_kind {
	SP_END_DRIVER_WEDGE,
	SP_END_KERNEL_OOM,
	SP_END_USERSPACE_KILL,
	SP_END_THERMAL,
	SP_END_POWER,
	SP_END_PANIC,
	SP_END_CLEAN,
	SP_END_UNKNOWN,
};
const char *sp_end_kind_name(enum sp_end_kind k);   /* "driver_wedge" ... */
const char *sp_be_class_name(enum sp_be_class c);   /* "nvrm_oom" ... */

/* the phase of the driver's out-of-memory lines */
enum sp_drv_phase {
	SP_PH_NONE,    /* no driver line */
	SP_PH_STARTUP, /* before a server's readiness that came after them */
	SP_PH_LOAD,    /* no readiness seen before or after: a load that never finished */
	SP_PH_RUN,     /* after the job was ready: serving or running */
};
const char *sp_drv_phase_name(enum sp_drv_phase p);

struct sp_be_line {
	double t;
	enum sp_be_class cls;
	char who[32];          /* "kernel", "earlyoom", "systemd-oomd", "docker", "pstore", "log" ... */
	char text[SP_BE_TEXT]; /* cleaned: printable ASCII only */
};

struct sp_bootend {
	double window_s;       /* the run-up before the last entry that decides (default 300) */
	long entries;
	double first_t, last_t;
	struct sp_be_line last;  /* the boot's last entry */
	long count[SP_BC_N];
	struct sp_be_line first_of[SP_BC_N], last_of[SP_BC_N];
	/* the newest notable lines (a ring) */
	struct sp_be_line keep[SP_BE_KEEP];
	int nkeep, keep_head;
	/* the driver's out-of-memory and Xid lines: times (a ring) */
	double drv_t[SP_BE_DRV];
	int ndrv, drv_head;
	double ready_t[SP_BE_READY];
	int nready, ready_head;
	int xids[8];
	int nxid;
	double pcap_w;        /* the lowest power-delivery cap seen (W), 0 none */
	double pcap_t;
	bool pstore_panic, pstore_oops;
	struct sp_be_line pstore;
};

/* the verdict */
struct sp_end {
	enum sp_end_kind kind;
	char detail[400];             /* one sentence */
	char killer[32];              /* userspace_kill: which one ("earlyoom") */
	int victim_pid;               /* kernel_oom / earlyoom: the victim, 0 unknown */
	char victim[64];
	double last_t;                /* the boot's last entry */
	struct sp_be_line evidence[SP_BE_EVID];
	int nevidence;
	/* the driver's out-of-memory lines */
	long drv_lines;               /* NVRM out-of-memory and Xid lines in the boot */
	long drv_startup, drv_load, drv_run; /* by phase (of the newest SP_BE_DRV) */
	long drv_final;               /* in the run-up window */
	double drv_first, drv_last;   /* of the run-up's lines (or all when none there) */
	double drv_rate_per_min;      /* of the run-up's burst */
	enum sp_drv_phase drv_phase;  /* of the run-up (or of the newest line) */
	bool drv_harmless;            /* only start-up probes: not the end */
};

void sp_bootend_init(struct sp_bootend *b, double window_s);
/* Classify one line (pure): the class, and who said it. */
enum sp_be_class sp_be_classify(bool kernel, const char *ident, const char *msg, size_t len, char *who, size_t whon);
/* One journal entry, oldest first. */
void sp_bootend_feed(struct sp_bootend *b, double t, bool kernel, const char *ident, const char *msg, size_t len);
/* The run log's hints: the job was ready (or producing) at t; a
 * power-delivery cap of w watts at t. */
void sp_bootend_ready(struct sp_bootend *b, double t);
void sp_bootend_power_cap(struct sp_bootend *b, double t, double w);
/* pstore's record: a panic (or an oops) with its line. */
void sp_bootend_pstore(struct sp_bootend *b, double t, bool panic, bool oops, const char *file, const char *line);
void sp_bootend_judge(const struct sp_bootend *b, struct sp_end *e);

/* The notable lines kept, oldest first: i in [0, b->nkeep). */
const struct sp_be_line *sp_bootend_kept(const struct sp_bootend *b, int i);
#endif
