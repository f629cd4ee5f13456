// SPDX-License-Identifier: MIT
/* The GPU reader behind a deadline. Any NVML call can block for seconds or
 * forever (a wedged driver, an exhausted pool on GB10), so no caller ever
 * makes one: a persistent thread does every NVML call (dlopen and nvmlInit
 * included) and publishes what it found; the caller waits for it at most
 * until a deadline, and past it marks the GPU readings SP_TIMEOUT. Values
 * from an earlier pass are never shown as current: on a timeout only the
 * GPUs' identity (index, name, uuid, integrated) is kept, every reading says
 * "timeout".
 *
 * The thread is never waited for without a bound: a call that never returns
 * must not keep the process from exiting. nvmlShutdown and dlclose happen on
 * that thread, and only between passes (sp_nvml_release skips them while a
 * call is in flight, and joins the thread for at most a second otherwise). One sampling thread calls this API; the state below that
 * is only the caller's lives in gpu_caller. An answer that cannot change
 * before sp_nvml_release (no NVML library, or one whose load or nvmlInit
 * failed: the loader never retries) is kept by the caller and the thread is
 * not woken for it again: one hand-off, not one per sample, on a box without
 * a driver. */
#include "probe/nvml_internal.h"
#include "probe/probe.h"
#include "util/clock.h"
#include "util/text.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define GPU_THREAD_STACK (1u << 20)
#define RELEASE_WAIT_S 1.0

static pthread_once_t once = PTHREAD_ONCE_INIT;

/* shared with the GPU thread, under gpu_shared.mu */
static pthread_t gpu_tid;
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started;         /* the thread runs */
	int quit;            /* asked to unload and exit (only while idle) */
	int exited;          /* it did */
	uint64_t req, done;  /* passes asked for / finished */
	double busy_since;   /* when pass `req` was asked for, while req != done */
	struct sp_gpu_snap pub; /* the result of pass `done` */
} gpu_shared = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* the GPU thread's own buffer; nobody else touches it */
static struct sp_gpu_snap work;

/* the caller's side */
static struct {
	uint64_t want;       /* the pass the next poll waits for */
	int fresh;           /* that pass was asked for by the last async call */
	int start_failed;
	int sticky;          /* `got` stands for every pass to come (no driver):
			      * the thread is not woken for it again */
	struct sp_gpu_snap got; /* the copy taken out from under the lock */
	int nident;          /* identity of the GPUs from the last answer */
	struct sp_gpu ident[SP_MAX_GPUS];
	char lib[128];
} gpu_caller;

static void init_once(void)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&gpu_shared.cv, &a);
	pthread_condattr_destroy(&a);
}

static void wait_until(double deadline)
{
	struct timespec ts;
	ts.tv_sec = (time_t)deadline;
	ts.tv_nsec = (long)((deadline - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	if (ts.tv_nsec < 0)
		ts.tv_nsec = 0;
	pthread_cond_timedwait(&gpu_shared.cv, &gpu_shared.mu, &ts);
}

static void *gpu_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&gpu_shared.mu);
	for (;;) {
		while (!gpu_shared.quit && gpu_shared.done == gpu_shared.req)
			pthread_cond_wait(&gpu_shared.cv, &gpu_shared.mu);
		if (gpu_shared.quit)
			break;
		uint64_t gen = gpu_shared.req;
		pthread_mutex_unlock(&gpu_shared.mu);
		sp_nvml_collect(&work);
		pthread_mutex_lock(&gpu_shared.mu);
		gpu_shared.pub = work;
		gpu_shared.done = gen;
		pthread_cond_broadcast(&gpu_shared.cv);
	}
	pthread_mutex_unlock(&gpu_shared.mu);
	sp_nvml_unload();
	pthread_mutex_lock(&gpu_shared.mu);
	gpu_shared.exited = 1;
	pthread_cond_broadcast(&gpu_shared.cv);
	pthread_mutex_unlock(&gpu_shared.mu);
	return NULL;
}

/* Start the thread once. Signals stay with the caller's threads: the GPU
 * thread blocks them all, so handlers (SIGINT, SIGCHLD...) run elsewhere. */
