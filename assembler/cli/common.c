// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What every subcommand shares (cli.h): the options every one takes, the
 * operands, errors and JSON out, the library context, loading a layout.
 * main.c dispatches to the subcommands; they and it call this, which calls
 * neither.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "util.h"

struct cli_opts cli;
static struct rootasm_ctx *ctx;

struct rootasm_ctx *cli_context(void)
{
	if (!ctx && rootasm_ctx_new(cli.debug ? ROOTASM_CTX_DEBUG : 0, &ctx) < 0)
		exit(cli_errno(ENOMEM, "make the library context"));
	return ctx;
}

int cli_fail(const struct rootasm_error *e)
{
	char buf[8192];

	/* JSON needs memory; when there is none, the error still gets its line */
	if (!cli.json || rootasm_error_print_json(e, stderr, cli.pretty) < 0)
		fprintf(stderr, "rootasm: %s\n", rootasm_error_format(e, buf, sizeof(buf)));
	return rootasm_error_is_usage(e) ? EXIT_USAGE : EXIT_RUNTIME;
}

int cli_errno(int err, const char *op)
{
	struct rootasm_error e = { .err = err, .kind = ROOTASM_ERROR_RUNTIME };

	snprintf(e.op, sizeof(e.op), "%s", op);
	if (err == ENOMEM)
		snprintf(e.msg, sizeof(e.msg), "out of memory");
	return cli_fail(&e);
}

