// SPDX-License-Identifier: MIT
/* The systemd journal through sd-journal, loaded with dlopen (journal.h). */
#include "probe/journal.h"
#include "util/fileio.h"
#include "util/paths.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>

/* the subset of sd-journal this file calls, typed from the library's own header */
static struct {
	void *lib;
	__typeof__(sd_journal_open) *open;
	__typeof__(sd_journal_open_directory) *open_directory;
	__typeof__(sd_journal_open_files) *open_files;
	__typeof__(sd_journal_close) *close;
	__typeof__(sd_journal_add_match) *add_match;
	__typeof__(sd_journal_flush_matches) *flush_matches;
	__typeof__(sd_journal_seek_head) *seek_head;
	__typeof__(sd_journal_seek_tail) *seek_tail;
	__typeof__(sd_journal_next) *next;
	__typeof__(sd_journal_previous) *previous;
	__typeof__(sd_journal_get_realtime_usec) *get_realtime_usec;
	__typeof__(sd_journal_get_data) *get_data;
	__typeof__(sd_journal_query_unique) *query_unique;
	__typeof__(sd_journal_enumerate_unique) *enumerate_unique;
	__typeof__(sd_journal_set_data_threshold) *set_data_threshold;
	char err[200];
} sdj;

static pthread_once_t sdj_once = PTHREAD_ONCE_INIT;

#define SDJ_SYM(field, name) { (void **)&sdj.field, name }

static void sdj_load(void)
{
	sdj.lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!sdj.lib) {
		const char *e = dlerror();
		snprintf(sdj.err, sizeof sdj.err, "cannot load libsystemd.so.0 (%s)", e ? e : "not found");
		return;
	}
	const struct {
		void **slot;
		const char *name;
	} syms[] = {
		SDJ_SYM(open, "sd_journal_open"),
		SDJ_SYM(open_directory, "sd_journal_open_directory"),
		SDJ_SYM(open_files, "sd_journal_open_files"),
		SDJ_SYM(close, "sd_journal_close"),
		SDJ_SYM(add_match, "sd_journal_add_match"),
		SDJ_SYM(flush_matches, "sd_journal_flush_matches"),
		SDJ_SYM(seek_head, "sd_journal_seek_head"),
		SDJ_SYM(seek_tail, "sd_journal_seek_tail"),
		SDJ_SYM(next, "sd_journal_next"),
		SDJ_SYM(previous, "sd_journal_previous"),
		SDJ_SYM(get_realtime_usec, "sd_journal_get_realtime_usec"),
		SDJ_SYM(get_data, "sd_journal_get_data"),
		SDJ_SYM(query_unique, "sd_journal_query_unique"),
		SDJ_SYM(enumerate_unique, "sd_journal_enumerate_unique"),
		SDJ_SYM(set_data_threshold, "sd_journal_set_data_threshold"),
	};
	for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		*syms[i].slot = dlsym(sdj.lib, syms[i].name);
		if (!*syms[i].slot) {
			snprintf(sdj.err, sizeof sdj.err, "libsystemd.so.0 has no %s", syms[i].name);
			dlclose(sdj.lib);
			sdj.lib = NULL;
			return;
		}
	}
}

struct sp_journal {
	sd_journal *j;
};

static int fail(char *err, size_t n, int r, const char *what, const char *path)
{
	if (path)
		snprintf(err, n, "'%s': %s (%s)", path, what, strerror(r < 0 ? -r : r));
	else
		snprintf(err, n, "%s (%s)", what, strerror(r < 0 ? -r : r));
	return -1;
}

int sp_journal_open(struct sp_journal **out, const char *path, char *err, size_t errlen)
{
	*out = NULL;
	pthread_once(&sdj_once, sdj_load);
	if (!sdj.lib) {
		snprintf(err, errlen, "%s", sdj.err);
		return -1;
	}
	struct sp_journal *jj = calloc(1, sizeof *jj);
	if (!jj)
		return fail(err, errlen, -ENOMEM, "cannot open the journal", NULL);
	int r;
	if (!path) {
		r = sdj.open(&jj->j, SD_JOURNAL_LOCAL_ONLY);
		if (r < 0) {
			free(jj);
			return fail(err, errlen, r, "cannot open the local journal", NULL);
		}
	} else {
		struct stat st;
		if (stat(path, &st) < 0) {
			free(jj);
			return fail(err, errlen, -errno, "cannot read the journal", path);
		}
		if (S_ISDIR(st.st_mode)) {
			r = sdj.open_directory(&jj->j, path, 0);
		} else if (S_ISREG(st.st_mode)) {
			const char *files[] = { path, NULL };
			r = sdj.open_files(&jj->j, files, 0);
		} else {
			free(jj);
			snprintf(err, errlen, "'%s': not a journal file or folder", path);
			return -1;
		}
		if (r < 0) {
			free(jj);
			return fail(err, errlen, r, "cannot open the journal", path);
		}
	}
	/* a message longer than this is cut: the classifier reads the start of a line */
	sdj.set_data_threshold(jj->j, 4096);
	*out = jj;
	return 0;
}

void sp_journal_close(struct sp_journal *j)
{
	if (!j)
		return;
	if (j->j)
		sdj.close(j->j);
	free(j);
}

