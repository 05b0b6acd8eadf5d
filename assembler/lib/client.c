// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Client calls of rootasmd (rootasm.h, "daemon client"): one connection, one
 * request at a time, each a message of the protocol (proto.h, PROTOCOL.md):
 *
 *   connect    socket(AF_UNIX, SOCK_SEQPACKET) + connect(path)
 *   assemble   {"rootasm":1,"op":"assemble","layout":PATH | "layout_text":TEXT,...} [+ userns fd]
 *              -> {"rootasm":1,"ok":true,...} + the tree's fd, or {"rootasm":1,"error":{...}}
 *   probe      {"rootasm":1,"op":"probe"}  -> the reply's JSON text
 *   status     {"rootasm":1,"op":"status"} -> the reply's JSON text
 *
 * A reply's fd is checked before it is handed on: an O_PATH fd of a
 * directory that is the root of a mount attached nowhere in the caller's
 * namespace (the daemon never attaches it; not_a_tree()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "json.h"
#include "mntinfo.h"
#include "principal.h"
#include "proto.h"
#include "util.h"

struct rootasm_client {
	int sock;
	bool assembling;	/* rootasm_client_assemble_send() sent a request whose reply is still to be read */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

int rootasm_client_connect(const char *path, struct rootasm_client **ret, struct rootasm_error *e)
{
	struct sockaddr_un sa;
	struct timeval tv = { .tv_sec = 300 };	/* an assembly of thousands of mounts takes seconds, not minutes */
	_cleanup_close_ int sock = -EBADF;
	struct rootasm_client *c;

	if (!path || !*path || !ret)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "connect", path, "invalid arguments");
	sock = ra_unix_socket(path, SOCK_SEQPACKET, &sa, e);
	if (sock < 0)
		return sock;
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return ra_err(e, errno, -EBADF, "connect", path, errno == EPROTOTYPE ?
			      "not a SOCK_SEQPACKET socket: is this rootasmd's?" : NULL);
	(void)setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	c = calloc(1, sizeof(*c));
	if (!c)
		return ra_oom(e, "connect");
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->sock = take_fd(sock);
	*ret = c;
	return 0;
}

void rootasm_client_close(struct rootasm_client *c)
{
	if (!c)
		return;
	close_fdp(&c->sock);
	free(c);
}

/* @req sent (taken; its reply read by receive()): 0, or -errno with @e filled. */
static int send_request(struct rootasm_client *c, json_t *req, int send_fd, struct rootasm_error *e)
{
	int r;

	/* one request at a time: the reply read next must be this request's */
	if (c->assembling) {
		json_decref(req);
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EBUSY, "send request", c->path,
				   "the reply to the assemble request sent is still to be read");
	}
	r = ra_msg_send(c->sock, req, send_fd, 0);
	if (r == -ENOMEM)
		return ra_oom(e, "request");
	/* a daemon that refused us at connect has sent why and closed: receive() reads that */
	if (r < 0 && r != -EPIPE && r != -ECONNRESET)
		return ra_err(e, r, -EBADF, "send request", c->path, r == -EMSGSIZE ?
			      "larger than the protocol's message cap" : NULL);
	return 0;
}

/* The reply to the request sent: returns it (caller decrefs) and its fd, or -errno with @e filled. */
static int receive(struct rootasm_client *c, json_t **ret, int *ret_fd, struct rootasm_error *e)
{
	json_t *rep = NULL, *err;
	int r, fd = -EBADF;

	*ret = NULL;
	*ret_fd = -EBADF;
	r = ra_msg_recv(c->sock, &rep, &fd);
	/*
	 * A daemon that closed without reading our request leaves us ECONNRESET,
	 * which the kernel reports before the messages still queued: the reply
	 * saying why may be next.
	 */
	if (r == -ECONNRESET)
		r = ra_msg_recv(c->sock, &rep, &fd);
	if (r == -ENOMEM)
		return ra_oom(e, "reply");
	if (r < 0)
		return ra_err(e, r, -EBADF, "receive reply", c->path, r == -EAGAIN ? "timed out" : NULL);
	if (!rep)
		return ra_err(e, ECONNRESET, -EBADF, "receive reply", c->path, "rootasmd closed the connection");
	if (json_integer_value(json_object_get(rep, "rootasm")) != RA_PROTO_VERSION) {
		json_decref(rep);
		close_fdp(&fd);
		return ra_err(e, EPROTO, -EBADF, "receive reply", c->path, "not a rootasm protocol %d reply",
			      RA_PROTO_VERSION);
	}
	err = json_object_get(rep, "error");
	if (err) {
		ra_error_from_json(err, e ? e : &(struct rootasm_error){ 0 });
		r = e ? -e->err : -EIO;
		json_decref(rep);
		close_fdp(&fd);
		return r;
	}
	*ret = rep;
	*ret_fd = fd;
	return 0;
}

