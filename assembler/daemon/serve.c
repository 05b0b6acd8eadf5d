// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One connection (served by the thread that accepted it; main.c caps how many): requests in
 * order, one reply each (PROTOCOL.md):
 *
 *   recv      one SOCK_SEQPACKET message (proto.c: size cap, at most one fd)
 *   check     version, op, keys; the peer's rule (SO_PEERCRED/SO_PEERGROUPS at accept)
 *   assemble  layout by path: a clean absolute path, loaded as the peer's principal
 *             (rootasm_layout_load(): the library's one reader of layout files, with
 *             the peer's rights): below one of the rule's "layouts" and through no
 *             symlink there;
 *             inline: ROOTASM_LOAD_ABSOLUTE, and every host object it opened must lie
 *             below one of the rule's "sources" (both limits of the peer's principal,
 *             checked by the library's authorize stage on the fds it holds);
 *             userns: the fd must be a user namespace owned by the peer's uid;
 *             rootasm_assemble_with() on the daemon's context (its image cache);
 *             a tree for a peer other than root gets nosuid,nodev on every mount
 *   reply     sendmsg(MSG_DONTWAIT): a peer that does not read cannot hold us;
 *             the tree's fd goes with it and ours is closed (a tree that could not
 *             be sent dissolves)
 *
 * The connection ends on EOF, on a failed send, or after the idle timeout.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "layout.h"
#include "proto.h"
#include "rootasmd.h"
#include "util.h"

struct req {
	struct rd_client *c;
	const struct rd_rule *rule;	/* NULL for an administrator */
	struct rootasm_principal *p;	/* who the tree is for (built per request: a user namespace is per request) */
	json_t *msg;
	int fd;				/* the request's fd, if any */
	const char *upper_dir, *work_dir;	/* "upper": an administrator's, for the load (NULL: the layout's) */
	struct rootasm_error e;
	char what[256];			/* for the log line */
};

/* An administrator (rootasm_principal_of_pidfd() at connect): never the uid alone. */
static bool is_root(const struct req *q)
{
	return q->c->admin;
}

