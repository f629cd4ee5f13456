/* SPDX-License-Identifier: MIT */
/* One declarative option table per command, in the spirit of git's
 * parse-options: each option is declared once (long and short name, kind,
 * target, help line) and the table drives getopt_long, the --help text,
 * the validation of each value and its one-line error.
 *
 *   static const struct sp_option opts[] = {
 *       SP_OPT_GROUP("options:"),
 *       SP_OPT_FLAG(0, "json", &json, "one JSON object"),
 *       SP_OPT_SIZE(0, "reserve", &ro.reserve, "SIZE", "kept back (default 4GiB)"),
 *       SP_OPT_END(),
 *   };
 *   int i = sp_opt_parse(&spec, opts, argc, argv);   // -1: --help was printed
 *
 * The options every command takes (--procfs, --sysfs, -h/--help) are added
 * by the parser and listed at the end of the help. Errors name the option:
 * "unknown option '--x'", "option '--x' needs a value", "option '--x'
 * takes no value", "--x: 'v' is not a size (e.g. 4GiB, 512M)"; then
 * "see 'sparkops CMD --help'" and exit 2. */
#ifndef SP_OPT_H
#define SP_OPT_H
#include "util/words.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum sp_opt_kind {
	SP_OPTK_END = 0,
	SP_OPTK_GROUP,    /* a heading in the help ("job:"); no option */
	SP_OPTK_TEXT,     /* a help line that is not an option (an operand) */
	SP_OPTK_FLAG,     /* bool *: set to true */
	SP_OPTK_SETINT,   /* int *: set to .ival (--grad-ckpt / --no-grad-ckpt) */
	SP_OPTK_SIZE,     /* uint64_t *: a size with a unit (sp_parse_size), in [lo, hi] */
	SP_OPTK_DURATION, /* double *: seconds (sp_parse_duration), in [lo, hi] */
	SP_OPTK_INT,      /* int *: a whole number in [lo, hi] */
	SP_OPTK_LONG,     /* long *: a whole number in [lo, hi] */
	SP_OPTK_PERCENT,  /* double *: a percentage strictly between 0 and 100 ("15" or "15%") */
	SP_OPTK_ENUM,     /* an enum (int-sized) *: the value of the word in .words (util/words.h) */
	SP_OPTK_STRING,   /* const char **: the value as given */
	SP_OPTK_PATH,     /* const char **: a file name (not empty) */
	SP_OPTK_CALLBACK, /* .cb(target, value): NULL, or what is wrong ("is not a rung") */
};

/* Option flags */
#define SP_OPTF_LO_OPEN 1u /* the value must be > lo, not >= lo */
#define SP_OPTF_HIDDEN 2u  /* parsed, not listed in --help */
#define SP_OPTF_NOARG 4u   /* a callback that takes no value (cb gets NULL) */
/* What a path option is to the file system (SP_OPTK_PATH): the parser
 * refuses one file named as two outputs, or as an output and an input, of
 * one command (exit 2); --sparkops-options lists the word after the value's
 * name ("--svg FILE out"), which tests/cli/test_attack_outputs.sh reads to
 * run every output option through its attack matrix. */
#define SP_OPTF_OUT 16u    /* a file sparkops writes ("out") */
#define SP_OPTF_OUTDIR 32u /* a folder sparkops writes a file into ("out-dir") */
#define SP_OPTF_IN 64u     /* a file sparkops reads ("in") */

struct sp_option {
	enum sp_opt_kind kind;
	int short_name;           /* 0: none */
	const char *long_name;    /* without the dashes */
	void *target;
	const char *argh;         /* the value's name in the help: "SIZE", "N" */
	const char *help;         /* one line; '\n' continues under the help column */
	double lo, hi;            /* bounds of a number, size or duration (hi 0: none) */
	const struct sp_word *words; /* SP_OPTK_ENUM: the words and their values, {NULL}-terminated */
	const char *(*cb)(void *target, const char *value);
	int ival;                 /* SP_OPTK_SETINT */
	unsigned flags;
};

#define SP_OPT_END() { .kind = SP_OPTK_END }
#define SP_OPT_GROUP(h) { .kind = SP_OPTK_GROUP, .help = (h) }
#define SP_OPT_TEXT(left, h) { .kind = SP_OPTK_TEXT, .argh = (left), .help = (h) }
#define SP_OPT_FLAG(s, l, t, h) { .kind = SP_OPTK_FLAG, .short_name = (s), .long_name = (l), .target = (t), .help = (h) }
#define SP_OPT_SETINT(l, t, v, h) { .kind = SP_OPTK_SETINT, .long_name = (l), .target = (t), .ival = (v), .help = (h) }
#define SP_OPT_SIZE(l, t, a, h) { .kind = SP_OPTK_SIZE, .long_name = (l), .target = (t), .argh = (a), .help = (h) }
#define SP_OPT_SIZE_POS(l, t, a, h) \
	{ .kind = SP_OPTK_SIZE, .long_name = (l), .target = (t), .argh = (a), .help = (h), .flags = SP_OPTF_LO_OPEN }
