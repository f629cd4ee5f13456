// SPDX-License-Identifier: MIT
/* The declarative option table (opt.h): getopt_long, --help, validation. */
#include "util/opt.h"

#include "util/fileio.h"
#include "util/msg.h"
#include "util/paths.h"
#include "util/units.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPTS 96
#define CODE_BASE 1000 /* getopt_long's val for table entry i: CODE_BASE + i */

/* the roots the common options set; applied at once so that a later option's
 * check (none today) would see them */
static const char *root_procfs, *root_sysfs;

static const struct sp_option common_opts[] = {
	SP_OPT_PATH("procfs", &root_procfs, "DIR", "read /proc from DIR (or SPARKOPS_PROCFS)"),
	SP_OPT_PATH("sysfs", &root_sysfs, "DIR", "read /sys from DIR (or SPARKOPS_SYSFS)"),
	SP_OPT_FLAG('h', "help", NULL, "this help"),
	/* every option of the table, for the docs test and shell completion
	 * (git's --git-completion-helper) */
	{ .kind = SP_OPTK_FLAG, .long_name = "sparkops-options", .ival = 1, .flags = SP_OPTF_HIDDEN },
	SP_OPT_END(),
};

static bool takes_value(const struct sp_option *o)
{
	switch (o->kind) {
	case SP_OPTK_FLAG:
	case SP_OPTK_SETINT:
		return false;
	case SP_OPTK_CALLBACK:
		return !(o->flags & SP_OPTF_NOARG);
	default:
		return true;
	}
}

static bool is_option(const struct sp_option *o)
{
	return o->kind != SP_OPTK_GROUP && o->kind != SP_OPTK_TEXT && o->kind != SP_OPTK_END;
}

/* "1ms", "0.05s", "5m", "1h": a bound as a user would write it */
static const char *fmt_secs(char *b, size_t n, double s)
{
	if (s > 0 && s < 1)
		snprintf(b, n, "%gms", s * 1000);
	else if (s < 60 || fmod(s, 60) != 0)
		snprintf(b, n, "%gs", s);
	else if (s < 3600 || fmod(s, 3600) != 0)
		snprintf(b, n, "%gm", s / 60);
	else
		snprintf(b, n, "%gh", s / 3600);
	return b;
}

static bool in_bounds(const struct sp_option *o, double v)
{
	if (o->flags & SP_OPTF_LO_OPEN ? !(v > o->lo) : !(v >= o->lo))
		return false;
	return o->hi == 0 || v <= o->hi;
}

/* Apply one value to its target; NULL, or the error after "--name: 'value' ". */
static const char *apply(const struct sp_option *o, const char *v, char *why, size_t n)
{
	char b1[32], b2[32];
	switch (o->kind) {
	case SP_OPTK_FLAG:
		if (o->target)
			*(bool *)o->target = true;
		return NULL;
	case SP_OPTK_SETINT:
		*(int *)o->target = o->ival;
		return NULL;
	case SP_OPTK_SIZE: {
		uint64_t x;
		int pr = sp_parse_size_unit(v, &x);
		if (pr == -2) {
			snprintf(why, n, "is not a size: give a unit (e.g. %.20sGiB)", v);
			return why;
		}
		if (pr < 0 || !in_bounds(o, (double)x)) {
			if (o->flags & SP_OPTF_LO_OPEN && o->lo == 0 && o->hi == 0)
				return "is not a size above 0 (e.g. 8GiB, 512M)";
			return "is not a size (e.g. 4GiB, 512M)";
		}
		*(uint64_t *)o->target = x;
		return NULL;
	}
	case SP_OPTK_DURATION: {
		double x;
		if (sp_parse_duration(v, &x) == 0 && in_bounds(o, x)) {
			*(double *)o->target = x;
			return NULL;
		}
		if (o->hi > 0)
			snprintf(why, n, "is not a duration between %s and %s", fmt_secs(b1, sizeof b1, o->lo > 0 ? o->lo : 0.001),
				 fmt_secs(b2, sizeof b2, o->hi));
		else if (o->flags & SP_OPTF_LO_OPEN && o->lo == 0)
			snprintf(why, n, "is not a duration above 0 (e.g. 30, 1.5, 5m)");
		else
			snprintf(why, n, "is not a duration of at least %gs (e.g. 30, 1.5, 5m)", o->lo);
		return why;
	}
	case SP_OPTK_INT:
	case SP_OPTK_LONG: {
		long x;
		if (sp_parse_long_range(v, (long)o->lo, (long)o->hi, &x) < 0) {
			snprintf(why, n, "is not a whole number in %.0f..%.0f", o->lo, o->hi);
			return why;
		}
		if (o->kind == SP_OPTK_INT)
			*(int *)o->target = (int)x;
		else
			*(long *)o->target = x;
		return NULL;
	}
	case SP_OPTK_PERCENT: {
		char *end;
		double x = strtod(v, &end);
		if (end == v || (*end && strcmp(end, "%") != 0) || !(x > 0 && x < 100))
			return "is not a percentage between 0 and 100";
		*(double *)o->target = x;
		return NULL;
	}
	case SP_OPTK_ENUM: {
		int x;
		char list[200];
		if (sp_word_find(o->words, v, &x)) {
			*(int *)o->target = x;
			return NULL;
		}
		snprintf(why, n, "is not %s", sp_word_list(o->words, list, sizeof list));
		return why;
	}
	case SP_OPTK_PATH:
		if (!*v)
			return "is not a file name";
		/* fall through */
	case SP_OPTK_STRING:
		*(const char **)o->target = v;
		return NULL;
	case SP_OPTK_CALLBACK:
		return o->cb(o->target, v);
	default:
		return "is not understood";
	}
}

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return -2;
}

