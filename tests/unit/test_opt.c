// SPDX-License-Identifier: MIT
/* The declarative option table (util/opt.h): each kind's value, bounds and
 * one-line error, unknown and missing values, the generated help. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/opt.h"

#include <stdlib.h>
#include <string.h>

/* the values are not the indexes: the table stores the value itself */
static const struct sp_word methods[] = {
	{ "full", 10, 0, NULL }, { "lora", 20, 0, NULL }, { "qlora", 30, 0, NULL },
	{ "q-lora", 30, SP_WORD_UNLISTED, NULL }, { NULL, 0, 0, NULL },
};

struct vals {
	bool json;
	int ckpt;
	uint64_t size, floor;
	double secs, pct;
	int n, method;
	long count;
	const char *log, *name;
	int cb_calls;
};

static const char *cb_even(void *t, const char *v)
{
	struct vals *x = t;
	x->cb_calls++;
	return atoi(v) % 2 ? "is not even" : NULL;
}

static struct vals V;
static const struct sp_option opts[] = {
	SP_OPT_GROUP("options:"),
	SP_OPT_TEXT("MODEL", "a model"),
	SP_OPT_FLAG('j', "json", &V.json, "json"),
	SP_OPT_SETINT("grad-ckpt", &V.ckpt, 1, "on"),
	SP_OPT_SETINT("no-grad-ckpt", &V.ckpt, 0, "off"),
	SP_OPT_SIZE("reserve", &V.size, "SIZE", "kept back"),
	SP_OPT_SIZE_POS("floor", &V.floor, "SIZE", "a floor"),
	SP_OPT_DURATION("interval", &V.secs, "S", 0.05, 0, 0, "every S"),
	SP_OPT_PERCENT("slowdown", &V.pct, "PCT", "a fall"),
	SP_OPT_INT("batch", &V.n, "N", 1, 4096, "micro-batch"),
	SP_OPT_LONG("count", &V.count, "N", 1, 1000000, "samples"),
	SP_OPT_ENUM("method", &V.method, "M", methods, "full | lora | qlora"),
	SP_OPT_PATH("log", &V.log, "FILE", "the log"),
	SP_OPT_STRING("name", &V.name, "S", "a name that is long enough to need\na second line"),
	SP_OPT_CALLBACK("even", &V, "N", cb_even, "an even number"),
	SP_OPT_END(),
};
static const struct sp_cmdspec spec = { .name = "test", .usage = "usage: test\n\n", .tail = "exit: 0\n" };

static char err[512];

static int parse(const char *a0, ...)
{
	char *argv[32];
	int argc = 0;
	argv[argc++] = (char *)"test";
	va_list ap;
	va_start(ap, a0);
	for (const char *a = a0; a && argc < 31; a = va_arg(ap, const char *))
		argv[argc++] = (char *)(uintptr_t)a;
	va_end(ap);
	argv[argc] = NULL;
	memset(&V, 0, sizeof V);
	V.ckpt = -1;
	err[0] = '\0';
	return sp_opt_parse_r(&spec, opts, argc, argv, err, sizeof err);
}

static void values(void **st)
{
	(void)st;
	assert_int_equal(parse("-j", "--grad-ckpt", "--reserve", "8GiB", "--floor=1M", "--interval", "0.5",
			       "--slowdown", "15%", "--batch", "8", "--count", "3", "--method", "qlora", "--log", "x.csv",
			       "--name", "", "--even", "4", "MODEL", NULL),
			 22);
	assert_true(V.json);
	assert_int_equal(V.ckpt, 1);
	assert_int_equal(V.size, 8ULL << 30);
	assert_int_equal(V.floor, 1ULL << 20);
	assert_true(V.secs == 0.5);
	assert_true(V.pct == 15);
	assert_int_equal(V.n, 8);
	assert_int_equal(V.count, 3);
	assert_int_equal(V.method, 30);
	assert_string_equal(V.log, "x.csv");
	assert_string_equal(V.name, "");
	assert_int_equal(V.cb_calls, 1);
	/* the last of two wins, as with getopt */
	assert_int_equal(parse("--grad-ckpt", "--no-grad-ckpt", NULL), 3);
	assert_int_equal(V.ckpt, 0);
}