/* FIELD=value of the current entry: the value and its length, or NULL */
static const char *field(struct sp_journal *j, const char *name, size_t *len)
{
	const void *d;
	size_t l;
	if (sdj.get_data(j->j, name, &d, &l) < 0)
		return NULL;
	size_t nl = strlen(name);
	if (l <= nl || memcmp(d, name, nl) != 0 || ((const char *)d)[nl] != '=')
		return NULL;
	*len = l - nl - 1;
	return (const char *)d + nl + 1;
}

static bool is_boot_id(const char *s, size_t n)
{
	if (n != 32)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static int boot_span(struct sp_journal *j, const char *id, struct sp_jboot *b)
{
	char m[64];
	snprintf(m, sizeof m, "_BOOT_ID=%s", id);
	sdj.flush_matches(j->j);
	if (sdj.add_match(j->j, m, 0) < 0)
		return -1;
	uint64_t us;
	if (sdj.seek_head(j->j) < 0 || sdj.next(j->j) <= 0 || sdj.get_realtime_usec(j->j, &us) < 0)
		return -1;
	b->first = (double)us / 1e6;
	if (sdj.seek_tail(j->j) < 0 || sdj.previous(j->j) <= 0 || sdj.get_realtime_usec(j->j, &us) < 0)
		return -1;
	b->last = (double)us / 1e6;
	snprintf(b->id, sizeof b->id, "%s", id);
	return 0;
}

int sp_journal_boots(struct sp_journal *j, struct sp_jboot *out, int max, char *err, size_t errlen)
{
	int r = sdj.query_unique(j->j, "_BOOT_ID");
	if (r < 0)
		return fail(err, errlen, r, "cannot list the journal's boots", NULL);
	/* the ids first (enumerating is invalidated by seeking) */
	enum { MAXB = 4096 };
	char(*ids)[33] = calloc(MAXB, sizeof *ids);
	if (!ids)
		return fail(err, errlen, -ENOMEM, "cannot list the journal's boots", NULL);
	int nid = 0;
	const void *d;
	size_t l;
	while (nid < MAXB && sdj.enumerate_unique(j->j, &d, &l) > 0) {
		const char *v = (const char *)d;
		if (l > 9 && memcmp(v, "_BOOT_ID=", 9) == 0 && is_boot_id(v + 9, l - 9)) {
			memcpy(ids[nid], v + 9, 32);
			ids[nid][32] = 0;
			nid++;
		}
	}
	struct sp_jboot *all = calloc((size_t)(nid ? nid : 1), sizeof *all);
	if (!all) {
		free(ids);
		return fail(err, errlen, -ENOMEM, "cannot list the journal's boots", NULL);
	}
	int n = 0;
	for (int i = 0; i < nid; i++) {
		struct sp_jboot b;
		if (boot_span(j, ids[i], &b) < 0)
			continue;
		int k = n++;
		while (k > 0 && all[k - 1].first > b.first) {
			all[k] = all[k - 1];
			k--;
		}
		all[k] = b;
	}
	/* the newest max of them */
	int skip = n > max ? n - max : 0;
	for (int i = skip; i < n; i++)
		out[i - skip] = all[i];
	n -= skip;
	free(all);
	free(ids);
	sdj.flush_matches(j->j);
	return n;
}

int sp_journal_each(struct sp_journal *j, const char *boot_id, int (*fn)(void *ctx, const struct sp_jentry *e),
		    void *ctx, char *err, size_t errlen)
{
	char m[64];
	snprintf(m, sizeof m, "_BOOT_ID=%s", boot_id);
	sdj.flush_matches(j->j);
	int r = sdj.add_match(j->j, m, 0);
	if (r < 0)
		return fail(err, errlen, r, "cannot select the boot", NULL);
	r = sdj.seek_head(j->j);
	if (r < 0)
		return fail(err, errlen, r, "cannot read the journal", NULL);
	for (;;) {
		r = sdj.next(j->j);
		if (r < 0)
			return fail(err, errlen, r, "cannot read the journal", NULL);
		if (r == 0)
			break;
		struct sp_jentry e = { 0 };
		uint64_t us;
		if (sdj.get_realtime_usec(j->j, &us) < 0)
			continue;
		e.t = (double)us / 1e6;
		size_t l;
		const char *v = field(j, "MESSAGE", &l);
		if (!v)
			continue;
		/* the message's value is copied out before the next get_data reuses the buffer */
		char msgbuf[4096];
		if (l >= sizeof msgbuf)
			l = sizeof msgbuf - 1;
		memcpy(msgbuf, v, l);
		e.msg = msgbuf;
		e.msglen = l;
		v = field(j, "_TRANSPORT", &l);
		e.kernel = v && l == 6 && memcmp(v, "kernel", 6) == 0;
		v = field(j, "SYSLOG_IDENTIFIER", &l);
		if (!v)
			v = field(j, "_COMM", &l);
		if (v) {
			if (l >= sizeof e.ident)
				l = sizeof e.ident - 1;
			memcpy(e.ident, v, l);
			e.ident[l] = 0;
		}
		if (fn(ctx, &e))
			break;
	}
	return 0;
}

int sp_boot_id_current(char *out, size_t n)
{
	char path[4096], buf[64];
	if (sp_proc_path(path, sizeof path, "sys/kernel/random/boot_id") < 0)
		return -ENAMETOOLONG;
	int r = sp_read_line(path, buf, sizeof buf);
	if (r < 0)
		return r;
	size_t k = 0;
	for (const char *p = buf; *p && k + 1 < n; p++)
		if (*p != '-')
			out[k++] = (char)tolower((unsigned char)*p);
	out[k] = 0;
	return is_boot_id(out, k) ? 0 : -EINVAL;
}
