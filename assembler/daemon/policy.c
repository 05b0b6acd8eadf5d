// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The policy file (JSON, read with jansson; PROTOCOL.md, "Policy"):
 *
 *   { "rootasmd-policy": 1,
 *     "rules": [ { "uids": [1000], "gids": [100],
 *                  "layouts": ["/etc/rootasm/layouts"], "inline": true,
 *                  "sources": ["/srv/rootasm"], "userns": true, "status": true,
 *                  "max_connections": 4 } ] }
 *
 * The file must be a regular file (not a symlink, not a FIFO, nothing of
 * procfs or sysfs), owned by root and writable by nobody else; it is opened
 * without following a symlink and without blocking (policy_open()).
 *
 * Unknown keys and values of the wrong type are errors, as in layouts. A
 * peer is matched against the rules in order: the first rule naming its uid,
 * else the first naming its gid or one of its supplementary groups. uid 0
 * needs no rule (it could assemble anything itself). Directory prefixes
 * must be clean absolute paths; a path matches a prefix when it is the
 * prefix or lies below it ("/srv/a" does not match "/srv/ab").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "open.h"
#include "rootasmd.h"
#include "util.h"

#define RD_POLICY_MAX_BYTES	(4u << 20)

static int perr(struct rootasm_error *e, const char *path, int line, int col, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static int perr(struct rootasm_error *e, const char *path, int line, int col, const char *key, const char *fmt, ...)
{
	va_list ap;

	memset(e, 0, sizeof(*e));
	e->err = EINVAL;
	e->kind = ROOTASM_ERROR_USAGE;
	snprintf(e->file, sizeof(e->file), "%s", path);
	e->line = line > 0 ? line : 0;
	e->column = col > 0 ? col : 0;
	snprintf(e->op, sizeof(e->op), "%s", key);
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

bool rd_path_below(const char *path, const char *prefix)
{
	return ra_path_below(path, prefix) != NULL;
}

void rd_policy_free(struct rd_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		for (size_t k = 0; k < p->rules[i].nlayouts; k++)
			free(p->rules[i].layouts[k]);
		for (size_t k = 0; k < p->rules[i].nsources; k++)
			free(p->rules[i].sources[k]);
	}
	free(p->rules);
	free(p);
}

static int ids(json_t *v, unsigned int *out, size_t *n, const char *file, const char *key, struct rootasm_error *e)
{
	size_t i;
	json_t *x;

	if (!json_is_array(v) || json_array_size(v) > RD_MAX_IDS)
		return perr(e, file, 0, 0, key, "a list of at most %d ids", RD_MAX_IDS);
	json_array_foreach(v, i, x) {
		json_int_t id = json_integer_value(x);

		if (!json_is_integer(x) || id < 0 || id > 4294967294LL)
			return perr(e, file, 0, 0, key, "entry %zu: an id 0-4294967294", i);
		out[(*n)++] = (unsigned int)id;
	}
	return 0;
}

static int prefixes(json_t *v, char **out, size_t *n, const char *file, const char *key, struct rootasm_error *e)
{
	size_t i;
	json_t *x;

	if (!json_is_array(v) || json_array_size(v) > RD_MAX_PREFIXES)
		return perr(e, file, 0, 0, key, "a list of at most %d directories", RD_MAX_PREFIXES);
	json_array_foreach(v, i, x) {
		const char *s = json_string_value(x);

		if (!s || !ra_path_clean(s))
			return perr(e, file, 0, 0, key, "entry %zu: a clean absolute path (no '.', '..', '//', trailing '/')", i);
		out[*n] = strdup(s);
		if (!out[*n])
			return -ENOMEM;
		(*n)++;
	}
	return 0;
}

static int boolean(json_t *v, bool *out, const char *file, const char *key, struct rootasm_error *e)
{
	if (!json_is_boolean(v))
		return perr(e, file, 0, 0, key, "true or false");
	*out = json_is_true(v);
	return 0;
}

static int rule(json_t *o, size_t idx, struct rd_rule *r, const char *file, struct rootasm_error *e)
{
	const char *k;
	json_t *v;
	char key[64];
	int rc = 0;

	if (!json_is_object(o))
		return perr(e, file, 0, 0, "rules", "entry %zu: an object", idx);
	r->max_connections = 16;
	json_object_foreach(o, k, v) {
		snprintf(key, sizeof(key), "rules[%zu].%s", idx, k);
		if (!strcmp(k, "uids"))
			rc = ids(v, r->uids, &r->nuids, file, key, e);
		else if (!strcmp(k, "gids"))
			rc = ids(v, r->gids, &r->ngids, file, key, e);
		else if (!strcmp(k, "layouts"))
			rc = prefixes(v, r->layouts, &r->nlayouts, file, key, e);
		else if (!strcmp(k, "sources"))
			rc = prefixes(v, r->sources, &r->nsources, file, key, e);
		else if (!strcmp(k, "inline"))
			rc = boolean(v, &r->inline_ok, file, key, e);
		else if (!strcmp(k, "userns"))
			rc = boolean(v, &r->userns, file, key, e);
		else if (!strcmp(k, "status"))
			rc = boolean(v, &r->status, file, key, e);
		else if (!strcmp(k, "max_connections")) {
			json_int_t m = json_integer_value(v);

			if (!json_is_integer(v) || m < 1 || m > 4096)
				return perr(e, file, 0, 0, key, "a number 1-4096");
			r->max_connections = (unsigned int)m;
		} else {
			return perr(e, file, 0, 0, key, "unknown key");
		}
		if (rc < 0)
			return rc;
	}
	if (!r->nuids && !r->ngids)
		return perr(e, file, 0, 0, "rules", "entry %zu names no uids and no gids", idx);
	if (r->inline_ok && !r->nsources)
		return perr(e, file, 0, 0, "rules", "entry %zu allows inline layouts but names no sources", idx);
	return 0;
}

/*
 * The policy file, open for reading: a regular file (not a symlink, not a FIFO,
 * nothing of procfs or sysfs) that only root can write. It is looked at on an
 * O_PATH fd first; only then opened for reading (O_NONBLOCK): nothing here can block.
 */
static int policy_open(const char *path, struct rootasm_error *e)
{
	_cleanup_close_ int pfd = -EBADF;
	char why[256];
	struct stat st;
	int fd, r;

	pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		r = errno;
		perr(e, path, 0, 0, "policy", "cannot open it: %s", strerror(r));
		e->err = r;
		return -r;
	}
	r = ra_check_readable_file(pfd, why, sizeof(why));
	if (r < 0)
		return perr(e, path, 0, 0, "policy", "%s", why);
	if (fstat(pfd, &st) < 0)
		return perr(e, path, 0, 0, "policy", "fstat: %s", strerror(errno));
	if (st.st_uid != 0)
		return perr(e, path, 0, 0, "policy", "is owned by uid %u, not root: only root may write the policy",
			    (unsigned int)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return perr(e, path, 0, 0, "policy", "is writable by %s (mode %04o): only root may write the policy",
			    (st.st_mode & S_IWGRP) && (st.st_mode & S_IWOTH) ? "group and others" :
			    st.st_mode & S_IWGRP ? "its group" : "others", (unsigned int)(st.st_mode & 07777));
	/* and the directories above it (the one trust rule: another user could put a policy of its own there) */
	r = ra_admin_trusted_path(pfd, AT_FDCWD, path, 0, why, sizeof(why));
	if (r < 0)
		return perr(e, path, 0, 0, "policy", "%s", why);
	fd = ra_reopen(pfd, O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		r = errno;
		perr(e, path, 0, 0, "policy", "open for reading: %s", strerror(r));
		e->err = r;
		return -r;
	}
	return fd;
}

int rd_policy_load(const char *path, struct rd_policy **ret, struct rootasm_error *e)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -EBADF;
	json_error_t je;
	json_t *root, *rules, *v;
	struct rd_policy *p;
	const char *k;
	size_t i, len;
	int r = 0;

	fd = policy_open(path, e);
	if (fd < 0)
		return fd;
	r = ra_read_all(fd, RD_POLICY_MAX_BYTES, NULL, NULL, &buf, &len);
	if (r == -EFBIG)
		return perr(e, path, 0, 0, "policy", "larger than %u bytes", RD_POLICY_MAX_BYTES);
	if (r < 0) {
		perr(e, path, 0, 0, "policy", "read: %s", strerror(-r));
		e->err = -r;
		return r;
	}
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return perr(e, path, je.line, je.column, "policy", "%s", je.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return perr(e, path, 1, 1, "policy", "not a JSON object");
	}
	json_object_foreach(root, k, v) {
		if (strcmp(k, "rootasmd-policy") && strcmp(k, "rules")) {
			json_decref(root);
			return perr(e, path, 0, 0, k, "unknown key");
		}
	}
	if (json_integer_value(json_object_get(root, "rootasmd-policy")) != 1) {
		json_decref(root);
		return perr(e, path, 0, 0, "rootasmd-policy", "must be 1");
	}
	rules = json_object_get(root, "rules");
	if (!json_is_array(rules) || json_array_size(rules) > RD_MAX_RULES) {
		json_decref(root);
		return perr(e, path, 0, 0, "rules", "a list of at most %d rules", RD_MAX_RULES);
	}
	p = calloc(1, sizeof(*p));
	if (p)
		p->rules = calloc(json_array_size(rules) + 1, sizeof(*p->rules));
	if (!p || !p->rules) {
		free(p);
		json_decref(root);
		memset(e, 0, sizeof(*e));
		e->err = ENOMEM;
		snprintf(e->op, sizeof(e->op), "policy");
		return -ENOMEM;
	}
	json_array_foreach(rules, i, v) {
		r = rule(v, i, &p->rules[i], path, e);
		p->n = i + 1;
		if (r < 0)
			break;
	}
	json_decref(root);
	if (r < 0) {
		rd_policy_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

const struct rd_rule *rd_policy_match(const struct rd_policy *p, uid_t uid, gid_t gid, const gid_t *groups,
				      size_t ngroups)
{
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->n; i++)
		for (size_t k = 0; k < p->rules[i].nuids; k++)
			if (p->rules[i].uids[k] == uid)
				return &p->rules[i];
	for (size_t i = 0; i < p->n; i++)
		for (size_t k = 0; k < p->rules[i].ngids; k++) {
			if (p->rules[i].gids[k] == gid)
				return &p->rules[i];
			for (size_t g = 0; g < ngroups; g++)
				if (p->rules[i].gids[k] == groups[g])
					return &p->rules[i];
		}
	return NULL;
}
