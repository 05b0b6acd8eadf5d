// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm assemble LAYOUT --attach DIR | --send-fd SOCKET */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cmd_assemble(int argc, char **argv)
{
	struct rootasm_error e = { 0 };
	struct rootasm_layout *l;
	const char *path = NULL, *attach = NULL, *sock = NULL;
	int fd, r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--attach") && i + 1 < argc)
			attach = argv[++i];
		else if (!strcmp(argv[i], "--send-fd") && i + 1 < argc)
			sock = argv[++i];
		else if (argv[i][0] == '-')
			return cli_usage("assemble: unknown option or missing value '%s'", argv[i]);
		else if (!path)
			path = argv[i];
		else
			return cli_usage("assemble: more than one layout");
	}
	if (!path)
		return cli_usage("assemble: missing LAYOUT");
	if (!!attach == !!sock)
		return cli_usage("assemble: give exactly one of --attach DIR or --send-fd SOCKET");
	r = cli_load(path, &l);
	if (r < 0)
		return -r;
	fd = rootasm_assemble(l, &e);
	if (fd < 0) {
		rootasm_layout_free(l);
		return cli_fail(&e);
	}
	if (attach)
		r = rootasm_attach(fd, attach, &e);
	else
		r = rootasm_send_fd(fd, sock, path, &e);
	close(fd);
	rootasm_layout_free(l);
	return r < 0 ? cli_fail(&e) : 0;
}
