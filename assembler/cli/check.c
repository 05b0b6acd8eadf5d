// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm check [--offline] [--json] LAYOUT | rootasm check --live DIR */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char help[] =
	"Usage: rootasm check [OPTION...] LAYOUT\n"
	"       rootasm check --live [OPTION...] DIR\n"
	"Validate LAYOUT and print its plan: the operations `assemble` makes, in order,\n"
	"with the layout line of each, its syscall route, idmaps, tmpfs options and the\n"
	"override_creds credential. Every problem is reported, not only the first.\n"
	"\n"
	"  --offline      validate the text only: open none of the host paths it names\n"
	"                 (nested layouts are not read)\n"
	"  --live         print the mounts of the tree attached at DIR, read back from\n"
	"                 the kernel with statmount (with their id mappings)\n"
	"  --json[=pretty] the plan (or the mounts) as JSON; errors as JSON on stderr\n"
	"  --debug        trace what is opened and probed\n"
	"  -h, --help     this text\n"
	"\n"
	"LAYOUT '-' is read from standard input. Exit status: 0 valid, 2 invalid, 1 other failures.\n";

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_LONGOPTS,
		{ "offline", no_argument, NULL, 'o' },
		{ "live", no_argument, NULL, 'l' },
		{ 0 },
	};
	struct rootasm_layout *l;
	bool live = false, offline = false;
	const char *path;
	int c, r;

	/* options and the operand in any order (getopt permutes them) */
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) >= 0) {
		if (c == 'o')
			offline = true;
		else if (c == 'l')
			live = true;
		else if ((r = cli_common(c, argc, argv, help)) != CLI_GO_ON)
			return r;
	}
	if (optind >= argc)
		return cli_usage(live ? "missing DIR" : "missing LAYOUT");
	path = argv[optind++];
	if (optind < argc)
		return cli_usage("more than one %s ('%s')", live ? "DIR" : "LAYOUT", argv[optind]);
	if (live && offline)
		return cli_usage("--live and --offline do not go together");
	if (live) {
		struct rootasm_error e = { 0 };

		r = rootasm_tree_print(path, stdout, cli.json, &e);
		return r < 0 ? cli_fail(&e) : 0;
	}
	r = cli_load(path, CLI_LOAD_ALL_ERRORS | (offline ? ROOTASM_LOAD_OFFLINE : 0), &l);
	if (r)
		return r;
	r = rootasm_plan_print(cli_context(), l, stdout, (cli.json ? ROOTASM_PLAN_JSON : 0) |
			       (cli.pretty ? ROOTASM_PLAN_PRETTY : 0));
	rootasm_layout_free(l);
	/* the plan is built (and a JSON document made) before a byte is written: on failure, none was */
	return r < 0 ? cli_errno(-r, "print the plan") : 0;
}
