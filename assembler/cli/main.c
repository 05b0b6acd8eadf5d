// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm: the command line front end; one file per subcommand. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "cli.h"

static const char usage[] =
	"Usage: rootasm COMMAND ...\n"
	"Assemble a container root filesystem out of detached mounts.\n"
	"\n"
	"  rootasm check LAYOUT [--json]            validate LAYOUT and print the plan\n"
	"  rootasm check --live DIR [--json]        print the mounts of the tree attached at DIR,\n"
	"                                           with their id mappings, read back with statmount\n"
	"  rootasm assemble LAYOUT --attach DIR [--audit]\n"
	"                                           assemble, then attach at DIR with one move_mount;\n"
	"                                           --audit counts the mount events this namespace sees\n"
	"                                           while assembling (must be 0) and at the attach\n"
	"                                           (must equal the tree's mounts)\n"
	"  rootasm assemble LAYOUT --send-fd SOCKET assemble, then send the tree's fd over the\n"
	"                                           AF_UNIX stream socket SOCKET (SCM_RIGHTS)\n"
	"  rootasm exec [--report] LAYOUT [--] CMD [ARG...]\n"
	"                                           assemble, then run CMD with the tree as root\n"
	"                                           in new mount and pid namespaces; --report prints\n"
	"                                           CMD's status and cgroup id as the kernel kept them\n"
	"  rootasm probe [--json]                   report which kernel features are present\n"
	"  rootasm watch [--mntns PATH|PID] [--json] [--count N] [--timeout S]\n"
	"                                           print mount attach/detach events of a mount\n"
	"                                           namespace (default: our own), one line each\n"
	"\n"
	"Exit status: 0 success, 1 runtime failure, 2 bad usage or bad layout;\n"
	"exec passes CMD's status through (128+N when CMD dies of signal N).\n"
	"The layout format is described in layouts/FORMAT.md.\n";

int cli_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("rootasm: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see rootasm --help)\n", stderr);
	return EXIT_USAGE;
}

int cli_fail(const struct rootasm_error *e)
{
	char buf[8192];

	fprintf(stderr, "rootasm: %s\n", rootasm_error_format(e, buf, sizeof(buf)));
	return rootasm_error_is_usage(e) ? EXIT_USAGE : EXIT_RUNTIME;
}

struct rootasm_ctx *cli_ctx;

int cli_load(const char *path, struct rootasm_layout **ret)
{
	struct rootasm_error e = { 0 };

	if (rootasm_layout_load(cli_ctx, path, NULL, ret, &e) < 0)
		return -cli_fail(&e);
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
	};

	raise_nofile();
	if (rootasm_ctx_new(0, &cli_ctx) < 0) {
		fputs("rootasm: out of memory\n", stderr);
		return EXIT_RUNTIME;
	}
	if (argc < 2)
		return cli_usage("missing command");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		puts("rootasm " ROOTASM_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	return cli_usage("unknown command '%s'", argv[1]);
}
