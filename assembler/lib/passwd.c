// SPDX-License-Identifier: LGPL-2.1-or-later
/* An image's user resolved in the tree's /etc/passwd and /etc/group (passwd.h). */
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "open.h"
#include "passwd.h"
#include "util.h"

static bool part_ok(const char *s, size_t n)
{
	if (!n || n > 255)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_-.@$", s[i]))
			return false;
	return true;
}

bool ra_user_spec_ok(const char *spec)
{
	const char *colon = strchr(spec, ':');

	if (!colon)
		return part_ok(spec, strlen(spec));
	return part_ok(spec, colon - spec) && part_ok(colon + 1, strlen(colon + 1));
}

/* A decimal id of @s (@n bytes), below 2^32-1; false when it is not one. */
static bool id_of(const char *s, size_t n, unsigned int *ret)
{
	unsigned long long v = 0;

	if (!n || n > 10)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	if (v >= 0xffffffffULL)
		return false;
	*ret = v;
	return true;
}

/* The tree's etc/@name, whole, into *ret (NULL when missing). */
static int read_tree_file(int root_fd, const char *name, char **ret, struct rootasm_error *e)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	_cleanup_close_ int fd = sys_openat2(root_fd, name, &how);
	struct stat st;
	size_t len;
	int r;

	*ret = NULL;
	if (fd < 0)
		return errno == ENOENT ? 0 : ra_err(e, errno, -EBADF, "open", name, "in the tree, for its user");
	if (fstat(fd, &st) < 0)
		return ra_err(e, errno, -EBADF, "stat", name, "in the tree");
	if (!S_ISREG(st.st_mode))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "open", name, "in the tree is %s, not a file",
				   ra_type_name(st.st_mode));
	r = ra_read_all(fd, RA_USER_FILE_MAX, NULL, NULL, ret, &len);
	if (r == -EFBIG)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EFBIG, "read", name, "in the tree: more than %u bytes",
				   RA_USER_FILE_MAX);
	return r < 0 ? ra_err(e, -r, -EBADF, "read", name, "in the tree") : 0;
}

/* Field @i (from 0) of the ':'-separated @line: its start, its length in *n; NULL when there is none. */
static const char *field(const char *line, size_t len, int i, size_t *n)
{
	const char *s = line, *end = line + len, *c;

	for (; i > 0; i--) {
		c = memchr(s, ':', end - s);
		if (!c)
			return NULL;
		s = c + 1;
	}
	c = memchr(s, ':', end - s);
	*n = (c ? c : end) - s;
	return s;
}

static bool field_is(const char *f, size_t n, const char *s, size_t sn)
{
	return f && n == sn && !memcmp(f, s, n);
}

/* Whether the comma-separated member list @f (@n bytes) names @user (@un bytes). */
static bool member(const char *f, size_t n, const char *user, size_t un)
{
	const char *end = f + n;

	while (f && f < end) {
		const char *c = memchr(f, ',', end - f);
		size_t l = (c ? c : end) - f;

		if (l == un && !memcmp(f, user, un))
			return true;
		f = c ? c + 1 : NULL;
	}
	return false;
}

#define for_lines(buf, line, len)                                                               \
	for (const char *line = (buf), *_nl; line && *line;                                     \
	     line = (_nl = strchr(line, '\n')) ? _nl + 1 : NULL)                                \
		for (size_t len = strchrnul(line, '\n') - line, _once = 1; _once; _once = 0)

int ra_user_resolve(int root_fd, const char *spec, struct ra_user *ret, struct rootasm_error *e)
{
	_cleanup_free_ char *passwd = NULL, *group = NULL;
	const char *colon = strchr(spec, ':'), *gname = colon ? colon + 1 : NULL;
	size_t un = colon ? (size_t)(colon - spec) : strlen(spec), gn = gname ? strlen(gname) : 0;
	const char *name = NULL;
	size_t name_n = 0;
	unsigned int id = 0;
	bool numeric = id_of(spec, un, &id), found = false;
	int r;

	*ret = (struct ra_user){ 0 };
	if (!ra_user_spec_ok(spec))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "user", spec, "expected USER[:GROUP]");
	r = read_tree_file(root_fd, "etc/passwd", &passwd, e);
	if (r < 0)
		return r;
	/* name:password:uid:gid:gecos:home:shell; the first entry that matches */
	for_lines(passwd ? passwd : "", line, len) {
		const char *f, *u, *g, *h;
		size_t fn, uln, gln, hn;
		unsigned int uid, gid;

		f = field(line, len, 0, &fn);
		u = field(line, len, 2, &uln);
		g = field(line, len, 3, &gln);
		if (!f || !u || !g || !id_of(u, uln, &uid) || !id_of(g, gln, &gid))
			continue;
		if (numeric ? uid != id : !field_is(f, fn, spec, un))
			continue;
		ret->uid = uid;
		ret->gid = gid;
		name = f;
		name_n = fn;
		h = field(line, len, 5, &hn);
		if (h && hn < sizeof(ret->home))
			memcpy(ret->home, h, hn);
		found = true;
		break;
	}
	if (!found && !numeric)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, ENOENT, "user", spec,
				   "the tree's /etc/passwd has no user '%.*s'", (int)un, spec);
	if (!found)
		ret->uid = id;
	if (gname && id_of(gname, gn, &id)) {
		ret->gid = id;
		return 0;
	}
	if (!gname && !name)
		return 0;
	r = read_tree_file(root_fd, "etc/group", &group, e);
	if (r < 0)
		return r;
	found = false;
	/* name:password:gid:members */
	for_lines(group ? group : "", line, len) {
		const char *f, *g, *m;
		size_t fn, gln, mn = 0;
		unsigned int gid;

		f = field(line, len, 0, &fn);
		g = field(line, len, 2, &gln);
		m = field(line, len, 3, &mn);
		if (!f || !g || !id_of(g, gln, &gid))
			continue;
		if (gname) {
			if (!field_is(f, fn, gname, gn))
				continue;
			ret->gid = gid;
			found = true;
			break;
		}
		if (m && member(m, mn, name, name_n) && ret->ngroups < RA_USER_MAX_GROUPS)
			ret->groups[ret->ngroups++] = gid;
	}
	if (gname && !found)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, ENOENT, "user", spec, "the tree's /etc/group has no group '%s'",
				   gname);
	return 0;
}
