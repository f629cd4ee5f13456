// SPDX-License-Identifier: MIT
/* sparkops evict [PATH...] [--any-owner] [--json] — drop the page cache of
 * given files without root (posix_fadvise DONTNEED, measured with mincore);
 * as root with no path, the full flush + compaction; as root with --shm
 * NAME..., the orphaned /dev/shm files named removed. */
#include "cmd/cli.h"
#include "probe/evict.h"
#include "probe/flush.h"
#include "probe/pool.h"
#include "probe/sysctl.h"
#include "util/clock.h"
#include "util/json.h"
#include "util/msg.h"
#include "util/opt.h"
#include "util/units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct sp_cmdspec spec = {
	.name = "evict",
	.usage = "usage: sparkops evict [--any-owner] [--json] [PATH...]\n"
		 "       sparkops evict --shm [--json] NAME...\n"
		 "\n"
		 "Drops the page cache of the files under each PATH (a model folder, the Hugging\n"
		 "Face cache), without root: posix_fadvise(POSIX_FADV_DONTNEED) on each regular\n"
		 "file you own, resident pages measured before and after (mincore). Folders are\n"
		 "walked without following symlinks; FIFOs, devices and other users' files are\n"
		 "skipped and counted. Pages still mapped by a process stay. As root with no PATH:\n"
		 "the whole page cache (sync, 3 > /proc/sys/vm/drop_caches) and a compaction\n"
		 "(1 > /proc/sys/vm/compact_memory).\n"
		 "\n"
		 "With --shm (root): removes each /dev/shm file NAME that no process maps or holds\n"
		 "open (every process's /proc/PID/maps and fd read; if one cannot be read, refused:\n"
		 "cannot tell who holds it). Only a regular file directly in /dev/shm (beside the\n"
		 "--procfs tree's proc for a fixture tree); a symlink or a NAME with '/' is refused.\n"
		 "Says what each held (size, resident). 'sparkops status' lists the orphans.\n"
		 "\n",
	.tail = "exit: 0 evicted (or flushed; --shm: every NAME removed), 1 --shm: a NAME refused\n"
		"      (held, a symlink, missing, cannot tell...; the others still removed),\n"
		"      2 usage error or a PATH that cannot be read, 4 nothing of yours to evict\n"
		"      (not root; --shm: not root), 5 output failed\n",
};

static int flush_all(bool json)
{
	struct sp_contig c0, c1;
	sp_buddyinfo_read(&c0);
	double t0 = sp_mono_now();
	struct sp_flush_result fr;
	int e = sp_flush_page_cache(&fr);
	if (e < 0) {
		sp_error("'%s': %s", fr.path, sp_procsys_strerror(e));
		if (e == -EXDEV)
			return SP_EXIT_USAGE;
		return e == -EACCES || e == -EPERM || e == -EROFS ? SP_EXIT_NOPERM : SP_EXIT_TROUBLE;
	}
	double t1 = sp_mono_now();
	int ce = sp_compact_memory();
	double t2 = sp_mono_now();
	sp_buddyinfo_read(&c1);
	char a[32], b[32], d[32], f[32];
	if (json) {
		json_t *o = json_object();
		json_object_set_new(o, "mode", json_string("flush"));
		json_object_set_new(o, "page_cache_freed_bytes", json_integer((json_int_t)fr.freed_bytes));
		json_object_set_new(o, "mem_free_before_bytes", json_integer((json_int_t)fr.before.v[SP_MI_FREE]));
		json_object_set_new(o, "mem_free_after_bytes", json_integer((json_int_t)fr.after.v[SP_MI_FREE]));
		json_object_set_new(o, "compacted", json_boolean(ce == 0));
		json_object_set_new(o, "compact_error", ce ? json_string(ce == -ENOENT ? "missing" : sp_procsys_strerror(ce)) : json_null());
		json_object_set_new(o, "free_2mib_before_bytes", c0.why == SP_OK ? json_integer((json_int_t)c0.free_2mib) : json_null());
		json_object_set_new(o, "free_2mib_after_bytes", c1.why == SP_OK ? json_integer((json_int_t)c1.free_2mib) : json_null());
		json_object_set_new(o, "flush_ms", json_integer((json_int_t)((t1 - t0) * 1000)));
		json_object_set_new(o, "compact_ms", json_integer((json_int_t)((t2 - t1) * 1000)));
		int jr = sp_json_print(stdout, o);
		json_decref(o);
		return jr < 0 ? SP_EXIT_IO : 0;
	}
	printf("flushed the page cache: %s freed, MemFree %s -> %s (%.0f ms)\n",
	       sp_fmt_gib(a, sizeof a, (double)fr.freed_bytes), sp_fmt_gib(b, sizeof b, (double)fr.before.v[SP_MI_FREE]),
	       sp_fmt_gib(d, sizeof d, (double)fr.after.v[SP_MI_FREE]), (t1 - t0) * 1000);
	if (ce == -ENOENT)
		printf("no compaction: this kernel has no /proc/sys/vm/compact_memory (flush only)\n");
	else if (ce < 0)
		printf("no compaction: %s\n", strerror(-ce));
	else if (c0.why == SP_OK && c1.why == SP_OK)
		printf("compacted: free in 2 MiB blocks %s -> %s (%.0f ms)\n", sp_fmt_gib(f, sizeof f, (double)c0.free_2mib),
		       sp_fmt_gib(a, sizeof a, (double)c1.free_2mib), (t2 - t1) * 1000);
	else
		printf("compacted (%.0f ms)\n", (t2 - t1) * 1000);
	return 0;
}

