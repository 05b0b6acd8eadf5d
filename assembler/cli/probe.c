// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm probe [--json] */
#include <stdio.h>
#include <errno.h>
#include <string.h>

#include "cli.h"

int cmd_probe(int argc, char **argv)
{
	unsigned int n = rootasm_feature_count();
	bool json = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else
			return cli_usage("probe: unknown argument '%s'", argv[i]);
	}
	if (json)
		fputs("[", stdout);
	for (unsigned int f = 0; f < n; f++) {
		char detail[256];
		int r = rootasm_probe_feature(cli_ctx, f, detail, sizeof(detail));
		const char *st = r > 0 ? "present" : r == -EPERM ? "not-permitted" : "absent";

		if (json) {
			printf("%s{\"feature\": \"%s\", \"present\": %s, \"state\": \"%s\", \"description\": \"%s\", \"detail\": \"",
			       f ? ", " : "", rootasm_feature_name(f), r > 0 ? "true" : "false", st,
			       rootasm_feature_desc(f));
			for (const char *s = detail; *s; s++)
				printf(*s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
			fputs("\"}", stdout);
		} else {
			printf("%-38s %-13s %s%s%s%s\n", rootasm_feature_name(f), st,
			       rootasm_feature_desc(f), detail[0] ? " [" : "", detail, detail[0] ? "]" : "");
		}
	}
	if (json)
		puts("]");
	return 0;
}
