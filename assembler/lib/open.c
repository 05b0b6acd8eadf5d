// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The open stage: every host object a layout names (layer directories,
 * images, bind sources, the upper directory, user namespace files, nested
 * layouts) is opened here, once, and validated on that fd. Nothing after this
 * stage resolves a host path again: the plan and the engine use these fds.
 *
 * The policy, one for every host path:
 *
 *   openat2(layout dir fd, path, O_PATH | O_NOFOLLOW, RESOLVE_NO_MAGICLINKS)
 *     - relative paths resolve from the layout file's directory (an fd opened
 *       once per layout file), absolute ones from /;
 *     - symlinks in the directories leading to the object are followed (they
 *       are the host's); the object itself may not be a symlink: a path whose
 *       last component is a symlink is refused ("name its target"), so
 *       swapping an object for a symlink can never bring another one in;
 *     - magic links (/proc/PID/fd/N, /proc/PID/root, ...) are refused on the
 *       way, except for `idmap.userns`, whose documented form
 *       /proc/PID/ns/user is one: it is followed, and what it names must be a
 *       user namespace (nsfs, NS_GET_NSTYPE = CLONE_NEWUSER);
 *   fstat() on the fd: a layer or upper `dir` must be a directory, an
 *   `image` or a nested `layout` a regular file, a `bind` source anything but
 *   a symlink. Only then is a file opened for reading (O_RDONLY, through
 *   /proc/self/fd of the O_PATH fd): a FIFO or a device node is never opened
 *   for reading, so nothing can hang or be triggered by an open. A layout
 *   (the top one and each nested one) is read only from a regular file of a
 *   real filesystem (ra_check_readable_file(): not /proc/kmsg, nothing of
 *   sysfs, debugfs, ...), with O_NONBLOCK.
 *
 * A nested layout is read from its fd, parsed, and opened the same way from
 * its own directory; a cycle is found by (st_dev, st_ino) of the layout files
 * on the way down. Limits: RA_MAX_DEPTH levels, RA_MAX_LAYOUTS layout files
 * and RA_MAX_TOTAL_MOUNTS mounts per assembly.
 */
#include <fcntl.h>
#include <libgen.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <linux/nsfs.h>

#include "chase.h"
#include "context.h"
#include "layout.h"
#include "open.h"
#include "principal.h"
#include "util.h"

struct ostate {
	struct rootasm_ctx *ctx;
	struct ra_diag *d;
	struct rootasm_error *e;
	unsigned int layouts, mounts;
	int depth;
	struct stat own_userns;		/* /proc/self/ns/user, once (st_ino 0: not yet) */
	bool absolute_only;		/* ROOTASM_LOAD_ABSOLUTE: the top layout's host paths */
	unsigned int chase;		/* ra_chase() flags: RA_CHASE_NO_OWNERS where owners cannot be told apart */
	struct ra_chase_memo memo;	/* the directory of the last source opened (chase.h) */
	struct ra_trust_memo trust;	/* the directories found trusted so far (ra_admin_trusted_memo()) */
	struct {
		dev_t dev;
		ino_t ino;
	} stack[RA_MAX_DEPTH];
};

/* An error about a host object: the layout's location and key, the path, the cause. */
static int src_err(struct ostate *st, const struct rootasm_layout *l, const struct ra_src *s, int err,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int src_err(struct ostate *st, const struct rootasm_layout *l, const struct ra_src *s, int err,
		   const char *fmt, ...)
{
	struct rootasm_error one, *t = st->e && !st->d->count ? st->e : &one;
	char msg[ROOTASM_ERR_MSG_MAX] = "";
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
	}
	memset(t, 0, sizeof(*t));
	t->err = err;
	/* what the path names is the layout's business; a failing system is not */
	t->kind = err == ENOENT || err == ENOTDIR || err == ELOOP || err == EISDIR || err == EINVAL ||
		  err == EACCES || err == ENAMETOOLONG || err == EXDEV || err == E2BIG || err == ESTALE ?
		  ROOTASM_ERROR_USAGE : ROOTASM_ERROR_RUNTIME;
	snprintf(t->file, sizeof(t->file), "%s", l->file);
	t->line = s->loc.line;
	t->column = s->loc.column;
	snprintf(t->op, sizeof(t->op), "%s", s->key);
	snprintf(t->msg, sizeof(t->msg), "%s: %s", s->display, *msg ? msg : strerror(err));
	st->d->count++;
	if (st->d->fn)
		st->d->fn(t, st->d->userdata);
	return -err;
}

static const char *const kind_want[] = {
	[RA_SRC_DIR] = "a directory",
	[RA_SRC_IMAGE] = "a regular file (an image)",
	[RA_SRC_BIND] = "a file, directory or other object",
	[RA_SRC_USERNS] = "a user namespace file (/proc/PID/ns/user)",
	[RA_SRC_LAYOUT] = "a regular file (a layout)",
	[RA_SRC_LOWER] = "a directory or a regular file (an image)",
};

/* Open @s from @dirfd by the policy above; on success s->fd holds the object. */
static int open_src(struct ostate *st, const struct rootasm_layout *l, int dirfd, struct ra_src *s)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,	/* /proc/PID/ns/user is a magic link */
	};
	_cleanup_close_ int fd = -EBADF;
	struct stat sb;
	bool ok;

	/* a layout from elsewhere (rootasmd): nothing resolves against our working directory */
	if (st->absolute_only && st->depth == 0 && s->path[0] != '/')
		return src_err(st, l, s, EINVAL, "a relative path in a layout sent inline: give an absolute path");
	if (s->kind == RA_SRC_USERNS) {
		fd = sys_openat2(dirfd, s->path, &how);
		if (fd < 0)
			return src_err(st, l, s, errno, NULL);
		if (fstat(fd, &sb) < 0)
			return src_err(st, l, s, errno, "fstat: %s", strerror(errno));
	} else {
		/* what may be an image or a nested layout: the directory it is found in, for the trust rule below */
		bool file = s->kind == RA_SRC_IMAGE || s->kind == RA_SRC_LOWER || s->kind == RA_SRC_LAYOUT;
		struct ra_chase c;
		int r = ra_chase_with(&st->memo, dirfd, s->path, st->chase | (file ? RA_CHASE_PARENT : 0), &c);
		_cleanup_close_ int parent = -EBADF;

		if (r == -ENOMEM)
			return ra_oom(st->e, "open");
		if (r == -EXDEV)
			return src_err(st, l, s, EXDEV, "an unsafe path: %s", c.why);
		if (r < 0)
			return src_err(st, l, s, -r, NULL);
		fd = c.fd;
		parent = c.parent_fd;
		sb = c.st;	/* taken on that fd */
		/*
		 * A file an administrator's layout mounts as an image, or assembles as
		 * a nested layout, must be root's, and every directory above it
		 * (ra_admin_trusted()): judged here on the
		 * fd and the directory it was found in, not on a name looked up again
		 * (authorize.c gives the verdict to the principal it concerns).
		 */
		s->admin_trust = 1;
		if (file && S_ISREG(sb.st_mode)) {
			char why[512];

			s->admin_trust = ra_admin_trusted_memo(fd, parent, &st->trust, why, sizeof(why));
			if (s->admin_trust < 0 && !(s->admin_why = strdup(why)))
				return ra_oom(st->e, "open");
		}
	}
	s->mode = sb.st_mode;
	s->uid = sb.st_uid;
	switch (s->kind) {
	case RA_SRC_DIR:
		ok = S_ISDIR(sb.st_mode);
		break;
	case RA_SRC_IMAGE:
	case RA_SRC_LAYOUT:
		ok = S_ISREG(sb.st_mode);
		break;
	case RA_SRC_BIND:
		ok = !S_ISLNK(sb.st_mode);
		break;
	case RA_SRC_LOWER:
		ok = S_ISDIR(sb.st_mode) || S_ISREG(sb.st_mode);
		break;
	case RA_SRC_USERNS: {
		struct statfs sf;

		ok = fstatfs(fd, &sf) == 0 && sf.f_type == NSFS_MAGIC;
		break;
	}
	default:
		ok = false;
	}
	if (!ok && S_ISLNK(sb.st_mode)) {
		char to[256];
		ssize_t n = readlinkat(fd, "", to, sizeof(to) - 1);

		to[n > 0 ? n : 0] = '\0';
		return src_err(st, l, s, ELOOP, "is a symbolic link (to %s); rootasm does not follow one as the "
			       "last component of a host path: name what it points to", n > 0 ? to : "?");
	}
	if (!ok)
		return src_err(st, l, s, s->kind == RA_SRC_DIR ? ENOTDIR : EINVAL, "is %s, expected %s",
			       ra_type_name(sb.st_mode), kind_want[s->kind]);
	if (s->kind == RA_SRC_IMAGE || s->kind == RA_SRC_LAYOUT || s->kind == RA_SRC_USERNS ||
	    (s->kind == RA_SRC_LOWER && S_ISREG(sb.st_mode))) {
		/* a regular file or an nsfs inode: re-opening it for reading cannot block */
		int rfd = ra_reopen(fd, O_RDONLY);

		if (rfd < 0)
			return src_err(st, l, s, errno, "open for reading through /proc/self/fd: %s", strerror(errno));
		close(fd);
		fd = rfd;
	}
	if (s->kind == RA_SRC_USERNS) {
		int t = ioctl(fd, NS_GET_NSTYPE);

		if (t != CLONE_NEWUSER)
			return src_err(st, l, s, EINVAL, "is a namespace, but not a user namespace");
	}
	RA_TRACE(st->ctx, "open %s %s: fd %d (%s)", s->key, s->display, fd, ra_type_name(sb.st_mode));
	s->fd = take_fd(fd);
	return 0;
}