/* --shm NAME...: the orphaned /dev/shm files removed */
static int remove_shm(int argc, char **argv, int i, bool json)
{
	int rc = 0;
	uint64_t size = 0, resident = 0;
	int removed = 0;
	json_t *o = json ? json_object() : NULL, *ra = json ? json_array() : NULL, *fa = json ? json_array() : NULL;
	char a[32], b[32];
	for (; i < argc; i++) {
		struct sp_shm_removal r;
		sp_shm_remove(argv[i], &r);
		if (r.r == SP_SHM_REMOVED) {
			removed++;
			size += r.size;
			resident += r.resident;
			if (json) {
				json_t *f = json_object();
				json_object_set_new(f, "name", sp_json_text(argv[i]));
				json_object_set_new(f, "size_bytes", json_integer((json_int_t)r.size));
				json_object_set_new(f, "resident_bytes", json_integer((json_int_t)r.resident));
				json_object_set_new(f, "uid", json_integer(r.uid));
				json_array_append_new(ra, f);
			} else {
				printf("removed /dev/shm/%s: %s, %s resident\n", argv[i], sp_fmt_bytes(a, sizeof a, (double)r.size),
				       sp_fmt_bytes(b, sizeof b, (double)r.resident));
			}
			continue;
		}
		rc = 1;
		char why[160];
		if (r.r == SP_SHM_HELD)
			snprintf(why, sizeof why, "%s (pid %d)", sp_shm_refusal_text(r.r), r.holder);
		else if (r.err && (r.r == SP_SHM_NO_FOLDER || r.r == SP_SHM_UNLINK_FAILED))
			snprintf(why, sizeof why, "%s: %s", sp_shm_refusal_text(r.r), strerror(r.err));
		else
			snprintf(why, sizeof why, "%s", sp_shm_refusal_text(r.r));
		sp_error("not removed: '%s': %s", argv[i], why);
		if (json) {
			json_t *f = json_object();
			json_object_set_new(f, "name", sp_json_text(argv[i]));
			json_object_set_new(f, "reason", json_string(sp_shm_refusal_key(r.r)));
			json_object_set_new(f, "reason_text", sp_json_text(why));
			json_object_set_new(f, "holder_pid", r.r == SP_SHM_HELD ? json_integer(r.holder) : json_null());
			json_array_append_new(fa, f);
		}
	}
	if (json) {
		json_object_set_new(o, "mode", json_string("shm"));
		json_object_set_new(o, "removed", ra);
		json_object_set_new(o, "refused", fa);
		json_object_set_new(o, "removed_size_bytes", json_integer((json_int_t)size));
		json_object_set_new(o, "removed_resident_bytes", json_integer((json_int_t)resident));
		if (sp_json_print(stdout, o) < 0)
			rc = SP_EXIT_IO;
		json_decref(o);
	} else if (removed > 1) {
		printf("removed %d files: %s, %s resident\n", removed, sp_fmt_bytes(a, sizeof a, (double)size),
		       sp_fmt_bytes(b, sizeof b, (double)resident));
	} else if (!removed) {
		printf("nothing removed\n");
	}
	return rc;
}

