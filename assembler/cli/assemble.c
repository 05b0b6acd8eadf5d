// SPDX-License-Identifier: LGPL-2.1-or-later
/* rootasm assemble LAYOUT [--via SOCKET] --attach DIR [--audit] | --send-fd SOCKET */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "util.h"

static const char help[] =
	"Usage: rootasm assemble [OPTION...] LAYOUT --attach DIR\n"
	"       rootasm assemble [OPTION...] LAYOUT --send-fd SOCKET | --send-fd-fd N\n"
	"Assemble LAYOUT into a detached mount tree, then deliver it:\n"
	"\n"
	"  --attach DIR    attach the whole tree at DIR with one move_mount(); the only\n"
	"                  operation on the caller's mount namespace\n"
	"  --audit         with --attach: watch this mount namespace with fanotify from\n"
	"                  before the first mount and check that it saw nothing while the\n"
	"                  tree was assembled and exactly the tree's mounts at the attach\n"
	"  --send-fd SOCKET connect to the AF_UNIX stream socket SOCKET and send the tree's\n"
	"                  fd (SCM_RIGHTS) and one line of JSON; see rootasm(1)\n"
	"  --send-fd-fd N  the same over fd N, a connected AF_UNIX stream or seqpacket\n"
	"                  socket we inherited (e.g. one end of a runtime's socketpair)\n"
	"  --peer-uid UID  the listener may also run as UID (repeatable); by default only\n"
	"                  root or our own uid receives the tree (SO_PEERCRED); a tree\n"
	"                  that may go to another uid is nosuid,nodev and locked\n"
	"  --timeout MS    give up connecting and sending after MS milliseconds (5000)\n"
	"  --via SOCKET    have rootasmd at SOCKET assemble LAYOUT (its path, made absolute;\n"
	"                  '-': the text, sent inline) with its image cache, then deliver\n"
	"                  the tree it sends as above\n"
	"  --json[=pretty] what was done as JSON: {attached: DIR or null, sent, mount_id:\n"
	"                  the tree's unique mount id (statx STATX_MNT_ID_UNIQUE), audit}\n"
	"  -q, --quiet     no --audit line (its verdict is the exit status)\n"
	"  --debug         trace every operation\n"
	"  -h, --help      this text\n"
	"\n"
	"LAYOUT '-' is read from standard input. Exit status: 0, 1 failure, 2 bad usage or layout.\n";

/* Count what fanotify saw: every event, or mounts attached (not moves). */
static int count_events(int wfd, int wait_ms, bool attach_only)
{
	struct rootasm_mount_event ev[256];
	int n, at = 0;

	while ((n = rootasm_watch_read(wfd, ev, 256, wait_ms)) > 0) {
		for (int i = 0; i < n; i++)
			at += !attach_only || (ev[i].attach && !ev[i].detach);
		wait_ms = 0;
	}
	return at;
}

