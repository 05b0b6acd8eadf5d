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

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U	/* Linux 6.8 */
#endif

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
	"                  root or our own uid receives the tree (SO_PEERCRED)\n"
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

/* The unique mount id of the tree's root mount, @fd (it keeps it when attached), or 0. */
static unsigned long long tree_mount_id(int fd)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID_UNIQUE, &sx) < 0 ||
	    !(sx.stx_mask & STATX_MNT_ID_UNIQUE))
		return 0;
	return sx.stx_mnt_id;
}

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
		CLI_COMMON_LONGOPTS,
		{ "attach", required_argument, NULL, 'a' },
		{ "send-fd", required_argument, NULL, 's' },
		{ "audit", no_argument, NULL, 'A' },
		{ "send-fd-fd", required_argument, NULL, 'F' },
		{ "peer-uid", required_argument, NULL, 'u' },
		{ "timeout", required_argument, NULL, 't' },
		{ "via", required_argument, NULL, 'v' },
		{ 0 },
	};
	struct rootasm_send_opts so = { .size = sizeof(so) };
	uid_t peers[64];
	long sockfd = -1;
	char *end;
	struct rootasm_error e = { 0 };
	struct rootasm_layout *l = NULL;
	const char *path, *attach = NULL, *sock = NULL, *via = NULL;
	bool audit = false;
	unsigned long long mnt_id;
	int c, fd, r, wfd = -1, during = 0, at = 0, tree = 0;

	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) >= 0) {
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
			errno = 0;
			sockfd = strtol(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || errno || sockfd < 0 || sockfd > 65535)
				return cli_usage("--send-fd-fd takes an fd number, not '%s'", optarg);
			break;
		case 'u': {
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || errno || v > 4294967294UL)
				return cli_usage("--peer-uid takes a uid, not '%s'", optarg);
			if (so.n_peer_uids == sizeof(peers) / sizeof(peers[0]))
				return cli_usage("at most %zu --peer-uid", sizeof(peers) / sizeof(peers[0]));
			peers[so.n_peer_uids++] = v;
			so.peer_uids = peers;
			break;
		}
		case 't':
			errno = 0;
			so.timeout_ms = strtol(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || errno || so.timeout_ms <= 0 || so.timeout_ms > 3600000)
				return cli_usage("--timeout takes milliseconds (1-3600000), not '%s'", optarg);
			break;
		case 'v':
			via = optarg;
			break;
		default:
			if ((r = cli_common(c, argc, argv, help)) != CLI_GO_ON)
				return r;
		}
	}
	if (optind >= argc)
		return cli_usage("missing LAYOUT");
	path = argv[optind++];
	if (optind < argc)
		return cli_usage("more than one LAYOUT ('%s')", argv[optind]);
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
	fd = via ? cli_via_assemble(via, path, &e) : rootasm_assemble(cli_context(), l, &e);
	rootasm_layout_free(l);
	if (fd < 0) {
		if (wfd >= 0)
			close(wfd);
		return cli_fail(&e);
	}
	if (audit)
		during = count_events(wfd, 0, false);
	mnt_id = tree_mount_id(fd);
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
