/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef ROOTASM_CLI_H
#define ROOTASM_CLI_H

#include "rootasm.h"

#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

int cmd_check(int argc, char **argv);
int cmd_assemble(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_watch(int argc, char **argv);

/* Print "rootasm: <one line>" for @e; returns the exit code it calls for. */
int cli_fail(const struct rootasm_error *e);
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cli_load(const char *path, struct rootasm_layout **ret);

extern struct rootasm_ctx *cli_ctx;

#endif