static int open_layout(struct ostate *st, struct rootasm_layout *l, int dirfd);

/* The initial user namespace's inode number (PROC_USER_INIT_INO, include/linux/proc_ns.h). */
#define INIT_USERNS_INO 0xEFFFFFFDU

/*
 * An idmap.userns (opened by open_src()) must be another process's user
 * namespace: an idmap into the one we run in, or into the initial one, maps
 * every id to itself, and the kernel refuses it at assembly with a message
 * that says nothing of the layout.
 */
static int userns_not_ours(struct ostate *st, const struct rootasm_layout *l, const struct ra_src *s)
{
	struct stat sb;

	if (fstat(s->fd, &sb) < 0)
		return src_err(st, l, s, errno, "fstat: %s", strerror(errno));
	if (!st->own_userns.st_ino && stat("/proc/self/ns/user", &st->own_userns) < 0)
		return src_err(st, l, s, errno, "stat /proc/self/ns/user: %s", strerror(errno));
	if (sb.st_dev == st->own_userns.st_dev && sb.st_ino == st->own_userns.st_ino)
		return src_err(st, l, s, EINVAL, "is the user namespace rootasm runs in: an idmap into it would "
			       "change nothing; name another process's namespace");
	if (sb.st_ino == INIT_USERNS_INO)
		return src_err(st, l, s, EINVAL, "is the initial user namespace: an idmap into it would change "
			       "nothing; name another process's namespace");
	return 0;
}