/* One request, one reply: returns the reply (caller decrefs) and its fd, or -errno with @e filled. */
static int call(struct rootasm_client *c, json_t *req, int send_fd, json_t **ret, int *ret_fd, struct rootasm_error *e)
{
	int r = send_request(c, req, send_fd, e);

	*ret = NULL;
	*ret_fd = -EBADF;
	return r < 0 ? r : receive(c, ret, ret_fd, e);
}

#define OPT(o, field, def)	RA_OPT(o, struct rootasm_client_assemble_opts, field, def)

int rootasm_client_assemble_send(struct rootasm_client *c, const struct rootasm_client_assemble_opts *o,
			    struct rootasm_error *e)
{
	struct ra_jb b = { false };
	const char *layout = OPT(o, layout, NULL), *text = OPT(o, layout_text, NULL);
	unsigned int flags = OPT(o, flags, 0u);
	int nsfd = OPT(o, userns_fd, -EBADF), r;
	const uid_t *rv = OPT(o, receivers, (const uid_t *)NULL);
	size_t n = rv ? OPT(o, n_receivers, (size_t)0) : 0;
	json_t *req;

	if (!c || !o)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "assemble via rootasmd", layout, "invalid arguments");
	r = ra_opts_size(o, o->size, RA_OPT_END(struct rootasm_client_assemble_opts, flags), sizeof(*o));
	if (r == -E2BIG)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, E2BIG, "assemble via rootasmd", layout,
				   "struct rootasm_client_assemble_opts of %zu bytes sets fields this library (%s) does not know",
				   o->size, ROOTASM_VERSION_STRING);
	if (r < 0 || !!layout == !!text || (flags & ~ROOTASM_CLIENT_USERNS) || ((flags & ROOTASM_CLIENT_USERNS) && nsfd < 0))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "assemble via rootasmd", layout, "invalid arguments");
	if (layout && layout[0] != '/')
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "assemble via rootasmd", layout,
				   "the daemon resolves nothing against a client's working directory: give an absolute path");
	req = json_object();
	ra_jset(&b, req, "rootasm", json_integer(RA_PROTO_VERSION));
	ra_jset(&b, req, "op", ra_jstr("assemble"));
	if (layout) {
		ra_jset(&b, req, "layout", ra_jstr(layout));
	} else {
		json_t *t = json_stringn(text, OPT(o, layout_len, (size_t)0) ? OPT(o, layout_len, (size_t)0) : strlen(text));

		if (!t) {
			json_decref(req);
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "assemble via rootasmd", NULL,
					   "an inline layout must be UTF-8 text");
		}
		ra_jset(&b, req, "layout_text", t);
		if (OPT(o, name, NULL))
			ra_jset(&b, req, "name", ra_jstr(OPT(o, name, NULL)));
	}
	if (flags & ROOTASM_CLIENT_USERNS)
		ra_jset(&b, req, "userns", json_true());
	if (rv && n) {
		json_t *a;

		if (n > RA_PROTO_MAX_RECEIVERS) {
			json_decref(req);
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, E2BIG, "assemble via rootasmd", layout,
					   "at most %d receivers", RA_PROTO_MAX_RECEIVERS);
		}
		a = json_array();
		for (size_t i = 0; a && i < n; i++)
			if (json_array_append_new(a, json_integer(rv[i])) < 0)
				b.oom = true;
		ra_jset(&b, req, "receivers", a);
	}
	if (OPT(o, principal, NULL)) {
		const struct rootasm_principal *p = OPT(o, principal, NULL);

		if (p->userns_fd >= 0 || p->ngroups > RA_PROTO_MAX_GROUPS || p->nlayout_dirs > RA_PROTO_MAX_DIRS ||
		    p->nsource_dirs > RA_PROTO_MAX_DIRS) {
			json_decref(req);
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "assemble via rootasmd", layout,
					   "the principal sent: no user namespace, at most %d groups, at most %d "
					   "directories per limit", RA_PROTO_MAX_GROUPS, RA_PROTO_MAX_DIRS);
		}
		ra_jset(&b, req, "as", ra_proto_principal(p));
	}
	if (!OPT(o, upper_dir, NULL) != !OPT(o, work_dir, NULL) ||
	    (OPT(o, upper_dir, NULL) && (o->upper_dir[0] != '/' || o->work_dir[0] != '/'))) {
		json_decref(req);
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "assemble via rootasmd", layout,
				   "upper_dir and work_dir: both absolute, or neither");
	}
	if (OPT(o, upper_dir, NULL))
		ra_jset(&b, req, "upper", json_pack("{s:s, s:s}", "upperdir", o->upper_dir, "workdir", o->work_dir));
	if (b.oom) {
		json_decref(req);
		return ra_oom(e, "request");
	}
	/* (the request is taken) */
	r = send_request(c, req, flags & ROOTASM_CLIENT_USERNS ? nsfd : -EBADF, e);
	if (r == 0)
		c->assembling = true;
	return r;
}

