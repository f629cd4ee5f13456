/* SPDX-License-Identifier: MIT */
/* The subcommand table and what every command shares: options for the roots,
 * help and output checking. */
#ifndef SP_CLI_H
#define SP_CLI_H
#include <getopt.h>
#include <stdio.h>

struct sp_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};
extern const struct sp_cmd sp_commands[];

/* Long options every command accepts; codes above 1000 so they never clash. */
enum { SP_OPT_PROCFS = 1001, SP_OPT_SYSFS, SP_OPT_COMMON_END };
#define SP_COMMON_LONGOPTS                                   \
	{ "procfs", required_argument, NULL, SP_OPT_PROCFS }, \
	{ "sysfs", required_argument, NULL, SP_OPT_SYSFS },   \
	{ "help", no_argument, NULL, 'h' }

/* Handle a common option; returns 1 when it was one. */
int sp_common_opt(int c, const char *arg);
/* Set the roots from flags (or the environment). */
void sp_roots_apply(void);
/* "see 'sparkops CMD --help'" and exit 2 */
void sp_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/* print help text to stdout and return 0 */
int sp_print_help(const char *text);
#define SP_COMMON_HELP \
	"      --procfs DIR     read /proc from DIR (or SPARKOPS_PROCFS)\n" \
	"      --sysfs DIR      read /sys from DIR (or SPARKOPS_SYSFS)\n" \
	"  -h, --help           this help\n"

int cmd_status(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_ladder(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_metrics(int argc, char **argv);
int cmd_serve(int argc, char **argv);
#endif
