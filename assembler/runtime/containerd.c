// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Four questions to containerd's API on its socket, without a Go process per
 * container create (ctr took tens of milliseconds): gRPC over HTTP/2 with
 * prior knowledge, the least of both a client needs.
 *
 *   Images.List {name==NAME} -> [Image {target: Descriptor {media_type, digest}}]
 *   Content.Read {digest}    -> ReadContentResponse {data}...  (an index)
 *   Containers.Get {id}      -> Container {snapshotter, snapshot_key}
 *   Snapshots.Stat {snapshotter, key} -> Info {parent}
 *
 * HTTP/2 (RFC 9113): the client preface, a SETTINGS and a WINDOW_UPDATE
 * that open the flow-control windows wider than any answer read, one HEADERS
 * frame (HPACK, RFC 7541: every field a literal without indexing, no
 * Huffman coding; a server may answer in any HPACK it likes, which this
 * client never decodes: it reads DATA, not headers) and one DATA frame with
 * END_STREAM; the server's SETTINGS are acknowledged, its PINGs answered.
 * gRPC: each message a 5-byte prefix (not compressed, length) and protobuf;
 * a call that ends without a message (a trailers-only answer: NotFound,
 * say) is "no answer". Every length is checked against what was read; the
 * answer is capped at 1 MiB and 5 s.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "runtime.h"
#include "util.h"

#define ANSWER_MAX	(1u << 20)
#define TIMEOUT_MS	5000

enum { F_DATA = 0, F_HEADERS = 1, F_RST = 3, F_SETTINGS = 4, F_PING = 6, F_GOAWAY = 7, F_WINDOW_UPDATE = 8 };
/*
 * The flow-control window this client opens, for the stream and the
 * connection: more than it ever reads (an answer's messages are put() up to
 * 2 * ANSWER_MAX), so the server never waits for a WINDOW_UPDATE. HTTP/2's
 * default, 65535, stopped an index larger than that until the deadline.
 */
#define WINDOW		(4u * ANSWER_MAX)
#define DEFAULT_WINDOW	65535u
#define S_INITIAL_WINDOW_SIZE 0x4
enum { END_STREAM = 0x1, ACK = 0x1, END_HEADERS = 0x4, PADDED = 0x8, PRIORITY = 0x20 };

