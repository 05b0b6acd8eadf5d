// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Fuzz target for the layout parser. Built with -fsanitize=fuzzer when
 * ROOTASM_FUZZ=ON (clang); otherwise a driver that replays the corpus files
 * given on the command line, so the corpus runs as a unit test.
 * Relative paths resolve against the corpus directory (it has l1/ and a.img).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

static const char *anchor = ".";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rootasm_layout *l = NULL;
	struct rootasm_error e;
	char line[8192];
	int r;

	memset(&e, 0, sizeof(e));
	r = ra_layout_parse((const char *)data, size, "fuzz.yaml", anchor, NULL, &l, &e);
	if (r == 0) {
		FILE *f = fopen("/dev/null", "w");

		rootasm_plan_print(NULL, l, f, ROOTASM_PLAN_JSON);
		rootasm_plan_print(NULL, l, f, 0);
		fclose(f);
		rootasm_layout_free(l);
	} else {
		rootasm_error_format(&e, line, sizeof(line));
		/* the diagnostic is always one line */
		if (strchr(line, '\n'))
			abort();
	}
	return 0;
}

#ifndef ROOTASM_LIBFUZZER
int main(int argc, char **argv)
{
	int ok = 0, bad = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s ANCHOR_DIR FILE...\n", argv[0]);
		return 2;
	}
	anchor = argv[1];
	for (int i = 2; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		static char buf[1 << 20];
		size_t n;
		struct rootasm_layout *l = NULL;
		struct rootasm_error e;

		if (!f) {
			perror(argv[i]);
			return 1;
		}
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput((const uint8_t *)buf, n);
		/* files named bad-* must be rejected, good-* accepted */
		memset(&e, 0, sizeof(e));
		if (ra_layout_parse(buf, n, argv[i], anchor, NULL, &l, &e) == 0) {
			rootasm_layout_free(l);
			if (strstr(argv[i], "/bad-")) {
				fprintf(stderr, "FAIL: %s was accepted\n", argv[i]);
				bad++;
				continue;
			}
		} else if (strstr(argv[i], "/good-")) {
			char line[8192];

			fprintf(stderr, "FAIL: %s: %s\n", argv[i], rootasm_error_format(&e, line, sizeof(line)));
			bad++;
			continue;
		}
		ok++;
	}
	printf("%d passed, %d failed\n", ok, bad);
	return bad ? 1 : 0;
}
#endif
