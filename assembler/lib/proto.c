// SPDX-License-Identifier: LGPL-2.1-or-later
/* The rootasmd protocol's wire layer (proto.h): one SOCK_SEQPACKET message, JSON, at most one fd. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "json.h"
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
