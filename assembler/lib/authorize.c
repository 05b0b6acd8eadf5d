// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The authorize stage: parse -> open -> authorize -> plan -> execute. What the
 * layout's principal (principal.c) is given of each host object the open
 * stage opened. The only place a right is decided; the plan records each
 * decision as a step (plan.c) and `rootasm check --as` prints them.
 *
 *   administrator   image files: root-owned, not writable by group or others,
 *                   and so is every directory above them, unless sticky
 *                   (sshd's StrictModes: ra_admin_trusted()); else refused,
 *                   unless the layout marks the image `trusted: true`
 *   user            (runs with the user's file-system credentials, as the open
 *                   stage did, so each answer is the kernel's)
 *                   - image files: an administrator's under the same trust
 *                     rule, whatever the layout says, none of a FUSE
 *                     filesystem, and never for uid 0 without capabilities
 *                     (user_image());
 *                   - layers' and volumes' own idmaps: refused (an idmap gives
 *                     files to whoever the map names);
 *                   - an upper directory on the host: refused (overlayfs copies
 *                     up there with the assembler's rights: a root-owned set-uid
 *                     copy in the user's directory);
 *                   - a credential of the layout's own for overlayfs
 *                     (overlay.override_creds): refused (the mounter must hold
 *                     it, so it could read what the user cannot); a directory
 *                     layer under another layer makes the overlay look the
 *                     layers up with the user's own rights (plan.c, user_view);
 *                   - a directory layer it cannot read and search: refused;
 *                   - a bind source it cannot read (a socket: write): refused;
 *                     a rw bind of what it cannot write: read-only
 *                     (ra_src.auth_ro, auth_why);
 *                   - a directory layer or bind source with a mount at or
 *                     below it: refused (a clone without its submounts, or an
 *                     overlay layer, shows what the mount hides; a tree in the
 *                     user's own mount namespace could unmount it);
 *                   - the tree: nosuid,nodev on every mount, locked
 *
 * Before all: what the principal's front end limits it to (a rootasmd
 * policy's layout and source directories: rootasm_principal_limit()), on
 * the fds the open stage holds.
 *
 * Then, for the tree as it is handed over (ra_grant()): its tree-wide
 * attributes and lock (a user's tree, or one whose receiver may not be an
 * administrator), its user namespace, and the credential each overlay looks
 * its layers up with. The plan carries the grant out; it decides nothing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "chase.h"
#include "mntinfo.h"
#include "sysmnt.h"
#include "principal.h"
#include "util.h"
#include "volume.h"

#define RA_FUSE_SUPER_MAGIC 0x65735546

#ifndef AT_EACCESS
#define AT_EACCESS 0x200
#endif

struct astate {
	const struct rootasm_principal *p;
	struct ra_diag *d;
	struct rootasm_error *e;
	bool host_ids;		/* ra_host_ids(), asked once per authorization */
	int bad;
};

static int deny(struct astate *a, const struct rootasm_layout *l, const struct ra_src *s, struct ra_loc loc,
		const char *key, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int deny(struct astate *a, const struct rootasm_layout *l, const struct ra_src *s, struct ra_loc loc,
		const char *key, const char *fmt, ...)
{
	struct rootasm_error one, *t = a->e && !a->d->count ? a->e : &one;
	char msg[ROOTASM_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memset(t, 0, sizeof(*t));
	t->err = EPERM;
	t->kind = ROOTASM_ERROR_PERMISSION;
	snprintf(t->file, sizeof(t->file), "%s", l->file);
	t->line = loc.line;
	t->column = loc.column;
	snprintf(t->op, sizeof(t->op), "%s", key);
	snprintf(t->msg, sizeof(t->msg), "%s%s%s", s ? s->display : "", s ? ": " : "", msg);
	a->d->count++;
	if (a->d->fn)
		a->d->fn(t, a->d->userdata);
	a->bad = -EPERM;
	return -EPERM;
}

/* The kernel's verdict for the calling thread's credentials (the principal's, in its thread). */
static bool may(int fd, int mode)
{
	return syscall(SYS_faccessat2, fd, "", mode, AT_EMPTY_PATH | AT_EACCESS) == 0;
}

/*
 * An administrator's image, or nested layout: root's file, every directory
 * above it root's and writable by nobody else (sticky ones excepted): the one
 * trust rule (ra_admin_trusted()), walked up from the directory the fd is in;
 * or an image the layout vouches for.
 */
static void trust_file(struct astate *a, const struct rootasm_layout *l, const struct ra_src *s)
{
	bool nested = s->kind == RA_SRC_LAYOUT;

	/* in a user namespace that hides host owners the kernel mounts no image for us anyway */
	if (s->trusted || s->fd < 0 || !a->host_ids || !S_ISREG(s->mode))	/* (a layout has no `trusted`) */
		return;
	/* the open stage's verdict, on the fd and the directory it found it in (open.c) */
	if (s->admin_trust < 0 && nested)
		deny(a, l, s, s->loc, s->key, "the nested layout file %s: another user could change what an "
		     "administrator assembles; fix its owner and mode (and its directories')",
		     s->admin_why ? s->admin_why : strerror(-s->admin_trust));
	else if (s->admin_trust < 0)
		deny(a, l, s, s->loc, s->key, "the image file %s: another user could change what an administrator "
		     "mounts; fix its owner and mode (and its directories'), or mark it `trusted: true`",
		     s->admin_why ? s->admin_why : strerror(-s->admin_trust));
	else if (s->admin_trust > 0)
		deny(a, l, s, s->loc, s->key, "the %s file was not judged when it was opened", nested ? "layout" : "image");
}

/*
 * An image file a user's tree mounts: the kernel reads a filesystem out of it
 * with the assembler's rights, which the user does not have on the host
 * (squashfs and erofs mount in the initial user namespace only). So it must be
 * an administrator's file under the one trust rule, one the user could neither
 * have made nor change, whatever the layout says (`trusted: true` is an
 * administrator's word; a user's layout is the user's own, inline or read with
 * the user's rights). uid 0 without CAP_SYS_ADMIN owns root's files: it may
 * write every one of them, so no image is an administrator's to it.
 */
static void user_image(struct astate *a, const struct rootasm_layout *l, const struct ra_src *s, const char *who)
{
	struct statfs sf;

	if (s->fd < 0 || !a->host_ids || !S_ISREG(s->mode))
		return;
	/* a FUSE filesystem's owners and modes are what its server says, and a user may run one (fusermount3) */
	if (fstatfs(s->fd, &sf) == 0 && sf.f_type == RA_FUSE_SUPER_MAGIC)
		deny(a, l, s, s->loc, s->key, "a tree for %s mounts no image file of a FUSE filesystem: its owners and "
		     "modes are whatever its server says, which a user may run", who);
	else if (s->admin_trust < 0)
		deny(a, l, s, s->loc, s->key, "a tree for %s mounts only an administrator's image files, which it "
		     "could not have made or changed (the kernel reads them with the assembler's rights): %s", who,
		     s->admin_why ? s->admin_why : strerror(-s->admin_trust));
	else if (s->admin_trust > 0)
		deny(a, l, s, s->loc, s->key, "the image file was not judged when it was opened");
	else if (a->p && a->p->uid == 0)
		deny(a, l, s, s->loc, s->key, "a tree for %s mounts no image file: without CAP_SYS_ADMIN uid 0 may still "
		     "write every root-owned file, so none is an administrator's to it", who);
}

/* A user's source with a mount at or below it: what the mount hides is not the user's to see. */
static int covers(struct astate *a, const struct rootasm_layout *l, const struct ra_src *s, const char *who)
{
	_cleanup_free_ char *where = NULL;
	int r = ra_mounts_below(s->fd, &where);

	if (r == -ENOMEM)
		return ra_oom(a->e, "authorize");
	if (r < 0)
		deny(a, l, s, s->loc, s->key, "cannot tell which mounts lie below it (%s): a mount there would hide "
		     "what %s may not see", strerror(-r), who);
	else if (r > 0)
		deny(a, l, s, s->loc, s->key, "a mount at or below it (%s) hides part of it: a tree for %s may not "
		     "show what lies under a mount", where, who);
	return 0;
}

static int grant_why(struct ra_src *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int grant_why(struct ra_src *s, const char *fmt, ...)
{
	va_list ap;
	int r;

	free(s->auth_why);
	s->auth_why = NULL;
	va_start(ap, fmt);
	r = vasprintf(&s->auth_why, fmt, ap);
	va_end(ap);
	if (r < 0) {
		s->auth_why = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int walk(struct astate *a, struct rootasm_layout *l)
{
	bool admin = ra_principal_admin(a->p);
	const char *who = rootasm_principal_describe(a->p);
	int r;

	for (size_t i = 0; i < l->nlayers; i++) {
		struct ra_layer *ly = &l->layers[i];

		if (ly->kind == RA_LAYER_IMAGE && admin)
			trust_file(a, l, &ly->src);
		if (admin)
			continue;
		if (ly->kind == RA_LAYER_IMAGE)
			user_image(a, l, &ly->src, who);
		if (ly->idmap.set)
			deny(a, l, NULL, ly->loc, ly->src.key, "an idmap of the layout's own is for administrators "
			     "(the tree is for %s)", who);
		if (ly->kind != RA_LAYER_DIR || ly->src.fd < 0)
			continue;
		if (!may(ly->src.fd, R_OK | X_OK))
			deny(a, l, &ly->src, ly->src.loc, ly->src.key, "%s cannot read this directory", who);
		else if ((r = covers(a, l, &ly->src, who)) < 0)
			return r;
	}
	if (l->creds.set && !admin)
		deny(a, l, NULL, l->creds.loc, "overlay.override_creds", "a credential of the layout's own is for "
		     "administrators (the tree is for %s; its overlay looks layers up with %s's own rights)", who, who);
	if ((l->upper.kind == RA_UPPER_DIR || l->upper.kind == RA_UPPER_DIRS) && !admin)
		deny(a, l, &l->upper.src, l->upper.src.loc, l->upper.src.key, "an upper directory on the host is for "
		     "administrators (overlayfs copies files up there with the assembler's rights); use a tmpfs upper");
	for (size_t i = 0; i < l->nmounts; i++) {
		struct ra_mount *m = &l->mounts[i];
		const struct ra_volume_kind *k = ra_volume_kind(m);

		if ((k->image || m->src.kind == RA_SRC_LAYOUT) && admin)
			trust_file(a, l, &m->src);
		else if (k->image && k->auth != RA_VAUTH_ADMIN)
			user_image(a, l, &m->src, who);
		if (!admin && k->auth == RA_VAUTH_ADMIN)
			deny(a, l, NULL, m->loc, m->src.key, "'%s' mounts are for administrators (the tree is for %s)",
			     k->name, who);
		if (!admin && m->idmap.set)
			deny(a, l, NULL, m->loc, m->src.key, "an idmap of the layout's own is for administrators "
			     "(the tree is for %s)", who);
		if (!admin && k->auth == RA_VAUTH_BIND && m->src.fd >= 0) {
			bool dir = S_ISDIR(m->src.mode), sock = S_ISSOCK(m->src.mode);

			/* what it would need to use it on the host: read (and search) it; connect to a socket */
			if (!may(m->src.fd, dir ? R_OK | X_OK : sock ? W_OK : R_OK)) {
				deny(a, l, &m->src, m->src.loc, m->src.key, "%s cannot %s it", who, sock ? "connect to" : "read");
			} else if ((r = covers(a, l, &m->src, who)) < 0) {
				return r;
			} else if (!(m->attrs.set & MOUNT_ATTR_RDONLY) && !sock && !may(m->src.fd, W_OK)) {
				m->src.auth_ro = true;
				r = grant_why(&m->src, "read-only: %s cannot write %s", who, m->src.display);
				if (r < 0)
					return ra_oom(a->e, "authorize");
			}
		}
		if (m->nested) {
			r = walk(a, m->nested);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static bool in_dirs(const char *path, char *const *dirs, size_t n)
{
	for (size_t i = 0; path && path[0] == '/' && i < n; i++)
		if (ra_path_below(path, dirs[i]))
			return true;
	return false;
}

/* ROOTASM_LIMIT_SOURCES: each host object, by its fd, in one of the principal's source directories. */
static int source_limit(struct rootasm_layout *l, struct ra_src *s, struct ra_mount *m, void *ud)
{
	struct astate *a = ud;
	char where[RA_PATH_MAX];
	bool moved;
	ssize_t n;

	if (!s->path || s->fd < 0)
		return 0;
	n = ra_fd_path(s->fd, where, sizeof(where));
	moved = n >= 0 && strcmp(where, s->display);
	if (n < 0)
		deny(a, l, s, s->loc, s->key, "cannot tell where it is (%s)", strerror((int)-n));
	else if (!in_dirs(where, a->p->source_dirs, a->p->nsource_dirs))
		/* where it is, when that is not the path the layout names */
		deny(a, l, s, s->loc, s->key, "%s%s%sin none of the source directories allowed to %s",
		     moved ? "it is " : "", moved ? where : "", moved ? ", " : "", rootasm_principal_describe(a->p));
	return 0;
}

/* What the principal's front end limits it to (rootasm_principal_limit()), on what the open stage holds. */
static int limits(struct astate *a, struct rootasm_layout *l)
{
	const struct rootasm_principal *p = a->p;

	if (!p)
		return 0;
	/* an administrator limited stands for someone else's word: its layout file judged before it was read */
	if (p->limit_layouts && p->admin && !l->file_judged)
		deny(a, l, NULL, (struct ra_loc){ 0, 0 }, "layout", "an administrator limited to layout directories "
		     "loads only a layout file judged when it was opened (its owner and mode, and its directories')");
	if (p->limit_layouts && !in_dirs(l->anchor, p->layout_dirs, p->nlayout_dirs)) {
		if (l->anchor)
			deny(a, l, NULL, (struct ra_loc){ 0, 0 }, "layout", "the layout file lies in %s, in none of the "
			     "layout directories allowed to %s", l->anchor, rootasm_principal_describe(p));
		else
			deny(a, l, NULL, (struct ra_loc){ 0, 0 }, "layout", "%s may load only layout files in the layout "
			     "directories allowed to it, not a layout from memory", rootasm_principal_describe(p));
	}
	if (p->limit_sources)
		return ra_layout_walk(l, RA_WALK_NESTED, source_limit, a);
	return 0;
}

int ra_authorize_layout_file(const struct rootasm_principal *p, int dirfd, int fd, const char *shown,
			     struct rootasm_error *e)
{
	char where[RA_PATH_MAX], why[512];
	ssize_t n;

	if (!p || !p->limit_layouts)
		return 0;
	n = ra_fd_path(dirfd, where, sizeof(where));
	if (n < 0)
		return ra_err(e, (int)-n, -EBADF, "open layout", shown, "where its directory is");
	if (!in_dirs(where, p->layout_dirs, p->nlayout_dirs))
		return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EPERM, "open layout", shown, "the layout file lies in %s, "
				   "in none of the layout directories allowed to %s", where, rootasm_principal_describe(p));
	if (p->admin && ra_admin_trusted(fd, dirfd, why, sizeof(why)) < 0)
		return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EPERM, "open layout", shown, "not an administrator's "
				   "layout (%s), and an administrator would assemble it on someone else's word", why);
	return 0;
}

int ra_authorize(struct rootasm_layout *l, struct ra_diag *d, struct rootasm_error *e)
{
	struct astate a = { .p = l->principal, .d = d, .e = e, .host_ids = ra_host_ids() };
	int r = limits(&a, l);

	if (r == 0)
		r = walk(&a, l);
	return ra_stage_end(r, a.bad, &l->authorized);
}

/* A layout whose mounts carry idmaps of their own cannot be idmapped into a user namespace too. */
static int no_own_idmaps(const struct rootasm_layout *l, struct rootasm_error *e)
{
	for (size_t i = 0; i < l->nlayers; i++)
		if (l->layers[i].idmap.set)
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "assemble into a user namespace",
					   l->layers[i].src.display, "layer %zu has an idmap of its own", i);
	for (size_t i = 0; i < l->nmounts; i++) {
		if (l->mounts[i].idmap.set)
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "assemble into a user namespace",
					   l->mounts[i].target, "mounts[%zu] has an idmap of its own", i);
		if (l->mounts[i].nested) {
			int r = no_own_idmaps(l->mounts[i].nested, e);

			if (r < 0)
				return r;
		}
	}
	return 0;
}

int ra_grant(const struct rootasm_layout *l, const struct ra_delivery *dl, struct ra_grant *g,
	     struct rootasm_error *e)
{
	const struct rootasm_principal *p = l->principal;
	int r;

	*g = (struct ra_grant){ .who = p, .admin = ra_principal_admin(p), .userns_fd = -EBADF, .receiver = -1 };
	/* the tree's user namespace: the request's word, else the principal's */
	if (dl && dl->userns_fd >= 0)
		g->userns_fd = dl->userns_fd;
	else if (p && p->userns_fd >= 0)
		g->userns_fd = p->userns_fd;
	/* a principal its front end allows no user namespace (rootasmd's rule without "userns") */
	if (g->userns_fd >= 0 && p && p->limit_userns)
		return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, EPERM, "assemble into a user namespace", l->file,
				   "%s may not have trees idmapped into a user namespace", rootasm_principal_describe(p));
	if (g->userns_fd >= 0) {
		r = no_own_idmaps(l, e);
		if (r < 0)
			return r;
		r = ra_userns_root(g->userns_fd, &g->root_uid, &g->root_gid, e);
		if (r < 0)
			return r;
	}
	/* a receiver that is neither root nor the caller is someone who may not be an administrator */
	for (size_t i = 0; g->admin && dl && !dl->lock && dl->receivers && i < dl->n_receivers; i++)
		if (dl->receivers[i] != 0 && dl->receivers[i] != geteuid()) {
			g->receiver = dl->receivers[i];
			break;
		}
	/*
	 * Whoever attaches a tree that is not an administrator's, or that goes to
	 * a receiver who may not be one, nothing in it runs set-uid or opens a
	 * device node; and what it was given it keeps: no one it reaches clears
	 * an attribute or unmounts a volume.
	 */
	if (!g->admin || (dl && dl->lock) || g->receiver >= 0) {
		g->tree_force = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
		g->lock = true;
		g->why = !g->admin ? "the tree is not for an administrator" :
				     "the tree goes to a receiver who may not be an administrator";
	}
	return 0;
}

/* A directory layer with another layer above it. */
static bool dir_covered(const struct rootasm_layout *l)
{
	for (size_t i = 0; i + 1 < l->nlayers; i++)
		if (l->layers[i].kind == RA_LAYER_DIR)
			return true;
	return false;
}

enum ra_cred ra_grant_overlay_cred(const struct ra_grant *g, const struct rootasm_layout *l, bool userns_cred)
{
	/*
	 * For a tree in a user namespace the credential is one inside it: the
	 * layout's, or its root with every capability there where the kernel
	 * records a credential without CAP_SYS_ADMIN (the principal's own
	 * already); else the assembler's own.
	 */
	if (g->userns_fd >= 0 && l->creds.set)
		return RA_CRED_LAYOUT_USERNS;
	if (g->userns_fd >= 0 && userns_cred)
		return RA_CRED_USERNS_ROOT;
	if (l->creds.set)
		return RA_CRED_LAYOUT;
	/*
	 * A directory layer under another layer, looked up with the assembler's
	 * rights: a layer above could cover one of its directories the principal
	 * may not search with one it may, and show what is inside.
	 */
	if (!g->admin && dir_covered(l))
		return RA_CRED_PRINCIPAL;
	return RA_CRED_MOUNTER;
}