static int deny(struct req *q, const char *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int deny(struct req *q, const char *op, const char *fmt, ...)
{
	va_list ap;

	memset(&q->e, 0, sizeof(q->e));
	q->e.err = EPERM;
	q->e.kind = ROOTASM_ERROR_PERMISSION;
	snprintf(q->e.op, sizeof(q->e.op), "%s", op);
	va_start(ap, fmt);
	vsnprintf(q->e.msg, sizeof(q->e.msg), fmt, ap);
	va_end(ap);
	return -EPERM;
}

static int bad(struct req *q, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int bad(struct req *q, int err, const char *fmt, ...)
{
	va_list ap;

	memset(&q->e, 0, sizeof(q->e));
	q->e.err = err;
	q->e.kind = ROOTASM_ERROR_USAGE;
	snprintf(q->e.op, sizeof(q->e.op), "request");
	va_start(ap, fmt);
	vsnprintf(q->e.msg, sizeof(q->e.msg), fmt, ap);
	va_end(ap);
	atomic_fetch_add(&q->c->d->n.protocol_errors, 1);
	return -err;
}

/*
 * The protocol, described once (PROTOCOL.md; `rootasmd --protocol` prints
 * it as JSON, which the docs' tables and the tests are checked against):
 * each request's op, its keys with their types, whether an fd comes with it,
 * and its handler. Every request has the two common keys too.
 */
enum rd_type { RD_INT, RD_STR, RD_BOOL, RD_ARRAY, RD_OBJECT };

static const char *const type_name[] = {
	[RD_INT] = "integer", [RD_STR] = "string", [RD_BOOL] = "boolean", [RD_ARRAY] = "array", [RD_OBJECT] = "object",
};

struct rd_key {
	const char *name;
	enum rd_type type;
	const char *doc;
};

struct rd_method {
	const char *op;
	const char *doc;
	const char *fd;			/* what fd may come with it (NULL: none) */
	const struct rd_key *keys;	/* NULL-terminated */
	int (*run)(struct req *q, json_t **reply, int *ret_fd);
};

static const struct rd_key common_keys[] = {
	{ "rootasm", RD_INT, "the protocol version: 1" },
	{ "op", RD_STR, "the request" },
	{ NULL },
};

static bool of_type(json_t *v, enum rd_type t)
{
	switch (t) {
	case RD_INT: return json_is_integer(v);
	case RD_STR: return json_is_string(v);
	case RD_BOOL: return json_is_boolean(v);
	case RD_ARRAY: return json_is_array(v);
	case RD_OBJECT: return json_is_object(v);
	}
	return false;
}

static const struct rd_key *key_of(const struct rd_key *keys, const char *k)
{
	for (; keys->name; keys++)
		if (!strcmp(keys->name, k))
			return keys;
	return NULL;
}

/* Only the method's keys and the common ones, each of its type. */
static int keys(struct req *q, const struct rd_method *m)
{
	const char *k;
	json_t *v;

	json_object_foreach(q->msg, k, v) {
		const struct rd_key *d = key_of(common_keys, k) ?: key_of(m->keys, k);

		if (!d)
			return bad(q, EINVAL, "unknown key \"%.64s\" for this op", k);
		if (!of_type(v, d->type))
			return bad(q, EINVAL, "\"%s\" has the wrong type (%s)", k, type_name[d->type]);
	}
	if (q->fd >= 0 && !m->fd)
		return bad(q, EINVAL, "an fd came with a request that takes none");
	return 0;
}

/* ------------------------------------------------------------ assemble */

/*
 * A layout file a peer names: a clean absolute path, read by the library's
 * one reader of layout files as the peer's principal (rootasm_layout_load():
 * with the peer's own file-system credentials, so it reads nothing it could
 * not read itself and no error quotes a file it could not read). A user's
 * path must lie beneath one of its rule's layout directories, lexically
 * before anything is looked up, and is followed through no symlink there;
 * the authorize stage judges the file by the fds the open holds.
 */
static int load_path(struct req *q, const char *path, struct rootasm_layout **ret)
{
	struct rootasm_load_opts o = { .size = sizeof(o), .principal = q->p, .upper_dir = q->upper_dir,
				       .work_dir = q->work_dir };
	int r = 0;

	if (!ra_path_clean(path))
		return bad(q, EINVAL, "\"layout\" must be a clean absolute path (no '.', '..', '//'): %.256s", path);
	if (!is_root(q))
		r = rootasm_principal_limit(q->p, ROOTASM_LIMIT_LAYOUTS, (const char *const *)q->rule->layouts,
					    q->rule->nlayouts, &q->e);
	return r < 0 ? r : rootasm_layout_load(q->c->d->ctx, path, &o, ret, &q->e);
}

static int load_inline(struct req *q, const char *text, size_t len, const char *name, struct rootasm_layout **ret)
{
	struct rootasm_load_opts o = { .size = sizeof(o), .flags = ROOTASM_LOAD_ABSOLUTE, .name = name ? name : "(inline)",
				       .principal = q->p, .upper_dir = q->upper_dir, .work_dir = q->work_dir };
	int r;

	/*
	 * A rule with "inline" limits the user's host objects to its sources; one
	 * without limits it to layout files of its layout directories, which a
	 * layout from memory is not: authorize refuses it (rootasm_principal_limit()).
	 */
	if (!is_root(q) && q->rule->inline_ok)
		r = rootasm_principal_limit(q->p, ROOTASM_LIMIT_SOURCES, (const char *const *)q->rule->sources,
					    q->rule->nsources, &q->e);
	else if (!is_root(q))
		r = rootasm_principal_limit(q->p, ROOTASM_LIMIT_LAYOUTS, (const char *const *)q->rule->layouts,
					    q->rule->nlayouts, &q->e);
	else
		r = 0;
	if (r < 0)
		return r;
	return rootasm_layout_load_mem(q->c->d->ctx, text, len, &o, ret, &q->e);
}

/*
 * The peer's user namespace fd: nsfs (checked before any ioctl), a user
 * namespace. Whose it is, is the principal's one check
 * (rootasm_principal_user(): owned by the peer's uid).
 */
static int check_userns(struct req *q)
{
	if (q->fd < 0)
		return bad(q, EINVAL, "\"userns\": true needs the user namespace's fd with the request");
	if (!ra_is_userns(q->fd))
		return bad(q, EINVAL, "the fd sent is not a user namespace");
	return 0;
}

static int op_assemble(struct req *q, json_t **reply, int *ret_fd)
{
	struct rootasm_assemble_opts ao = { .size = sizeof(ao), .userns_fd = -EBADF };
	struct rootasm_layout *l = NULL;
	uid_t receivers[RA_PROTO_MAX_RECEIVERS];
	json_t *lj, *tj, *rj, *aj, *uj, *v;
	size_t i;
	bool userns;
	int r, tree;

	/* who the tree goes on to: the grant locks it when one is neither root nor the client */
	rj = json_object_get(q->msg, "receivers");
	if (json_array_size(rj) > RA_PROTO_MAX_RECEIVERS)
		return bad(q, EINVAL, "\"receivers\": at most %d uids", RA_PROTO_MAX_RECEIVERS);
	json_array_foreach(rj, i, v) {
		if (!ra_proto_is_id(v))
			return bad(q, EINVAL, "\"receivers\" holds uids (integers 0-4294967294)");
		receivers[i] = (uid_t)json_integer_value(v);
	}
	if (json_array_size(rj)) {
		ao.receivers = receivers;
		ao.n_receivers = json_array_size(rj);
	}
	lj = json_object_get(q->msg, "layout");
	tj = json_object_get(q->msg, "layout_text");
	userns = json_is_true(json_object_get(q->msg, "userns"));
	if (!!lj == !!tj)
		return bad(q, EINVAL, "give exactly one of \"layout\" and \"layout_text\"");
	if (!userns && q->fd >= 0)
		return bad(q, EINVAL, "an fd came with a request that takes none");
	if (userns && (r = check_userns(q)) < 0)
		return r;
	/*
	 * who the tree is for: the authorize stage decides what they get
	 * (rootasm.h, "principals"). An administrator client may ask on someone
	 * else's word ("as": rootasm-runtime for a bundle's author): then the
	 * request is that principal's, with the limits it came with.
	 */
	aj = json_object_get(q->msg, "as");
	if (aj && !is_root(q))
		return deny(q, "assemble", "uid %u may not say whom a tree is for (\"as\" is an administrator's word)",
			    (unsigned int)q->c->uid);
	if (aj && userns)
		return bad(q, EINVAL, "\"as\" goes without \"userns\" (a user namespace does not travel in it)");
	/*
	 * "upper": an engine's writable layer of the container as the tree's upper
	 * (rootasm-runtime for the engine's own image): a host directory an
	 * administrator names; authorize refuses it to any principal but one
	 */
	uj = json_object_get(q->msg, "upper");
	if (uj && !is_root(q))
		return deny(q, "assemble", "uid %u may not name the tree's upper (\"upper\" is an administrator's word)",
			    (unsigned int)q->c->uid);
	if (uj && (json_unpack(uj, "{s:s, s:s !}", "upperdir", &q->upper_dir, "workdir", &q->work_dir) < 0 ||
		   q->upper_dir[0] != '/' || q->work_dir[0] != '/'))
		return bad(q, EINVAL, "\"upper\" is {\"upperdir\": PATH, \"workdir\": PATH}, both absolute");
	if (aj)
		r = ra_proto_principal_parse(aj, &q->p, &q->e);
	else
		r = is_root(q) ? rootasm_principal_admin(&q->p, &q->e) :
				 rootasm_principal_user(q->c->uid, q->c->gid, q->c->groups, q->c->ngroups,
							userns ? q->fd : -EBADF, &q->p, &q->e);
	/* a rule without "userns" is a limit of the principal: authorize refuses its tree in a user namespace */
	if (r == 0 && !aj && !is_root(q) && !q->rule->userns)
		r = rootasm_principal_limit(q->p, ROOTASM_LIMIT_USERNS, NULL, 0, &q->e);
	if (r < 0)
		return r;
	if (lj) {
		snprintf(q->what, sizeof(q->what), "%s", json_string_value(lj));
		r = load_path(q, json_string_value(lj), &l);
	} else {
		const char *name = json_string_value(json_object_get(q->msg, "name"));

		snprintf(q->what, sizeof(q->what), "inline %s", name ? name : "");
		r = load_inline(q, json_string_value(tj), json_string_length(tj), name, &l);
	}
	if (r < 0)
		return r;
	/* an administrator's tree for a user namespace (a user's namespace is its principal's) */
	if (userns && is_root(q)) {
		ao.flags = ROOTASM_ASSEMBLE_USERNS;
		ao.userns_fd = q->fd;
	}
	/*
	 * nosuid,nodev and the lock of a tree that is not an administrator's are
	 * steps of its plan; with --debug the library's trace logs the plan it
	 * executes (its user namespace included), the one `rootasm check --as` prints
	 */
	if (q->c->d->debug)
		rd_log(LOG_DEBUG, "uid %u pid %d: assembling %s for %s", (unsigned int)q->c->uid, (int)q->c->pid, q->what,
		       rootasm_principal_describe(q->p));
	tree = rootasm_assemble_with(q->c->d->ctx, l, &ao, &q->e);
	rootasm_layout_free(l);
	if (tree < 0)
		return tree;
	*reply = json_pack("{s:i, s:b, s:b, s:b}", "rootasm", RA_PROTO_VERSION, "ok", 1, "tree", 1, "userns", userns);
	*ret_fd = tree;
	return 0;
}

/* ------------------------------------------------------------ probe, status */

static int op_probe(struct req *q, json_t **reply, int *ret_fd)
{
	struct ra_jb b = { false };
	json_t *arr;

	arr = ra_features_json(q->c->d->ctx);
	*reply = json_object();
	ra_jset(&b, *reply, "rootasm", json_integer(RA_PROTO_VERSION));
	ra_jset(&b, *reply, "ok", json_true());
	ra_jset(&b, *reply, "features", arr);
	if (b.oom) {
		json_decref(*reply);
		*reply = NULL;
		return ra_oom(&q->e, "probe");
	}
	return 0;
}

struct list_ctx {
	struct ra_jb *b;
	json_t *arr;
};

static void list_entry(const struct rootasm_cache_entry_info *i, void *ud)
{
	struct list_ctx *lc = ud;
	json_t *o = json_object();

	ra_jset(lc->b, o, "path", ra_jstr(i->path));
	ra_jset(lc->b, o, "digest", ra_jstr(i->digest));
	ra_jset(lc->b, o, "fstype", ra_jstr(i->fstype));
	ra_jset(lc->b, o, "dev", json_sprintf("%u:%u", i->dev_major, i->dev_minor));
	ra_jset(lc->b, o, "ino", json_integer((json_int_t)i->ino));
	ra_jset(lc->b, o, "bytes", json_integer((json_int_t)i->bytes));
	ra_jset(lc->b, o, "mtime", json_sprintf("%lld.%09ld", (long long)i->mtime_sec, i->mtime_nsec));
	ra_jset(lc->b, o, "hits", json_integer((json_int_t)i->hits));
	ra_jset(lc->b, o, "lent", json_integer(i->lent));
	ra_jset(lc->b, o, "mnt_id", json_integer((json_int_t)i->mnt_id));
	ra_japp(lc->b, lc->arr, o);
}

static int op_status(struct req *q, json_t **reply, int *ret_fd)
{
	struct rd_daemon *d = q->c->d;
	struct rootasm_cache_stats st = { .size = sizeof(st) };
	struct ra_jb b = { false };
	struct list_ctx lc = { &b, json_array() };
	json_t *cache = json_object(), *n = json_object();
	int r = 0;

	if (!is_root(q) && !q->rule->status)
		r = deny(q, "status", "uid %u may not ask for the daemon's status", (unsigned int)q->c->uid);
	if (r < 0) {
		json_decref(lc.arr);
		json_decref(cache);
		json_decref(n);
		return r;
	}
	rootasm_cache_stats(d->ctx, &st);
	rootasm_cache_list(d->ctx, list_entry, &lc);
	ra_jset(&b, cache, "entries", json_integer((json_int_t)st.entries));
	ra_jset(&b, cache, "bytes", json_integer((json_int_t)st.bytes));
	ra_jset(&b, cache, "max_entries", json_integer((json_int_t)st.max_entries));
	ra_jset(&b, cache, "max_bytes", json_integer((json_int_t)st.max_bytes));
	ra_jset(&b, cache, "hits", json_integer((json_int_t)st.hits));
	ra_jset(&b, cache, "misses", json_integer((json_int_t)st.misses));
	ra_jset(&b, cache, "evictions", json_integer((json_int_t)st.evictions));
	ra_jset(&b, cache, "stale", json_integer((json_int_t)st.stale));
	ra_jset(&b, cache, "bypass", json_integer((json_int_t)st.bypass));
	ra_jset(&b, cache, "lent", json_integer((json_int_t)st.lent));
	ra_jset(&b, cache, "images", lc.arr);
#define N(x) ra_jset(&b, n, #x, json_integer((json_int_t)atomic_load(&d->n.x)))
	N(connections);
	N(requests);
	N(assembled);
	N(failed);
	N(refused);
	N(protocol_errors);
	N(busy);
	N(clients_now);
	N(clients_peak);
#undef N
	*reply = json_object();
	ra_jset(&b, *reply, "rootasm", json_integer(RA_PROTO_VERSION));
	ra_jset(&b, *reply, "ok", json_true());
	ra_jset(&b, *reply, "pid", json_integer(getpid()));
	ra_jset(&b, *reply, "cache", cache);
	ra_jset(&b, *reply, "counters", n);
	if (b.oom) {
		json_decref(*reply);
		*reply = NULL;
		return ra_oom(&q->e, "status");
	}
	return 0;
}

/* ------------------------------------------------------------ the table */

static const struct rd_key assemble_keys[] = {
	{ "layout", RD_STR, "a layout file: a clean absolute path (exactly one of layout, layout_text)" },
	{ "layout_text", RD_STR, "the layout itself; its host paths absolute" },
	{ "name", RD_STR, "names an inline layout in messages" },
	{ "userns", RD_BOOL, "a tree for the client's user namespace, whose fd comes with the request" },
	{ "receivers", RD_ARRAY, "uids the client hands the tree on to (at most 64)" },
	{ "as", RD_OBJECT, "whom the tree is for (administrators only): {admin} or {uid, gid, groups, layouts, sources}" },
	{ "upper", RD_OBJECT, "the tree's upper (administrators only, for an administrator's tree): {upperdir, workdir}, "
			      "existing directories used as they are" },
	{ NULL },
};

static const struct rd_key no_keys[] = { { NULL } };

static const struct rd_method methods[] = {
	{ "assemble", "assemble a layout; the reply carries the detached tree's fd", "a user namespace (with userns)",
	  assemble_keys, op_assemble },
	{ "probe", "the kernel features as the daemon's context probed them", NULL, no_keys, op_probe },
	{ "status", "the image cache and the counters (root, or a rule with status)", NULL, no_keys, op_status },
};

static const struct rd_method *method_of(const char *op)
{
	for (size_t i = 0; op && i < ARRAY_SIZE(methods); i++)
		if (!strcmp(methods[i].op, op))
			return &methods[i];
	return NULL;
}

static json_t *keys_json(const struct rd_key *k)
{
	json_t *a = json_array();

	for (; a && k->name; k++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "name", k->name, "type", type_name[k->type],
						   "doc", k->doc));
	return a;
}

json_t *rd_protocol_json(void)
{
	json_t *ops = json_array();

	for (size_t i = 0; ops && i < ARRAY_SIZE(methods); i++)
		json_array_append_new(ops, json_pack("{s:s, s:s, s:s?, s:o}", "op", methods[i].op, "doc", methods[i].doc,
						     "fd", methods[i].fd, "keys", keys_json(methods[i].keys)));
	return json_pack("{s:i, s:i, s:i, s:o, s:o}", "rootasm", RA_PROTO_VERSION, "max_message_bytes", RA_MSG_MAX,
			 "max_fds", 1, "common_keys", keys_json(common_keys), "requests", ops);
}

/* ------------------------------------------------------------ the loop */

json_t *rd_error_reply(const struct rootasm_error *e)
{
	json_t *o = json_object(), *in = ra_error_json(e);

	if (!o || !in || json_object_set_new(o, "rootasm", json_integer(RA_PROTO_VERSION)) < 0 ||
	    json_object_set_new(o, "error", in) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* One request: 0 to go on with the connection, < 0 to end it. */
static int handle(struct rd_client *c, json_t *msg, int fd)
{
	struct rd_daemon *d = c->d;
	struct req q = { .c = c, .msg = msg, .fd = fd };
	json_t *reply = NULL;
	int tree = -EBADF, r, s;
	const char *op = json_string_value(json_object_get(msg, "op"));
	const struct rd_method *m = method_of(op);
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	atomic_fetch_add(&d->n.requests, 1);
	pthread_rwlock_rdlock(&d->policy_lock);
	q.rule = c->admin ? NULL : rd_policy_match(d->policy, c->uid, c->gid, c->groups, c->ngroups);
	if (json_integer_value(json_object_get(msg, "rootasm")) != RA_PROTO_VERSION ||
	    !json_is_integer(json_object_get(msg, "rootasm")))
		r = bad(&q, EPROTO, "\"rootasm\": %d is the protocol version this daemon speaks", RA_PROTO_VERSION);
	else if (!op)
		r = bad(&q, EINVAL, "\"op\" is missing or not a string");
	else if (!c->admin && !q.rule)
		r = deny(&q, op, "no rule of the policy names uid %u or its groups", (unsigned int)c->uid);
	else if (!m) {
		char ops[128] = "";

		for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
			snprintf(ops + strlen(ops), sizeof(ops) - strlen(ops), "%s%s", i ? ", " : "", methods[i].op);
		r = bad(&q, EOPNOTSUPP, "unknown op \"%.32s\" (%s)", op, ops);
	} else if ((r = keys(&q, m)) == 0)
		r = m->run(&q, &reply, &tree);
	pthread_rwlock_unlock(&d->policy_lock);
	if (r < 0) {
		char line[1024];

		/* refused: here, or by the library's authorize stage (a limit of the principal, a right it lacks) */
		if (q.e.kind == ROOTASM_ERROR_PERMISSION)
			atomic_fetch_add(&d->n.refused, 1);
		else if (op && !strcmp(op, "assemble") && q.e.err != EPROTO)
			atomic_fetch_add(&d->n.failed, 1);
		rd_log(q.e.kind == ROOTASM_ERROR_PERMISSION ? LOG_NOTICE : LOG_WARNING, "uid %u pid %d: %s %s: %s",
		       (unsigned int)c->uid, (int)c->pid, op ? op : "?", q.what,
		       rootasm_error_format(&q.e, line, sizeof(line)));
		reply = rd_error_reply(&q.e);
	} else if (op && !strcmp(op, "assemble")) {
		atomic_fetch_add(&d->n.assembled, 1);
		if (d->debug)
			rd_log(LOG_DEBUG, "uid %u pid %d: assemble %s: ok in %.2f ms", (unsigned int)c->uid, (int)c->pid,
			       q.what, ms_since(&t0));
	}
	rootasm_principal_free(q.p);
	close_fdp(&fd);
	/* never block on a peer that does not read: what cannot be sent now is dropped, with the connection */
	s = ra_msg_send(c->sock, reply, tree, MSG_DONTWAIT);
	close_fdp(&tree);
	/* the client has its tree: now the temporary mounts may be dissolved (each waits for RCU) */
	rootasm_ctx_flush(d->ctx);
	return s;
}

void *rd_serve(void *arg)
{
	struct rd_client *c = arg;
	struct rd_daemon *d = c->d;

	for (;;) {
		json_t *msg = NULL;
		int fd = -EBADF, r = ra_msg_recv(c->sock, &msg, &fd);

		if (r == 0 && !msg)
			break;	/* EOF */
		if (r < 0) {
			struct rootasm_error e = { .err = r == -EAGAIN ? ETIMEDOUT : -r, .kind = ROOTASM_ERROR_USAGE };

			if (r == -EAGAIN || r == -ECONNRESET || r == -ENOTCONN || r == -EPIPE)
				break;	/* idle too long, or gone */
			atomic_fetch_add(&d->n.protocol_errors, 1);
			snprintf(e.op, sizeof(e.op), "request");
			if (r == -EMSGSIZE)
				snprintf(e.msg, sizeof(e.msg), "a message larger than %u bytes or with more than one fd",
					 RA_MSG_MAX);
			else if (r == -EBADMSG)
				snprintf(e.msg, sizeof(e.msg), "not a JSON object");
			else
				snprintf(e.msg, sizeof(e.msg), "%s", strerror(-r));
			if (ra_msg_send(c->sock, rd_error_reply(&e), -EBADF, MSG_DONTWAIT) < 0)
				break;
			continue;
		}
		r = handle(c, msg, fd);
		json_decref(msg);
		if (r < 0)
			break;
	}
	return NULL;
}
