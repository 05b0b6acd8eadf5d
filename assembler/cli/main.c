// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm: the command line front end; one file per subcommand. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include <jansson.h>

#include "cli.h"
#include "util.h"

struct cli_opts cli;
static struct rootasm_ctx *ctx;

static const char usage[] =
	"Usage: rootasm [--debug] [--json[=pretty]] COMMAND [OPTION...] ...\n"
	"Assemble a container root filesystem out of detached mounts.\n"
	"\n"
	"Commands:\n"
	"  check LAYOUT           validate LAYOUT and print the plan (--offline, --live DIR)\n"
	"  assemble LAYOUT        assemble, then --attach DIR or --send-fd SOCKET\n"
	"  exec LAYOUT [--] CMD   assemble, then run CMD with the tree as its root\n"
	"  probe                  which kernel features this kernel has\n"
	"  watch                  mount attach/detach events of a mount namespace\n"
	"  import oci:DIR[:TAG]   import an OCI image layout into the store, print its layout\n"
	"  import docker://REGISTRY/REPO[:TAG|@DIGEST]\n"
	"                         pull an image from a registry into the store, the same way\n"
	"  images                 the images of the store: names, digests, layers, size, last use\n"
	"  rmi NAME|DIGEST        remove an image's name, or the image, from the store\n"
	"  store gc|verify        remove unused layer images; check what is stored\n"
	"  bundle create IMAGE DIR  write an OCI runtime bundle from an image (or a layout)\n"
	"  bundle prepare BUNDLE  assemble an OCI runtime bundle's rootfs at its root.path\n"
	"  bundle cleanup BUNDLE  undo it: detach the tree, restore config.json\n"
	"  version                the version and what was compiled in (also -v, -V, --version)\n"
	"\n"
	"Every command takes, after its name, --help, --json[=pretty] (results and\n"
	"errors as JSON), -q/--quiet (no progress, notices or reports: errors, the JSON\n"
	"asked for and the result a script reads only) and --debug (trace every\n"
	"operation; also ROOTASM_DEBUG=1); --json and --debug also before it. LAYOUT\n"
	"'-' is read from standard input.\n"
	"\n"
	"Exit status: 0 success, 1 runtime failure, 2 bad usage or bad layout;\n"
	"exec: the command's status (128+N when it dies of signal N), 125 when\n"
	"rootasm itself fails, 126/127 when the command cannot be run or found.\n"
	"See rootasm(1) and rootasm.layout(5).\n";

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
	case 0x100:
		cli.json = true;
		if (optarg && !strcmp(optarg, "pretty"))
			cli.pretty = true;
		else if (optarg)
			return cli_usage("--json takes no value or 'pretty', not '%s'", optarg);
		return CLI_GO_ON;
	case 0x101:
		cli.debug = true;
		return CLI_GO_ON;
	case 'q':
		cli.quiet = true;
		return CLI_GO_ON;
	case ':':
		return cli_usage("option '%s' needs a value", argv[optind - 1]);
	default:
		return cli_usage("unknown option '%s'", argv[optind - 1]);
	}
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *opts, const char *help, int *status)
{
	for (;;) {
		int c = getopt_long(argc, argv, shortopts ? shortopts : CLI_COMMON_SHORTOPTS, opts, NULL);

		if (c < 0)
			return CLI_OPTS_END;
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

/* A layout holds one fd per host object: take what the hard limit allows. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static const char version_help[] =
	"Usage: rootasm version [OPTION...]\n"
	"Print rootasm's version, the library's, and what was compiled in (also\n"
	"`rootasm -V`).\n"
	"\n"
	"  --json[=pretty] {version, library, compiled: [...]}\n"
	"  -q, --quiet     the version alone (\"" ROOTASM_VERSION_STRING "\")\n"
	"  --debug         (nothing to trace)\n"
	"  -h, --help      this text\n";

static int version(void)
{
	if (cli.json)
		return cli_json_out(json_pack("{s:s, s:s, s:[s,s,s,s,s,s]}", "version", ROOTASM_VERSION_STRING, "library",
					      rootasm_version(), "compiled", "libyaml", "jansson", "libcap", "seccomp-profile",
					      "libarchive", "libcrypto")) < 0;
	if (cli.quiet)
		return printf("%s\n", ROOTASM_VERSION_STRING) < 0 || fflush(stdout) ? EXIT_RUNTIME : 0;
	printf("rootasm %s (library %s)\n"
	       "compiled with: libyaml (layouts), jansson (JSON), libcap, libarchive (OCI layers),\n"
	       "libcrypto (sha256); the exec sandbox's seccomp profile (x86_64, i386, x32), built\n"
	       "with libseccomp at build time\n"
	       "kernel features are probed at run time: rootasm probe\n", ROOTASM_VERSION_STRING, rootasm_version());
	return 0;
}

int cmd_version(int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS, { 0 } };
	int c, r;

	while ((c = cli_getopt(argc, argv, NULL, opts, version_help, &r)) >= 0)
		;
	if (c == CLI_OPTS_EXIT)
		return r;
	r = cli_no_operand(argc, argv);
	return r != CLI_GO_ON ? r : version();
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "check", cmd_check },
		{ "assemble", cmd_assemble },
		{ "exec", cmd_exec },
		{ "probe", cmd_probe },
		{ "watch", cmd_watch },
		{ "import", cmd_import },
		{ "bundle", cmd_bundle },
		{ "images", cmd_images },
		{ "rmi", cmd_rmi },
		{ "store", cmd_store },
		{ "version", cmd_version },
	};
	/* before the command: --help, --json, --debug (not --quiet: a command's own) and --version */
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", optional_argument, NULL, 0x100 },
		{ "debug", no_argument, NULL, 0x101 },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int c, r;

	raise_nofile();
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:hvV", opts, NULL)) >= 0) {
		if (c == 'v' || c == 'V')
			return version();
		r = cli_common(c, argc, argv, usage);
		if (r != CLI_GO_ON)
			return r;
	}
	if (optind >= argc)
		return cli_usage("missing command");
	if (!strcmp(argv[optind], "help")) {
		fputs(usage, stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[optind], cmds[i].name))
			continue;
		cli.cmd = cmds[i].name;
		argv += optind;
		argc -= optind;
		optind = 0;	/* a fresh getopt for the subcommand (0: reinitialise) */
		return cmds[i].fn(argc, argv);
	}
	return cli_usage("unknown command '%s'", argv[optind]);
}
