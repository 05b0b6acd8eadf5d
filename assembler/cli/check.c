// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm check LAYOUT [--json] */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cmd_check(int argc, char **argv)
{
	struct rootasm_layout *l;
	const char *path = NULL;
	bool json = false, live = false;
	int r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--live"))
			live = true;
		else if (argv[i][0] == '-')
			return cli_usage("check: unknown option '%s'", argv[i]);
		else if (!path)
			path = argv[i];
		else
			return cli_usage("check: more than one layout");
	}
	if (!path)
		return cli_usage(live ? "check: missing DIR" : "check: missing LAYOUT");
	if (live) {
		struct rootasm_error e = { 0 };

		r = rootasm_tree_print(path, stdout, json, &e);
		return r < 0 ? cli_fail(&e) : 0;
	}
	r = cli_load(path, &l);
	if (r < 0)
		return -r;
	r = rootasm_plan_print(cli_ctx, l, stdout, json ? ROOTASM_PLAN_JSON : 0);
	rootasm_layout_free(l);
	return r < 0 ? EXIT_RUNTIME : 0;
}
