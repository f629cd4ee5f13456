// SPDX-License-Identifier: MIT
/* The page-cache flush. See flush.h. */
#include "probe/flush.h"
#include "probe/probe.h"
#include "probe/sysctl.h"
#include "util/fileio.h"
#include "util/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static uint64_t cache_of(const struct sp_meminfo *m)
{
	return m->v[SP_MI_BUFFERS] + m->v[SP_MI_CACHED];
}

int sp_flush_page_cache(struct sp_flush_result *r)
{
	memset(r, 0, sizeof *r);
	if (sp_drop_caches_path(r->path, sizeof r->path) < 0)
		return -ENAMETOOLONG;
	/* open first: no permission means no action at all (not even the sync) */
	int fd = sp_procsys_open_write("sys/vm/drop_caches");
	if (fd < 0)
		return fd;
	sp_meminfo_read(&r->before);
	if (r->before.why != SP_OK) {
		close(fd);
		return -EIO;
	}
	sync(); /* dirty pages cannot be dropped: write them out first */
	int err = 0;
	if (sp_write_full(fd, "3\n", 2) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (err)
		return err;
	sp_meminfo_read(&r->after);
	if (r->after.why != SP_OK)
		return -EIO;
	r->cache_before = cache_of(&r->before);
	r->cache_after = cache_of(&r->after);
	r->freed_bytes = r->cache_before > r->cache_after ? r->cache_before - r->cache_after : 0;
	r->mem_free_gain = (int64_t)r->after.v[SP_MI_FREE] - (int64_t)r->before.v[SP_MI_FREE];
	return 0;
}
