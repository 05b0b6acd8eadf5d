// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Host paths resolved one component at a time on fds, refusing the
 * transitions another user could have arranged (systemd's chase() with
 * CHASE_SAFE):
 *
 *   start     "/" for an absolute path, else the anchor fd (the layout's directory)
 *   each      openat(dir, name, O_PATH | O_NOFOLLOW) + fstat
 *             - from a directory owned by a user other than root into an
 *               object another user owns: refused (that user could swap it);
 *             - through a directory others may write (S_IWOTH) without the
 *               sticky bit: refused (anyone could swap what is in it);
 *   symlink   not the last component: readlinkat, then the same rule from
 *             the link (its owner) to where it leads ("/" for an absolute one);
 *             a symlink on procfs (a magic link) is refused; at most 40
 *   ".."      the same rule, upwards
 *   last      never followed: the caller sees the symlink itself and refuses it
 *
 * The rules are the host's view of ownership: in a user namespace that does
 * not map the whole id range (a rootless caller) owners outside it all look
 * like the overflow id, so they cannot be told apart: there the caller passes
 * RA_CHASE_NO_OWNERS (ra_host_ids(), asked once per load) and only the symlink
 * and procfs rules apply. Returns the object's O_PATH fd (the caller owns it)
 * and its stat, and the stat of the directory holding it.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "chase.h"
#include "util.h"

#define CHASE_MAX_LINKS 40

/* Whether this process sees host ids (the initial user namespace, or one mapping all of them). */
bool ra_host_ids(void)
{
	/* read(2) into the stack, not stdio: a failed allocation must not make this answer "no" */
	char buf[128];
	unsigned long a = 1, b = 1, c = 0;
	int fd = open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (sscanf(buf, "%lu %lu %lu", &a, &b, &c) != 3)
		return false;
	return a == 0 && b == 0 && c == 4294967295UL;
}

static int unsafe(struct ra_chase *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int unsafe(struct ra_chase *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	return -EXDEV;
}

/* Moving from @from (a directory or symlink) to @to: safe when root owns @from, or both have one owner. */
static bool transition_ok(const struct stat *from, const struct stat *to)
{
	return from->st_uid == 0 || from->st_uid == to->st_uid;
}

static bool others_write(const struct stat *dir)
{
	return (dir->st_mode & S_IWOTH) && !(dir->st_mode & S_ISVTX);
}

/* Whether @path is absolute and names its object literally: no "." or ".." component, no "//", no trailing '/'. */
static bool literal(const char *path)
{
	if (path[0] != '/')
		return false;
	for (const char *p = path; *p;) {
		size_t n;

		p++;	/* the '/' */
		n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
	}
	return true;
}

/*
 * One step from @cur (@cst its stat) to its entry @name, by the rules above:
 * *ret_next (owned) and *nst on success.
 */
static int step(int cur, const struct stat *cst, const char *name, bool strict, struct ra_chase *c, int *ret_next,
		struct stat *nst)
{
	_cleanup_close_ int next = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (next < 0 || fstat(next, nst) < 0)
		return -errno;
	if (strict && strcmp(name, "..") && others_write(cst))
		return unsafe(c, "%s is in a directory others may write (mode %04o, no sticky bit)", name,
			      (unsigned int)(cst->st_mode & 07777));
	/* into a child, or up with "..": the same rule (from where we are to where we go) */
	if (strict && !transition_ok(cst, nst))
		return unsafe(c, "%s (owner %u) is reached through a directory owned by uid %u", name,
			      (unsigned int)nst->st_uid, (unsigned int)cst->st_uid);
	*ret_next = take_fd(next);
	return 0;
}

/* The object is @fd (owned) with stat @st, in a directory with stat @dst (NULL: none, the path named a directory). */
static void found(struct ra_chase *c, int fd, const struct stat *st, const struct stat *dst)
{
	c->fd = fd;
	c->st = *st;
	c->has_parent = dst != NULL;
	if (dst)
		c->parent_st = *dst;
}

/*
 * The walk from @cur (owned; @cst its stat) along @buf (owned, modified), by the
 * rules above; *links counts the symlinks followed. When the object is an entry
 * of a directory, that directory's fd goes to *ret_parent (owned), else -EBADF.
 */
static int walk(int cur_fd, struct stat cst, char *buf_in, unsigned int flags, struct ra_chase *c, unsigned int *links,
		int *ret_parent)
{
	_cleanup_close_ int cur = cur_fd;
	_cleanup_free_ char *buf = buf_in;
	char *rest = buf;
	bool strict = !(flags & RA_CHASE_NO_OWNERS);

	*links = 0;
	*ret_parent = -EBADF;
	for (;;) {
		_cleanup_close_ int next = -EBADF;
		struct stat nst;
		char *name;
		bool last;
		int r;

		while (*rest == '/')
			rest++;
		if (!*rest) {
			/* the path named a directory ("/", "a/", "a/."): the object is where we are */
			found(c, take_fd(cur), &cst, NULL);
			return 0;
		}
		name = rest;
		rest += strcspn(rest, "/");
		if (*rest)
			*rest++ = '\0';
		last = !rest[strspn(rest, "/")];
		if (!strcmp(name, ".")) {
			if (last) {
				found(c, take_fd(cur), &cst, NULL);
				return 0;
			}
			continue;
		}
		r = step(cur, &cst, name, strict, c, &next, &nst);
		if (r < 0)
			return r;
		if (S_ISLNK(nst.st_mode) && !last) {
			char target[4097], lname[256];
			struct statfs sf;
			ssize_t n;
			size_t tl, rl;
			char *nb;

			if (++*links > CHASE_MAX_LINKS)
				return -ELOOP;
			if (fstatfs(cur, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC)
				return unsafe(c, "%s is a link of /proc (a magic link)", name);
			n = readlinkat(next, "", target, sizeof(target) - 1);
			if (n < 0)
				return -errno;
			if (n == 0)
				return -ENOENT;
			target[n] = '\0';
			/* the rest of the path goes after what the link says */
			tl = n;
			rl = strlen(rest);
			nb = malloc(tl + 1 + rl + 1);
			if (!nb)
				return -ENOMEM;
			memcpy(nb, target, tl);
			nb[tl] = '/';
			memcpy(nb + tl + 1, rest, rl + 1);
			/* name points into buf: keep a copy for the messages below before buf goes */
			snprintf(lname, sizeof(lname), "%s", name);
			name = lname;
			free(buf);
			buf = rest = nb;
			if (target[0] == '/') {
				_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
				struct stat rst;

				if (root < 0 || fstat(root, &rst) < 0)
					return -errno;
				if (strict && !transition_ok(&nst, &rst))
					return unsafe(c, "%s is a symlink owned by uid %u that leads to \"%s\" (/ is owned by uid %u)",
						      name, (unsigned int)nst.st_uid, target, (unsigned int)rst.st_uid);
				close(cur);
				cur = take_fd(root);
				cst = rst;
			} else if (strict && !transition_ok(&nst, &cst)) {
				return unsafe(c, "%s is a symlink owned by uid %u in a directory owned by uid %u", name,
					      (unsigned int)nst.st_uid, (unsigned int)cst.st_uid);
			}
			continue;
		}
		if (last) {
			found(c, take_fd(next), &nst, &cst);
			*ret_parent = take_fd(cur);
			return 0;
		}
		if (!S_ISDIR(nst.st_mode))
			return -ENOTDIR;
		close(cur);
		cur = take_fd(next);
		cst = nst;
	}
}

void ra_chase_memo_done(struct ra_chase_memo *m)
{
	close_fdp(&m->fd);
	free(m->dir);
	m->dir = NULL;
}

int ra_chase_with(struct ra_chase_memo *m, int dirfd, const char *path, unsigned int flags, struct ra_chase *c)
{
	const char *slash = strrchr(path, '/');
	bool lit = literal(path);
	size_t dlen = lit ? (size_t)(slash - path) : 0;
	unsigned int links;
	struct stat cst;
	char *buf;
	int cur, parent, r;

	c->fd = -EBADF;
	c->parent_fd = -EBADF;
	c->has_parent = false;
	c->why[0] = '\0';
	if (!*path)
		return -ENOENT;
	if (m && lit && m->dir && (m->flags & RA_CHASE_NO_OWNERS) == (flags & RA_CHASE_NO_OWNERS) && m->len == dlen &&
	    !strncmp(path, m->dir, dlen)) {
		/* the path lies directly in the memo's directory: one step from it, the last (never followed) */
		struct stat nst;
		int next;

		r = step(m->fd, &m->st, slash + 1, !(flags & RA_CHASE_NO_OWNERS), c, &next, &nst);
		if (r == 0 && (flags & RA_CHASE_PARENT) && (c->parent_fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 3)) < 0) {
			r = -errno;
			close(next);
		}
		if (r == 0)
			found(c, next, &nst, &m->st);
		return r;
	}
	cur = path[0] == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) :
			       (dirfd == AT_FDCWD ? open(".", O_PATH | O_DIRECTORY | O_CLOEXEC) :
						    fcntl(dirfd, F_DUPFD_CLOEXEC, 3));
	if (cur < 0)
		return -errno;
	if (fstat(cur, &cst) < 0) {
		r = -errno;
		close(cur);
		return r;
	}
	buf = strdup(path);
	if (!buf) {
		close(cur);
		return -ENOMEM;
	}
	r = walk(cur, cst, buf, flags, c, &links, &parent);
	if (r == 0 && (flags & RA_CHASE_PARENT) && parent >= 0 && (c->parent_fd = fcntl(parent, F_DUPFD_CLOEXEC, 3)) < 0) {
		r = -errno;
		close_fdp(&c->fd);
	}
	/* keep the directory of a path walked literally (the memo takes its fd) */
	if (r == 0 && m && lit && !links && parent >= 0) {
		char *d = strndup(path, dlen);

		if (d) {
			ra_chase_memo_done(m);
			m->dir = d;
			m->len = dlen;
			m->fd = take_fd(parent);
			m->st = c->parent_st;
			m->flags = flags;
		}
	}
	close_fdp(&parent);
	return r;
}

int ra_chase(int dirfd, const char *path, unsigned int flags, struct ra_chase *c)
{
	return ra_chase_with(NULL, dirfd, path, flags, c);
}
