// SPDX-License-Identifier: MIT
/* The running job's status file (watch/jobstat.c), which top reads from
 * every user's folder: sp_jobstat_parse. What parses must format and parse
 * back to the same job, and a numbered text cut anywhere before its end line
 * must be refused as a write in progress, never taken for a whole one. */
#include "fuzz.h"
#include "watch/jobstat.h"

#include <errno.h>
#include <math.h>

static int same_num(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b || fabs(a - b) <= 1e-5 * fabs(a) + 1e-3; /* %.6g */
}

static void one(char *buf, size_t size)
{
	struct sp_jobstat j, back;
	int r = sp_jobstat_parse(buf, size, &j);
	if (r != 0 && r != -1 && r != -EAGAIN)
		abort();
	if (r == 0) {
		if (j.pid < 1)
			abort();
		static char text[4096];
		j.seq = 1;
		int n = sp_jobstat_format(&j, text, sizeof text);
		if (n > 0) {
			if (sp_jobstat_parse(text, (size_t)n, &back) != 0 || back.pid != j.pid || back.seq != 1 ||
			    strcmp(back.mode, j.mode) != 0 || strcmp(back.log, j.log) != 0 ||
			    !same_num(back.rate, j.rate) || back.samples != j.samples)
				abort();
			/* cut before its end line: a write in progress */
			const char *end = strstr(text, "\nend=");
			if (!end)
				abort();
			size_t cut = size % (size_t)(end - text + 1);
			if (sp_jobstat_parse(text, cut, &back) == 0)
				abort();
		}
	}
}
FUZZ_ON_COPY(one)
