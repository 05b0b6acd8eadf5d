// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The overlay volume: a host directory or image under a tmpfs upper of its
 * own, mounted at a target; what the tree writes there is gone with the
 * tree, and the source is never written.
 *
 *   image: loop device + fsmount (read-only), detached -> the lower
 *   dir:   the open stage's O_PATH fd, as it is -> the lower
 *   fsopen("tmpfs") + fsmount (the volume's size=, nr_inodes=, mode=);
 *   mkdirat upper/ (the lower root's owner and mode) and work/ in it;
 *   fsopen("overlay"), FSCONFIG_SET_FD lowerdir+/upperdir/workdir,
 *   CMD_CREATE, fsmount; then the volume's attributes.
 *
 * For administrators only (authorize.c): the upper is written with the
 * assembler's rights, and overlayfs looks the lower up with them.
 */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "sysmnt.h"
#include "uapi.h"
#include "util.h"
#include "volume.h"

static enum ra_route overlay_route(const struct ra_mount *m, uint64_t have, unsigned int flags, uint64_t *needs,
				   bool *to_userns)
{
	*needs |= RA_F(OVL_FD_LAYERS) | RA_F(FSCONFIG_OPATH);
	/* an image (or, offline, what may be one) is mounted detached first */
	if (!S_ISDIR(m->src.mode))
		*needs |= RA_F(LOOP_CONFIGURE) | RA_F(OVL_DETACHED_LAYERS);
	*to_userns = flags & RA_PLAN_USERNS;
	return RA_ROUTE_OVERLAY;
}

/* upper/ and work/ in the tmpfs @ubase; upper/ with @lower's root owner and mode (it is the volume's root). */
static int upper_dirs(int ubase, int lower, const char *what, int *ufd, int *wfd, struct rootasm_error *e)
{
	struct stat st;

	if (fstat(lower, &st) < 0)
		return ra_err(e, errno, -EBADF, "stat", what, NULL);
	if (mkdirat(ubase, "upper", 0700) < 0 || mkdirat(ubase, "work", 0700) < 0)
		return ra_err(e, errno, -EBADF, "mkdir", what, "upper/ and work/ in its tmpfs");
	if (fchownat(ubase, "upper", st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fchmodat(ubase, "upper", st.st_mode & 07777, 0) < 0)
		return ra_err(e, errno, -EBADF, "chown", what, "upper/ to the owner and mode of the source's root");
	*ufd = openat(ubase, "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	*wfd = openat(ubase, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*ufd < 0 || *wfd < 0)
		return ra_err(e, errno, -EBADF, "open", what, "upper/ and work/ in its tmpfs");
	return 0;
}

static int overlay_volume(struct xstate *x, const struct ra_op *op, bool *dir, struct rootasm_error *e)
{
	const struct ra_mount *m = op->mount;
	const struct ra_attrs a = ra_x_attrs(op);
	_cleanup_close_ int image = -EBADF, ubase = -EBADF, ufd = -EBADF, wfd = -EBADF, fsfd = -EBADF;
	int lower = m->src.fd, fd, r;

	*dir = true;
	if (S_ISREG(m->src.mode)) {
		image = ra_image_mount(m->src.fd, m->src.display, m->fstype, MOUNT_ATTR_RDONLY, e);
		if (image < 0)
			return image;
		lower = image;
	}
	ubase = ra_tmpfs_mount(&m->tmpfs, 0, e);
	if (ubase < 0)
		return ubase;
	r = upper_dirs(ubase, lower, m->target, &ufd, &wfd, e);
	if (r < 0)
		return r;
	fsfd = fsopen("overlay", FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return ra_err(e, errno, -EBADF, "fsopen", "overlay", NULL);
	if ((r = ra_x_set_fd(fsfd, "lowerdir+", lower, m->src.display, e)) < 0 ||
	    (r = ra_x_set_fd(fsfd, "upperdir", ufd, m->target, e)) < 0 ||
	    (r = ra_x_set_fd(fsfd, "workdir", wfd, m->target, e)) < 0)
		return r;
	fd = ra_x_overlay_create(fsfd, true, NULL, m->target, e);
	if (fd < 0)
		return fd;
	return ra_x_finish(x, op, fd, &a, false, m->target, e);
}

const struct ra_volume_kind ra_volume_overlay = {
	.name = "overlay",
	.src = RA_SRC_LOWER,
	.keys = RA_VKEY_TARGET | RA_VKEY_OPTIONS | RA_VKEY_TYPE | RA_VKEY_TRUSTED | RA_VKEY_TMPFS,
	.image = true,
	.auth = RA_VAUTH_ADMIN,
	.route = overlay_route,
	.mount = overlay_volume,
};
