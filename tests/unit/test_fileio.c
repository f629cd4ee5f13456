// SPDX-License-Identifier: MIT
/* util/fileio: sp_write_output (regular files replaced atomically, FIFOs and
 * devices written in place, symlinks of other users refused), sp_open_proc
 * (non-blocking, regular files only), sp_same_file; the default log name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "qemu_skip.h"

#include "util/fileio.h"
#include "watch/sampler.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/test_fileio.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void at(char *out, const char *name)
{
	snprintf(out, PATH_MAX, "%s/%s", dir, name);
}

static void slurp(const char *path, char *buf, size_t cap)
{
	size_t len;
	assert_int_equal(sp_read_file(path, buf, cap, &len), 0);
}

static void regular_new_and_existing(void **state)
{
	(void)state;
	char p[PATH_MAX], buf[64], msg[256];
	at(p, "new.txt");
	assert_int_equal(sp_write_output(p, "one", 3, 0640, msg, sizeof msg), 0);
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	slurp(p, buf, sizeof buf);
	assert_string_equal(buf, "one");
	/* an existing file keeps its mode (set-id bits dropped), gets a new inode */
	assert_int_equal(chmod(p, 04600), 0);
	ino_t ino = st.st_ino;
	assert_int_equal(sp_write_output(p, "two", 3, 0644, msg, sizeof msg), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_true(st.st_ino != ino);
	slurp(p, buf, sizeof buf);
	assert_string_equal(buf, "two");
}

