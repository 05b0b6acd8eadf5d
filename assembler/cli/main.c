// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rootasm: the command line front end. main() dispatches to the subcommands,
 * one file each; what they share is common.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include <jansson.h>

#include "cli.h"

static const char usage[] =
	"Usage: rootasm [--debug] [--json[=pretty]] COMMAND [OPTION...] ...\n"
	"Assemble a container root filesystem out of detached mounts.\n"
	"\n"
	"Commands:\n"
	"  check LAYOUT           validate LAYOUT and print the plan (--offline, --live DIR)\n"
	"  assemble LAYOUT        assemble, then --attach DIR or --send-fd SOCKET\n"
	"  exec LAYOUT|IMAGE [--] CMD  assemble, then run CMD with the tree as its root\n"
	"  probe                  which kernel features this kernel has\n"
	"  watch                  mount attach/detach events of a mount namespace\n"
	"  import oci:DIR[:TAG]   import an OCI image layout into the store, print its layout\n"
	"  import docker://REGISTRY/REPO[:TAG|@DIGEST]\n"
	"                         pull an image from a registry into the store, the same way\n"
	"  import docker-archive:FILE[:NAME]  import what docker save and podman save write\n"
	"  inspect REF|IMAGE      what an image is (manifest, config, layers): one to import\n"
	"                         (oci:, docker://, docker-archive:), not imported, or the store's\n"
	"  login REGISTRY         check a user's password with a registry, keep it as podman does\n"
	"  logout REGISTRY|--all  forget it\n"
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
	"operation; also ROOTASM_DEBUG=1); --json and --debug also before it; options\n"
	"by their whole name. LAYOUT '-' is read from standard input; IMAGE is an image\n"
	"of the store by name or digest. rootasm help COMMAND: that command's --help.\n"
	"\n"
	"Exit status: 0 success, 1 runtime failure, 2 bad usage or bad layout;\n"
	"exec: the command's status (128+N when it dies of signal N), 125 when\n"
	"rootasm itself fails, 126/127 when the command cannot be run or found.\n"
	"See rootasm(1) and rootasm.layout(5).\n";

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

/* -h or --help among a command's words (before "--") */
static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	return false;
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
		{ "inspect", cmd_inspect },
		{ "login", cmd_login },
		{ "logout", cmd_logout },
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
	for (int li = -1; (c = getopt_long(argc, argv, "+:hvV", opts, &li)) >= 0; li = -1) {
		if (c != '?' && c != ':' && (r = cli_whole_name(argc, argv, opts, li)) != CLI_GO_ON)
			return r;
		if (c == 'v' || c == 'V')
			return version();
		r = cli_common(c, argc, argv, usage);
		if (r != CLI_GO_ON)
			return r;
	}
	if (optind >= argc)
		return cli_usage("missing command");
	if (!strcmp(argv[optind], "help")) {
		/* help COMMAND: that command's --help, as podman and git have it */
		for (size_t i = 0; optind + 1 < argc && i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (!strcmp(argv[optind + 1], cmds[i].name)) {
				char *hargv[] = { argv[optind + 1], "--help", NULL };

				cli.cmd = cmds[i].name;
				optind = 0;
				return cmds[i].fn(2, hargv);
			}
		if (optind + 1 < argc)
			return cli_usage("help: no command '%s'", argv[optind + 1]);
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
		/* what every command but these reads of itself: its fds, its mounts, its namespaces */
		if (strcmp(cli.cmd, "version") && !wants_help(argc, argv) && access("/proc/self/fd", F_OK) < 0) {
			struct rootasm_error e = { .err = errno, .kind = ROOTASM_ERROR_RUNTIME };

			snprintf(e.op, sizeof(e.op), "start");
			snprintf(e.path, sizeof(e.path), "/proc/self/fd");
			snprintf(e.msg, sizeof(e.msg), "rootasm reads its fds, mounts and namespaces in /proc: mount it "
				 "(mount -t proc proc /proc)");
			return cli_fail(&e);
		}
		return cmds[i].fn(argc, argv);
	}
	return cli_usage("unknown command '%s'", argv[optind]);
}
