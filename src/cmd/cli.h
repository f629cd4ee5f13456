/* SPDX-License-Identifier: MIT */
/* The subcommand table and what every command shares: the usage error. The
 * options themselves are tables (util/opt.h). */
#ifndef SP_CLI_H
#define SP_CLI_H
#include <stdio.h>

struct sp_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};
extern const struct sp_cmd sp_commands[];

/* Set the roots from the environment (the options go through util/opt.c). */
void sp_roots_apply(void);
/* "see 'sparkops CMD --help'" and exit 2 */
void sp_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

int cmd_status(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_ladder(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_metrics(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_evict(int argc, char **argv);
int cmd_postmortem(int argc, char **argv);
#endif