#define SP_OPT_DURATION(l, t, a, lo_, hi_, fl, h) \
	{ .kind = SP_OPTK_DURATION, .long_name = (l), .target = (t), .argh = (a), .help = (h), .lo = (lo_), .hi = (hi_), .flags = (fl) }
#define SP_OPT_INT(l, t, a, lo_, hi_, h) \
	{ .kind = SP_OPTK_INT, .long_name = (l), .target = (t), .argh = (a), .help = (h), .lo = (lo_), .hi = (hi_) }
#define SP_OPT_LONG(l, t, a, lo_, hi_, h) \
	{ .kind = SP_OPTK_LONG, .long_name = (l), .target = (t), .argh = (a), .help = (h), .lo = (lo_), .hi = (hi_) }
#define SP_OPT_PERCENT(l, t, a, h) { .kind = SP_OPTK_PERCENT, .long_name = (l), .target = (t), .argh = (a), .help = (h) }
/* SP_OPT_ENUM stores the word's value through an int: t must point to an
 * int-sized object (an enum, an int), checked when it compiles. A bad word
 * is "--x: 'v' is not a, b or c", the table's listed words. */
#define SP_OPT_INT_SIZED(t) ((void *)((t) + 0 * sizeof(char[sizeof *(t) == sizeof(int) ? 1 : -1])))
#define SP_OPT_ENUM(l, t, a, w, h) \
	{ .kind = SP_OPTK_ENUM, .long_name = (l), .target = SP_OPT_INT_SIZED(t), .argh = (a), .words = (w), .help = (h) }
#define SP_OPT_STRING(l, t, a, h) { .kind = SP_OPTK_STRING, .long_name = (l), .target = (t), .argh = (a), .help = (h) }
#define SP_OPT_PATH(l, t, a, h) { .kind = SP_OPTK_PATH, .long_name = (l), .target = (t), .argh = (a), .help = (h) }
#define SP_OPT_OUT_PATH(l, t, a, h) \
	{ .kind = SP_OPTK_PATH, .long_name = (l), .target = (t), .argh = (a), .help = (h), .flags = SP_OPTF_OUT }
#define SP_OPT_OUT_DIR(l, t, a, h) \
	{ .kind = SP_OPTK_PATH, .long_name = (l), .target = (t), .argh = (a), .help = (h), .flags = SP_OPTF_OUTDIR }
#define SP_OPT_IN_PATH(l, t, a, h) \
	{ .kind = SP_OPTK_PATH, .long_name = (l), .target = (t), .argh = (a), .help = (h), .flags = SP_OPTF_IN }
#define SP_OPT_CALLBACK(l, t, a, f, h) { .kind = SP_OPTK_CALLBACK, .long_name = (l), .target = (t), .argh = (a), .cb = (f), .help = (h) }
#define SP_OPT_CALLBACK_NOARG(l, t, f, h) \
	{ .kind = SP_OPTK_CALLBACK, .long_name = (l), .target = (t), .cb = (f), .help = (h), .flags = SP_OPTF_NOARG }

/* What a command says about itself around its option list. */
struct sp_cmdspec {
	const char *name;   /* "status"; NULL for the top level */
	const char *usage;  /* "usage: ...\n" and the description, up to the options */
	const char *tail;   /* after the options: environment, exit codes */
	bool stop_at_operand; /* run: the job's own options stay the job's */
	bool no_common;       /* the top level lists --procfs/--sysfs itself */
	int help_col;         /* the help text's column (0: 23) */
	void (*print_help)(FILE *f); /* instead of the generated help (the top level) */
};

/* Parse argv[1..] against opts (plus --procfs, --sysfs, -h/--help). Returns
 * the index of the first operand; -1 when --help (or the hidden
 * --sparkops-options, named so that no abbreviation of a real option
 * becomes ambiguous) was asked for and printed (the command returns 0). A
 * bad option or value prints one line naming it, then "see 'sparkops CMD
 * --help'", and exits 2. */
int sp_opt_parse(const struct sp_cmdspec *spec, const struct sp_option *opts, int argc, char **argv);

/* The same without printing or exiting, for tests: returns the first
 * operand's index, -1 for --help, -3 for --sparkops-options, or -2 with the
 * one-line error in err. */
int sp_opt_parse_r(const struct sp_cmdspec *spec, const struct sp_option *opts, int argc, char **argv,
		   char *err, size_t errlen);

/* The help text generated from the table, into f. */
void sp_opt_help(const struct sp_cmdspec *spec, const struct sp_option *opts, FILE *f);

/* Every long option a table accepts, one per line with its value's name
 * ("--reserve SIZE") and, for a path, what it is ("--svg FILE out",
 * "--textfile DIR out-dir", "--follow FILE in"), common ones included: the
 * docs test and the output attack matrix read it. */
void sp_opt_list(const struct sp_option *opts, FILE *f);
#endif