/* mounts[i].layout: read, parse and open the nested layout from @s's fd. */
static int open_nested(struct ostate *st, struct rootasm_layout *l, int dirfd, struct ra_mount *m)
{
	struct ra_src *s = &m->src;
	_cleanup_free_ char *buf = NULL, *dcopy = NULL, *bcopy = NULL, *ddisp = NULL;
	_cleanup_close_ int ndir = -EBADF;
	struct stat sb, sd;
	char why[256];
	size_t len;
	int r;

	if (fstat(s->fd, &sb) < 0)
		return src_err(st, l, s, errno, "fstat: %s", strerror(errno));
	/* a regular file of a real filesystem, read without blocking: not /proc/kmsg */
	r = ra_check_readable_file(s->fd, why, sizeof(why));
	if (r < 0)
		return src_err(st, l, s, -r, "%s", why);
	if (fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK) < 0)
		return src_err(st, l, s, errno, "fcntl O_NONBLOCK: %s", strerror(errno));
	for (int i = 0; i < st->depth; i++)
		if (st->stack[i].dev == sb.st_dev && st->stack[i].ino == sb.st_ino)
			return src_err(st, l, s, ELOOP, "includes itself (a cycle of nested layouts)");
	if (st->depth >= RA_MAX_DEPTH)
		return src_err(st, l, s, ELOOP, "layouts nested deeper than %d", RA_MAX_DEPTH);
	if (++st->layouts > RA_MAX_LAYOUTS)
		return src_err(st, l, s, E2BIG, "more than %d layout files in one assembly", RA_MAX_LAYOUTS);
	/* its own directory, and the file must be the one in it */
	dcopy = strdup(s->path);
	bcopy = strdup(s->path);
	ddisp = strdup(s->display);
	if (!dcopy || !bcopy || !ddisp)
		return ra_oom(st->e, "open nested layout");
	/* its directory, resolved as safely as the file was (chase.c) */
	{
		struct ra_chase c;
		_cleanup_free_ char *d = NULL;
		int rc;

		/* "DIR/.": a symlinked directory is followed, as on the way to any host object */
		if (asprintf(&d, "%s/.", dirname(dcopy)) < 0)
			return ra_oom(st->e, "open nested layout");
		rc = ra_chase(dirfd, d, st->chase, &c);
		if (rc == -ENOMEM)
			return ra_oom(st->e, "open nested layout");
		if (rc == -EXDEV)
			return src_err(st, l, s, EXDEV, "open its directory: an unsafe path: %s", c.why);
		if (rc < 0)
			return src_err(st, l, s, -rc, "open its directory: %s", strerror(-rc));
		ndir = c.fd;
		if (!S_ISDIR(c.st.st_mode))
			return src_err(st, l, s, ENOTDIR, "open its directory: not a directory");
	}
	if (fstatat(ndir, basename(bcopy), &sd, AT_SYMLINK_NOFOLLOW) < 0 || sd.st_dev != sb.st_dev ||
	    sd.st_ino != sb.st_ino)
		return src_err(st, l, s, ESTALE, "changed while it was being opened");
	r = ra_read_all(s->fd, RA_LAYOUT_MAX_BYTES, NULL, NULL, &buf, &len);
	if (r == -EFBIG)
		return src_err(st, l, s, EFBIG, "larger than %u bytes", RA_LAYOUT_MAX_BYTES);
	if (r == -ENOMEM)
		return ra_oom(st->e, "read nested layout");
	if (r < 0)
		return src_err(st, l, s, -r, "read: %s", strerror(-r));
	r = ra_layout_parse(buf, len, s->display, dirname(ddisp), st->d, &m->nested, st->e);
	if (r < 0)
		return r;
	st->stack[st->depth].dev = sb.st_dev;
	st->stack[st->depth].ino = sb.st_ino;
	st->depth++;
	r = open_layout(st, m->nested, ndir);
	st->depth--;
	return r;
}

