// SPDX-License-Identifier: MIT
/* The process view's policy (procclass.c): sp_proc_classify and
 * sp_proc_kind_name are declared in probe/probe.h and probe/sample.h. */
#ifndef SPARKOPS_PROBE_PROCCLASS_H
#define SPARKOPS_PROBE_PROCCLASS_H

#include <stdbool.h>

/* An interpreter, a launcher or a known server's or trainer's comm: its
 * command line is worth reading whatever its size. */
bool sp_proc_worth_argv(const char *comm);

#endif
