/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rootasmd protocol's wire layer (proto.c), shared by the client calls
 * (client.c) and the daemon (assembler/daemon/). One message is one
 * SOCK_SEQPACKET record: a JSON object of at most RA_MSG_MAX bytes, with at
 * most one fd (SCM_RIGHTS). See assembler/daemon/PROTOCOL.md.
 *
 * SOCK_SEQPACKET rather than a stream: the kernel keeps message boundaries,
 * so there is no framing to get wrong; an fd arrives with exactly the message
 * it belongs to; a message larger than the reader's buffer is cut and flagged
 * (MSG_TRUNC), so an oversized message is refused whole instead of
 * desynchronising a stream; and a connection ends with a clean EOF.
 */
#ifndef ROOTASM_PROTO_H
#define ROOTASM_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "rootasm.h"

#define RA_PROTO_VERSION	1
#define RA_MSG_MAX		(64u * 1024)	/* one message, either way */
#define RA_PROTO_MAX_RECEIVERS	64		/* an assemble request's "receivers" */
#define RA_PROTO_MAX_GROUPS	1024		/* its "as": groups */
#define RA_PROTO_MAX_DIRS	64		/* its "as": each limit's directories */

/* A uid or gid in a message: an integer 0-4294967294 ((uid_t)-1 is none). */
static inline bool ra_proto_is_id(json_t *v)
{
	return json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 4294967294LL;
}

/*
 * A socket of @type (close-on-exec) to connect to the AF_UNIX path @path,
 * whose address it fills in @sa: the fd, or -errno with @e filled (a path
 * too long for sun_path: a usage error of "connect"). Shared by the client
 * calls (client.c) and rootasm_send_fd() (deliver.c).
 */
struct sockaddr_un;
int ra_unix_socket(const char *path, int type, struct sockaddr_un *sa, struct rootasm_error *e);

/* One sendmsg() of @data with @fd (SCM_RIGHTS; none when < 0): 0, or -errno (-EIO: a short send). */
int ra_send_with_fd(int sock, const void *data, size_t len, int fd, int flags);

/*
 * Its reverse, for a fixed-size record: one recvmsg() of exactly @len bytes
 * into @data with exactly one fd (close-on-exec) into *ret_fd. 0; -ECANCELED
 * when the peer closed; -EBADMSG for anything else (another size, no fd,
 * more than one: what came is closed); or -errno.
 */
int ra_recv_with_fd(int sock, void *data, size_t len, int *ret_fd, int flags);

/*
 * Send @o (taken: always dropped) as one message, with @fd (SCM_RIGHTS) when
 * >= 0. @flags: MSG_DONTWAIT for a peer that must not block us. 0 or -errno.
 */
int ra_msg_send(int sock, json_t *o, int fd, int flags);

/*
 * Receive one message into *ret (parsed; caller decrefs) and its fd into
 * *ret_fd (-EBADF when none; caller owns it). -EMSGSIZE: larger than
 * RA_MSG_MAX (or more than one fd: every fd received is closed); -EBADMSG:
 * not a JSON object; 0 with *ret NULL: the peer closed the connection.
 */
int ra_msg_recv(int sock, json_t **ret, int *ret_fd);

/*
 * The principal an administrator client asks for ("as", PROTOCOL.md):
 * {"admin": true} or {"uid", "gid", "groups"}, with its limits ("layouts",
 * "sources"). A user namespace does not travel. NULL: out of memory.
 */
struct rootasm_principal;
json_t *ra_proto_principal(const struct rootasm_principal *p);
/* Its reverse, every key and value checked: a new principal (caller frees), or -EINVAL with @e. */
int ra_proto_principal_parse(json_t *o, struct rootasm_principal **ret, struct rootasm_error *e);

#endif