struct open_walk {
	struct ostate *st;
	int dirfd;
	int bad;
};

/* One host object of the walk; a nested layout once its mount's objects are open. */
static int open_one(struct rootasm_layout *l, struct ra_src *s, struct ra_mount *m, void *userdata)
{
	struct open_walk *w = userdata;
	int r;

	if (s->path) {
		r = open_src(w->st, l, w->dirfd, s);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			w->bad = r;
		/* a user namespace file: open, then not the one we run in */
		else if (s->kind == RA_SRC_USERNS && (r = userns_not_ours(w->st, l, s)) < 0)
			w->bad = r;
	}
	if (m && s == &m->idmap.userns && m->src.kind == RA_SRC_LAYOUT && m->src.fd >= 0) {
		r = open_nested(w->st, l, w->dirfd, m);
		if (r == -ENOMEM || r == -E2BIG)
			return r;
		/* a nested layout that failed to open is no help to a later one */
		if (r < 0)
			w->bad = r;
	}
	return 0;
}

/* Every ra_src of @l, from @dirfd; errors about what a path names do not stop the others. */
static int open_layout(struct ostate *st, struct rootasm_layout *l, int dirfd)
{
	struct open_walk w = { .st = st, .dirfd = dirfd };
	int r;

	st->mounts += l->nmounts;
	if (st->mounts > RA_MAX_TOTAL_MOUNTS) {
		/* a limit of the whole assembly: nothing after this is worth opening */
		ra_layout_err(st->d, st->e, l->file, l->nmounts ? l->mounts[0].loc : (struct ra_loc){ 0, 0 },
			      "mounts", "more than %d mounts in one assembly, nested layouts included",
			      RA_MAX_TOTAL_MOUNTS);
		return -E2BIG;
	}
	r = ra_layout_walk(l, 0, open_one, &w);
	return ra_stage_end(r, w.bad, &l->opened);
}

