/* SPDX-License-Identifier: MIT */
/* One timestamped snapshot of the machine, filled by the probes and read by
 * everyone else. Fixed-size (no heap) so the sampling loop never allocates.
 * Every reading carries a validity: `why == SP_OK` means the value is real;
 * anything else says why it is unknown. Unknown is never 0. */
#ifndef SP_SAMPLE_H
#define SP_SAMPLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sp_why {
	SP_OK = 0,
	SP_MISSING,       /* the file or entry does not exist here */
	SP_NOACCESS,      /* permission denied */
	SP_MALFORMED,     /* could not be parsed */
	SP_NOT_SUPPORTED, /* the driver says not supported */
	SP_NO_DRIVER,     /* no NVIDIA driver / NVML library */
	SP_NO_PERMISSION, /* the driver says no permission */
	SP_GPU_LOST,      /* the driver says the GPU fell off the bus */
	SP_TIMEOUT,       /* the driver did not answer in time */
	SP_DRIVER_ERROR,  /* any other driver error */
	SP_IMPLAUSIBLE,   /* a value outside physical bounds was rejected */
	SP_NO_GPU,        /* a driver, but no GPU */
	SP_WHY_N
};
/* snake_case key for JSON/CSV ("not_supported"), and words for people */
const char *sp_why_key(enum sp_why w);
const char *sp_why_text(enum sp_why w);
enum sp_why sp_why_from_errno(int neg_errno);

struct sp_u64 {
	uint64_t v;
	enum sp_why why;
};
struct sp_i64 {
	int64_t v;
	enum sp_why why;
};
static inline bool sp_ok(enum sp_why w) { return w == SP_OK; }

/* ---- /proc/meminfo ---------------------------------------------------- */
enum sp_mi {
	SP_MI_TOTAL, SP_MI_FREE, SP_MI_AVAILABLE, SP_MI_BUFFERS, SP_MI_CACHED,
	SP_MI_SWAP_CACHED, SP_MI_ACTIVE_FILE, SP_MI_INACTIVE_FILE, SP_MI_UNEVICTABLE,
	SP_MI_MLOCKED, SP_MI_SWAP_TOTAL, SP_MI_SWAP_FREE, SP_MI_DIRTY, SP_MI_WRITEBACK,
	SP_MI_ANON_PAGES, SP_MI_MAPPED, SP_MI_SHMEM, SP_MI_SRECLAIMABLE, SP_MI_SUNRECLAIM,
	SP_MI_HUGE_TOTAL, SP_MI_HUGE_FREE, SP_MI_HUGE_SIZE, SP_MI_HUGETLB,
	SP_MI_PAGE_TABLES, SP_MI_KERNEL_STACK, SP_MI_VMALLOC_USED,
	SP_MI_N
};
struct sp_meminfo {
	uint64_t v[SP_MI_N]; /* bytes (HugePages_* are page counts) */
	uint64_t have;       /* bit i set: v[i] was read */
	enum sp_why why;     /* the file as a whole */
};
static inline bool sp_mi_has(const struct sp_meminfo *m, enum sp_mi k) { return (m->have >> k) & 1; }

/* ---- /proc/buddyinfo: contiguous free memory (probe/pool.h) ----------- */
struct sp_contig {
	uint64_t free_2mib;  /* bytes free in blocks of 2 MiB or more */
	uint64_t largest;    /* bytes of the largest free block */
	uint64_t free_total; /* bytes free in blocks of every order */
	int largest_order;   /* -1: no free block at all */
	enum sp_why why;
};

/* ---- PSI ---------------------------------------------------------------- */
enum sp_psi_res { SP_PSI_MEMORY, SP_PSI_CPU, SP_PSI_IO, SP_PSI_N };
struct sp_psi_line {
	double avg10, avg60, avg300; /* percent */
	uint64_t total_us;           /* cumulative stall */
	bool ok;
};
struct sp_psi {
	struct sp_psi_line some, full;
	enum sp_why why;
};
const char *sp_psi_res_name(enum sp_psi_res r); /* "memory" */

