// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Delivery of an assembled tree (exec, the third way, is exec.c):
 *
 *   attach   move_mount(tree, "", AT_FDCWD, dir, F_EMPTY_PATH)   - the one call that
 *            touches the caller's mount namespace
 *   send-fd  socket(AF_UNIX) + SO_SNDTIMEO + connect (or an inherited connected AF_UNIX
 *            stream or seqpacket socket: SO_DOMAIN and SO_TYPE checked first)
 *            -> getsockopt(SO_PEERCRED): the listener must be root, us, or named
 *            -> sendmsg(one line of JSON, SCM_RIGHTS with the tree fd), with the same timeout
 *
 * A listener we did not expect never gets the tree; a listener that does not
 * accept cannot hold us: connect() on an AF_UNIX stream socket waits for room
 * in the backlog only as long as SO_SNDTIMEO says.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <jansson.h>

#include "json.h"
#include "proto.h"
#include "util.h"

int rootasm_attach(int tree_fd, const char *dir, struct rootasm_error *e)
{
	if (move_mount(tree_fd, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return ra_err(e, errno, -EBADF, "move_mount", dir, NULL);
	return 0;
}

int rootasm_attach_at(int tree_fd, int dir_fd, const char *path, unsigned int flags, struct rootasm_error *e)
{
	char what[64];

	if (flags)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "attach", path, "unknown flags 0x%x", flags);
	if (!path || !*path) {
		/* the directory fd itself is the mount point */
		snprintf(what, sizeof(what), "(fd %d)", dir_fd);
		if (move_mount(tree_fd, "", dir_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
			return ra_err(e, errno, -EBADF, "move_mount", what, NULL);
		return 0;
	}
	if (move_mount(tree_fd, "", dir_fd, path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return ra_err(e, errno, -EBADF, "move_mount", path, NULL);
	return 0;
}

#define SEND_DEFAULT_TIMEOUT_MS	5000

#define SOPT(o, field, def)	RA_OPT(o, struct rootasm_send_opts, field, def)

/* The size and flag rules of rootasm.h; 0 or a usage error in @e. */
static int opts_check(const struct rootasm_send_opts *o, const char *what, struct rootasm_error *e)
{
	int r = RA_OPTS_CHECK(o, struct rootasm_send_opts, RA_OPT_END(struct rootasm_send_opts, flags), "send-fd", what, e);

	if (r < 0)
		return r;
	if (o && (o->flags & ~ROOTASM_SEND_ANY_PEER))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "send-fd", what, "unknown flags 0x%x",
				   o->flags & ~ROOTASM_SEND_ANY_PEER);
	return 0;
}

static int set_timeout(int sock, int ms, const char *what, struct rootasm_error *e)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	if (setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return ra_err(e, errno, -EBADF, "setsockopt SO_SNDTIMEO", what, NULL);
	return 0;
}

/* The listener at the other end of @sock: root, our own uid, or one the caller named. */
static int check_peer(int sock, const struct rootasm_send_opts *o, const char *what, struct rootasm_error *e)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	const uid_t *uids = SOPT(o, peer_uids, NULL);
	size_t n = SOPT(o, n_peer_uids, 0);

	if (SOPT(o, flags, 0u) & ROOTASM_SEND_ANY_PEER)
		return 0;
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return ra_err(e, errno, -EBADF, "getsockopt SO_PEERCRED", what, NULL);
	if (cr.uid == 0 || cr.uid == geteuid())
		return 0;
	for (size_t i = 0; uids && i < n; i++)
		if (uids[i] == cr.uid)
			return 0;
	return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EACCES, "send-fd", what,
			   "the listener runs as uid %u (pid %d): not root, not us, not a uid allowed to receive the tree",
			   (unsigned int)cr.uid, (int)cr.pid);
}

static int send_tree(int sock, int tree_fd, const struct rootasm_send_opts *o, const char *what,
		     struct rootasm_error *e)
{
	const char *layout = SOPT(o, layout, NULL);
	_cleanup_free_ char *json = NULL, *line = NULL;
	json_t *j;
	int len, r;

	if (layout && !utf8_valid(layout))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "send-fd", what, "the layout name is not UTF-8");
	/* one line of JSON: a name with a newline or a quote in it cannot forge another message */
	j = json_pack("{s:s, s:i, s:s?}", "rootasm", "tree", "version", 2, "layout", layout);
	json = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII) : NULL;
	json_decref(j);
	if (!json || (len = asprintf(&line, "%s\n", json)) < 0)
		return ra_oom(e, "send-fd payload");
	r = ra_send_with_fd(sock, line, len, tree_fd, 0);
	if (r < 0)
		return ra_err(e, r, -EBADF, "sendmsg", what, r == -EAGAIN ? "timed out: the listener does not read" :
			      r == -EIO ? "a short send" : NULL);
	return 0;
}

int rootasm_send_fd_to(int tree_fd, int sock, const struct rootasm_send_opts *o, struct rootasm_error *e)
{
	char what[32];
	struct stat st;
	int type = 0, domain = 0;
	socklen_t len = sizeof(int);
	int r;

	snprintf(what, sizeof(what), "fd %d", sock);
	r = opts_check(o, what, e);
	if (r < 0)
		return r;
	if (fstat(sock, &st) < 0 || !S_ISSOCK(st.st_mode))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, ENOTSOCK, "send-fd", what, "not a socket");
	/* SCM_RIGHTS and SO_PEERCRED exist on AF_UNIX only: elsewhere the peer's uid reads as -1 */
	if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 || domain != AF_UNIX)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EAFNOSUPPORT, "send-fd", what,
				   "%s, not an AF_UNIX socket: a tree's fd passes only over AF_UNIX",
				   domain == AF_INET ? "an AF_INET (IPv4) socket" : domain == AF_INET6 ?
				   "an AF_INET6 (IPv6) socket" : domain == AF_NETLINK ? "an AF_NETLINK socket" :
				   "a socket of another address family");
	len = sizeof(int);
	if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || (type != SOCK_STREAM && type != SOCK_SEQPACKET))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EPROTOTYPE, "send-fd", what,
				   "an AF_UNIX socket, but not a connected stream or seqpacket one");
	r = set_timeout(sock, SOPT(o, timeout_ms, 0) > 0 ? SOPT(o, timeout_ms, 0) : SEND_DEFAULT_TIMEOUT_MS, what, e);
	if (r == 0)
		r = check_peer(sock, o, what, e);
	if (r == 0)
		r = send_tree(sock, tree_fd, o, what, e);
	return r;
}

int rootasm_send_fd(int tree_fd, const char *socket_path, const struct rootasm_send_opts *o,
		    struct rootasm_error *e)
{
	_cleanup_close_ int sock = -EBADF;
	struct sockaddr_un sa;
	int ms = SOPT(o, timeout_ms, 0) > 0 ? SOPT(o, timeout_ms, 0) : SEND_DEFAULT_TIMEOUT_MS, r;

	r = opts_check(o, socket_path, e);
	if (r < 0)
		return r;
	sock = ra_unix_socket(socket_path, SOCK_STREAM, &sa, e);
	if (sock < 0)
		return sock;
	/* AF_UNIX connect() waits for room in a full backlog only this long */
	r = set_timeout(sock, ms, socket_path, e);
	if (r < 0)
		return r;
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return ra_err(e, errno, -EBADF, "connect", socket_path,
			      errno == EAGAIN ? "timed out after %d ms: the listener's backlog is full" : NULL, ms);
	r = check_peer(sock, o, socket_path, e);
	if (r == 0)
		r = send_tree(sock, tree_fd, o, socket_path, e);
	return r;
}