static int ensure_thread(void)
{
	pthread_once(&once, init_once);
	if (gpu_shared.started)
		return 0;
	pthread_attr_t attr;
	if (pthread_attr_init(&attr) != 0)
		return -EAGAIN;
	/* small: the whole stack is locked once mlockall(MCL_FUTURE) is on */
	pthread_attr_setstacksize(&attr, GPU_THREAD_STACK);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&gpu_tid, &attr, gpu_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r != 0)
		return -r;
	gpu_shared.started = 1;
	return 0;
}

int sp_gpu_read_async(void)
{
	if (gpu_caller.sticky)
		return 0; /* the thread would only repeat its last answer */
	if (ensure_thread() < 0) {
		gpu_caller.start_failed = 1;
		return -EAGAIN;
	}
	gpu_caller.start_failed = 0;
	int rc;
	pthread_mutex_lock(&gpu_shared.mu);
	if (gpu_shared.done == gpu_shared.req) {
		gpu_shared.req++;
		gpu_shared.busy_since = sp_mono_now();
		gpu_caller.fresh = 1;
		rc = 0;
	} else {
		/* still in a pass asked for earlier: do not queue behind it */
		gpu_caller.fresh = 0;
		rc = 1;
	}
	gpu_caller.want = gpu_shared.req;
	pthread_mutex_unlock(&gpu_shared.mu);
	/* woken after the unlock: a thread woken under the lock would wake
	 * only to sleep again on it (two switches a sample, not one) */
	if (rc == 0)
		pthread_cond_broadcast(&gpu_shared.cv);
	return rc;
}

void sp_gpu_mark(struct sp_gpu *g, enum sp_why why)
{
	struct sp_u64 *all[] = { &g->temp_c, &g->power_mw, &g->power_limit_mw, &g->sm_clock_mhz,
				 &g->sm_clock_max_mhz, &g->util_gpu_pct, &g->util_mem_pct, &g->reasons,
				 &g->viol_power_ns, &g->viol_thermal_ns, &g->energy_mj, &g->mem_total,
				 &g->mem_free, &g->mem_used };
	for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
		all[k]->v = 0;
		all[k]->why = why;
	}
}

/* what is known about the GPUs without asking the driver again: who they
 * are, every reading marked timeout */
static void keep_ident(const struct sp_gpu_snap *snap)
{
	gpu_caller.nident = snap->ngpu;
	for (int i = 0; i < snap->ngpu; i++) {
		gpu_caller.ident[i] = snap->gpus[i];
		sp_gpu_mark(&gpu_caller.ident[i], SP_TIMEOUT);
	}
	if (snap->lib[0])
		snprintf(gpu_caller.lib, sizeof gpu_caller.lib, "%s", snap->lib);
}

static void merge(struct sp_sample *s, const struct sp_gpu_snap *snap)
{
	s->gpu_status = snap->status;
	snprintf(s->gpu_detail, sizeof s->gpu_detail, "%s", snap->detail);
	sp_text_clean(s->gpu_detail);
	s->ngpu = snap->ngpu;
	memcpy(s->gpus, snap->gpus, (size_t)snap->ngpu * sizeof s->gpus[0]);
	snprintf(s->gpu_driver, sizeof s->gpu_driver, "%s", snap->driver);
	s->gpu_driver_why = snap->driver_why;
	s->cuda_driver = snap->cuda;
	s->cuda_driver_why = snap->cuda_why;
	for (int i = 0; i < snap->nprocs; i++) {
		struct sp_proc *p = sp_proc_ensure(s, snap->procs[i].pid);
		if (!p)
			continue;
		p->gpu_mem.v = (p->gpu_mem.why == SP_OK ? p->gpu_mem.v : 0) + snap->procs[i].bytes;
		p->gpu_mem.why = SP_OK;
	}
	keep_ident(snap);
}