int cmd_evict(int argc, char **argv)
{
	bool json = false, any = false, shm = false;
	const struct sp_option opts[] = {
		SP_OPT_GROUP("options:"),
		SP_OPT_FLAG(0, "any-owner", &any, "also other users' files (needs read access to them)"),
		SP_OPT_FLAG(0, "json", &json, "one JSON object"),
		SP_OPT_FLAG(0, "shm", &shm, "as root: remove the /dev/shm files NAME... no process maps or holds open"),
		SP_OPT_TEXT("PATH...", "files or folders (walked, symlinks not followed); with --shm, /dev/shm file names"),
		SP_OPT_END(),
	};
	int i = sp_opt_parse(&spec, opts, argc, argv);
	if (i < 0)
		return 0;
	if (shm) {
		if (any)
			sp_usage_error("evict", "--shm and --any-owner do not go together");
		if (i >= argc)
			sp_usage_error("evict", "--shm needs the names of the /dev/shm files to remove "
						"('sparkops status' lists those no process maps)");
		if (geteuid() != 0) {
			sp_error("--shm: removing /dev/shm files needs root");
			return SP_EXIT_NOPERM;
		}
		return remove_shm(argc, argv, i, json);
	}
	if (i >= argc) {
		if (geteuid() == 0)
			return flush_all(json);
		sp_error("nothing to evict: name the files or folders (a model folder, ~/.cache/huggingface); "
			 "with no PATH, evict flushes the whole page cache, which needs root");
		return SP_EXIT_NOPERM;
	}
	struct sp_evict *e = malloc(sizeof *e);
	if (!e)
		sp_die(SP_EXIT_IO, "out of memory");
	sp_evict_init(e, any);
	int rc = 0;
	for (; i < argc; i++) {
		int r = sp_evict_path(e, argv[i]);
		if (r < 0) {
			sp_error("'%s': %s", argv[i], strerror(-r));
			rc = SP_EXIT_USAGE;
		}
	}
	double freed = (double)e->resident_before - (double)e->resident_after;
	if (freed < 0)
		freed = 0;
	/* no file measurable: the figures are unknown, not 0 (nor mincore's "all resident") */
	bool none_known = e->files > 0 && e->unknown_files == e->files;
	bool skipped_known = !(e->not_owned > 0 && e->not_owned_unknown == e->not_owned);
	if (json) {
		json_t *o = json_object();
		json_object_set_new(o, "mode", json_string("fadvise"));
		json_object_set_new(o, "files", json_integer(e->files));
		json_object_set_new(o, "bytes", json_integer((json_int_t)e->bytes));
		json_object_set_new(o, "resident_before_bytes",
				    none_known ? json_null() : json_integer((json_int_t)e->resident_before));
		json_object_set_new(o, "resident_after_bytes",
				    none_known ? json_null() : json_integer((json_int_t)e->resident_after));
		json_object_set_new(o, "evicted_bytes", none_known ? json_null() : json_integer((json_int_t)freed));
		json_object_set_new(o, "residency_unknown_files", json_integer(e->unknown_files));
		json_object_set_new(o, "residency_unknown_bytes", json_integer((json_int_t)e->unknown_bytes));
		json_t *sk = json_object();
		json_object_set_new(sk, "not_owned", json_integer(e->not_owned));
		json_object_set_new(sk, "not_regular", json_integer(e->not_regular));
		json_object_set_new(sk, "symlinks", json_integer(e->symlinks));
		json_object_set_new(sk, "errors", json_integer(e->errors));
		json_object_set_new(o, "skipped", sk);
		json_object_set_new(o, "not_owned_resident_bytes",
				    skipped_known ? json_integer((json_int_t)e->not_owned_resident) : json_null());
		json_object_set_new(o, "not_owned_residency_unknown", json_integer(e->not_owned_unknown));
		if (sp_json_print(stdout, o) < 0)
			rc = SP_EXIT_IO;
		json_decref(o);
	} else {
		char a[32], b[32], c[32];
		static const char unknown_why[] =
			"the kernel does not tell a user who may not write a file how much of it is cached (mincore "
			"says every page is); its owner or root can tell (fincore)";
		if (none_known)
			printf("evicted %ld file%s (%s): residency unknown: %s\n", e->files, e->files == 1 ? "" : "s",
			       sp_fmt_bytes(a, sizeof a, (double)e->bytes), unknown_why);
		else
			printf("evicted %ld file%s (%s): %s resident before, %s after\n", e->files, e->files == 1 ? "" : "s",
			       sp_fmt_bytes(a, sizeof a, (double)e->bytes), sp_fmt_bytes(b, sizeof b, (double)e->resident_before),
			       sp_fmt_bytes(c, sizeof c, (double)e->resident_after));
		if (e->unknown_files && !none_known)
			printf("  of them %ld file%s (%s) of unknown residency, not counted: %s\n", e->unknown_files,
			       e->unknown_files == 1 ? "" : "s", sp_fmt_bytes(a, sizeof a, (double)e->unknown_bytes), unknown_why);
		if (e->not_owned && !skipped_known)
			printf("skipped %ld file%s of other users (residency unknown: not yours to measure; --any-owner, or "
			       "root: sparkops evict)\n",
			       e->not_owned, e->not_owned == 1 ? "" : "s");
		else if (e->not_owned)
			printf("skipped %ld file%s of other users (%s cached%s; --any-owner, or root: sparkops evict)\n",
			       e->not_owned, e->not_owned == 1 ? "" : "s",
			       sp_fmt_bytes(a, sizeof a, (double)e->not_owned_resident),
			       e->not_owned_unknown ? ", some of unknown residency" : "");
		if (e->not_regular || e->symlinks)
			printf("skipped %ld not regular file%s, %ld symlink%s (not followed)\n", e->not_regular,
			       e->not_regular == 1 ? "" : "s", e->symlinks, e->symlinks == 1 ? "" : "s");
		if (e->errors)
			printf("%ld file%s could not be read (%s)\n", e->errors, e->errors == 1 ? "" : "s",
			       strerror(e->first_errno));
	}
	if (rc == 0 && e->files == 0 && geteuid() != 0) {
		sp_error("nothing evictable: none of these files is yours%s", e->not_owned ? " (--any-owner, or root)" : "");
		rc = SP_EXIT_NOPERM;
	}
	free(e);
	return rc;
}