static void errors(void **st)
{
	(void)st;
	assert_int_equal(parse("--bogus", NULL), -2);
	assert_string_equal(err, "unknown option '--bogus'");
	assert_int_equal(parse("--bogus=1", NULL), -2);
	assert_string_equal(err, "unknown option '--bogus'");
	assert_int_equal(parse("--json=1", NULL), -2);
	assert_string_equal(err, "option '--json' takes no value");
	assert_int_equal(parse("-x", NULL), -2);
	assert_string_equal(err, "unknown option '-x'");
	assert_int_equal(parse("--batch", NULL), -2);
	assert_string_equal(err, "option '--batch' needs a value");
	assert_int_equal(parse("--reserve", "lots", NULL), -2);
	assert_string_equal(err, "--reserve: 'lots' is not a size (e.g. 4GiB, 512M)");
	assert_int_equal(parse("--reserve", "10", NULL), -2);
	assert_string_equal(err, "--reserve: '10' is not a size: give a unit (e.g. 10GiB)");
	assert_true(parse("--reserve", "0", NULL) >= 0);
	assert_int_equal(parse("--floor", "0", NULL), -2);
	assert_string_equal(err, "--floor: '0' is not a size above 0 (e.g. 8GiB, 512M)");
	assert_int_equal(parse("--interval", "0.01", NULL), -2);
	assert_string_equal(err, "--interval: '0.01' is not a duration of at least 0.05s (e.g. 30, 1.5, 5m)");
	assert_int_equal(parse("--slowdown", "100", NULL), -2);
	assert_string_equal(err, "--slowdown: '100' is not a percentage between 0 and 100");
	assert_int_equal(parse("--batch", "0", NULL), -2);
	assert_string_equal(err, "--batch: '0' is not a whole number in 1..4096");
	assert_int_equal(parse("--batch", "8x", NULL), -2);
	assert_int_equal(parse("--count", "99999999999999999999", NULL), -2);
	assert_int_equal(parse("--method", "lroa", NULL), -2);
	assert_string_equal(err, "--method: 'lroa' is not full, lora or qlora");
	/* an alias, any case: the value itself */
	assert_true(parse("--method", "Q-LoRA", NULL) >= 0);
	assert_int_equal(V.method, 30);
	assert_int_equal(parse("--log", "", NULL), -2);
	assert_string_equal(err, "--log: '' is not a file name");
	assert_int_equal(parse("--even", "3", NULL), -2);
	assert_string_equal(err, "--even: '3' is not even");
	/* a prefix of a long name that could be two options is refused */
	assert_int_equal(parse("--n", "x", NULL), -2);
}

static void help(void **st)
{
	(void)st;
	assert_int_equal(parse("--help", NULL), -1);
	assert_int_equal(parse("-h", "--bogus", NULL), -1);
	assert_int_equal(parse("--sparkops-options", NULL), -3);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	sp_opt_help(&spec, opts, f);
	fclose(f);
	assert_non_null(strstr(buf, "usage: test\n\noptions:\n  MODEL                a model\n"));
	assert_non_null(strstr(buf, "  -j, --json           json\n"));
	assert_non_null(strstr(buf, "      --reserve SIZE   kept back\n"));
	assert_non_null(strstr(buf, "      --name S         a name that is long enough to need\n"
				    "                       a second line\n"));
	assert_non_null(strstr(buf, "      --procfs DIR     read /proc from DIR"));
	assert_null(strstr(buf, "sparkops-options"));
	assert_non_null(strstr(buf, "  -h, --help           this help\n\nexit: 0\n"));
	free(buf);
	f = open_memstream(&buf, &len);
	sp_opt_list(opts, f);
	fclose(f);
	assert_non_null(strstr(buf, "--json\n--grad-ckpt\n"));
	assert_non_null(strstr(buf, "--reserve SIZE\n"));
	assert_non_null(strstr(buf, "--procfs DIR\n--sysfs DIR\n--help\n"));
	assert_null(strstr(buf, "MODEL"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(values),
		cmocka_unit_test(errors),
		cmocka_unit_test(help),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