int cmd_assemble(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_COMMON_LONGOPTS, CLI_ARG("attach", 'a'), CLI_ARG("send-fd", 's'), CLI_FLAG("audit", 'A'),
		CLI_ARG("send-fd-fd", 'F'), CLI_ARG("peer-uid", 'u'), CLI_ARG("timeout", 't'),
		CLI_ARG("via", 'v'), { 0 },
	};
	struct rootasm_send_opts so = { .size = sizeof(so) };
	struct rootasm_assemble_opts ao = { .size = sizeof(ao) };
	uid_t peers[64];
	long sockfd = -1;
	unsigned long long v;
	struct rootasm_error e = { 0 };
	struct rootasm_layout *l = NULL;
	const char *path, *attach = NULL, *sock = NULL, *via = NULL;
	bool audit = false;
	unsigned long long mnt_id;
	int c, fd, r, wfd = -1, during = 0, at = 0, tree = 0;

	while ((c = cli_getopt(argc, argv, NULL, opts, help, &r)) >= 0) {
		switch (c) {
		case 'a':
			attach = optarg;
			break;
		case 's':
			sock = optarg;
			break;
		case 'A':
			audit = true;
			break;
		case 'F':
			if (cli_number(optarg, 0, 65535, &v) < 0)
				return cli_usage("--send-fd-fd takes an fd number, not '%s'", optarg);
			sockfd = (long)v;
			break;
		case 'u':
			if (cli_number(optarg, 0, 4294967294UL, &v) < 0)
				return cli_usage("--peer-uid takes a uid, not '%s'", optarg);
			if (so.n_peer_uids == sizeof(peers) / sizeof(peers[0]))
				return cli_usage("at most %zu --peer-uid", sizeof(peers) / sizeof(peers[0]));
			peers[so.n_peer_uids++] = v;
			so.peer_uids = peers;
			break;
		case 't':
			if (cli_number(optarg, 1, 3600000, &v) < 0)
				return cli_usage("--timeout takes milliseconds (1-3600000), not '%s'", optarg);
			so.timeout_ms = (int)v;
			break;
		case 'v':
			via = optarg;
			break;
		}
	}
	if (c == CLI_OPTS_EXIT)
		return r;
	if ((r = cli_last_operand(argc, argv, "LAYOUT", NULL, &path)) != CLI_GO_ON)
		return r;
	if (!!attach + !!sock + (sockfd >= 0) != 1)
		return cli_usage("give exactly one of --attach DIR, --send-fd SOCKET or --send-fd-fd N");
	if (sockfd >= 0 && fcntl(sockfd, F_GETFD) < 0)
		return cli_usage("--send-fd-fd %ld: fd %ld is not open", sockfd, sockfd);
	if (audit && !attach)
		return cli_usage("--audit goes with --attach");
	if (!via) {
		r = cli_load(path, 0, &l);
		if (r)
			return r;
	}
	if (audit) {
		/* watch our own mount namespace from before the first mount is made */
		int ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);

		wfd = ns < 0 ? -errno : rootasm_watch_open(ns, &e);
		if (ns >= 0)
			close(ns);
		if (wfd < 0) {
			rootasm_layout_free(l);
			return cli_fail(&e);
		}
	}
	/*
	 * who it goes to: whether that makes it a user's tree (nosuid,nodev,
	 * locked) is the grant's, here or rootasmd's (the receivers go with the request)
	 */
	ao.receivers = so.n_peer_uids ? peers : NULL;
	ao.n_receivers = so.n_peer_uids;
	fd = via ? cli_via_assemble(via, path, ao.receivers, ao.n_receivers, &e) :
		   rootasm_assemble_with(cli_context(), l, &ao, &e);
	rootasm_layout_free(l);
	if (fd < 0) {
		if (wfd >= 0)
			close(wfd);
		return cli_fail(&e);
	}
	if (audit)
		during = count_events(wfd, 0, false);
	mnt_id = ra_fd_mount_id(fd, NULL);	/* the tree's root mount: it keeps its id when attached */
	if (attach)
		r = rootasm_attach(fd, attach, &e);
	so.layout = path;
	if (sock)
		r = rootasm_send_fd(fd, sock, &so, &e);
	else if (sockfd >= 0)
		r = rootasm_send_fd_to(fd, sockfd, &so, &e);
	close(fd);
	if (r < 0) {
		if (wfd >= 0)
			close(wfd);
		return cli_fail(&e);
	}
	if (audit) {
		at = count_events(wfd, 100, true);
		close(wfd);
		tree = rootasm_tree_count(attach);
	}
	if (cli.json) {
		json_t *o = json_pack("{s:s?, s:b}", "attached", attach, "sent", !attach);

		/* the id that names this tree in statmount(2)/listmount(2) and mountinfo-free checks; null if unknown */
		if (o && json_object_set_new(o, "mount_id", mnt_id ? json_integer((json_int_t)mnt_id) : json_null()) < 0) {
			json_decref(o);
			o = NULL;
		}

		if (o && audit)
			json_object_set_new(o, "audit", json_pack("{s:i, s:i, s:i, s:b}", "during", during, "at_attach", at,
								  "tree_mounts", tree, "ok", during == 0 && at == tree));
		if (cli_json_out(o) < 0)
			return EXIT_RUNTIME;
	} else if (audit && !cli.quiet) {
		printf("audit: %d mount events while assembling, %d attach events at the attach, "
		       "the attached tree has %d mounts: %s\n", during, at, tree,
		       during == 0 && at == tree ? "ok" : "MISMATCH");
	}
	return !audit || (during == 0 && at == tree) ? 0 : EXIT_RUNTIME;
}
