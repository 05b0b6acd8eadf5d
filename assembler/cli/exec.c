// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm exec [OPTION...] LAYOUT [OPTION...] [--] CMD [ARG...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "cli.h"

static const char help[] =
	"Usage: rootasm exec [OPTION...] LAYOUT [OPTION...] [--] CMD [ARG...]\n"
	"Assemble LAYOUT, then run CMD with the tree as its root, in new mount and pid\n"
	"namespaces, under a small init that forwards signals and reaps. Options go\n"
	"before CMD (the first operand after LAYOUT, or what follows '--').\n"
	"\n"
	"  --report        print CMD's status and cgroup id as the kernel kept them\n"
	"                  (PIDFD_INFO_EXIT), on stderr (with --json: on stdout)\n"
	"  --json[=pretty] errors (and --report) as JSON\n"
	"  --debug         trace every operation\n"
	"  -h, --help      this text\n"
	"\n"
	"Exit status: CMD's (128+N when it dies of signal N); 125 when rootasm itself\n"
	"fails (bad usage, bad layout, assembly, setup); 126 when CMD cannot be run,\n"
	"127 when it is not found.\n";

/* rootasm's own failure, whatever kind: 125 */
static int failed(int status)
{
	return status ? EXIT_EXEC_FAILED : 0;
}

int cmd_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_LONGOPTS,
		{ "report", no_argument, NULL, 'r' },
		{ 0 },
	};
	struct rootasm_error e = { 0 };
	struct rootasm_exec_result res = { 0 };
	struct rootasm_exec_opts o = { .size = sizeof(o) };
	struct rootasm_layout *l;
	const char *path = NULL;
	bool report = false;
	int c, fd, r;

	/* options, LAYOUT, options, then CMD: getopt stops at each operand ("+") */
	for (int pass = 0; pass < 2; pass++) {
		while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) >= 0) {
			if (c == 'r')
				report = true;
			else if ((r = cli_common(c, argc, argv, help)) != CLI_GO_ON)
				return failed(r) ? failed(r) : 0;
		}
		if (pass == 0) {
			if (optind >= argc)
				return failed(cli_usage("missing LAYOUT"));
			path = argv[optind++];
			/* "LAYOUT -- CMD": getopt ends at "--" by itself */
		}
	}
	if (optind >= argc)
		return failed(cli_usage("missing CMD"));
	r = cli_load(path, 0, &l);
	if (r)
		return failed(r);
	o.deny_mount_api = rootasm_layout_deny_mount_api(l);
	fd = rootasm_assemble(cli_context(), l, &e);
	rootasm_layout_free(l);
	if (fd < 0)
		return failed(cli_fail(&e));
	r = rootasm_exec(cli_context(), fd, argv + optind, &o, &res, &e);
	close(fd);
	if (r < 0)
		return failed(cli_fail(&e));
	if (report && cli.json) {
		cli_json_out(json_pack("{s:s, s:i, s:I, s:s}", "command", argv[optind], "status", res.status, "cgroup_id",
				       (json_int_t)res.cgroupid, "source", res.from_pidfd_info ? "pidfd-info-exit" : "waitid"));
	} else if (report) {
		fprintf(stderr, "rootasm: exec: %s exited with status %d, cgroup id %llu, read %s\n", argv[optind],
			res.status, res.cgroupid,
			res.from_pidfd_info ? "through PIDFD_INFO_EXIT after reaping" : "from waitid (no PIDFD_INFO_EXIT)");
	}
	return res.status;
}
