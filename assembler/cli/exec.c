// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm exec LAYOUT [--] CMD [ARG...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cmd_exec(int argc, char **argv)
{
	struct rootasm_error e = { 0 };
	struct rootasm_exec_result res = { 0 };
	struct rootasm_exec_opts o = { .size = sizeof(o) };
	struct rootasm_layout *l;
	int i = 1, fd, r;
	bool report = false;

	if (i < argc && !strcmp(argv[i], "--report")) {
		report = true;
		i++;
	}
	if (i < argc && argv[i][0] == '-' && strcmp(argv[i], "--"))
		return cli_usage("exec: unknown option '%s'", argv[i]);
	if (i >= argc)
		return cli_usage("exec: missing LAYOUT");
	r = cli_load(argv[i++], &l);
	if (r < 0)
		return -r;
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i >= argc) {
		rootasm_layout_free(l);
		return cli_usage("exec: missing CMD");
	}
	o.deny_mount_api = rootasm_layout_deny_mount_api(l);
	fd = rootasm_assemble(cli_ctx, l, &e);
	rootasm_layout_free(l);
	if (fd < 0)
		return cli_fail(&e);
	r = rootasm_exec(cli_ctx, fd, argv + i, &o, &res, &e);
	close(fd);
	if (r < 0)
		return cli_fail(&e);
	if (report)
		fprintf(stderr, "rootasm: exec: %s exited with status %d, cgroup id %llu, read %s\n", argv[i],
			res.status, res.cgroupid,
			res.from_pidfd_info ? "through PIDFD_INFO_EXIT after reaping" : "from waitid (no PIDFD_INFO_EXIT)");
	return res.status;
}