/*
 * Why the tree's fd @fd (a directory) is not what the protocol promises, or
 * NULL: the root of a mount that is attached nowhere in our namespace. A
 * reply with an attached mount's fd (a daemon that is not rootasmd, at the
 * configured socket) would have the caller change, move or cover a mount of
 * its own namespace (mount_setattr(), move_mount()). statmount() finds the
 * mounts of our namespace only: a detached tree is in an anonymous one.
 * Without unique mount ids (before Linux 6.8) only the directory is checked.
 */
static const char *not_a_tree(int fd)
{
	_cleanup_free_ struct ra_statmount *sm = NULL;
	bool is_root = false;
	uint64_t id = ra_fd_mount_id(fd, &is_root);

	if (!id)
		return NULL;
	if (!is_root)
		return "the reply's fd is not the root of a mount";
	if (ra_statmount(id, RA_STATMOUNT_MNT_BASIC, 0, &sm) == 0)
		return "the reply's fd is a mount attached in this mount namespace, not a detached tree";
	return NULL;
}

int rootasm_client_assemble_receive(struct rootasm_client *c, struct rootasm_error *e)
{
	const char *why;
	json_t *rep;
	struct stat st;
	int fd, r;

	if (!c || !c->assembling)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "assemble via rootasmd", c ? c->path : NULL,
				   c ? "no assemble request was sent" : "invalid arguments");
	c->assembling = false;
	r = receive(c, &rep, &fd, e);
	if (r < 0)
		return r;
	json_decref(rep);
	/* what we hand on must be what the protocol promises */
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close_fdp(&fd);
		return ra_err(e, EPROTO, -EBADF, "receive reply", c->path, "the reply carries no directory fd");
	}
	why = not_a_tree(fd);
	if (why) {
		close_fdp(&fd);
		return ra_err(e, EPROTO, -EBADF, "receive reply", c->path, "%s", why);
	}
	return fd;
}

int rootasm_client_assemble(struct rootasm_client *c, const struct rootasm_client_assemble_opts *o,
			    struct rootasm_error *e)
{
	int r = rootasm_client_assemble_send(c, o, e);

	return r < 0 ? r : rootasm_client_assemble_receive(c, e);
}

static int text_call(struct rootasm_client *c, const char *op, char **ret, struct rootasm_error *e)
{
	struct ra_jb b = { false };
	json_t *req = json_object(), *rep = NULL;
	int fd = -EBADF, r;

	if (!c || !ret)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, op, NULL, "invalid arguments");
	ra_jset(&b, req, "rootasm", json_integer(RA_PROTO_VERSION));
	ra_jset(&b, req, "op", ra_jstr(op));
	if (b.oom) {
		json_decref(req);
		return ra_oom(e, "request");
	}
	r = call(c, req, -EBADF, &rep, &fd, e);
	if (r < 0)
		return r;
	close_fdp(&fd);
	*ret = json_dumps(rep, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(rep);
	return *ret ? 0 : ra_oom(e, op);
}

int rootasm_client_probe(struct rootasm_client *c, char **ret_json, struct rootasm_error *e)
{
	return text_call(c, "probe", ret_json, e);
}

int rootasm_client_status(struct rootasm_client *c, char **ret_json, struct rootasm_error *e)
{
	return text_call(c, "status", ret_json, e);
}