int ra_layout_open(struct rootasm_ctx *ctx, struct rootasm_layout *l, int dirfd, struct stat *top,
		   bool absolute_only, struct ra_diag *d, struct rootasm_error *e)
{
	struct ostate st = { .ctx = ra_ctx(ctx), .d = d, .e = e, .layouts = 1, .absolute_only = absolute_only,
			     .chase = ra_host_ids() ? 0 : RA_CHASE_NO_OWNERS, .memo = RA_CHASE_MEMO_INIT };
	int r;

	if (top) {
		st.stack[0].dev = top->st_dev;
		st.stack[0].ino = top->st_ino;
		st.depth = 1;
	}
	/* a file's directory, as its fd says: what a principal's layout limit is checked on (authorize.c) */
	if (dirfd >= 0) {
		char t[RA_PATH_MAX];

		if (ra_fd_path(dirfd, t, sizeof(t)) > 0 && t[0] == '/' && !(l->anchor = strdup(t)))
			return ra_oom(e, "open layout");
	}
	r = open_layout(&st, l, dirfd);
	ra_chase_memo_done(&st.memo);
	/* an assembly-wide limit is a problem of the layout: EINVAL, as every other */
	return r == -E2BIG ? -EINVAL : r;
}

/* The directory part of @path for display: absolute (the working directory prefixed). */
static char *display_dir(const char *path)
{
	_cleanup_free_ char *copy = strdup(path), *cwd = NULL;
	const char *d;
	char *r = NULL;

	if (!copy)
		return NULL;
	d = dirname(copy);
	if (d[0] == '/')
		return strdup(d);
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return strdup(d);
	if (!strcmp(d, "."))
		return TAKE_PTR(cwd);
	if (asprintf(&r, "%s/%s", strcmp(cwd, "/") ? cwd : "", d) < 0)
		return NULL;
	return r;
}

/* The options' size and flags (the ABI rules in rootasm.h); 0 or a usage error in @e. */
static int opts_check(const struct rootasm_load_opts *o, bool mem, const char *name, struct rootasm_error *e)
{
	int r = RA_OPTS_CHECK(o, struct rootasm_load_opts, offsetof(struct rootasm_load_opts, diag), "load layout",
			      name, e);

	if (r < 0 || !o)
		return r;
	if (o->flags & ~(ROOTASM_LOAD_OFFLINE | ROOTASM_LOAD_DIR_FD | ROOTASM_LOAD_ABSOLUTE))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "load layout", name, "unknown flags 0x%x",
				   o->flags & ~(ROOTASM_LOAD_OFFLINE | ROOTASM_LOAD_DIR_FD | ROOTASM_LOAD_ABSOLUTE));
	if (!RA_OPT(o, struct rootasm_load_opts, upper_dir, NULL) != !RA_OPT(o, struct rootasm_load_opts, work_dir, NULL))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "load layout", name, "upper_dir and work_dir go together");
	if (RA_OPT(o, struct rootasm_load_opts, upper_dir, NULL) &&
	    (o->upper_dir[0] != '/' || o->work_dir[0] != '/'))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "load layout", name, "upper_dir and work_dir must be "
				   "absolute: %s, %s", o->upper_dir, o->work_dir);
	if ((o->flags & ROOTASM_LOAD_DIR_FD) && (!mem || o->size < offsetof(struct rootasm_load_opts, dir_fd) + sizeof(int)))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "load layout", name,
				   mem ? "ROOTASM_LOAD_DIR_FD without the dir_fd field" :
				   "ROOTASM_LOAD_DIR_FD goes with rootasm_layout_load_mem(); a path names its own directory");
	return 0;
}

