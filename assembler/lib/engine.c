// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The execute stage: a loop over the plan's operations (plan.c), with one
 * owner for every fd it makes (struct xstate). The host objects are the
 * layout's fds from the open stage: borrowed, never re-resolved, never closed
 * here. Each operation maps to its syscalls:
 *
 *   LAYER      image: erofs on the image fd's file, else a loop device (LOOP_CONFIGURE) + fsmount -> slot
 *              cached image (cache.h): the cache's detached mount as the slot (borrowed until
 *              the overlay is created), or open_tree(OPEN_TREE_CLONE) of it where the layer
 *              must be a mount of its own (the root itself, an idmap)
 *              dir:   the O_PATH fd as is, or open_tree(fd, "", OPEN_TREE_CLONE) -> slot
 *              idmap: mount_setattr(MOUNT_ATTR_IDMAP) on the mount in the slot
 *   UPPER      tmpfs: fsmount; dir: the host directory's fd; mkdirat(upper, work) in it
 *   OVERLAY    fsopen("overlay"); FSCONFIG_SET_FD lowerdir+ (slots, top first), upperdir,
 *              workdir; override_creds from a child holding the reduced credential
 *              (mount.c); CMD_CREATE; fsmount -> root
 *   ROOT_LAYER the one slot becomes the root; mount_setattr(ro) for a directory clone
 *   VOLUME     bind: open_tree[_attr](source fd, "", OPEN_TREE_CLONE) + mount_setattr
 *              tmpfs/image: fsmount; layout: the nested plan executed into a tree
 *              target: openat2(root, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), created if
 *              missing; then move_mount(volume, "", target, "", F_EMPTY_PATH | T_EMPTY_PATH)
 *   ROOT_ATTRS mount_setattr(attributes) on the root
 *
 * What it does beyond the layout is the plan's word, from the grant
 * (authorize.c: struct ra_grant, ra_grant()); the engine decides nothing.
 * With a user namespace in the grant every mount made for the tree is a
 * mount of its own, idmapped into it (MOUNT_ATTR_IDMAP); upper/ and work/
 * belong to its uid 0 / gid 0; the override_creds credential is the op's
 * (one inside the namespace: mount.c joins it with setns).
 *
 * On failure every fd made so far is closed on the way out, and closing the
 * root's fd dissolves whatever was built. Layer fds stay open until
 * CMD_CREATE returns: the overlay clones them then. The mount points made on
 * the way to targets (directories, empty files) land in whatever filesystem
 * the path crosses: a bind volume's host directory, a host upper directory.
 * Each is recorded (struct ra_made: its parent's fd, its name, device and
 * inode) and, when the assembly fails, removed again before the tree is
 * dissolved, newest first, only if it is still the one we made and still
 * empty. On success they stay: they are the tree's mount points.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "cache.h"
#include "context.h"
#include "layout.h"
#include "lock.h"
#include "plan.h"
#include "principal.h"
#include "probe.h"
#include "sysmnt.h"
#include "uapi.h"
#include "util.h"
#include "volume.h"
#include "xstate.h"

/* The entries the engine created, in order (resolve_target()); for all of one assembly. */
struct ra_made {
	struct ra_made_ent {
		int dirfd;		/* the parent directory (O_PATH, ours) */
		char *name;
		dev_t dev;
		ino_t ino;
		bool dir;
	} *v;
	size_t n, cap;
};

/*
 * Record that we created @name (now open as @fd) in *@parent, whose fd the
 * record takes (*@parent becomes -EBADF); on failure nothing is recorded or taken.
 */
static int made_add(struct ra_made *m, int *parent, const char *name, int fd, bool dir, struct rootasm_error *e)
{
	struct ra_made_ent ent = { .dir = dir };
	struct stat st;

	if (fstat(fd, &st) < 0)
		return ra_err(e, errno, -EBADF, "stat mount point", name, NULL);
	ent.dev = st.st_dev;
	ent.ino = st.st_ino;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct ra_made_ent *v = realloc(m->v, cap * sizeof(*v));

		if (!v)
			return ra_oom(e, "create mount point");
		m->v = v;
		m->cap = cap;
	}
	ent.name = strdup(name);
	if (!ent.name)
		return ra_oom(e, "create mount point");
	ent.dirfd = take_fd(*parent);
	m->v[m->n++] = ent;
	return 0;
}

