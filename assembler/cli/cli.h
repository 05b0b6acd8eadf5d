/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rootasm command line: one file per subcommand (main.c dispatches, the
 * helpers below are common.c's), each parsing its options with
 * getopt_long() (options in any order before the operands end; "--" ends
 * them), each with --help. Options every subcommand takes:
 * --help, --json[=pretty] (results and errors as JSON), -q/--quiet (no
 * progress, notices or reports: errors, the JSON asked for and the result a
 * script reads only), --debug (trace every operation). Exit statuses: 0, 1 (runtime failure), 2 (bad usage or bad
 * layout); exec: the command's own, 125 (rootasm failed), 126/127 (as shells).
 */
#ifndef ROOTASM_CLI_H
#define ROOTASM_CLI_H

#include <getopt.h>
#include <stdbool.h>

#include "layout.h"
#include "rootasm.h"

#define EXIT_RUNTIME		1
#define EXIT_USAGE		2
#define EXIT_EXEC_FAILED	125

struct cli_opts {
	bool json, pretty, debug, quiet;
	const char *cmd;		/* the subcommand, for messages */
	const struct rootasm_principal *principal;	/* cli_load(): who the layout is loaded for (NULL: admin) */
};

extern struct cli_opts cli;

/*
 * The options every subcommand takes, for its getopt_long() table; its short
 * options string has CLI_COMMON_SHORTOPTS. (import has its own "quiet", 'q' too:
 * the same option.)
 */
#define CLI_COMMON_LONGOPTS \
	{ "help", no_argument, NULL, 'h' }, \
	{ "json", optional_argument, NULL, 0x100 }, \
	{ "quiet", no_argument, NULL, 'q' }, \
	{ "debug", no_argument, NULL, 0x101 }
#define CLI_COMMON_SHORTOPTS	":hq"
/* A subcommand's own long option @name, short @c: with a value, or without */
#define CLI_ARG(name, c)	{ name, required_argument, NULL, c }
#define CLI_FLAG(name, c)	{ name, no_argument, NULL, c }

#define CLI_GO_ON	(-1000)

/*
 * Handle a common option @c (or getopt's '?'/':'); returns CLI_GO_ON when
 * parsing goes on, or the exit status to return now (--help: 0).
 */
int cli_common(int c, int argc, char **argv, const char *help);
/*
 * After getopt_long() returned the long option @li of @opts (-1: none):
 * CLI_GO_ON when it was given by its whole name, else a usage error (getopt
 * takes any unambiguous start of one).
 */
int cli_whole_name(int argc, char **argv, const struct option *opts, int li);

/*
 * The options of a subcommand, one by one: getopt_long() over @opts (with
 * CLI_COMMON_LONGOPTS) and @shortopts (NULL: CLI_COMMON_SHORTOPTS), the
 * common ones handled by cli_common(). Returns the next option of the
 * subcommand's own; CLI_OPTS_END after the last; or CLI_OPTS_EXIT when the
 * subcommand is to return *status now (--help: 0, a usage error: 2):
 *
 *	while ((c = cli_getopt(argc, argv, NULL, opts, help, &r)) >= 0)
 *		...
 *	if (c == CLI_OPTS_EXIT)
 *		return r;
 */
#define CLI_OPTS_END	(-1)
#define CLI_OPTS_EXIT	(-2)
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *opts, const char *help, int *status);

/*
 * The operand at optind, the last one: *ret and CLI_GO_ON; or the exit
 * status of the usage error "missing @missing" (NULL: @what) or "more than
 * one @what ('...')".
 */
int cli_last_operand(int argc, char **argv, const char *what, const char *missing, const char **ret);

/* No operand left (optind): CLI_GO_ON, or the exit status of "unexpected argument '...'". */
int cli_no_operand(int argc, char **argv);

/* @s, decimal digits only, as a number of [@min, @max] in *ret: 0, or -1. */
int cli_number(const char *s, unsigned long long min, unsigned long long max, unsigned long long *ret);

int cmd_check(int argc, char **argv);
int cmd_assemble(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_login(int argc, char **argv);
int cmd_logout(int argc, char **argv);
int cmd_bundle(int argc, char **argv);
int cmd_images(int argc, char **argv);
int cmd_rmi(int argc, char **argv);
int cmd_store(int argc, char **argv);
int cmd_version(int argc, char **argv);

/* The library context, made on first use (after the options: --debug). */
struct rootasm_ctx *cli_context(void);

/* Print @e (one line, or JSON with --json) on stderr; returns the exit status it calls for. */
int cli_fail(const struct rootasm_error *e);
/* A runtime failure of @op with errno @err (ENOMEM: "out of memory"): printed as cli_fail() does; exit status 1. */
int cli_errno(int err, const char *op);
/* A usage error: one line (or JSON), exit status 2. */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Load libjansson, which the command's JSON functions load on first use
 * (lib/jansson-lazy.c; rootasm-cli-abi links it as usual): 0, or -errno with @e filled.
 */
int ra_jansson_load(struct rootasm_error *e);

/*
 * cli_getopt() that takes the registry options itself (import.c), for import,
 * inspect and login: --tls-verify[=BOOL] ('V'), --creds USER[:PASSWORD] ('C',
 * the password asked on the terminal without one: *creds holds it),
 * --authfile FILE ('A'), --cert-dir DIR ('D'), into @o; the other options
 * are returned as by cli_getopt() (a bad registry option: CLI_OPTS_EXIT and
 * its exit status in *status).
 */
struct rootasm_import_opts;
int cli_getopt_registry(int argc, char **argv, const char *shortopts, const struct option *opts, const char *help,
			struct rootasm_import_opts *o, char **creds, int *status);
/* free *creds given, wiped */
void cli_registry_done(char *creds);
/*
 * A line from the controlling terminal after @prompt (not stdin: a pipe may
 * be the image), echoed or not: 0, or -errno (no terminal).
 */
int cli_ask(const char *prompt, bool echo, char *buf, size_t size);

/* Print @o (taken) on stdout as --json asked (compact or pretty); -1 on failure. */
struct json_t;
int cli_json_out(struct json_t *o);

/* A layout read from standard input: at most this much (one byte beyond the library's cap, which it refuses) */
#define CLI_STDIN_MAX		(RA_LAYOUT_MAX_BYTES + 1)

#define CLI_LOAD_ALL_ERRORS	0x100u	/* report every problem (check), not only the first */

/* Load LAYOUT ("-": standard input) with ROOTASM_LOAD_* @flags; prints errors; returns 0 or an exit status. */
int cli_load(const char *path, unsigned int flags, struct rootasm_layout **ret);

/*
 * rootasmd at @sock assembles LAYOUT @path (made absolute; "-": standard
 * input, sent inline); returns the tree's fd (caller owns it) or -errno with
 * @e filled (via.c).
 */
int cli_via_assemble(const char *sock, const char *path, const uid_t *receivers, size_t n_receivers,
		     struct rootasm_error *e);

#endif