struct buf {
	unsigned char *p;
	size_t n, cap;
	bool oom;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->oom || n > ANSWER_MAX || b->n + n > ANSWER_MAX * 2) {
		b->oom = true;
		return;
	}
	if (b->n + n > b->cap) {
		size_t cap = (b->n + n) * 2;
		unsigned char *p = realloc(b->p, cap);

		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void put_byte(struct buf *b, unsigned char c)
{
	put(b, &c, 1);
}

/* @v, 4 bytes big-endian (HTTP/2's and gRPC's numbers) */
static void put_be32(struct buf *b, uint32_t v)
{
	put(b, (unsigned char[]){ v >> 24, v >> 16, v >> 8, v }, 4);
}

/* An HTTP/2 frame header: 24-bit length, type, flags, 31-bit stream id. */
static void frame(struct buf *b, size_t len, int type, int flags, uint32_t stream)
{
	unsigned char h[9] = { len >> 16, len >> 8, len, type, flags, stream >> 24 & 0x7f, stream >> 16, stream >> 8,
			       stream };

	put(b, h, sizeof(h));
}

/* An HPACK integer of @prefix bits after @first's other bits (RFC 7541 5.1). */
static void hpack_int(struct buf *b, unsigned char first, int prefix, size_t v)
{
	size_t max = (1u << prefix) - 1;

	if (v < max) {
		put_byte(b, first | v);
		return;
	}
	put_byte(b, first | max);
	for (v -= max; v >= 128; v >>= 7)
		put_byte(b, (v & 127) | 128);
	put_byte(b, v);
}

/* A header field, a literal without indexing of a new name, neither Huffman-coded (RFC 7541 6.2.2). */
static void hpack_field(struct buf *b, const char *name, const char *value)
{
	put_byte(b, 0x00);
	hpack_int(b, 0, 7, strlen(name));
	put(b, name, strlen(name));
	hpack_int(b, 0, 7, strlen(value));
	put(b, value, strlen(value));
}

/* A protobuf varint. */
static void pb_varint(struct buf *b, uint64_t v)
{
	for (; v >= 128; v >>= 7)
		put_byte(b, (v & 127) | 128);
	put_byte(b, v);
}

/* A length-delimited protobuf field (a string, bytes, a message). */
static void pb_bytes(struct buf *b, unsigned int field, const void *d, size_t n)
{
	pb_varint(b, field << 3 | 2);
	pb_varint(b, n);
	put(b, d, n);
}

/* The varint at m[*i] (of @n bytes) into *v, *i past it: 0, or -1 (cut short, or longer than 64 bits). */
static int pb_read_varint(const unsigned char *m, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (int shift = 0;; shift += 7) {
		if (*i >= n || shift > 63)
			return -1;
		*v |= (uint64_t)(m[*i] & 127) << shift;
		if (!(m[(*i)++] & 128))
			return 0;
	}
}

/* The length-delimited field @field of the message @m (@n bytes) into *ret, *ret_n: 0, or -1 (none, or broken). */
static int pb_get(const unsigned char *m, size_t n, unsigned int field, const unsigned char **ret, size_t *ret_n)
{
	size_t i = 0;

	while (i < n) {
		uint64_t key, v;

		if (pb_read_varint(m, n, &i, &key) < 0)
			return -1;
		switch (key & 7) {
		case 0:
			if (pb_read_varint(m, n, &i, &v) < 0)
				return -1;
			break;
		case 1:
			i += 8;
			break;
		case 5:
			i += 4;
			break;
		case 2:
			if (pb_read_varint(m, n, &i, &v) < 0 || v > n - i)
				return -1;
			if ((key >> 3) == field) {
				*ret = m + i;
				*ret_n = v;
				return 0;
			}
			i += v;
			break;
		default:
			return -1;
		}
	}
	return -1;
}

static long ms_left(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return TIMEOUT_MS - ((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
}

/* Exactly @n bytes from @fd within the deadline: 0, or -errno. */
static int read_full(int fd, unsigned char *p, size_t n, const struct timespec *t0)
{
	while (n) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		long left = ms_left(t0);
		ssize_t r;

		if (left <= 0 || poll(&pfd, 1, (int)left) == 0)
			return -ETIMEDOUT;
		r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -ECONNRESET;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int send_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t r = send(fd, p, n, MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/*
 * The gRPC call @method (/package.Service/Method) with the request @req
 * (@req_n bytes of protobuf) to containerd at @addr in the namespace k8s.io:
 * the messages of its answer, concatenated, in *ret (caller frees), 0; 1:
 * no message (a trailers-only answer); -errno.
 */
static int grpc_call(const char *addr, const char *method, const struct buf *req, struct buf *ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct buf out = { 0 }, hdr = { 0 }, data = { 0 };
	struct timespec t0;
	bool done = false;
	int fd, r = 0;

	memset(ret, 0, sizeof(*ret));
	if (strlen(addr) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, addr, strlen(addr));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	hpack_field(&hdr, ":method", "POST");
	hpack_field(&hdr, ":scheme", "http");
	hpack_field(&hdr, ":path", method);
	hpack_field(&hdr, ":authority", "localhost");
	hpack_field(&hdr, "content-type", "application/grpc");
	hpack_field(&hdr, "te", "trailers");
	hpack_field(&hdr, "containerd-namespace", "k8s.io");
	put(&out, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
	/* SETTINGS {INITIAL_WINDOW_SIZE: WINDOW} (the stream's), WINDOW_UPDATE of stream 0 (the connection's) */
	frame(&out, 6, F_SETTINGS, 0, 0);
	put(&out, (unsigned char[]){ 0, S_INITIAL_WINDOW_SIZE }, 2);
	put_be32(&out, WINDOW);
	frame(&out, 4, F_WINDOW_UPDATE, 0, 0);
	put_be32(&out, WINDOW - DEFAULT_WINDOW);
	frame(&out, hdr.n, F_HEADERS, END_HEADERS, 1);
	put(&out, hdr.p, hdr.n);
	frame(&out, req->n + 5, F_DATA, END_STREAM, 1);
	put_byte(&out, 0);
	put_be32(&out, (uint32_t)req->n);
	put(&out, req->p, req->n);
	r = out.oom || hdr.oom ? -ENOMEM : send_all(fd, out.p, out.n);
	free(hdr.p);
	while (r == 0 && !done) {
		unsigned char h[9], *p = NULL;
		size_t len, off = 0;
		uint32_t stream;

		r = read_full(fd, h, sizeof(h), &t0);
		if (r < 0)
			break;
		len = (size_t)h[0] << 16 | h[1] << 8 | h[2];
		stream = (uint32_t)(h[5] & 0x7f) << 24 | h[6] << 16 | h[7] << 8 | h[8];
		if (len > ANSWER_MAX || !(p = malloc(len ? len : 1))) {
			r = len > ANSWER_MAX ? -EMSGSIZE : -ENOMEM;
			break;
		}
		r = read_full(fd, p, len, &t0);
		if (r == 0 && h[3] == F_SETTINGS && !(h[4] & ACK)) {
			out.n = 0;
			frame(&out, 0, F_SETTINGS, ACK, 0);
			r = out.oom ? -ENOMEM : send_all(fd, out.p, out.n);
		} else if (r == 0 && h[3] == F_PING && !(h[4] & ACK) && len == 8) {
			out.n = 0;
			frame(&out, 8, F_PING, ACK, 0);
			put(&out, p, 8);
			r = out.oom ? -ENOMEM : send_all(fd, out.p, out.n);
		} else if (r == 0 && (h[3] == F_GOAWAY || (h[3] == F_RST && stream == 1))) {
			r = -ECONNRESET;
		} else if (r == 0 && stream == 1 && (h[3] == F_DATA || h[3] == F_HEADERS)) {
			size_t pad = 0;

			if (h[4] & PADDED) {
				pad = len ? p[0] : 0;
				off = 1;
			}
			if (h[3] == F_HEADERS && (h[4] & PRIORITY))
				off += 5;
			if (off + pad > len)
				r = -EPROTO;
			else if (h[3] == F_DATA)
				put(&data, p + off, len - off - pad);
			done = h[4] & END_STREAM;
		}
		free(p);
	}
	close(fd);
	free(out.p);
	if (r == 0 && data.oom)
		r = -ENOMEM;
	/* the messages: each a 5-byte prefix (compressed flag 0, big-endian length) and its bytes */
	for (size_t i = 0; r == 0 && i < data.n;) {
		size_t n;

		if (data.n - i < 5 || data.p[i] != 0) {
			r = -EPROTO;
			break;
		}
		n = (size_t)data.p[i + 1] << 24 | data.p[i + 2] << 16 | data.p[i + 3] << 8 | data.p[i + 4];
		if (n > data.n - i - 5) {
			r = -EPROTO;
			break;
		}
		put(ret, data.p + i + 5, n);
		i += 5 + n;
	}
	if (r == 0 && ret->oom)
		r = -ENOMEM;
	if (r == 0 && data.n == 0)
		r = 1;
	free(data.p);
	if (r < 0) {
		free(ret->p);
		memset(ret, 0, sizeof(*ret));
	}
	return r;
}

/* A string field @field of @m into @out (NUL-terminated): 0, or -EPROTO when it is absent, empty or too long. */
static int pb_string(const unsigned char *m, size_t n, unsigned int field, char *out, size_t size)
{
	const unsigned char *f;
	size_t f_n;

	if (pb_get(m, n, field, &f, &f_n) < 0 || !f_n || f_n >= size || memchr(f, '\0', f_n))
		return -EPROTO;
	memcpy(out, f, f_n);
	out[f_n] = '\0';
	return 0;
}

/* @method with a request of one field, the string @s as field 1; its answer in @ans (grpc_call()). */
static int call1(const char *addr, const char *method, const char *s, struct buf *ans)
{
	struct buf req = { 0 };
	int r;

	pb_bytes(&req, 1, s, strlen(s));
	r = req.oom ? -ENOMEM : grpc_call(addr, method, &req, ans);
	free(req.p);
	return r;
}

int rt_containerd_image(const char *addr, const char *name, char *media_type, size_t mt_size, char *digest,
			size_t d_size)
{
	struct buf ans = { 0 }, req = { 0 }, filter = { 0 };
	const unsigned char *img, *target;
	size_t img_n, target_n;
	int r;

	/*
	 * ListImagesRequest {filters (1): "name==NAME"}, not Images.Get: Get's
	 * NotFound is a trailers-only answer (its grpc-status in HPACK, which
	 * this client does not decode) like any other error of it; List answers
	 * no such image with a message of no image, and errors without one.
	 * (NAME: no ',', space or quote, which a filter's value would need
	 * quoted; the caller's names have none.)
	 */
	if (strpbrk(name, ", \t\n\"'\\"))
		return -EINVAL;
	put(&filter, "name==", 6);
	put(&filter, name, strlen(name));
	pb_bytes(&req, 1, filter.p, filter.n);
	r = req.oom || filter.oom ? -ENOMEM : grpc_call(addr, "/containerd.services.images.v1.Images/List", &req, &ans);
	free(req.p);
	free(filter.p);
	if (r)
		return r > 0 ? -EPROTO : r;	/* (an error's trailers-only answer: containerd refused to say) */
	/* ListImagesResponse.images (1, the first) -> Image.target (3) -> Descriptor.media_type (1), digest (2) */
	if (ans.n == 0) {
		free(ans.p);
		return 1;
	}
	r = -EPROTO;
	if (pb_get(ans.p, ans.n, 1, &img, &img_n) == 0 && pb_get(img, img_n, 3, &target, &target_n) == 0)
		r = pb_string(target, target_n, 2, digest, d_size);
	if (r == 0 && pb_string(target, target_n, 1, media_type, mt_size) < 0)
		media_type[0] = '\0';
	free(ans.p);
	return r;
}

int rt_containerd_content(const char *addr, const char *digest, char **ret, size_t *ret_n)
{
	struct buf ans = { 0 }, all = { 0 };
	int r;

	*ret = NULL;
	/* ReadContentRequest {digest (1)}: the whole blob */
	r = call1(addr, "/containerd.services.content.v1.Content/Read", digest, &ans);
	if (r)
		return r;
	/*
	 * grpc_call() put the messages one after the other: each ReadContentResponse
	 * is {offset (1, varint), data (2, bytes)}; walk them by their fields
	 */
	for (size_t i = 0; i < ans.n;) {
		const unsigned char *d;
		size_t dn, used;

		if (pb_get(ans.p + i, ans.n - i, 2, &d, &dn) < 0)
			break;
		put(&all, d, dn);
		used = (size_t)(d + dn - (ans.p + i));
		i += used;
	}
	free(ans.p);
	if (all.oom) {
		free(all.p);
		return -ENOMEM;
	}
	put_byte(&all, 0);
	if (all.oom) {
		free(all.p);
		return -ENOMEM;
	}
	*ret = (char *)all.p;
	*ret_n = all.n - 1;
	return 0;
}

int rt_containerd_snapshot_parent(const char *addr, const char *id, char *parent, size_t p_size)
{
	struct buf ans = { 0 }, req = { 0 };
	const unsigned char *m;
	char snapshotter[256], key[1024];
	size_t m_n;
	int r;

	/* GetContainerRequest {id (1)} -> GetContainerResponse.container (1) -> snapshotter (6), snapshot_key (7) */
	r = call1(addr, "/containerd.services.containers.v1.Containers/Get", id, &ans);
	if (r)
		return r;
	r = pb_get(ans.p, ans.n, 1, &m, &m_n) < 0 ? -EPROTO : pb_string(m, m_n, 6, snapshotter, sizeof(snapshotter));
	if (r == 0)
		r = pb_string(m, m_n, 7, key, sizeof(key));
	free(ans.p);
	if (r)
		return r;
	/* StatSnapshotRequest {snapshotter (1), key (2)} -> StatSnapshotResponse.info (1) -> Info.parent (2) */
	pb_bytes(&req, 1, snapshotter, strlen(snapshotter));
	pb_bytes(&req, 2, key, strlen(key));
	r = req.oom ? -ENOMEM : grpc_call(addr, "/containerd.services.snapshots.v1.Snapshots/Stat", &req, &ans);
	free(req.p);
	if (r)
		return r;
	r = pb_get(ans.p, ans.n, 1, &m, &m_n) < 0 ? -EPROTO : pb_string(m, m_n, 2, parent, p_size);
	free(ans.p);
	return r;
}