int sp_gpu_poll(struct sp_sample *s, double deadline)
{
	if (gpu_caller.start_failed) {
		s->gpu_status = SP_DRIVER_ERROR;
		s->gpu_driver_why = s->cuda_driver_why = SP_DRIVER_ERROR;
		s->ngpu = 0;
		snprintf(s->gpu_detail, sizeof s->gpu_detail, "could not start the GPU reader thread");
		return -EAGAIN;
	}
	if (gpu_caller.want == 0) {
		s->gpu_status = SP_MISSING;
		s->ngpu = 0;
		snprintf(s->gpu_detail, sizeof s->gpu_detail, "the GPU was not asked");
		return -EINVAL;
	}
	if (gpu_caller.sticky) {
		merge(s, &gpu_caller.got);
		return 0;
	}
	pthread_mutex_lock(&gpu_shared.mu);
	if (gpu_caller.fresh)
		while (gpu_shared.done < gpu_caller.want && sp_mono_now() < deadline)
			wait_until(deadline);
	double since = gpu_shared.busy_since;
	if (gpu_shared.done >= gpu_caller.want) {
		gpu_caller.got = gpu_shared.pub;
		pthread_mutex_unlock(&gpu_shared.mu);
		gpu_caller.sticky = gpu_caller.got.sticky;
		/* A pass an earlier sample asked for, which ended after that
		 * sample's deadline (between this sample's request and now), holds
		 * readings from before this sample: they are not shown as current.
		 * Its identity of the GPUs is kept, and an answer that cannot change
		 * (sticky: no driver) is no reading and stands. */
		if (gpu_caller.fresh || gpu_caller.sticky) {
			merge(s, &gpu_caller.got);
			return 0;
		}
		keep_ident(&gpu_caller.got);
		snprintf(s->gpu_detail, sizeof s->gpu_detail, "a pass asked %.1f s ago answered after its deadline",
			 sp_mono_now() - since);
	} else {
		pthread_mutex_unlock(&gpu_shared.mu);
		const char *call = atomic_load_explicit(&sp_nvml_in_call, memory_order_relaxed);
		snprintf(s->gpu_detail, sizeof s->gpu_detail, "still in %s after %.1f s", call ? call : "a pass",
			 sp_mono_now() - since);
	}
	s->gpu_status = SP_TIMEOUT;
	s->gpu_driver_why = s->cuda_driver_why = SP_TIMEOUT;
	s->ngpu = gpu_caller.nident;
	memcpy(s->gpus, gpu_caller.ident, (size_t)gpu_caller.nident * sizeof s->gpus[0]);
	return -ETIMEDOUT;
}

int sp_gpu_busy(void)
{
	if (!gpu_shared.started)
		return 0;
	pthread_mutex_lock(&gpu_shared.mu);
	int busy = gpu_shared.done != gpu_shared.req;
	pthread_mutex_unlock(&gpu_shared.mu);
	return busy;
}

uint64_t sp_gpu_passes(void)
{
	if (!gpu_shared.started)
		return 0;
	pthread_mutex_lock(&gpu_shared.mu);
	uint64_t n = gpu_shared.done;
	pthread_mutex_unlock(&gpu_shared.mu);
	return n;
}

int sp_nvml_release(void)
{
	if (!gpu_shared.started)
		return 0;
	pthread_mutex_lock(&gpu_shared.mu);
	if (gpu_shared.done != gpu_shared.req) {
		/* a call in flight: no nvmlShutdown under it, no dlclose, no join */
		pthread_mutex_unlock(&gpu_shared.mu);
		return 1;
	}
	gpu_shared.quit = 1;
	pthread_cond_broadcast(&gpu_shared.cv);
	pthread_mutex_unlock(&gpu_shared.mu);
	/* a bounded join: nvmlShutdown may hang too. The thread's own exit must
	 * be complete before ours (its thread-local state, e.g. dlerror's, is
	 * freed there), hence a join and not a flag. */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)RELEASE_WAIT_S;
	if (pthread_timedjoin_np(gpu_tid, NULL, &until) != 0)
		return 1;
	/* start afresh next time */
	gpu_shared.started = gpu_shared.quit = gpu_shared.exited = 0;
	gpu_shared.req = gpu_shared.done = 0;
	memset(&gpu_shared.pub, 0, sizeof gpu_shared.pub);
	memset(&gpu_caller, 0, sizeof gpu_caller);
	return 0;
}
