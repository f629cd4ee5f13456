// SPDX-License-Identifier: MIT
/* Pressure stall information: /proc/pressure/{memory,cpu,io}. */
#include "probe/kept.h"
#include "probe/probe.h"
#include "util/fileio.h"
#include "util/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* each resource's file under /proc (joined, not formatted, every sample);
 * its name is what follows "pressure/" */
static const char *const res_files[SP_PSI_N] = { "pressure/memory", "pressure/cpu", "pressure/io" };
#define RES_DIR_LEN (sizeof "pressure/" - 1)

const char *sp_psi_res_name(enum sp_psi_res r)
{
	return (unsigned)r < SP_PSI_N ? res_files[r] + RES_DIR_LEN : "?";
}

static int field(const char *p, const char *end, const char *key, const char **val)
{
	size_t kl = strlen(key);
	for (const char *q = p; q + kl < end; q++) {
		if ((q == p || q[-1] == ' ') && memcmp(q, key, kl) == 0 && q[kl] == '=') {
			*val = q + kl + 1;
			return 0;
		}
	}
	return -1;
}

static int parse_avg(const char *v, const char *end, double *out)
{
	char tmp[32];
	size_t n = 0;
	while (v + n < end && v[n] != ' ' && n < sizeof tmp - 1) {
		tmp[n] = v[n];
		n++;
	}
	tmp[n] = 0;
	if (n == 0)
		return -1;
	char *e;
	errno = 0;
	double d = strtod(tmp, &e);
	if (errno || *e || !isfinite(d) || d < 0 || d > 100.0 + 1e-9)
		return -1;
	*out = d;
	return 0;
}

static int parse_total(const char *v, const char *end, uint64_t *out)
{
	char tmp[32];
	size_t n = 0;
	while (v + n < end && v[n] != ' ' && v[n] != '\r' && n < sizeof tmp - 1) {
		tmp[n] = v[n];
		n++;
	}
	tmp[n] = 0;
	return sp_parse_u64(tmp, out);
}

static int parse_line(const char *p, const char *end, struct sp_psi_line *l)
{
	const char *v;
	memset(l, 0, sizeof *l);
	if (field(p, end, "avg10", &v) || parse_avg(v, end, &l->avg10))
		return -1;
	if (field(p, end, "avg60", &v) || parse_avg(v, end, &l->avg60))
		return -1;
	if (field(p, end, "avg300", &v) || parse_avg(v, end, &l->avg300))
		return -1;
	if (field(p, end, "total", &v) || parse_total(v, end, &l->total_us))
		return -1;
	l->ok = true;
	return 0;
}

int sp_psi_parse(const char *buf, size_t len, struct sp_psi *p)
{
	memset(p, 0, sizeof *p);
	const char *s = buf, *end = buf + len;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;
		if (le - s > 5 && memcmp(s, "some ", 5) == 0)
			parse_line(s + 5, le, &p->some);
		else if (le - s > 5 && memcmp(s, "full ", 5) == 0)
			parse_line(s + 5, le, &p->full);
		s = nl ? nl + 1 : end;
	}
	p->why = p->some.ok ? SP_OK : SP_MALFORMED;
	return p->some.ok ? 0 : -1;
}

void sp_psi_read(struct sp_psi p[SP_PSI_N])
{
	for (int i = 0; i < SP_PSI_N; i++) {
		char path[600], buf[512];
		size_t len;
		sp_proc_file(path, sizeof path, res_files[i]);
		int r = sp_kept_read(path, buf, sizeof buf, &len);
		if (r < 0) {
			memset(&p[i], 0, sizeof p[i]);
			/* EOPNOTSUPP: the kernel has PSI compiled in but disabled (psi=0) */
			p[i].why = r == -EOPNOTSUPP ? SP_NOT_SUPPORTED : sp_why_from_errno(r);
			continue;
		}
		sp_psi_parse(buf, len, &p[i]);
	}
}

int sp_psi_trigger_open(enum sp_psi_res res, const char *trig, size_t len)
{
	char path[600];
	if ((unsigned)res >= SP_PSI_N || sp_proc_file(path, sizeof path, res_files[res]) < 0)
		return -1;
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, trig, len) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}
