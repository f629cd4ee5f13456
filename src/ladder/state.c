// SPDX-License-Identifier: MIT
/* One job's ladder state (ladder.h "per-job state"): the text format, the
 * job's name, the state folder and its lock, and the read-modify-write of
 * one job's file from the ladder's load to its save. */
#include "ladder/ladder.h"
#include "util/fileio.h"
#include "util/paths.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- state ------------------------------------------------------------------ */

void sp_ladder_state_init(struct sp_ladder_state *st)
{
	memset(st, 0, sizeof *st);
}

int sp_ladder_state_parse(const char *buf, size_t len, const char *job, struct sp_ladder_state *st)
{
	sp_ladder_state_init(st);
	bool version = false, named = false;
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[256];
		if (ll >= sizeof line)
			return -1;
		memcpy(line, p, ll);
		line[ll] = 0;
		p += ll + (nl ? 1 : 0);
		if (memchr(line, 0, ll))
			return -1;
		if (ll == 0 || line[0] == '#')
			continue;
		char *sp = strchr(line, ' ');
		if (!sp)
			return -1;
		*sp = 0;
		const char *key = line, *val = sp + 1;
		if (strcmp(key, "version") == 0) {
			if (strcmp(val, "1") != 0 && strcmp(val, "2") != 0)
				return -1;
			version = true;
		} else if (strcmp(key, "job") == 0) {
			if (strcmp(val, job) != 0)
				return -1;
			named = true;
		} else if (strcmp(key, "tried") == 0) {
			if (strcmp(val, "none") == 0)
				continue;
			for (const char *q = val; *q;) {
				if (*q < '1' || *q > '4')
					return -1;
				st->tried |= 1u << (*q - '0');
				q++;
				if (*q == ',')
					q++;
				else if (*q)
					return -1;
			}
		} else if (strcmp(key, "proposed") == 0) {
			int64_t v;
			if (sp_parse_i64(val, &v) < 0 || v < 0 || v > SP_RUNGS)
				return -1;
			st->proposed = (int)v;
		} else if (strcmp(key, "log_hash") == 0 || strcmp(key, "log_sig") == 0) {
			/* log_sig: version 1's FNV-1a of the log, which no log is hashed
			 * with any more: checked, then forgotten (0: no log known) */
			if (strlen(val) != 16)
				return -1;
			uint64_t v = 0;
			for (const char *q = val; *q; q++) {
				if (!isxdigit((unsigned char)*q))
					return -1;
				v = v << 4 | (uint64_t)(isdigit((unsigned char)*q) ? *q - '0' : (tolower((unsigned char)*q) - 'a' + 10));
			}
			st->log_sig = strcmp(key, "log_hash") == 0 ? v : 0;
		} else if (strcmp(key, "updated") == 0) {
			if (sp_parse_i64(val, &st->updated) < 0)
				return -1;
		} else {
			return -1;
		}
	}
	return version && named ? 0 : -1;
}

size_t sp_ladder_state_format(const struct sp_ladder_state *st, const char *job, char *buf, size_t cap)
{
	char tried[16] = "";
	size_t o = 0;
	for (int r = 1; r <= SP_RUNGS; r++)
		if (st->tried >> r & 1)
			o += (size_t)snprintf(tried + o, sizeof tried - o, "%s%d", o ? "," : "", r);
	int n = snprintf(buf, cap,
			 "# sparkops ladder state: the OOM ladder's rungs tried for one job\n"
			 "# ('sparkops ladder --job NAME --reset' forgets it)\n"
			 "version 2\njob %s\ntried %s\nproposed %d\nlog_hash %016llx\nupdated %lld\n",
			 job, o ? tried : "none", st->proposed, (unsigned long long)st->log_sig, (long long)st->updated);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static bool job_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-' || c == '@' || c == '+';
}

