/* SPDX-License-Identifier: MIT */
/* Between nvml.c (the NVML calls) and gpuwatch.c (the thread that makes
 * them). Nothing else includes this: everyone else asks gpuwatch.c. */
#ifndef SP_NVML_INTERNAL_H
#define SP_NVML_INTERNAL_H
#include "probe/sample.h"

#include <stdatomic.h>

/* What one pass over NVML found: the GPU part of a sample, with per-process
 * GPU memory as a list (the caller attaches it to its process table). */
#define SP_SNAP_MAX_PROCS 64
struct sp_gpu_snap {
	enum sp_why status;
	char detail[128];
	char lib[128]; /* the library that answered */
	int sticky;    /* the answer stands until sp_nvml_release: no library, or
			* one that failed to load or init (never retried before) */
	int ngpu;
	struct sp_gpu gpus[SP_MAX_GPUS];
	char driver[32];          /* nvmlSystemGetDriverVersion */
	enum sp_why driver_why;
	int cuda;                 /* nvmlSystemGetCudaDriverVersion */
	enum sp_why cuda_why;
	int nprocs;
	struct {
		int pid;
		uint64_t bytes;
	} procs[SP_SNAP_MAX_PROCS];
};

/* The NVML entry point being called right now (NULL between calls); set by
 * nvml.c before each call, read by the waiting side to name a hung call. */
extern _Atomic(const char *) sp_nvml_in_call;

/* Every reading of g marked unavailable for the same reason. */
void sp_gpu_mark(struct sp_gpu *g, enum sp_why why);

/* One pass: load the library (first time), then read every GPU. Blocks as
 * long as the driver does. Only the GPU thread calls it. */
void sp_nvml_collect(struct sp_gpu_snap *snap);
/* nvmlShutdown + dlclose. Only the GPU thread calls it, between passes. */
void sp_nvml_unload(void);
#endif