/* ---- cgroup --------------------------------------------------------------- */
struct sp_cgroup {
	int version;            /* 0 none found, 1, 2 */
	char path[256];         /* the caller's cgroup, as in /proc/self/cgroup */
	struct sp_u64 limit;    /* the tightest limit on the way up; why=MISSING when unlimited */
	struct sp_u64 usage;    /* memory.current / memory.usage_in_bytes */
	struct sp_u64 file;     /* page cache charged to the cgroup (memory.stat file/cache) */
	struct sp_u64 oom_kill; /* memory.events oom_kill (v2), oom_kill in memory.oom_control (v1) */
	struct sp_u64 oom;      /* memory.events oom (v2) */
	struct sp_u64 failcnt;  /* memory.failcnt (v1) */
	struct sp_u64 swap_max; /* memory.swap.max (v2) */
};

/* ---- thermal zones and hwmon --------------------------------------------- */
#define SP_MAX_ZONES 32
#define SP_MAX_HWMON 96
struct sp_zone {
	int index;      /* thermal_zoneN */
	char type[32];
	struct sp_i64 temp_mc;
};
enum sp_hw_kind { SP_HW_TEMP, SP_HW_POWER, SP_HW_ENERGY };
struct sp_hwchan {
	int hwmon;        /* hwmonN */
	int chan;         /* tempN / powerN / energyN */
	enum sp_hw_kind kind;
	char chip[32];    /* the hwmon `name` */
	char label[32];   /* powerN_label, or "" */
	struct sp_i64 value; /* milli-degC, micro-watts, micro-joules */
	struct sp_i64 cap;   /* powerN_cap (uW) */
	struct sp_i64 max;   /* powerN_max or powerN_cap_max (uW) */
};

/* ---- GPU (NVML) -------------------------------------------------------------- */
#define SP_MAX_GPUS 8
/* clocks event reason bits (NVML) */
#define SP_REASON_GPU_IDLE 0x1ULL
#define SP_REASON_APP_CLOCKS 0x2ULL
#define SP_REASON_SW_POWER_CAP 0x4ULL
#define SP_REASON_HW_SLOWDOWN 0x8ULL
#define SP_REASON_SYNC_BOOST 0x10ULL
#define SP_REASON_SW_THERMAL 0x20ULL
#define SP_REASON_HW_THERMAL 0x40ULL
#define SP_REASON_HW_POWER_BRAKE 0x80ULL
#define SP_REASON_DISPLAY_CLOCK 0x100ULL
#define SP_REASON_KNOWN_MASK 0x1FFULL
/* snake_case name of bit i (0..8), NULL past the known ones */
const char *sp_reason_name(int bit);

struct sp_gpu {
	unsigned index;
	char name[96];
	char uuid[96];
	struct sp_u64 temp_c;
	struct sp_u64 power_mw;
	struct sp_u64 power_limit_mw;  /* enforced limit; N/A on GB10 */
	struct sp_u64 sm_clock_mhz;
	struct sp_u64 sm_clock_max_mhz;
	struct sp_u64 util_gpu_pct;
	struct sp_u64 util_mem_pct;
	struct sp_u64 reasons;         /* clocks event reason bitmask */
	struct sp_u64 viol_power_ns;   /* cumulative power-capping time */
	struct sp_u64 viol_thermal_ns; /* cumulative thermal slowdown time */
	struct sp_u64 energy_mj;
	struct sp_u64 mem_total, mem_free, mem_used; /* NOT_SUPPORTED on GB10 */
	bool integrated;               /* shares the system pool (UMA) */
};