/*
 * Whether the entry at ent->name is still the one we made. The tree is intact
 * (it is undone before the root's fd is closed), so a lookup of the name
 * crosses into a volume mounted on it: a mount other than the parent's there
 * is one of this detached tree's (nothing else mounts into it), moved onto
 * the very dentry we made (move_mount() onto our O_PATH fd of it).
 */
static bool made_ours(const struct ra_made_ent *ent)
{
	struct statx sx, px;

	if (statx(ent->dirfd, ent->name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE | STATX_INO | STATX_SIZE |
		  STATX_MNT_ID, &sx) < 0)
		return false;
	if (makedev(sx.stx_dev_major, sx.stx_dev_minor) == ent->dev && sx.stx_ino == ent->ino)
		return ent->dir ? S_ISDIR(sx.stx_mode) : S_ISREG(sx.stx_mode) && sx.stx_size == 0;
	return (sx.stx_mask & STATX_MNT_ID) &&
	       statx(ent->dirfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &px) == 0 && (px.stx_mask & STATX_MNT_ID) &&
	       sx.stx_mnt_id != px.stx_mnt_id;
}

/*
 * Let go of the entries from @mark on, newest first; when @undo (the assembly
 * failed; its tree is still whole), remove each first if it is still ours: a
 * directory only while it is empty (rmdir says ENOTEMPTY otherwise), a file only
 * while it is empty. Removing a mount point detaches the volume on it: the tree
 * is on its way out.
 */
static void made_release(struct ra_made *m, size_t mark, bool undo)
{
	for (size_t i = m->n; i-- > mark;) {
		struct ra_made_ent *ent = &m->v[i];

		if (undo && made_ours(ent))
			(void)unlinkat(ent->dirfd, ent->name, ent->dir ? AT_REMOVEDIR : 0);
		close(ent->dirfd);
		free(ent->name);
	}
	m->n = mark;
	if (!mark) {
		free(m->v);
		*m = (struct ra_made){ 0 };
	}
}

/* The layer slots are done with (the overlay has cloned them): close ours, give back what was lent. */
static void slots_release(struct xstate *x)
{
	for (size_t i = 0; x->slots && x->own && i < x->p->nslots; i++) {
		if (x->own[i])
			close_fdp(&x->slots[i]);
		x->own[i] = false;
		x->slots[i] = -EBADF;
		if (x->ents && x->ents[i]) {
			ra_cache_put(x->ctx->images, x->ents[i]);
			x->ents[i] = NULL;
		}
	}
}

static void xstate_close(struct xstate *x)
{
	slots_release(x);
	free(x->slots);
	free(x->own);
	free(x->ents);
	/* the upper's tmpfs base: the overlay has its own clone; dissolving ours can wait */
	if (x->own_ubase)
		ra_defer_close(x->ctx, take_fd(x->ubase));
	close_fdp(&x->ufd);
	close_fdp(&x->wfd);
	close_fdp(&x->root);
}

