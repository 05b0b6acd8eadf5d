// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm assemble LAYOUT --attach DIR | --send-fd SOCKET */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cmd_assemble(int argc, char **argv)
{
	struct rootasm_error e = { 0 };
	struct rootasm_layout *l;
	const char *path = NULL, *attach = NULL, *sock = NULL;
	bool audit = false;
	int fd, r, wfd = -1, during = 0, at = 0, tree = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--attach") && i + 1 < argc)
			attach = argv[++i];
		else if (!strcmp(argv[i], "--send-fd") && i + 1 < argc)
			sock = argv[++i];
		else if (!strcmp(argv[i], "--audit"))
			audit = true;
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
	if (audit && !attach)
		return cli_usage("assemble: --audit goes with --attach");
	r = cli_load(path, &l);
	if (r < 0)
		return -r;
	if (audit) {
		/* Watch our own mount namespace from before the first mount is made. */
		int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);

		wfd = ns < 0 ? -errno : rootasm_watch_open(ns, &e);
		if (ns >= 0)
			close(ns);
		if (wfd < 0) {
			rootasm_layout_free(l);
			return cli_fail(&e);
		}
	}
	fd = rootasm_assemble(cli_ctx, l, &e);
	if (fd < 0) {
		rootasm_layout_free(l);
		if (wfd >= 0)
			close(wfd);
		return cli_fail(&e);
	}
	if (audit) {
		struct rootasm_mount_event ev[256];

		during = rootasm_watch_read(wfd, ev, 256, 0);
	}
	if (attach)
		r = rootasm_attach(fd, attach, &e);
	else
		r = rootasm_send_fd(fd, sock, path, &e);
	close(fd);
	rootasm_layout_free(l);
	if (r < 0) {
		if (wfd >= 0)
			close(wfd);
		return cli_fail(&e);
	}
	if (!audit)
		return 0;
	for (;;) {
		struct rootasm_mount_event ev[256];
		int n = rootasm_watch_read(wfd, ev, 256, at ? 0 : 100);

		if (n <= 0)
			break;
		for (int i = 0; i < n; i++)
			at += ev[i].attach && !ev[i].detach;
	}
	close(wfd);
	tree = rootasm_tree_count(attach);
	printf("audit: %d mount events while assembling, %d attach events at the attach, "
	       "the attached tree has %d mounts: %s\n", during, at, tree,
	       during == 0 && at == tree ? "ok" : "MISMATCH");
	return during == 0 && at == tree ? 0 : EXIT_RUNTIME;
}