/* ---- processes ------------------------------------------------------------------ */
#define SP_MAX_PROCS 64
enum sp_proc_kind { SP_PROC_SERVER, SP_PROC_TRAINER, SP_PROC_GPU, SP_PROC_OTHER };
const char *sp_proc_kind_name(enum sp_proc_kind k); /* "inference_server" ... */
/* the container, pod or systemd unit of a process (probe/container.h) */
enum sp_ct_runtime { SP_CT_NONE, SP_CT_DOCKER, SP_CT_PODMAN, SP_CT_CONTAINERD, SP_CT_CRIO, SP_CT_KUBE };
struct sp_container {
	enum sp_ct_runtime runtime; /* SP_CT_NONE: on the host */
	char id[65];                /* 64 hex digits */
	char short_id[13];
	char pod_uid[37];           /* "" outside Kubernetes */
	char unit[64];              /* on the host: the innermost systemd unit ("ollama.service", "session-3.scope") */
	char cg_path[200];          /* the cgroup path (v2, or v1's memory controller) */
	int cg_version;             /* 0 unknown, 1, 2 */
	char name[64];              /* the container's hostname, else the short id */
	const char *name_src;       /* "hostname", "short_id" */
	char pod[64];
	enum sp_why pod_why;        /* SP_MISSING outside Kubernetes or not in the kubelet's folders */
	char ns[64];
	enum sp_why ns_why;
};
struct sp_proc {
	int pid;
	char name[32];    /* what it is: "vllm", "ollama", "torchrun", or comm */
	char comm[20];
	enum sp_proc_kind kind;
	uint64_t rss_bytes;
	struct sp_u64 gpu_mem;  /* NVML per-process memory */
	double cap_frac;        /* vLLM gpu_memory_utilization, SGLang mem_fraction_static */
	bool has_cap;
	bool cap_default;       /* the cap is the server's default, not given on its command line */
	char cap_flag[40];      /* where the cap came from */
	char cmdline[160];      /* the start of its command line, for people */
	struct sp_container ct;
};

/* ---- containers: what each one holds (probe/container.h) -------------------------- */
#define SP_MAX_CONTAINERS 16
struct sp_ctmem {
	struct sp_container ct;  /* as its first listed process has it */
	int nprocs;              /* its listed processes */
	uint64_t rss_bytes;      /* their resident memory */
	struct sp_u64 gpu_mem;   /* their GPU memory (NVML); OK when any of them has a reading */
	struct sp_u64 current;   /* memory.current / memory.usage_in_bytes */
	struct sp_u64 peak;      /* memory.peak / memory.max_usage_in_bytes */
	struct sp_u64 limit;     /* memory.max / memory.limit_in_bytes; why MISSING with unlimited */
	bool unlimited;
	struct sp_u64 file;      /* page cache charged to it (memory.stat file / cache) */
};

/* ---- budget ------------------------------------------------------------------- */
struct sp_budget {
	uint64_t reserve;
	struct sp_u64 now;         /* MemFree - reserve (or the cgroup's headroom, if tighter) */
	struct sp_u64 reclaimable; /* what a page cache flush would give back */
	struct sp_u64 after_flush; /* now + reclaimable */
	bool cgroup_bound;         /* the cgroup limit is tighter than the machine */
};

struct sp_sample {
	double mono;      /* CLOCK_MONOTONIC seconds */
	double wall;      /* Unix time, seconds */
	struct sp_meminfo mem;
	struct sp_contig contig; /* read with SP_READ_MEM */
	struct sp_cgroup cg;
	struct sp_psi psi[SP_PSI_N];
	int nzones;
	struct sp_zone zones[SP_MAX_ZONES];
	int nhw;
	struct sp_hwchan hw[SP_MAX_HWMON];
	enum sp_why gpu_status;  /* SP_OK, SP_NO_DRIVER, SP_NO_GPU, SP_TIMEOUT ... */
	char gpu_detail[128];    /* e.g. the library error */
	int ngpu;
	struct sp_gpu gpus[SP_MAX_GPUS];
	/* the driver as NVML names it (nvmlSystemGetDriverVersion: "580.95.05")
	 * and the CUDA version it supports (nvmlSystemGetCudaDriverVersion:
	 * 13000 is 13.0); each valid when its why is SP_OK */
	char gpu_driver[32];
	enum sp_why gpu_driver_why;
	int cuda_driver;
	enum sp_why cuda_driver_why;
	int nprocs;
	int procs_seen;          /* processes scanned */
	struct sp_proc procs[SP_MAX_PROCS];
	int ncontainers;         /* distinct containers among procs[] (at most SP_MAX_CONTAINERS) */
	int containers_dropped;  /* more than that: their processes are not in containers[] */
	struct sp_ctmem containers[SP_MAX_CONTAINERS];
	struct sp_budget budget;
	unsigned warnings;        /* implausible readings rejected + unknown reason bits, this sample */
	uint64_t warnings_total;  /* the same, summed over every sample this process read */
};