static int x_layer(struct xstate *x, const struct ra_op *op, struct rootasm_error *e)
{
	const struct ra_layer *ly = op->layer;
	int fd, r;

	switch (op->route) {
	case RA_ROUTE_IMAGE:
		fd = ra_image_mount(ly->src.fd, ly->src.display, ly->fstype, MOUNT_ATTR_RDONLY, e);
		if (fd < 0)
			return fd;
		break;
	case RA_ROUTE_CACHED: {
		struct ra_cache_entry *ent = NULL;
		int cfd = ra_cache_get(x->ctx->images, ly->src.fd, ly->src.display, NULL, ly->fstype, &ent, e);

		if (cfd < 0)
			return cfd;
		if (!ent) {
			fd = cfd;	/* a bypass: a fresh mount of our own */
			break;
		}
		x->ents[op->slot] = ent;
		if (op->lend) {
			/* overlayfs clones it privately at create: lent until then */
			x->slots[op->slot] = cfd;
			RA_TRACE(x->ctx, "%s: cached-mount %s -> fd %d (lent)", op->key, ly->src.display, cfd);
			return 0;
		}
		fd = ra_x_clone_cached(cfd, ly->src.display, e);
		if (fd < 0)
			return fd;
		break;
	}
	case RA_ROUTE_LAYER_CLONE:
		fd = open_tree(ly->src.fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
		if (fd < 0)
			return ra_err(e, errno, -EBADF, "open_tree", ly->src.display, NULL);
		break;
	default:
		/* the O_PATH fd goes to overlayfs as it is: borrowed */
		x->slots[op->slot] = ly->src.fd;
		RA_TRACE(x->ctx, "%s: %s %s -> fd %d (the layout's)", op->key, ra_route_name(op->route), ly->src.display,
			 ly->src.fd);
		return 0;
	}
	x->slots[op->slot] = fd;
	x->own[op->slot] = true;
	/* an idmapped layer is a mount of its own: a clone, or the image mount */
	r = op->to_userns ? ra_x_userns_apply(x, fd, false, ly->src.display, e) :
			    ra_idmap_apply(fd, &ly->idmap, false, ly->src.display, e);
	RA_TRACE(x->ctx, "%s: %s %s -> fd %d", op->key, ra_route_name(op->route), ly->src.display, fd);
	return r;
}

/* upper/ and work/ inside x->ubase (a dir fd, O_PATH is enough for mkdirat). */
static int x_upper(struct xstate *x, const struct ra_op *op, struct rootasm_error *e)
{
	const struct ra_upper *u = &op->l->upper;
	const struct ra_grant *g = x->p->g;
	const char *what = u->kind != RA_UPPER_TMPFS ? u->src.display : "tmpfs upper";

	if (u->kind == RA_UPPER_DIRS) {
		/*
		 * An engine's writable layer: its upper and work directories as
		 * they are, nothing made or chowned (the engine made them for the
		 * container, its user namespace's root included).
		 */
		x->ufd = fcntl(u->src.fd, F_DUPFD_CLOEXEC, 3);
		x->wfd = x->ufd < 0 ? -EBADF : fcntl(u->work.fd, F_DUPFD_CLOEXEC, 3);
		if (x->ufd < 0 || x->wfd < 0)
			return ra_err(e, errno, -EBADF, "dup", what, NULL);
		RA_TRACE(x->ctx, "upper: %s, work %s: upper fd %d, work fd %d", what, u->work.display, x->ufd, x->wfd);
		return 0;
	}
	if (u->kind == RA_UPPER_TMPFS) {
		x->ubase = ra_tmpfs_mount(&u->tmpfs, 0, e);
		if (x->ubase < 0)
			return x->ubase;
		x->own_ubase = true;
	} else {
		x->ubase = u->src.fd;
	}
	if (mkdirat(x->ubase, "upper", 0755) < 0 && errno != EEXIST)
		return ra_err(e, errno, -EBADF, "mkdir", what, "upper");
	if (mkdirat(x->ubase, "work", 0700) < 0 && errno != EEXIST)
		return ra_err(e, errno, -EBADF, "mkdir", what, "work");
	/* the caller's user namespace: its root owns what it writes to, and what overlayfs works in */
	if (op->to_userns && (fchownat(x->ubase, "upper", g->root_uid, g->root_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
			  fchownat(x->ubase, "work", g->root_uid, g->root_gid, AT_SYMLINK_NOFOLLOW) < 0))
		return ra_err(e, errno, -EBADF, "chown", what, "upper/ and work/ to the user namespace's root");
	x->ufd = openat(x->ubase, "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (x->ufd < 0)
		return ra_err(e, errno, -EBADF, "open", what, "upper");
	x->wfd = openat(x->ubase, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (x->wfd < 0)
		return ra_err(e, errno, -EBADF, "open", what, "work");
	RA_TRACE(x->ctx, "upper: %s: upper fd %d, work fd %d", what, x->ufd, x->wfd);
	return 0;
}

/*
 * An overlay mount of the layer slots (@lower < 0) or of the one mount
 * @lower, with the upper if @upper, its credential @cs (NULL: the mounter's).
 */
static int overlay_mount(struct xstate *x, const struct ra_op *op, int lower, bool upper,
			 const struct ra_cred_spec *cs, struct rootasm_error *e)
{
	const struct rootasm_layout *l = op->l;
	_cleanup_close_ int fsfd = -EBADF;
	int r;

	fsfd = fsopen("overlay", FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return ra_err(e, errno, -EBADF, "fsopen", "overlay", NULL);
	if (lower >= 0) {
		r = ra_x_set_fd(fsfd, "lowerdir+", lower, "the layers as the principal sees them", e);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; lower < 0 && i < x->p->nslots; i++) {
		r = ra_x_set_fd(fsfd, "lowerdir+", x->slots[i], l->layers[l->nlayers - 1 - i].src.display, e);
		if (r < 0)
			return r;
	}
	if (upper) {
		const char *what = l->upper.kind != RA_UPPER_TMPFS ? l->upper.src.display : "tmpfs upper";

		r = ra_x_set_fd(fsfd, "upperdir", x->ufd, what, e);
		if (r == 0)
			r = ra_x_set_fd(fsfd, "workdir", x->wfd, l->upper.kind == RA_UPPER_DIRS ? l->upper.work.display : what, e);
		if (r < 0)
			return r;
		/*
		 * An engine's layer is its overlay's upper too: without an index
		 * a second user of it is a warning in the kernel log (the engine's
		 * mount is left unused), with one overlayfs refuses (EBUSY).
		 */
		if (l->upper.kind == RA_UPPER_DIRS && fsconfig(fsfd, FSCONFIG_SET_STRING, "index", "off", 0) < 0)
			return ra_err(e, errno, fsfd, "fsconfig index=off", what, NULL);
	}
	return ra_x_overlay_create(fsfd, upper, cs, l->file, e);
}

static int x_overlay(struct xstate *x, const struct ra_op *op, struct rootasm_error *e)
{
	const struct rootasm_layout *l = op->l;
	const struct ra_creds *c = &l->creds;
	const struct rootasm_principal *who = x->p->g->who;
	struct ra_cred_spec cs = {
		.uid = c->uid, .gid = c->gid, .groups = c->groups, .ngroups = c->ngroups, .caps = c->caps,
		.userns_fd = -EBADF,
	};
	bool upper = x->ufd >= 0;
	int root;

	switch (op->cred) {
	case RA_CRED_PRINCIPAL: {
		/*
		 * The layers as the principal sees them: a read-only overlay whose
		 * credential is its own ids with CAP_SYS_ADMIN (overlayfs clones
		 * the layers and reads its trusted.* xattrs with it) and no
		 * capability over permissions; the upper goes on a second overlay
		 * with the mounter's credential, whose copy-ups read through the
		 * first one with the principal's rights.
		 */
		struct ra_cred_spec u = { .caps = 1ULL << CAP_SYS_ADMIN, .userns_fd = -EBADF };
		_cleanup_close_ int view = -EBADF;

		if (!who)
			return ra_err(e, EINVAL, -EBADF, "create overlay", l->file, "no principal for its credential");
		u.uid = who->uid;
		u.gid = who->gid;
		u.groups = who->groups;
		u.ngroups = who->ngroups;
		view = overlay_mount(x, op, -1, false, &u, e);
		if (view < 0)
			return view;
		root = upper ? overlay_mount(x, op, view, true, NULL, e) : take_fd(view);
		break;
	}
	case RA_CRED_USERNS_ROOT:
		/* the user namespace's root: uid 0, gid 0, every capability there */
		cs = (struct ra_cred_spec){ .caps = (1ULL << (CAP_LAST_CAP + 1)) - 1, .userns_fd = x->p->g->userns_fd };
		root = overlay_mount(x, op, -1, upper, &cs, e);
		break;
	case RA_CRED_LAYOUT_USERNS:
		cs.userns_fd = x->p->g->userns_fd;
		/* fall through */
	case RA_CRED_LAYOUT:
		root = overlay_mount(x, op, -1, upper, &cs, e);
		break;
	case RA_CRED_MOUNTER:
	default:
		root = overlay_mount(x, op, -1, upper, NULL, e);
		break;
	}
	if (root < 0)
		return root;
	x->root = root;
	RA_TRACE(x->ctx, "overlay: %zu layers%s%s%s -> root fd %d", x->p->nslots, upper ? ", upper" : "",
		 c->set ? ", override_creds" : "", op->cred == RA_CRED_PRINCIPAL ? ", the principal's view" : "",
		 x->root);
	return 0;
}

static int x_root_layer(struct xstate *x, const struct ra_op *op, struct rootasm_error *e)
{
	struct ra_attrs ro = { .set = MOUNT_ATTR_RDONLY };

	x->root = x->slots[0];
	x->own[0] = false;
	x->slots[0] = -EBADF;
	if (op->route != RA_ROUTE_SETATTR)
		return 0;
	return ra_x_setattr(x->root, &ro, false, op->l->layers[0].src.display, e);
}

/*
 * openat2() inside the rootfs. A lookup that meets ".." (a symlink in a
 * layer) says EAGAIN when a mount changes anywhere meanwhile: ask again.
 */
static int in_root(int root, const char *path, uint64_t resolve)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = resolve };
	int fd = -1;

	for (int tries = 0; tries < 16; tries++) {
		fd = sys_openat2(root, path, &how);
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	return fd;
}

#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)

/*
 * Resolve @target beneath @root, creating what is missing (directories, and
 * for a non-directory source an empty file as the last component). Symlinks
 * resolve inside the rootfs (RESOLVE_IN_ROOT), so none can lead out of it.
 * Missing components are walked one step at a time from their parent; a
 * component that is a symlink, or that appears under us, is resolved again
 * from the root. A target that resolves to the root itself (a symlink to /
 * in a layer) is refused: it would cover the whole tree. What is created is
 * recorded in @made_list (removed again if the assembly fails). Returns an O_PATH
 * fd; caller owns it.
 */
static int resolve_target(int root, const struct stat *rst, const char *target, bool dir,
			  struct ra_made *made_list, struct rootasm_error *e)
{
	char prefix[RA_PATH_MAX];
	_cleanup_close_ int parent = -EBADF, fd = -EBADF;
	const char *s = target;
	bool made = false;	/* we created the last component: its type is known */
	bool missing = false;	/* only the last component is left, and the lookup of the target found it missing */
	struct stat st;

	fd = in_root(root, target, IN_ROOT);
	if (fd < 0 && errno != ENOENT)
		return ra_err(e, errno, -EBADF, "resolve target", target, NULL);
	if (fd < 0) {
		/* usually only the last component is missing: its directory in one lookup, as the walk would find it */
		size_t end = strlen(target), slash;

		while (end > 1 && target[end - 1] == '/')
			end--;
		for (slash = end; slash > 0 && target[slash - 1] != '/'; slash--)
			;
		if (slash > 1 && slash - 1 < sizeof(prefix)) {
			memcpy(prefix, target, slash - 1);
			prefix[slash - 1] = '\0';
			parent = in_root(root, prefix, IN_ROOT);
			if (parent >= 0) {
				s = target + slash - 1;
				missing = true;
			}
		}
		if (parent < 0)
			parent = fcntl(root, F_DUPFD_CLOEXEC, 3);
		if (parent < 0)
			return ra_err(e, errno, -EBADF, "dup", target, NULL);
		while (*s) {
			const char *c;
			char name[256];
			size_t len;
			bool last;
			int next;

			while (*s == '/')
				s++;
			c = s;
			while (*s && *s != '/')
				s++;
			len = s - c;
			if (!len)
				break;
			if (len >= sizeof(name))
				return ra_err(e, ENAMETOOLONG, -EBADF, "resolve target", target, NULL);
			memcpy(name, c, len);
			name[len] = '\0';
			memcpy(prefix, target, s - target);
			prefix[s - target] = '\0';
			last = !*s || !s[strspn(s, "/")];
			made = false;
			/* a plain entry of the parent: one step (none when the whole target was just missing) */
			if (missing) {
				next = -1;
				errno = ENOENT;
			} else {
				next = in_root(parent, name, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
			}
			if (next < 0 && errno == ENOENT) {
				int r;

				if (last && !dir)
					r = openat(parent, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
				else
					r = mkdirat(parent, name, 0755);
				if (r < 0 && errno != EEXIST)
					return ra_err(e, errno, -EBADF, "create mount point", prefix,
						      errno == EROFS ? "the rootfs is read-only; the target must exist in a layer" : NULL);
				if (r >= 0) {
					bool isdir = !(last && !dir);

					if (!isdir)
						close(r);
					/* what we made is no symlink; O_NOFOLLOW keeps a racing one from being followed */
					next = openat(parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
					made = next >= 0;
					/* ours to remove if the assembly fails; unrecorded, it goes now */
					if (next < 0 || (r = made_add(made_list, &parent, name, next, isdir, e)) < 0) {
						int err = next < 0 ? errno : 0;

						(void)unlinkat(parent, name, isdir ? AT_REMOVEDIR : 0);
						if (next < 0)
							return ra_err(e, err, -EBADF, "open mount point", prefix, NULL);
						close(next);
						return r;
					}
				} else {
					next = in_root(root, prefix, IN_ROOT);
				}
			} else if (next < 0 && (errno == ELOOP || errno == EXDEV)) {
				/* a symlink: resolve it inside the rootfs */
				next = in_root(root, prefix, IN_ROOT);
			}
			if (next < 0)
				return ra_err(e, errno, -EBADF, "resolve target", prefix, NULL);
			close_fdp(&parent);	/* unless the record of what we made took it */
			parent = next;
		}
		fd = take_fd(parent);
	}
	/* what we made is new: neither the root nor of the wrong type */
	if (made)
		return take_fd(fd);
	if (fstat(fd, &st) < 0)
		return ra_err(e, errno, -EBADF, "stat target", target, NULL);
	if (st.st_dev == rst->st_dev && st.st_ino == rst->st_ino)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "mount target", target,
				   "resolves to the root of the tree (a symlink in a layer?); a volume may not cover the root");
	if (dir != !!S_ISDIR(st.st_mode))
		return ra_err(e, dir ? ENOTDIR : EISDIR, -EBADF, "mount target", target,
			      dir ? "the source is a directory, the target is not" :
				    "the source is not a directory, the target is");
	return take_fd(fd);
}

/* (below: the state's x->nested, for a nested layout's plan) */
static int execute(struct rootasm_ctx *ctx, const struct ra_plan *p, struct ra_made *made,
		   struct rootasm_error *e);

static int x_volume(struct xstate *x, const struct ra_op *op, struct rootasm_error *e)
{
	const struct ra_mount *m = op->mount;
	_cleanup_close_ int vfd = -EBADF, tfd = -EBADF;
	bool dir;

	vfd = ra_volume_kind(m)->mount(x, op, &dir, e);
	if (vfd < 0)
		return vfd;
	/* the root's identity, once: a target must not resolve to it */
	if (!x->root_st.st_ino && fstat(x->root, &x->root_st) < 0)
		return ra_err(e, errno, -EBADF, "stat", "the root of the tree", NULL);
	tfd = resolve_target(x->root, &x->root_st, m->target, dir, x->made, e);
	if (tfd < 0)
		return tfd;
	if (move_mount(vfd, "", tfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return ra_err(e, errno, -EBADF, "move_mount", m->target, NULL);
	RA_TRACE(x->ctx, "%s: %s %s -> %s", op->key, ra_route_name(op->route),
		 m->src.path ? m->src.display : "tmpfs", m->target);
	return 0;
}

/* Execute @p; returns the tree's root fd (caller owns it) or -errno with @e filled. */
static int execute(struct rootasm_ctx *ctx, const struct ra_plan *p, struct ra_made *made,
		   struct rootasm_error *e)
{
	/* the operations that are one function each; the others below */
	static int (*const x_ops[])(struct xstate *, const struct ra_op *, struct rootasm_error *) = {
		[RA_OP_LAYER] = x_layer,
		[RA_OP_UPPER] = x_upper,
		[RA_OP_OVERLAY] = x_overlay,
		[RA_OP_ROOT_LAYER] = x_root_layer,
	};
	struct xstate x = { .ctx = ctx, .p = p, .made = made, .nested = execute, .ubase = -EBADF, .ufd = -EBADF, .wfd = -EBADF, .root = -EBADF };
	size_t mark = made->n;	/* what this plan (a nested one too) makes on the way to targets */
	int r = 0;

	x.slots = malloc(p->nslots * sizeof(*x.slots));
	x.own = calloc(p->nslots, sizeof(*x.own));
	x.ents = calloc(p->nslots, sizeof(*x.ents));
	if (!x.slots || !x.own || !x.ents) {
		xstate_close(&x);
		return ra_oom(e, "assemble");
	}
	for (size_t i = 0; i < p->nslots; i++)
		x.slots[i] = -EBADF;
	for (size_t i = 0; i < p->n && r >= 0; i++) {
		const struct ra_op *op = &p->ops[i];

		switch (op->kind) {
		default:
			if ((size_t)op->kind < ARRAY_SIZE(x_ops) && x_ops[op->kind])
				r = x_ops[op->kind](&x, op, e);
			break;
		case RA_OP_VOLUME:
			/* the layers were cloned at CMD_CREATE: their fds can go before the volumes */
			if (op == p->ops || op[-1].kind != RA_OP_VOLUME)
				slots_release(&x);
			r = x_volume(&x, op, e);
			break;
		case RA_OP_ROOT_ATTRS:
			r = ra_x_setattr(x.root, &op->l->attributes, false, "/", e);
			break;
		case RA_OP_TREE_ATTRS: {
			struct ra_attrs a = { .set = op->attr_force };

			r = ra_x_setattr(x.root, &a, true, "the tree", e);
			break;
		}
		case RA_OP_TREE_LOCK:
			r = ra_tree_lock(x.ctx, &x.root, e);
			break;
		}
		/* point the error at the layout line that asked for this operation */
		if (r < 0 && e && !e->file[0] && op->loc.line) {
			snprintf(e->file, sizeof(e->file), "%s", op->l->file);
			e->line = op->loc.line;
			e->column = op->loc.column;
		}
	}
	/* a failure: what we made goes while the tree is whole, before closing the root dissolves it */
	if (r < 0)
		made_release(made, mark, true);
	if (r >= 0)
		r = take_fd(x.root);
	xstate_close(&x);
	return r;
}

#define ASSEMBLE_OPT(o, field, def)	RA_OPT(o, struct rootasm_assemble_opts, field, def)

int rootasm_assemble_with(struct rootasm_ctx *ctx, const struct rootasm_layout *l,
			  const struct rootasm_assemble_opts *o, struct rootasm_error *e)
{
	struct rootasm_ctx *c = ra_ctx(ctx);
	struct ra_made made = { 0 };
	unsigned int flags = ASSEMBLE_OPT(o, flags, 0u);
	struct ra_delivery dl = { .userns_fd = -EBADF, .lock = flags & ROOTASM_ASSEMBLE_LOCK };
	struct ra_grant g;
	struct ra_plan *p = NULL;
	int r;

	r = RA_OPTS_CHECK(o, struct rootasm_assemble_opts, RA_OPT_END(struct rootasm_assemble_opts, flags), "assemble",
			  NULL, e);
	if (r < 0)
		return r;
	if (flags & ~(ROOTASM_ASSEMBLE_USERNS | ROOTASM_ASSEMBLE_LOCK))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "assemble", NULL, "unknown flags 0x%x",
				   flags & ~(ROOTASM_ASSEMBLE_USERNS | ROOTASM_ASSEMBLE_LOCK));
	if ((flags & ROOTASM_ASSEMBLE_USERNS) && o->size < RA_OPT_END(struct rootasm_assemble_opts, userns_fd))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "assemble", NULL,
				   "ROOTASM_ASSEMBLE_USERNS needs rootasm_assemble_opts.userns_fd");
	if (!l->opened)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "assemble", l->file,
				   "the layout was loaded offline: its host objects are not open");
	if (!l->authorized)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "assemble", l->file,
				   "the layout was not authorized for its principal");
	/* how it is handed over is the caller's word; what that gives, authorize's (ra_grant()) */
	if (flags & ROOTASM_ASSEMBLE_USERNS)
		dl.userns_fd = ASSEMBLE_OPT(o, userns_fd, -EBADF);
	dl.receivers = ASSEMBLE_OPT(o, receivers, NULL);
	dl.n_receivers = dl.receivers ? ASSEMBLE_OPT(o, n_receivers, 0) : 0;
	r = ra_grant(l, &dl, &g, e);
	if (r < 0)
		return r;
	r = ra_plan_build(l, &g, ra_plan_have(c, l, &g), ra_plan_flags(c), &p, e);
	if (r < 0)
		return r;
	/* --debug: the plan as `rootasm check` prints it, this very one (its user namespace and lock included) */
	if (c->debug) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		if (f && ra_plan_print(p, f, 0) == 0 && fflush(f) == 0)
			ra_trace(c, "the plan it executes:\n%s", text);
		if (f)
			fclose(f);
		free(text);
	}
	/* Stop before touching anything when the kernel cannot do all of it. */
	r = ra_require(c, p->needs, e);
	if (r == 0)
		r = execute(c, p, &made, e);
	/* a failure is not in a hurry: it leaves nothing, not even mounts waiting to be dissolved */
	if (r < 0)
		rootasm_ctx_flush(c);
	/* the tree is the caller's, or gone with what it made on the way (execute()) */
	made_release(&made, 0, false);
	ra_plan_free(p);
	return r;
}

int rootasm_assemble(struct rootasm_ctx *ctx, const struct rootasm_layout *l, struct rootasm_error *e)
{
	return rootasm_assemble_with(ctx, l, NULL, e);
}