int cli_usage(const char *fmt, ...)
{
	struct rootasm_error e = { .err = EINVAL, .kind = ROOTASM_ERROR_USAGE };
	char msg[sizeof(e.msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(e.op, sizeof(e.op), "%s%s", cli.cmd ? cli.cmd : "usage", cli.cmd ? "" : "");
	snprintf(e.msg, sizeof(e.msg), "%s (see rootasm %s%s--help)", msg, cli.cmd ? cli.cmd : "", cli.cmd ? " " : "");
	cli_fail(&e);
	return EXIT_USAGE;
}

int cli_common(int c, int argc, char **argv, const char *help)
{
	switch (c) {
	case 'h':
		fputs(help, stdout);
		return 0;
	case 0x100: {
		struct rootasm_error e = { 0 };
		bool first = !cli.json;

		cli.json = true;
		if (optarg && !strcmp(optarg, "pretty"))
			cli.pretty = true;
		else if (optarg)
			return cli_usage("--json takes no value or 'pretty', not '%s'", optarg);
		/*
		 * libjansson is loaded by the first JSON call (jansson-lazy.c): here, before
		 * anything is done. Its failure is printed as JSON if a second load works (the
		 * first ran out of memory), else as one line.
		 */
		if (first && ra_jansson_load(&e) < 0)
			return cli_fail(&e);
		return CLI_GO_ON;
	}
	case 0x101:
		cli.debug = true;
		return CLI_GO_ON;
	case 'q':
		cli.quiet = true;
		return CLI_GO_ON;
	case ':':
		/* (optopt: a short option's letter, a long one's value; in "-qt" the last word is no option's name) */
		if (optopt > 0 && optopt < 0x80 && strncmp(argv[optind - 1], "--", 2))
			return cli_usage("option '-%c' needs a value", optopt);
		return cli_usage("option '%s' needs a value", argv[optind - 1]);
	default:
		/*
		 * A short option's letter (optopt; in "-zq" getopt has not moved on
		 * yet, so the word before is no guide); a long one (optopt 0): its
		 * word without its value, which may be a secret (--passw=S)
		 */
		if (optopt > 0 && optopt < 0x80 && optind < argc && argv[optind][0] == '-' && argv[optind][1] != '-' &&
		    strchr(argv[optind], optopt))
			return cli_usage("unknown option '-%c'", optopt);	/* (in the middle of its word) */
		if (optopt > 0 && !strncmp(argv[optind - 1], "--", 2))
			return cli_usage("option '%.*s' takes no value", (int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
		if (optopt > 0 && optopt < 0x80)
			return cli_usage("unknown option '-%c'", optopt);
		return cli_usage("unknown option '%.*s'", (int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
	}
}

int cli_whole_name(int argc, char **argv, const struct option *opts, int li)
{
	const char *arg;
	size_t n;

	if (li < 0 || optind < 1 || optind > argc)
		return CLI_GO_ON;
	/* the word that named it: the one before its value when that was the next word */
	arg = argv[optind - 1];
	if (opts[li].has_arg == required_argument && optarg == argv[optind - 1] && optind >= 2)
		arg = argv[optind - 2];
	if (strncmp(arg, "--", 2))
		return CLI_GO_ON;
	n = strcspn(arg + 2, "=");
	if (n == strlen(opts[li].name) && !strncmp(arg + 2, opts[li].name, n))
		return CLI_GO_ON;
	/* (getopt takes any unambiguous start of a name: podman's --password was --password-stdin) */
	return cli_usage("unknown option '%.*s' (did you mean --%s? options are given by their whole name)",
			 (int)(n + 2 < 64 ? n + 2 : 64), arg, opts[li].name);
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *opts, const char *help, int *status)
{
	for (;;) {
		int li = -1;
		int c = getopt_long(argc, argv, shortopts ? shortopts : CLI_COMMON_SHORTOPTS, opts, &li);

		if (c < 0)
			return CLI_OPTS_END;
		if (c != '?' && c != ':' && (*status = cli_whole_name(argc, argv, opts, li)) != CLI_GO_ON)
			return CLI_OPTS_EXIT;
		/* the common options (and getopt's '?' and ':'); 'q' is import's own too: the same option */
		if (c != 'h' && c != 0x100 && c != 0x101 && c != 'q' && c != '?' && c != ':')
			return c;
		*status = cli_common(c, argc, argv, help);
		if (*status != CLI_GO_ON)
			return CLI_OPTS_EXIT;
		if (c == 'q')
			return c;
	}
}

int cli_last_operand(int argc, char **argv, const char *what, const char *missing, const char **ret)
{
	if (optind >= argc)
		return cli_usage("missing %s", missing ? missing : what);
	*ret = argv[optind++];
	if (optind < argc)
		return cli_usage("more than one %s ('%s')", what, argv[optind]);
	return CLI_GO_ON;
}

int cli_no_operand(int argc, char **argv)
{
	return optind < argc ? cli_usage("unexpected argument '%s'", argv[optind]) : CLI_GO_ON;
}

int cli_number(const char *s, unsigned long long min, unsigned long long max, unsigned long long *ret)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v < min || v > max)
		return -1;
	*ret = v;
	return 0;
}

int cli_json_out(json_t *o)
{
	int r;

	if (!o) {
		cli_errno(ENOMEM, "print the result");
		return -1;
	}
	/* as the library's (ra_jdump): non-ASCII as \uXXXX, so no C1 or bidi character reaches a terminal */
	errno = 0;
	r = json_dumpf(o, stdout, (cli.pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	json_decref(o);
	if (r < 0 || putchar('\n') == EOF) {
		cli_errno(errno == ENOMEM ? ENOMEM : errno ? errno : EIO, "print the result");
		return -1;
	}
	return 0;
}

static void diag_print(const struct rootasm_error *e, void *userdata)
{
	(*(unsigned int *)userdata)++;
	cli_fail(e);
}

int cli_load(const char *path, unsigned int flags, struct rootasm_layout **ret)
{
	struct rootasm_error e = { 0 };
	unsigned int printed = 0;
	struct rootasm_load_opts o = {
		.size = sizeof(o),
		.flags = flags & ~CLI_LOAD_ALL_ERRORS,
		.diag = flags & CLI_LOAD_ALL_ERRORS ? diag_print : NULL,
		.userdata = &printed,
		.principal = cli.principal,
	};
	int r;

	if (!strcmp(path, "-")) {
		/* standard input, capped like a file: relative paths are relative to the working directory */
		char *buf;
		size_t len;

		r = ra_read_upto(0, CLI_STDIN_MAX, &buf, &len);
		if (r == -ENOMEM)
			return cli_errno(ENOMEM, "read layout from standard input");
		if (r < 0)
			return cli_usage("read layout from standard input: %s", strerror(-r));
		o.name = "<stdin>";
		r = rootasm_layout_load_mem(cli_context(), buf, len, &o, ret, &e);
		free(buf);
	} else {
		r = rootasm_layout_load(cli_context(), path, &o, ret, &e);
	}
	if (r < 0) {
		/* with all errors on, each problem has been printed already */
		if (!printed)
			return cli_fail(&e);
		return rootasm_error_is_usage(&e) ? EXIT_USAGE : EXIT_RUNTIME;
	}
	return 0;
}