/* What to read; the default reads everything. */
enum {
	SP_READ_MEM = 1 << 0,
	SP_READ_CGROUP = 1 << 1,
	SP_READ_PSI = 1 << 2,
	SP_READ_THERMAL = 1 << 3,
	SP_READ_HWMON = 1 << 4,
	SP_READ_GPU = 1 << 5,
	SP_READ_PROCS = 1 << 6,
	SP_READ_ALL = 0x7f,
};
struct sp_read_opts {
	unsigned what;      /* SP_READ_* */
	uint64_t reserve;   /* bytes kept back for the OS and driver */
	uint64_t proc_min_rss; /* unrecognised processes above this are listed too */
	double gpu_timeout_s;  /* longest wait for the GPU thread (see probe.h) */
	double proc_scan_min_s; /* the process view's shortest scan period (procs.c) */
	double proc_scan_cost_x; /* ...and its period: this many times the last scan's CPU time */
	const char *kmsg_path;  /* metrics, serve: the kernel log whose NVIDIA lines are counted (kmsg.h) */
};
#define SP_DEFAULT_RESERVE (4ULL << 30)
#define SP_DEFAULT_PROC_MIN_RSS (2ULL << 30)
#define SP_DEFAULT_GPU_TIMEOUT 2.0 /* seconds: status answers within this plus the file reads */
/* The process view's scans come no sooner than this apart: 5 s for the
 * monitors (watch, run, serve, metrics), which run all day beside the jobs;
 * top, which a person watches, sets SP_TOP_PROC_SCAN_MIN_S. */
#define SP_DEFAULT_PROC_SCAN_MIN_S 5.0
#define SP_TOP_PROC_SCAN_MIN_S 2.0
/* Between those floors and 60 s, a scan's period is this many times the CPU
 * time the last one took: the monitors' scans cost at most 0.01% of a core
 * (0.1 ms a second: a 1-Hz sample's budget is 0.5 ms), top's 0.05% (a
 * person is watching, a new process should show soon). */
#define SP_DEFAULT_PROC_SCAN_COST_X 10000.0
#define SP_TOP_PROC_SCAN_COST_X 2000.0
void sp_read_opts_init(struct sp_read_opts *o);
/* The GPU wait of a loop that samples every interval_s seconds: half the
 * interval, never more than gpu_timeout_s, so a slow or hung driver cannot
 * stretch the samples' spacing (run, watch: min(2 s, interval / 2)). */
double sp_gpu_timeout_for_interval(double gpu_timeout_s, double interval_s);

/* Fill *s from the machine (through the roots of util/paths.h). The GPU is
 * read concurrently by the GPU thread and waited for at most o->gpu_timeout_s
 * from the start of the sample; the other sources never wait for it. */
void sp_sample_read(struct sp_sample *s, const struct sp_read_opts *o);
/* Derive the budget from mem and cg (pure). */
void sp_budget_compute(struct sp_budget *b, const struct sp_meminfo *m,
		       const struct sp_cgroup *cg, uint64_t reserve);
/* true when the GPUs share the system memory pool (GB10 and other UMA parts) */
bool sp_sample_is_uma(const struct sp_sample *s);
/* The GPU's state in this sample, as a user means it: gpu_status, or, when
 * the driver answered but every reading of GPU 0 failed the same way (the
 * device fell off the bus: each query answers GPU_IS_LOST), that reason. */
enum sp_why sp_sample_gpu_state(const struct sp_sample *s);
/* The memory a server's cap fraction (vLLM --gpu-memory-utilization, SGLang
 * --mem-fraction-static) is of: the GPU's own (NVML mem_total) on a discrete
 * GPU, the pool's MemTotal on UMA or without a GPU reading; 0 when unknown.
 * *what (may be NULL) names it: "GPU memory" or "pool". */
double sp_cap_base_bytes(const struct sp_sample *s, const char **what);

/* Count implausible readings and unknown clocks-event-reason bits (pure). */
unsigned sp_sample_count_warnings(const struct sp_sample *s);

/* Helpers used by the views. */
const struct sp_hwchan *sp_hw_find(const struct sp_sample *s, const char *chip,
				   enum sp_hw_kind kind, const char *label);
#endif
