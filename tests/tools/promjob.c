// SPDX-License-Identifier: MIT
/* Prints the job families of an exposition (sp_prom_job_append), as run/watch
 * will serve them, so the tests can lint them with promtool. Not part of sparkops. */
#include "out/prom.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	struct sp_prom w;
	struct sp_prom_job job = { .pid = 4242, .command = "python \"train\".py", .start_unix = 1.7e9,
				   .rate_ok = true, .rate = 2.5, .rate_unit = "it", .baseline_ok = true,
				   .baseline = 3.125, .cause_ok = true, .cause = SP_CAUSE_POWER_CAP,
				   .episodes = 2, .steps_ok = true, .steps = 1234 };
	if (argc > 1 && strcmp(argv[1], "early") == 0) /* nothing parsed yet */
		job.rate_ok = job.baseline_ok = job.cause_ok = job.steps_ok = false;
	sp_prom_init(&w, buf, sizeof buf);
	sp_prom_job_append(&w, &job);
	size_t n = sp_prom_end(&w);
	fwrite(buf, 1, n, stdout);
	return !sp_prom_fits(&w);
}