#define OPT(o, field, def) RA_OPT(o, struct rootasm_load_opts, field, def)

static int load(struct rootasm_ctx *ctx, const char *buf, size_t len, const char *name, const char *ddir,
		int dirfd, struct stat *top, bool judged, const struct rootasm_load_opts *o,
		const struct rootasm_principal *p, struct rootasm_layout **ret, struct rootasm_error *e)
{
	struct ra_diag d = { .fn = OPT(o, diag, NULL), .userdata = OPT(o, userdata, NULL) };
	struct rootasm_layout *l = NULL;
	int r;

	/* reporting every problem: the open stage looks at what parsed, even after errors */
	d.keep_partial = d.fn != NULL;
	r = ra_layout_parse(buf, len, name, ddir, &d, &l, e);
	/* who it is for (load_as(): never nobody), and what they are given of it (authorize.c) */
	if (l && !l->principal) {
		int rp = ra_principal_dup(p, &l->principal);

		if (rp < 0) {
			rootasm_layout_free(l);
			return rp == -ENOMEM ? ra_oom(e, "load layout") : ra_err(e, -rp, -EBADF, "load layout", name,
										  "keep the principal");
		}
	}
	if (l)
		l->file_judged = judged;
	/* an engine's writable layer in place of the layout's upper: judged by authorize as `upper: {upperdir}` */
	if (l && OPT(o, upper_dir, NULL) && ra_layout_set_upper_dirs(l, o->upper_dir, o->work_dir) < 0) {
		rootasm_layout_free(l);
		return ra_oom(e, "load layout");
	}
	if ((r == 0 || (r == -EINVAL && l)) && !(OPT(o, flags, 0u) & ROOTASM_LOAD_OFFLINE)) {
		int ro = ra_layout_open(ctx, l, dirfd, top, OPT(o, flags, 0u) & ROOTASM_LOAD_ABSOLUTE, &d, e);

		r = r < 0 ? r : ro;
		if (r == 0)
			r = ra_authorize(l, &d, e);
	}
	if (r < 0) {
		rootasm_layout_free(l);
		return r;
	}
	*ret = l;
	return 0;
}

static int load_path(struct rootasm_ctx *ctx, const char *path, const struct rootasm_load_opts *o,
		     const struct rootasm_principal *p, struct rootasm_layout **ret, struct rootasm_error *e)
{
	_cleanup_free_ char *ddir = NULL;
	struct ra_layout_file f;
	int r;

	r = opts_check(o, false, path, e);
	if (r < 0)
		return r;
	ddir = display_dir(path);
	if (!ddir)
		return ra_oom(e, "load layout");
	/* the one reader of a layout file (open-file.c): judged for @p before a byte is read */
	r = ra_layout_file_read(p, AT_FDCWD, NULL, path, path, &f, e);
	if (r < 0)
		return r;
	r = load(ctx, f.buf, f.len, path, ddir, f.dir_fd, &f.st, true, o, p, ret, e);
	if (r == 0)
		RA_TRACE(ra_ctx(ctx), "loaded %s (%zu bytes)", path, f.len);
	ra_layout_file_done(&f);
	return r;
}

static int load_mem(struct rootasm_ctx *ctx, const void *buf, size_t len, bool judged,
		    const struct rootasm_load_opts *o, const struct rootasm_principal *p, struct rootasm_layout **ret,
		    struct rootasm_error *e)
{
	_cleanup_free_ char *ddir = NULL;
	const char *name;
	int dirfd = AT_FDCWD, r;

	r = opts_check(o, true, NULL, e);
	if (r < 0)
		return r;
	name = OPT(o, name, NULL);
	if (!buf && len)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "load layout", name, "no buffer for %zu bytes", len);
	if (OPT(o, flags, 0u) & ROOTASM_LOAD_DIR_FD) {
		char t[RA_PATH_MAX];

		dirfd = OPT(o, dir_fd, -EBADF);
		ddir = strdup(ra_fd_path(dirfd, t, sizeof(t)) > 0 ? t : "(directory fd)");
	} else {
		ddir = getcwd(NULL, 0);
	}
	if (!ddir)
		return ra_oom(e, "load layout");
	return load(ctx, buf ? buf : "", len, name ? name : "(memory)", ddir, dirfd, NULL, judged, o, p, ret, e);
}

