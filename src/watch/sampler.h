/* SPDX-License-Identifier: MIT */
/* The run/watch log file and the events derived from consecutive samples.
 * The file is written with write(2) row by row (nothing buffered in user
 * space: a row is in the page cache the moment it happens) and fsync'd at a
 * bounded interval, so the log survives the machine wedging. A failing log
 * never stops the caller: it says why, counts what was lost, and retries. */
#ifndef SP_SAMPLER_H
#define SP_SAMPLER_H
#include "probe/sample.h"
#include "watch/logrow.h"
#include "util/fileio.h"

#include <stdbool.h>

#define SP_DEFAULT_FSYNC_S 60.0

struct sp_csvlog {
	int fd;               /* -1: no log (out.fd, for readers) */
	char path[1024];
	double fsync_s, last_fsync; /* seconds (monotonic) */
	bool urgent;          /* set by the caller: the machine is near its end, fsync every row */
	long urgent_synced;   /* rows fsync'd at once because of it */
	bool partial;         /* the last write was cut: start the next row on a new line */
	int err;              /* errno of the last failure, 0 when writing works */
	long rows, lost;
	char msg[1400];       /* why the open failed, naming the path ("" none) */
	struct sp_out out;    /* the one door (util/fileio.h): a FIFO, device or '-' never blocks */
};
/* Create (truncate) the log and write the header. 0 or -errno (l->fd = -1,
 * l->msg says why). Opened through the one door (sp_out_open): no symbolic
 * link at the end (-ELOOP), none planted by another user on the way, no
 * block device, no hard link to another user's file; a FIFO without a
 * reader is -ENXIO at once; a FIFO, device or '-' whose reader stalls costs
 * rows (sp_csvlog_dropped), never a wait. */
int sp_csvlog_open(struct sp_csvlog *l, const char *path, double fsync_s, double now);
/* The default log, sparkops-YYYYmmdd-HHMMSS.csv in the working folder,
 * created with O_EXCL: when the name is taken (two runs started in the same
 * second) the next free one of -2.csv, -3.csv... Its name is in l->path. */
int sp_csvlog_open_new(struct sp_csvlog *l, double fsync_s, double now);
/* Before anything starts: -1 and a message when --log names a symbolic link,
 * or --log and --summary name the same file (a usage error); else 0. */
int sp_csvlog_check(const char *log, const char *summary, char *msg, size_t n);
/* Append one row; fsync when fsync_s has passed, or at once while
 * l->urgent (the caller's pressure: the row may be the last one the disk
 * ever sees). 0, or -errno on failure
 * (l->err set; the first failure after a success is the one to report). */
int sp_csvlog_write(struct sp_csvlog *l, const struct sp_logrow *r, double now);
void sp_csvlog_close(struct sp_csvlog *l);
/* Rows a stalled reader cost (a FIFO, device or '-'); final after close. */
long sp_csvlog_dropped(const struct sp_csvlog *l);

/* Events between consecutive samples: a clocks event reason turning on/off,
 * a memory-heavy process appearing, the GPU becoming (un)available. */
#define SP_EV_MAX_PIDS SP_MAX_PROCS
struct sp_evstate {
	bool have_prev;
	bool reasons_ok;
	uint64_t reasons;
	enum sp_why gpu_status;
	int npids;
	int pids[SP_EV_MAX_PIDS];
};
void sp_evstate_init(struct sp_evstate *e);
/* Fill up to max event rows for sample s; pids in skip[0..nskip) (the job's
 * own processes) never count as competing. Sets *appeared when a
 * memory-heavy process appeared. procs_fresh: s->procs was read this time
 * (the process scan runs less often than the sample at short intervals).
 * Returns the number of rows. */
int sp_events_diff(struct sp_evstate *e, const struct sp_sample *s, bool procs_fresh, const int *skip, int nskip,
		   struct sp_logrow *rows, int max, bool *appeared);
#endif
