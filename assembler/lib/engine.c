// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The assembly engine: a validated layout -> one detached mount tree.
 *
 *   layers    image: ra_image_mount() (loop + fsmount)        -> detached mount fd
 *             dir:   open(O_PATH)  (a clone only when the layer is the whole root)
 *   upper     tmpfs: ra_tmpfs_mount() + mkdirat(upper, work)  dir: mkdirat inside it
 *   overlay   fsopen("overlay"); FSCONFIG_SET_FD lowerdir+ (top first), upperdir, workdir;
 *             override_creds from a child holding the reduced credential; CMD_CREATE; fsmount
 *   volumes   bind: open_tree(OPEN_TREE_CLONE[|AT_RECURSIVE]) + mount_setattr
 *             tmpfs/image: fsmount; layout: rootasm_assemble() of the nested layout
 *             target: openat2(root, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS), created if missing
 *             then move_mount(volume, "", target, "", F_EMPTY_PATH|T_EMPTY_PATH)
 *   root      mount_setattr(attributes)
 *
 * Every fd is owned by exactly one variable; on failure they are closed on
 * the way out, and closing the root's fd dissolves whatever was built.
 * Layer fds stay open until CMD_CREATE returns: the overlay clones them then.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "layout.h"
#include "probe.h"
#include "sysmnt.h"
#include "uapi.h"
#include "util.h"

#define F(x) (1u << ROOTASM_FEAT_##x)

static bool is_overlay(const struct rootasm_layout *l)
{
	return l->nlayers > 1 || l->upper.kind != RA_UPPER_NONE;
}

unsigned int rootasm_layout_needs(const struct rootasm_layout *l)
{
	unsigned int n = F(MOUNT_API);

	for (size_t i = 0; i < l->nlayers; i++) {
		if (l->layers[i].kind == RA_LAYER_IMAGE)
			n |= F(LOOP_CONFIGURE);
		if (l->layers[i].idmap.set)
			n |= F(MOUNT_SETATTR);
	}
	if (is_overlay(l)) {
		n |= F(OVL_FD_LAYERS) | F(FSCONFIG_OPATH) | F(OVL_DETACHED_LAYERS);
		if (l->creds.set) {
			n |= F(OVL_OVERRIDE_CREDS);
			if (!(l->creds.caps & (1ULL << CAP_SYS_ADMIN)))
				n |= F(OVL_CREDS_NOADMIN);
		}
	}
	if (l->nmounts)
		n |= F(OPENAT2) | F(MOVE_DETACHED) | F(MOUNT_SETATTR);
	if (l->attributes.set || l->attributes.clr || l->attributes.propagation)
		n |= F(MOUNT_SETATTR);
	for (size_t i = 0; i < l->nmounts; i++) {
		const struct ra_mount *m = &l->mounts[i];

		if (m->kind == RA_MOUNT_IMAGE)
			n |= F(LOOP_CONFIGURE);
		if (m->idmap.set)
			n |= F(MOUNT_SETATTR);
		if (m->nested)
			n |= rootasm_layout_needs(m->nested);
	}
	return n;
}

static int setattr(int fd, const struct ra_attrs *a, bool recursive, const char *what,
		   struct rootasm_error *e)
{
	struct mount_attr ma = {
		.attr_set = a->set,
		.attr_clr = a->clr,
		.propagation = a->propagation,
	};

	if (!ma.attr_set && !ma.attr_clr && !ma.propagation)
		return 0;
	if (mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &ma, sizeof(ma)) < 0)
		return ra_err(e, errno, -EBADF, "mount_setattr", what, NULL);
	return 0;
}