/* the table's entries, then the common ones, as one list */
static int collect(const struct sp_option *opts, const struct sp_option **all, int max)
{
	int n = 0;
	for (const struct sp_option *o = opts; o && o->kind != SP_OPTK_END && n < max; o++)
		if (is_option(o))
			all[n++] = o;
	for (const struct sp_option *o = common_opts; o->kind != SP_OPTK_END && n < max; o++)
		all[n++] = o;
	return n;
}

/* One file named as two outputs, or as an output and an input: -1 and the
 * one-line error (the summary would replace the log, the chart the training
 * log it marks). */
static int distinct_paths(const struct sp_option *const *all, int n, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		if (!(all[i]->flags & SP_OPTF_OUT) || !all[i]->target)
			continue;
		const char *a = *(const char *const *)all[i]->target;
		for (int k = 0; a && k < n; k++) {
			if (k == i || !all[k]->target)
				continue;
			unsigned fk = all[k]->flags;
			if (!(fk & (SP_OPTF_OUT | SP_OPTF_IN)) || ((fk & SP_OPTF_OUT) && k < i))
				continue; /* a pair of outputs is checked once */
			const char *b = *(const char *const *)all[k]->target;
			if (!b || ((all[k]->flags & SP_OPTF_IN) && strcmp(b, "-") == 0))
				continue; /* an input "-" is standard input */
			char wa[80], wb[80];
			snprintf(wa, sizeof wa, "--%s", all[i]->long_name);
			snprintf(wb, sizeof wb, "--%s", all[k]->long_name);
			if (sp_out_distinct(wa, a, wb, b, err, errlen) < 0)
				return -1;
		}
	}
	return 0;
}

