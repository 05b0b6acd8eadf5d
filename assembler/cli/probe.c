// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm probe [--json] */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cmd_probe(int argc, char **argv)
{
	struct rootasm_probe p;
	bool json = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else
			return cli_usage("probe: unknown argument '%s'", argv[i]);
	}
	rootasm_probe(&p);
	if (json)
		fputs("[", stdout);
	for (int f = 0; f < _ROOTASM_FEAT_MAX; f++) {
		if (json) {
			printf("%s{\"feature\": \"%s\", \"present\": %s, \"description\": \"%s\", \"detail\": \"",
			       f ? ", " : "", rootasm_feature_name(f), p.present[f] ? "true" : "false",
			       rootasm_feature_desc(f));
			for (const char *s = p.detail[f]; *s; s++)
				printf(*s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
			fputs("\"}", stdout);
		} else {
			printf("%-38s %-7s %s%s%s%s\n", rootasm_feature_name(f), p.present[f] ? "present" : "absent",
			       rootasm_feature_desc(f), p.detail[f][0] ? " [" : "", p.detail[f],
			       p.detail[f][0] ? "]" : "");
		}
	}
	if (json)
		puts("]");
	return 0;
}
