// SPDX-License-Identifier: MIT
/* Small reads of <procfs>/sys. See sysctl.h. */
#include "probe/sysctl.h"
#include "util/fileio.h"
#include "util/paths.h"

#include <errno.h>

int sp_drop_caches_path(char *out, size_t n)
{
	return sp_proc_path(out, n, "sys/vm/drop_caches");
}

int sp_hostname_read(char *buf, size_t n)
{
	char path[600];
	if (sp_proc_path(path, sizeof path, "sys/kernel/hostname") < 0)
		return -ENAMETOOLONG;
	return sp_read_line(path, buf, n);
}
