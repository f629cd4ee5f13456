// SPDX-License-Identifier: MIT
/* pstore records (pstore.h). */
#include "probe/pstore.h"
#include "util/dirscan.h"
#include "util/fileio.h"
#include "util/paths.h"
#include "util/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *find(const char *buf, size_t len, const char *needle)
{
	return memmem(buf, len, needle, strlen(needle));
}

/* the line holding p, copied into out */
static void line_at(const char *buf, size_t len, const char *p, char *out, size_t n)
{
	const char *s = p, *e = p;
	while (s > buf && s[-1] != '\n')
		s--;
	while (e < buf + len && *e != '\n')
		e++;
	size_t l = (size_t)(e - s);
	if (l >= n)
		l = n - 1;
	memcpy(out, s, l);
	out[l] = 0;
	sp_text_clean(out);
}

bool sp_pstore_parse(const char *buf, size_t len, char *line, size_t n, bool *oops)
{
	static const char *const panics[] = { "Kernel panic - not syncing", "Panic#", NULL };
	static const char *const oopses[] = { "Internal error: Oops", "Oops#", "Oops:", "BUG: unable to handle", NULL };
	*oops = false;
	line[0] = 0;
	for (int i = 0; panics[i]; i++) {
		const char *p = find(buf, len, panics[i]);
		if (p) {
			/* the panic's own line is better evidence than the record's header */
			const char *q = find(buf, len, "Kernel panic - not syncing");
			line_at(buf, len, q ? q : p, line, n);
			return true;
		}
	}
	for (int i = 0; oopses[i]; i++) {
		const char *p = find(buf, len, oopses[i]);
		if (p) {
			*oops = true;
			line_at(buf, len, p, line, n);
			return false;
		}
	}
	return false;
}

int sp_pstore_read(const char *dir, struct sp_pstore *p)
{
	memset(p, 0, sizeof *p);
	if (dir)
		snprintf(p->dir, sizeof p->dir, "%s", dir);
	else if (sp_sys_path(p->dir, sizeof p->dir, "fs/pstore") < 0)
		return -ENAMETOOLONG;
	struct sp_dir *d = malloc(sizeof *d);
	if (!d)
		return -ENOMEM;
	int r = sp_dir_open(d, p->dir);
	if (r < 0) {
		free(d);
		return r;
	}
	enum { CAP = 256 * 1024 };
	char *buf = malloc(CAP);
	if (!buf) {
		sp_dir_close(d);
		free(d);
		return -ENOMEM;
	}
	const char *name;
	while ((name = sp_dir_next(d))) {
		char path[512];
		if ((size_t)snprintf(path, sizeof path, "%s/%s", p->dir, name) >= sizeof path)
			continue;
		struct stat st;
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		p->records++;
		size_t len = 0;
		if (sp_read_file(path, buf, CAP, &len) < 0)
			continue;
		char line[256];
		bool oops;
		bool panic = sp_pstore_parse(buf, len, line, sizeof line, &oops);
		if ((panic && !p->panic) || (oops && !p->panic && !p->oops)) {
			p->panic = panic;
			p->oops = oops && !panic;
			p->time = (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
			snprintf(p->file, sizeof p->file, "%s", name);
			sp_text_clean(p->file);
			snprintf(p->line, sizeof p->line, "%s", line);
		}
	}
	free(buf);
	sp_dir_close(d);
	free(d);
	return 0;
}
