// SPDX-License-Identifier: LGPL-2.1-or-later
/* The rootasmd protocol's wire layer (proto.h): one SOCK_SEQPACKET message, JSON, at most one fd. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "json.h"
#include "principal.h"
#include "proto.h"
#include "util.h"

int ra_unix_socket(const char *path, int type, struct sockaddr_un *sa, struct rootasm_error *e)
{
	int sock;

	if (strlen(path) >= sizeof(sa->sun_path))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, ENAMETOOLONG, "connect", path, NULL);
	*sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
	strcpy(sa->sun_path, path);
	sock = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return ra_err(e, errno, -EBADF, "socket", path, NULL);
	return sock;
}

int ra_send_with_fd(int sock, const void *data, size_t len, int fd, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { 0 };
	struct iovec iov = { (void *)data, len };
	ssize_t n;

	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL | flags)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int ra_recv_with_fd(int sock, void *data, size_t len, int *ret_fd, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { data, len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	ssize_t n;

	*ret_fd = -EBADF;
	memset(&u, 0, sizeof(u));
	while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | flags)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -errno;
	c = CMSG_FIRSTHDR(&msg);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(ret_fd, CMSG_DATA(c), sizeof(int));
	if (n == 0 && *ret_fd < 0)
		return -ECANCELED;
	if ((size_t)n != len || *ret_fd < 0 || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		if (*ret_fd >= 0)
			close(*ret_fd);
		*ret_fd = -EBADF;
		return -EBADMSG;
	}
	return 0;
}

int ra_msg_send(int sock, json_t *o, int fd, int flags)
{
	char *text;
	size_t len;
	int r;

	if (!o)
		return -ENOMEM;
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!text)
		return -ENOMEM;
	len = strlen(text);
	r = len > RA_MSG_MAX ? -EMSGSIZE : ra_send_with_fd(sock, text, len, fd, flags);
	free(text);
	return r;
}

int ra_msg_recv(int sock, json_t **ret, int *ret_fd)
{
	/* room for a few fds, so that a peer sending more is seen (and refused), not silently cut */
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} u;
	char *buf = malloc(RA_MSG_MAX + 1);
	struct iovec iov = { buf, RA_MSG_MAX + 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	int nfds = 0, fd = -EBADF, r = 0;
	json_error_t je;
	ssize_t n;

	*ret = NULL;
	*ret_fd = -EBADF;
	if (!buf)
		return -ENOMEM;
	while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n < 0) {
		r = -errno;
		free(buf);
		return r;
	}
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (nfds++ == 0)
				fd = f;
			else
				close(f);
		}
	}
	if (n == 0 && nfds == 0) {
		free(buf);
		return 0;	/* EOF */
	}
	if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || (size_t)n > RA_MSG_MAX || nfds > 1)
		r = -EMSGSIZE;
	if (!r) {
		*ret = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, &je);
		if (!*ret || !json_is_object(*ret)) {
			json_decref(*ret);
			*ret = NULL;
			r = -EBADMSG;
		}
	}
	free(buf);
	if (r < 0) {
		close_fdp(&fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/* ------------------------------------------------------------ "as" */

static json_t *strv_json(char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_string(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

json_t *ra_proto_principal(const struct rootasm_principal *p)
{
	json_t *o = json_object(), *g = json_array();
	bool oom = !o || !g;

	if (!oom && p->admin) {
		oom = json_object_set_new(o, "admin", json_true()) < 0;
		json_decref(g);
		g = NULL;
	} else if (!oom) {
		for (size_t i = 0; !oom && i < p->ngroups; i++)
			oom = json_array_append_new(g, json_integer(p->groups[i])) < 0;
		oom = oom || json_object_set_new(o, "uid", json_integer(p->uid)) < 0 ||
		      json_object_set_new(o, "gid", json_integer(p->gid)) < 0 ||
		      json_object_set_new(o, "groups", g) < 0;
		g = NULL;
	}
	if (!oom && p->limit_layouts)
		oom = json_object_set_new(o, "layouts", strv_json(p->layout_dirs, p->nlayout_dirs)) < 0;
	if (!oom && p->limit_sources)
		oom = json_object_set_new(o, "sources", strv_json(p->source_dirs, p->nsource_dirs)) < 0;
	json_decref(g);
	if (oom) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* A limit's directories: at most 64 strings (rootasm_principal_limit() checks each is a clean path). */
static int strv_of(json_t *a, const char **v, size_t *n)
{
	json_t *s;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) > RA_PROTO_MAX_DIRS)
		return -EINVAL;
	json_array_foreach(a, i, s) {
		if (!json_is_string(s))
			return -EINVAL;
		v[i] = json_string_value(s);
	}
	*n = json_array_size(a);
	return 0;
}

int ra_proto_principal_parse(json_t *o, struct rootasm_principal **ret, struct rootasm_error *e)
{
	static const char *const known[] = { "admin", "uid", "gid", "groups", "layouts", "sources", NULL };
	json_t *admin = json_object_get(o, "admin"), *uid = json_object_get(o, "uid"), *gid = json_object_get(o, "gid"),
	       *groups = json_object_get(o, "groups"), *v;
	const char *k, *dirs[RA_PROTO_MAX_DIRS];
	gid_t g[RA_PROTO_MAX_GROUPS];
	struct rootasm_principal *p = NULL;
	size_t i, n;
	int r;

	if (!json_is_object(o))
		goto bad;
	json_object_foreach(o, k, v) {
		for (i = 0; known[i] && strcmp(known[i], k); i++)
			;
		if (!known[i])
			goto bad;
	}
	if (admin && !json_is_true(admin))
		goto bad;
	if (admin && (uid || gid || groups))
		goto bad;
	if (!admin && (!ra_proto_is_id(uid) || !ra_proto_is_id(gid) || (groups && !json_is_array(groups)) ||
		       json_array_size(groups) > RA_PROTO_MAX_GROUPS))
		goto bad;
	json_array_foreach(groups, i, v) {
		if (!ra_proto_is_id(v))
			goto bad;
		g[i] = (gid_t)json_integer_value(v);
	}
	r = admin ? rootasm_principal_admin(&p, e) :
		    rootasm_principal_user((uid_t)json_integer_value(uid), (gid_t)json_integer_value(gid), g,
					   json_array_size(groups), -EBADF, &p, e);
	if (r < 0)
		return r;
	for (unsigned int w = ROOTASM_LIMIT_LAYOUTS; w <= ROOTASM_LIMIT_SOURCES; w++) {
		json_t *a = json_object_get(o, w == ROOTASM_LIMIT_LAYOUTS ? "layouts" : "sources");

		if (!a)
			continue;
		r = strv_of(a, dirs, &n);
		if (r == 0)
			r = rootasm_principal_limit(p, w, dirs, n, e);
		else
			r = ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "request", "as", "\"%s\": at most %d directories",
					w == ROOTASM_LIMIT_LAYOUTS ? "layouts" : "sources", RA_PROTO_MAX_DIRS);
		if (r < 0) {
			rootasm_principal_free(p);
			return r;
		}
	}
	*ret = p;
	return 0;
bad:
	return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "request", "as", "\"as\" is {\"admin\": true} or "
			   "{\"uid\", \"gid\", \"groups\" (at most %d)}, with \"layouts\" and \"sources\" "
			   "(at most %d directories each)", RA_PROTO_MAX_GROUPS, RA_PROTO_MAX_DIRS);
}