static void temp_name_taken(void **state)
{
	(void)state;
	char p[PATH_MAX], t[PATH_MAX + 32], buf[64];
	at(p, "taken.txt");
	/* a file (or a link) already at the first temp name is not touched */
	snprintf(t, sizeof t, "%s.tmp.%ld", p, (long)getpid());
	assert_int_equal(symlink("/nonexistent/victim", t), 0);
	assert_int_equal(sp_write_atomic(p, "ok", 2, 0644), 0);
	slurp(p, buf, sizeof buf);
	assert_string_equal(buf, "ok");
	struct stat st;
	assert_int_equal(lstat(t, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
}

static void fifo_in_place(void **state)
{
	(void)state;
	char p[PATH_MAX], msg[256];
	at(p, "fifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	/* no reader: at once, not a hang */
	assert_int_equal(sp_write_output(p, "x", 1, 0644, msg, sizeof msg), -ENXIO);
	assert_non_null(strstr(msg, "no reader"));
	int rd = open(p, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	assert_int_equal(sp_write_output(p, "hello", 5, 0644, msg, sizeof msg), 0);
	char buf[16] = "";
	assert_int_equal(read(rd, buf, sizeof buf), 5);
	close(rd);
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
}

static void links(void **state)
{
	(void)state;
	char target[PATH_MAX], link[PATH_MAX], buf[64], msg[512];
	at(target, "target.txt");
	at(link, "link.txt");
	assert_int_equal(sp_write_output(target, "old", 3, 0644, msg, sizeof msg), 0);
	assert_int_equal(symlink("target.txt", link), 0);
	/* our own link: followed, the link kept */
	assert_int_equal(sp_write_output(link, "new", 3, 0644, msg, sizeof msg), 0);
	slurp(target, buf, sizeof buf);
	assert_string_equal(buf, "new");
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	if (geteuid() != 0)
		return;
	/* another user's link: refused, the owner named */
	assert_int_equal(lchown(link, 65534, 65534), 0);
	assert_int_equal(sp_write_output(link, "evil", 4, 0644, msg, sizeof msg), -EPERM);
	assert_non_null(strstr(msg, "symbolic link owned by"));
	assert_non_null(strstr(msg, "65534"));
	slurp(target, buf, sizeof buf);
	assert_string_equal(buf, "new");
}

static void stdout_dash(void **state)
{
	(void)state;
	SKIP_UNDER_QEMU(QEMU_SELFFD);
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		_exit(sp_write_output("-", "a", 1, 0644, NULL, 0) == 0 && sp_write_output("/dev/stdout", "b", 1, 0644, NULL, 0) == 0
			      ? 0 : 1);
	}
	close(pfd[1]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char buf[8] = "";
	assert_int_equal(read(pfd[0], buf, sizeof buf), 2);
	assert_memory_equal(buf, "ab", 2);
	close(pfd[0]);
}

/* devices (/dev/null, /dev/full) are covered by tests/cli/test_safe_io.sh,
 * on nodes made in a private mount namespace: the real /dev is never written */

static void folder_refused(void **state)
{
	(void)state;
	char msg[256];
	assert_int_equal(sp_write_output(dir, "x", 1, 0644, msg, sizeof msg), -EISDIR);
}

static void proc_reads(void **state)
{
	(void)state;
	char p[PATH_MAX], buf[64];
	int64_t v;
	at(p, "value");
	assert_int_equal(sp_write_atomic(p, "42\n", 3, 0644), 0);
	assert_int_equal(sp_read_i64(p, &v), 0);
	assert_int_equal(v, 42);
	at(p, "pfifo");
	assert_int_equal(mkfifo(p, 0600), 0);
	/* a FIFO with no writer: refused at once, not read as 0 */
	assert_int_equal(sp_read_i64(p, &v), -EINVAL);
	assert_int_equal(sp_read_line(p, buf, sizeof buf), -EINVAL);
	assert_int_equal(sp_open_proc(p, O_WRONLY), -ENXIO);
	assert_int_equal(sp_read_file(dir, buf, sizeof buf, NULL), -EINVAL);
}

static void same_file(void **state)
{
	(void)state;
	char a[PATH_MAX], b[PATH_MAX], c[PATH_MAX];
	at(a, "log.csv");
	snprintf(b, sizeof b, "%s/./log.csv", dir);
	at(c, "other.csv");
	assert_true(sp_same_file(a, a));
	assert_true(sp_same_file(a, b)); /* neither exists yet */
	assert_false(sp_same_file(a, c));
	assert_int_equal(sp_write_atomic(a, "x", 1, 0644), 0);
	assert_int_equal(link(a, c), 0);
	assert_true(sp_same_file(a, c)); /* a hard link */
	assert_false(sp_same_file(a, NULL));
}

static void default_log_unique(void **state)
{
	(void)state;
	char old[PATH_MAX];
	assert_non_null(getcwd(old, sizeof old));
	assert_int_equal(chdir(dir), 0);
	struct sp_csvlog l[3];
	for (int i = 0; i < 3; i++)
		assert_int_equal(sp_csvlog_open_new(&l[i], 60, 0), 0);
	assert_string_not_equal(l[0].path, l[1].path);
	assert_string_not_equal(l[1].path, l[2].path);
	assert_string_not_equal(l[0].path, l[2].path);
	for (int i = 0; i < 3; i++)
		sp_csvlog_close(&l[i]);
	/* --log: a symlink is not followed */
	assert_int_equal(symlink("victim.csv", "planted.csv"), 0);
	struct sp_csvlog s;
	assert_int_equal(sp_csvlog_open(&s, "planted.csv", 60, 0), -ELOOP);
	assert_int_equal(access("victim.csv", F_OK), -1);
	char msg[256];
	assert_int_equal(sp_csvlog_check("planted.csv", NULL, msg, sizeof msg), -1);
	assert_int_equal(sp_csvlog_check("a.csv", "./a.csv", msg, sizeof msg), -1);
	assert_int_equal(sp_csvlog_check("a.csv", "b.json", msg, sizeof msg), 0);
	assert_int_equal(chdir(old), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(regular_new_and_existing), cmocka_unit_test(temp_name_taken),
		cmocka_unit_test(fifo_in_place),            cmocka_unit_test(links),
		cmocka_unit_test(stdout_dash),
		cmocka_unit_test(folder_refused),           cmocka_unit_test(proc_reads),
		cmocka_unit_test(same_file),                cmocka_unit_test(default_log_unique),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