/* A layer as an fd overlayfs can take; caller owns it. */
static int open_layer(const struct ra_layer *ly, bool clone, struct rootasm_error *e)
{
	int fd, r;

	if (ly->kind == RA_LAYER_IMAGE)
		fd = ra_image_mount(ly->path, ly->fstype, MOUNT_ATTR_RDONLY, e);
	else if (clone || ly->idmap.set)
		fd = open_tree(AT_FDCWD, ly->path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	else
		fd = open(ly->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && ly->kind == RA_LAYER_IMAGE)
		return fd;
	if (fd < 0)
		return ra_err(e, errno, -EBADF, clone || ly->idmap.set ? "open_tree" : "open layer", ly->path, NULL);
	/* an idmapped layer must be a mount of its own: a clone, or the image mount */
	r = ra_idmap_apply(fd, &ly->idmap, false, ly->path, e);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

static int set_fd(int fsfd, const char *key, int fd, const char *what, struct rootasm_error *e)
{
	char op[64];

	if (fsconfig(fsfd, FSCONFIG_SET_FD, key, NULL, fd) == 0)
		return 0;
	snprintf(op, sizeof(op), "fsconfig %s", key);
	return ra_err(e, errno, fsfd, op, what, NULL);
}

/* upper/ and work/ inside @base (an O_PATH dir fd); returns 0 and two fds the caller owns. */
static int make_upper(int base, const char *what, int *ret_upper, int *ret_work, struct rootasm_error *e)
{
	_cleanup_close_ int u = -EBADF, w = -EBADF;

	if (mkdirat(base, "upper", 0755) < 0 && errno != EEXIST)
		return ra_err(e, errno, -EBADF, "mkdir", what, "upper");
	if (mkdirat(base, "work", 0700) < 0 && errno != EEXIST)
		return ra_err(e, errno, -EBADF, "mkdir", what, "work");
	u = openat(base, "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (u < 0)
		return ra_err(e, errno, -EBADF, "open", what, "upper");
	w = openat(base, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w < 0)
		return ra_err(e, errno, -EBADF, "open", what, "work");
	*ret_upper = take_fd(u);
	*ret_work = take_fd(w);
	return 0;
}

/* Build the root mount: an overlay, or the one read-only layer itself. Caller owns the fd. */
static int build_root(const struct rootasm_layout *l, struct rootasm_error *e)
{
	_cleanup_close_ int fsfd = -EBADF, ubase = -EBADF, ufd = -EBADF, wfd = -EBADF;
	_cleanup_free_ int *fds = NULL;
	const char *upath = l->upper.kind == RA_UPPER_DIR ? l->upper.path : "tmpfs upper";
	int root = -EBADF, r = 0;
	size_t n = 0;

	if (!is_overlay(l)) {
		root = open_layer(&l->layers[0], true, e);
		if (root < 0)
			return root;
		if (l->layers[0].kind == RA_LAYER_DIR) {
			struct ra_attrs ro = { .set = MOUNT_ATTR_RDONLY };

			r = setattr(root, &ro, false, l->layers[0].path, e);
			if (r < 0) {
				close(root);
				return r;
			}
		}
		return root;
	}
	fds = calloc(l->nlayers, sizeof(int));
	if (!fds)
		return -ENOMEM;
	fsfd = fsopen("overlay", FSOPEN_CLOEXEC);
	if (fsfd < 0) {
		r = ra_err(e, errno, -EBADF, "fsopen", "overlay", NULL);
		goto out;
	}
	/* lowerdir+ appends below what is there: the layout's top layer goes first. */
	for (size_t i = l->nlayers; i-- > 0; n++) {
		fds[n] = open_layer(&l->layers[i], false, e);
		if (fds[n] < 0) {
			r = fds[n];
			goto out;
		}
		r = set_fd(fsfd, "lowerdir+", fds[n], l->layers[i].path, e);
		if (r < 0) {
			n++;
			goto out;
		}
	}
	if (l->upper.kind == RA_UPPER_TMPFS) {
		ubase = ra_tmpfs_mount(&l->upper.tmpfs, 0, e);
		if (ubase < 0) {
			r = ubase;
			goto out;
		}
	} else if (l->upper.kind == RA_UPPER_DIR) {
		ubase = open(l->upper.path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (ubase < 0) {
			r = ra_err(e, errno, -EBADF, "open upper", l->upper.path, NULL);
			goto out;
		}
	}
	if (ubase >= 0) {
		r = make_upper(ubase, upath, &ufd, &wfd, e);
		if (r < 0)
			goto out;
		r = set_fd(fsfd, "upperdir", ufd, upath, e);
		if (r < 0)
			goto out;
		r = set_fd(fsfd, "workdir", wfd, upath, e);
		if (r < 0)
			goto out;
	}
	if (l->creds.set) {
		struct ra_cred_spec c = {
			.uid = l->creds.uid, .gid = l->creds.gid,
			.groups = l->creds.groups, .ngroups = l->creds.ngroups,
			.caps = l->creds.caps,
		};

		r = ra_set_override_creds(fsfd, &c, e);
		if (r < 0)
			goto out;
	}
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int err = errno;

		r = ra_err(e, err, fsfd, "create overlay", l->file, NULL);
		/*
		 * overlayfs makes its private work/work directory with mode 000 and
		 * sets it up under the recorded credential: without CAP_DAC_OVERRIDE
		 * that fails with EACCES and a message only in the kernel log.
		 */
		if (e && err == EACCES && l->creds.set && ubase >= 0 && !e->msg[0] &&
		    !(l->creds.caps & (1ULL << CAP_DAC_OVERRIDE)))
			snprintf(e->msg, sizeof(e->msg), "with an upper layer the override_creds credential "
				 "needs CAP_DAC_OVERRIDE: overlayfs sets up its mode-000 work directory under it");
		goto out;
	}
	root = fsmount(fsfd, FSMOUNT_CLOEXEC, ubase < 0 ? MOUNT_ATTR_RDONLY : 0);
	if (root < 0) {
		r = ra_err(e, errno, fsfd, "fsmount", "overlay", NULL);
	} else if (ubase >= 0) {
		struct statfs sf;

		/*
		 * Some kernels (6.12) do not fail when the work directory cannot
		 * be set up: they mount read-only and say so only in the kernel
		 * log. A writable layout must not silently become read-only.
		 */
		if (fstatfs(root, &sf) < 0) {
			r = ra_err(e, errno, -EBADF, "statfs", "overlay", NULL);
		} else if (sf.f_flags & ST_RDONLY) {
			r = ra_err(e, EROFS, -EBADF, "create overlay", l->file,
				   "overlayfs could not set up its work directory and mounted read-only%s",
				   l->creds.set && !(l->creds.caps & (1ULL << CAP_DAC_OVERRIDE)) ?
				   "; the override_creds credential needs CAP_DAC_OVERRIDE" : "");
		}
		if (r < 0)
			close_fdp(&root);
	}
out:
	for (size_t i = 0; i < n; i++)
		close_fdp(&fds[i]);
	return r < 0 ? r : root;
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
 * from the root. Returns an O_PATH fd; caller owns it.
 */
static int resolve_target(int root, const char *target, bool dir, struct rootasm_error *e)
{
	char prefix[RA_PATH_MAX];
	_cleanup_close_ int parent = -EBADF;
	const char *s = target;
	bool made = false;	/* we created the last component: its type is known */
	struct stat st;
	int fd;

	fd = in_root(root, target, IN_ROOT);
	if (fd < 0 && errno != ENOENT)
		return ra_err(e, errno, -EBADF, "resolve target", target, NULL);
	if (fd < 0) {
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
			/* a plain entry of the parent: one step */
			next = in_root(parent, name, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
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
					if (last && !dir)
						close(r);
					/* what we made is no symlink; O_NOFOLLOW keeps a racing one from being followed */
					next = openat(parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
					made = next >= 0;
				} else {
					next = in_root(root, prefix, IN_ROOT);
				}
			} else if (next < 0 && (errno == ELOOP || errno == EXDEV)) {
				/* a symlink: resolve it inside the rootfs */
				next = in_root(root, prefix, IN_ROOT);
			}
			if (next < 0)
				return ra_err(e, errno, -EBADF, "resolve target", prefix, NULL);
			close(parent);
			parent = next;
		}
		fd = take_fd(parent);
	}
	if (made)
		return fd;
	if (fstat(fd, &st) < 0) {
		int r = ra_err(e, errno, -EBADF, "stat target", target, NULL);

		close(fd);
		return r;
	}
	if (dir != !!S_ISDIR(st.st_mode)) {
		close(fd);
		return ra_err(e, dir ? ENOTDIR : EISDIR, -EBADF, "mount target", target,
			      dir ? "the source is a directory, the target is not" :
				    "the source is not a directory, the target is");
	}
	return fd;
}

/* A bind volume's clone with its idmap and attributes set; caller owns the fd. */
static int clone_bind(const struct ra_mount *m, struct rootasm_error *e)
{
	unsigned int flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (m->attrs.recursive ? AT_RECURSIVE : 0);
	int fd, r;

	if (m->idmap.set && ra_feature(ROOTASM_FEAT_OPEN_TREE_ATTR)) {
		/*
		 * One call clones, sets the attributes and the idmapping; unlike
		 * mount_setattr() it may also change the mapping of a source that
		 * is idmapped already (Linux 6.15).
		 */
		_cleanup_close_ int ns = ra_userns_open(&m->idmap, e);
		struct mount_attr a = {
			.attr_set = m->attrs.set | MOUNT_ATTR_IDMAP,
			.attr_clr = m->attrs.clr,
			.propagation = m->attrs.propagation,
		};

		if (ns < 0)
			return ns;
		a.userns_fd = ns;
		fd = syscall(__NR_open_tree_attr, AT_FDCWD, m->source, flags, &a, sizeof(a));
		return fd < 0 ? ra_err(e, errno, -EBADF, "open_tree_attr", m->source, NULL) : fd;
	}
	fd = open_tree(AT_FDCWD, m->source, flags);
	if (fd < 0)
		return ra_err(e, errno, -EBADF, "open_tree", m->source, NULL);
	r = ra_idmap_apply(fd, &m->idmap, m->attrs.recursive, m->source, e);
	if (r == 0)
		r = setattr(fd, &m->attrs, m->attrs.recursive, m->source, e);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* A volume as a detached mount; caller owns the fd. */
static int open_volume(const struct ra_mount *m, bool *ret_dir, struct rootasm_error *e)
{
	struct stat st;
	int fd, r;

	*ret_dir = true;
	switch (m->kind) {
	case RA_MOUNT_TMPFS:
	case RA_MOUNT_IMAGE: {
		/* fsmount() took the attribute flags; idmap and propagation come after */
		struct ra_attrs p = { .propagation = m->attrs.propagation };

		if (m->kind == RA_MOUNT_TMPFS)
			fd = ra_tmpfs_mount(&m->tmpfs, m->attrs.set, e);
		else
			fd = ra_image_mount(m->source, m->fstype, m->attrs.set, e);
		if (fd < 0)
			return fd;
		r = ra_idmap_apply(fd, &m->idmap, false, m->target, e);
		if (r == 0)
			r = setattr(fd, &p, false, m->target, e);
		if (r < 0) {
			close(fd);
			return r;
		}
		return fd;
	}
	case RA_MOUNT_LAYOUT:
		return rootasm_assemble(m->nested, e);
	case RA_MOUNT_BIND:
		break;
	}
	fd = clone_bind(m, e);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		r = ra_err(e, errno, -EBADF, "stat", m->source, NULL);
		close(fd);
		return r;
	}
	*ret_dir = S_ISDIR(st.st_mode);
	return fd;
}

static int add_volume(int root, const struct rootasm_layout *l, const struct ra_mount *m,
		      struct rootasm_error *e)
{
	_cleanup_close_ int vfd = -EBADF, tfd = -EBADF;
	bool dir;
	int r;

	vfd = r = open_volume(m, &dir, e);
	if (r < 0)
		goto fail;
	tfd = r = resolve_target(root, m->target, dir, e);
	if (r < 0)
		goto fail;
	if (move_mount(vfd, "", tfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) {
		r = ra_err(e, errno, -EBADF, "move_mount", m->target, NULL);
		goto fail;
	}
	return 0;
fail:
	/* Point the error at the layout line that asked for this volume. */
	if (e && !e->file[0]) {
		snprintf(e->file, sizeof(e->file), "%s", l->file);
		e->line = m->loc.line;
		e->column = m->loc.column;
	}
	return r;
}

int rootasm_assemble(const struct rootasm_layout *l, struct rootasm_error *e)
{
	_cleanup_close_ int root = -EBADF;
	int r;

	/* Stop before touching anything when the kernel cannot do all of it. */
	r = ra_require(rootasm_layout_needs(l), e);
	if (r < 0)
		return r;
	root = build_root(l, e);
	if (root < 0)
		return root;
	for (size_t i = 0; i < l->nmounts; i++) {
		r = add_volume(root, l, &l->mounts[i], e);
		if (r < 0)
			return r;
	}
	r = setattr(root, &l->attributes, false, "/", e);
	if (r < 0)
		return r;
	return take_fd(root);
}