bool sp_ladder_job_valid(const char *job)
{
	size_t n = strlen(job);
	if (n == 0 || n > 100 || job[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!job_char(job[i]))
			return false;
	return true;
}

void sp_ladder_job_from_path(const char *abs, char *job, size_t n)
{
	char tmp[4096];
	size_t o = 0;
	while (*abs == '/')
		abs++;
	for (const char *p = abs; *p && o + 1 < sizeof tmp; p++)
		tmp[o++] = job_char(*p) ? *p : '_';
	tmp[o] = 0;
	if (o == 0)
		snprintf(tmp, sizeof tmp, "root");
	if (tmp[0] == '.')
		tmp[0] = '_';
	if (strlen(tmp) <= 100) {
		snprintf(job, n, "%s", tmp);
		return;
	}
	uint64_t h = 0xcbf29ce484222325ULL;
	for (const char *p = abs; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	const char *tail = tmp + strlen(tmp) - 80;
	snprintf(job, n, "%016llx-%s", (unsigned long long)h, tail);
}

int sp_ladder_state_dir(char *out, size_t n)
{
	const char *x = getenv("XDG_STATE_HOME");
	const char *root = sp_run_root();
	int w;
	if (root) {
		w = snprintf(out, n, "%s/state", root);
	} else if (x && x[0] == '/') {
		w = snprintf(out, n, "%s/sparkops", x);
	} else {
		const char *home = getenv("HOME");
		if (!home || home[0] != '/')
			return -1;
		w = snprintf(out, n, "%s/.local/state/sparkops", home);
	}
	return w > 0 && (size_t)w < n ? 0 : -1;
}

static int mkdirs(const char *dir)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp)
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int sp_ladder_state_lock(const char *dir, const char *file, char *msg, size_t n)
{
	char who[160];
	int e = mkdirs(dir);
	if (e < 0)
		return snprintf(msg, n, "'%s': %s", dir, strerror(-e)), e;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		if (e == -ELOOP || e == -ENOTDIR)
			snprintf(msg, n, "'%s' is not a folder (a symbolic link?): not using it for the ladder state", dir);
		else
			snprintf(msg, n, "'%s': %s", dir, strerror(-e));
		return e;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		e = -errno;
		close(fd);
		return snprintf(msg, n, "'%s': %s", dir, strerror(-e)), e;
	}
	if (st.st_uid != geteuid()) {
		sp_owner_name(st.st_uid, who, sizeof who);
		snprintf(msg, n, "'%s' belongs to %s, not to you: not using it for the ladder state", dir, who);
		close(fd);
		return -EPERM;
	}
	if (st.st_mode & 022) {
		snprintf(msg, n, "'%s' is writable by %s (mode %04o): not using it for the ladder state", dir,
			 st.st_mode & 002 ? "everyone" : "its group", (unsigned)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	/* serialize the read-modify-write of concurrent ladders */
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			e = -errno;
			close(fd);
			return snprintf(msg, n, "'%s': cannot lock: %s", dir, strerror(-e)), e;
		}
	}
	if (fstatat(fd, file, &st, AT_SYMLINK_NOFOLLOW) == 0 && (!S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
		if (S_ISREG(st.st_mode)) {
			sp_owner_name(st.st_uid, who, sizeof who);
			snprintf(msg, n, "'%s/%s' belongs to %s, not to you: not using it", dir, file, who);
		} else {
			snprintf(msg, n, "'%s/%s' is not a regular file: not using it", dir, file);
		}
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* ---- one job's state, from load to save --------------------------------------------- */

static void job_load(struct sp_ladder_job *j)
{
	sp_ladder_state_init(&j->st);
	if (!j->have_path)
		return;
	char buf[4096];
	size_t len;
	int trunc = 0;
	int r = sp_read_file_t(j->path, buf, sizeof buf, &len, &trunc);
	if (r == -ENOENT)
		return;
	if (r < 0) {
		snprintf(j->warn, sizeof j->warn, "'%s': %s: starting this job's ladder over", j->path, strerror(-r));
		return;
	}
	if (trunc || sp_ladder_state_parse(buf, len, j->job, &j->st) < 0) {
		snprintf(j->warn, sizeof j->warn, "'%s': not a ladder state file (corrupt?): starting this job's ladder over",
			 j->path);
		sp_ladder_state_init(&j->st);
	}
}

void sp_ladder_job_open(struct sp_ladder_job *j, const char *job, const char *log, bool reset)
{
	memset(j, 0, sizeof *j);
	j->lock_fd = -1;
	if (job) {
		snprintf(j->job, sizeof j->job, "%s", job);
	} else {
		/* the log's real path, else the working directory */
		char abs[PATH_MAX];
		if ((log && strcmp(log, "-") != 0 && realpath(log, abs)) || getcwd(abs, sizeof abs))
			sp_ladder_job_from_path(abs, j->job, sizeof j->job);
		else
			snprintf(j->job, sizeof j->job, "default");
	}
	sp_ladder_state_init(&j->st);
	if (sp_ladder_state_dir(j->dir, sizeof j->dir) < 0) {
		snprintf(j->warn, sizeof j->warn, "neither XDG_STATE_HOME nor HOME is set: the rungs tried are not remembered");
		return;
	}
	int n = snprintf(j->path, sizeof j->path, "%s/ladder-%s.state", j->dir, j->job);
	j->have_path = n > 0 && (size_t)n < sizeof j->path;
	if (!j->have_path)
		return;
	char msg[PATH_MAX + 300];
	j->lock_fd = sp_ladder_state_lock(j->dir, strrchr(j->path, '/') + 1, msg, sizeof msg);
	if (j->lock_fd < 0) {
		snprintf(j->warn, sizeof j->warn, "%s: the rungs tried are not remembered", msg);
		j->have_path = false;
		return;
	}
	if (!reset)
		job_load(j);
}

int sp_ladder_job_save(struct sp_ladder_job *j)
{
	j->warn[0] = 0;
	if (!j->have_path)
		return 0;
	j->st.updated = (int64_t)time(NULL);
	char buf[1024];
	size_t len = sp_ladder_state_format(&j->st, j->job, buf, sizeof buf);
	int r = len ? sp_write_atomic(j->path, buf, len, 0600) : -EOVERFLOW;
	if (r < 0)
		snprintf(j->warn, sizeof j->warn, "'%s': cannot save the ladder state: %s", j->path, strerror(-r));
	close(j->lock_fd); /* the end of the read-modify-write */
	j->lock_fd = -1;
	return r < 0 ? r : 0;
}