/* A load for a principal that is not an administrator runs with its credentials (principal.c). */
struct load_as {
	struct rootasm_ctx *ctx;
	const char *path;
	const void *buf;
	size_t len;
	const struct rootasm_load_opts *o;
	struct rootasm_layout **ret;
	struct rootasm_error *e;
	const struct rootasm_principal *p;	/* the options' principal, or the caller judged */
	bool judged;				/* memory: the file it came from judged (ra_layout_load_judged()) */
	bool ran;
};

static int load_as_fn(void *ud)
{
	struct load_as *a = ud;

	a->ran = true;
	return a->path ? load_path(a->ctx, a->path, a->o, a->p, a->ret, a->e) :
			 load_mem(a->ctx, a->buf, a->len, a->judged, a->o, a->p, a->ret, a->e);
}

static int load_as(struct load_as *a)
{
	struct rootasm_principal *self = NULL;
	int r;

	/* no principal named: the calling process, judged as rootasmd judges a client */
	a->p = OPT(a->o, principal, NULL);
	if (!a->p) {
		r = rootasm_principal_self(&self, a->e);
		if (r < 0)
			return r;
		a->p = self;
	}
	if (ra_principal_admin(a->p) || (OPT(a->o, flags, 0u) & ROOTASM_LOAD_OFFLINE))
		r = load_as_fn(a);
	else
		r = rootasm_principal_run(a->p, load_as_fn, a);
	if (r < 0 && !a->ran)
		r = ra_err_kind(a->e, r == -EPERM ? ROOTASM_ERROR_PERMISSION : ROOTASM_ERROR_RUNTIME, -r,
				"load layout", a->path, "cannot take on the file-system credentials of %s%s",
				rootasm_principal_describe(a->p), r == -EPERM ? " (needs CAP_SETUID and CAP_SETGID)" : "");
	rootasm_principal_free(self);
	return r;
}

int rootasm_layout_load(struct rootasm_ctx *ctx, const char *path, const struct rootasm_load_opts *o,
			struct rootasm_layout **ret, struct rootasm_error *e)
{
	struct load_as a = { .ctx = ctx, .path = path ? path : "", .o = o, .ret = ret, .e = e };

	if (!path || !*path)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "load layout", path, "no layout path");
	return load_as(&a);
}

int rootasm_layout_load_mem(struct rootasm_ctx *ctx, const void *buf, size_t len,
			    const struct rootasm_load_opts *o, struct rootasm_layout **ret,
			    struct rootasm_error *e)
{
	struct load_as a = { .ctx = ctx, .buf = buf, .len = len, .o = o, .ret = ret, .e = e };

	return load_as(&a);
}

int ra_layout_load_judged(struct rootasm_ctx *ctx, const void *buf, size_t len, const struct rootasm_load_opts *o,
			  struct rootasm_layout **ret, struct rootasm_error *e)
{
	struct load_as a = { .ctx = ctx, .buf = buf, .len = len, .o = o, .ret = ret, .e = e, .judged = true };

	return load_as(&a);
}

struct sources_walk {
	int (*fn)(const char *key, const char *display, int fd, void *userdata);
	void *userdata;
};

static int source_one(struct rootasm_layout *l, struct ra_src *s, struct ra_mount *m, void *userdata)
{
	struct sources_walk *w = userdata;

	return s->path && s->fd >= 0 ? w->fn(s->key, s->display, s->fd, w->userdata) : 0;
}

int rootasm_layout_sources(const struct rootasm_layout *l,
			   int (*fn)(const char *key, const char *display, int fd, void *userdata), void *userdata)
{
	struct sources_walk w = { fn, userdata };

	/* the walk takes no liberty with the model: it only reads */
	return ra_layout_walk((struct rootasm_layout *)l, RA_WALK_NESTED, source_one, &w);
}