int sp_opt_parse_r(const struct sp_cmdspec *spec, const struct sp_option *opts, int argc, char **argv,
		   char *err, size_t errlen)
{
	const struct sp_option *all[MAX_OPTS];
	struct option lopts[MAX_OPTS + 1];
	char shorts[2 * MAX_OPTS + 4];
	int n = collect(opts, all, MAX_OPTS), ns = 0;
	if (spec->stop_at_operand)
		shorts[ns++] = '+';
	shorts[ns++] = ':'; /* a missing value is ':' and getopt says nothing */
	for (int i = 0; i < n; i++) {
		lopts[i] = (struct option){ all[i]->long_name, takes_value(all[i]) ? required_argument : no_argument,
					    NULL, CODE_BASE + i };
		if (all[i]->short_name) {
			shorts[ns++] = (char)all[i]->short_name;
			if (takes_value(all[i]))
				shorts[ns++] = ':';
		}
	}
	lopts[n] = (struct option){ NULL, 0, NULL, 0 };
	shorts[ns] = '\0';

	/* 0, not 1: glibc re-reads the optstring's '+' (the top level stops at
	 * the command's name; the command's own options may follow operands) */
	optind = 0;
	opterr = 0;
	int c, idx;
	while ((c = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
		const char *arg = argv[optind - 1];
		if (c == ':')
			return fail(err, errlen, "option '%s' needs a value", arg);
		if (c == '?') {
			if (strncmp(arg, "--", 2) == 0) {
				/* "--json=1": getopt_long names a known option in optopt */
				const char *eq = strchr(arg, '=');
				int len = eq ? (int)(eq - arg) : (int)strlen(arg);
				if (eq && optopt)
					return fail(err, errlen, "option '%.*s' takes no value", len, arg);
				return fail(err, errlen, "unknown option '%.*s'", len, arg);
			}
			return fail(err, errlen, "unknown option '-%c'", optopt > 0 && optopt < 128 ? optopt : '?');
		}
		idx = -1;
		if (c >= CODE_BASE && c < CODE_BASE + n)
			idx = c - CODE_BASE;
		else
			for (int i = 0; i < n; i++)
				if (all[i]->short_name == c)
					idx = i;
		if (idx < 0)
			return fail(err, errlen, "unknown option '%s'", arg);
		const struct sp_option *o = all[idx];
		if (o->kind == SP_OPTK_FLAG && !o->target) /* -h, --help; --sparkops-options */
			return o->ival ? -3 : -1;
		char why[256];
		const char *bad = apply(o, optarg, why, sizeof why);
		if (bad)
			return fail(err, errlen, "--%s: '%s' %s", o->long_name, optarg ? optarg : "", bad);
		if (o->target == &root_procfs || o->target == &root_sysfs)
			sp_paths_init(root_procfs, root_sysfs);
	}
	if (distinct_paths(all, n, err, errlen) < 0)
		return -2;
	return optind;
}

int sp_opt_parse(const struct sp_cmdspec *spec, const struct sp_option *opts, int argc, char **argv)
{
	char err[512];
	int i = sp_opt_parse_r(spec, opts, argc, argv, err, sizeof err);
	if (i == -1) {
		if (spec->print_help)
			spec->print_help(stdout);
		else
			sp_opt_help(spec, opts, stdout);
		return -1;
	}
	if (i == -3) {
		sp_opt_list(opts, stdout);
		return -1;
	}
	if (i == -2) {
		sp_error("%s", err);
		sp_note("see '%s %s%s--help'", sp_progname, spec->name ? spec->name : "", spec->name ? " " : "");
		exit(SP_EXIT_USAGE);
	}
	return i;
}

static void help_line(FILE *f, int col, const char *left, const char *help)
{
	int w = fprintf(f, "%s", left);
	if (w >= col - 1) {
		fputc('\n', f);
		w = 0;
	}
	fprintf(f, "%*s", col - w, "");
	for (const char *p = help; *p; p++) {
		fputc(*p, f);
		if (*p == '\n' && p[1])
			fprintf(f, "%*s", col, "");
	}
	fputc('\n', f);
}

static void option_left(char *b, size_t n, const struct sp_option *o)
{
	int at;
	if (o->short_name)
		at = snprintf(b, n, "  -%c, --%s", o->short_name, o->long_name);
	else
		at = snprintf(b, n, "      --%s", o->long_name);
	if (takes_value(o) && o->argh && at > 0 && (size_t)at < n)
		snprintf(b + at, n - (size_t)at, " %s", o->argh);
}

void sp_opt_help(const struct sp_cmdspec *spec, const struct sp_option *opts, FILE *f)
{
	int col = spec->help_col ? spec->help_col : 23;
	char left[128];
	fputs(spec->usage, f);
	for (const struct sp_option *o = opts; o && o->kind != SP_OPTK_END; o++) {
		if (o->flags & SP_OPTF_HIDDEN)
			continue;
		if (o->kind == SP_OPTK_GROUP) {
			fprintf(f, "%s%s\n", o == opts ? "" : "\n", o->help);
			continue;
		}
		if (o->kind == SP_OPTK_TEXT)
			snprintf(left, sizeof left, "  %s", o->argh);
		else
			option_left(left, sizeof left, o);
		help_line(f, col, left, o->help);
	}
	if (!spec->no_common)
		for (const struct sp_option *o = common_opts; o->kind != SP_OPTK_END; o++) {
			if (o->flags & SP_OPTF_HIDDEN)
				continue;
			option_left(left, sizeof left, o);
			help_line(f, col, left, o->help);
		}
	if (spec->tail)
		fprintf(f, "\n%s", spec->tail);
}

void sp_opt_list(const struct sp_option *opts, FILE *f)
{
	const struct sp_option *all[MAX_OPTS];
	int n = collect(opts, all, MAX_OPTS);
	for (int i = 0; i < n; i++)
		if (!(all[i]->flags & SP_OPTF_HIDDEN)) {
			unsigned fl = all[i]->flags;
			const char *what = fl & SP_OPTF_OUT ? " out" : fl & SP_OPTF_OUTDIR ? " out-dir" : fl & SP_OPTF_IN ? " in" : "";
			fprintf(f, "--%s%s%s%s\n", all[i]->long_name, takes_value(all[i]) && all[i]->argh ? " " : "",
				takes_value(all[i]) && all[i]->argh ? all[i]->argh : "", what);
		}
}
