// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The engine's services (volume.h, xstate.h): what the engine and the volume
 * kinds' mount() both call to make a detached mount what the plan says. Below
 * both: it calls neither the engine nor a kind, so the kinds (volume-*.c)
 * depend on this file, not on engine.c; a nested layout's plan is executed
 * through the engine's own function in the state (x->nested).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "context.h"
#include "plan.h"
#include "principal.h"
#include "sysmnt.h"
#include "uapi.h"
#include "util.h"
#include "volume.h"
#include "xstate.h"

int ra_x_setattr(int fd, const struct ra_attrs *a, bool recursive, const char *what, struct rootasm_error *e)
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

/* Idmap the detached mount @fd into the grant's user namespace. */
int ra_x_userns_apply(struct xstate *x, int fd, bool recursive, const char *what, struct rootasm_error *e)
{
	struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = x->p->g->userns_fd };

	if (mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a, sizeof(a)) < 0)
		return ra_err(e, errno, -EBADF, "mount_setattr MOUNT_ATTR_IDMAP", what,
			      "into the caller's user namespace%s",
			      errno == EINVAL ? ": the filesystem may not support idmapped mounts" : "");
	return 0;
}

/* A clone of the cached detached mount @cfd (open_tree of a detached mount, Linux 6.15); caller owns it. */
int ra_x_clone_cached(int cfd, const char *what, struct rootasm_error *e)
{
	int fd = open_tree(cfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);

	return fd < 0 ? ra_err(e, errno, -EBADF, "open_tree of a cached image mount", what, NULL) : fd;
}

int ra_x_set_fd(int fsfd, const char *key, int fd, const char *what, struct rootasm_error *e)
{
	char op[64];

	if (fsconfig(fsfd, FSCONFIG_SET_FD, key, NULL, fd) == 0)
		return 0;
	snprintf(op, sizeof(op), "fsconfig %s", key);
	return ra_err(e, errno, fsfd, op, what, NULL);
}

int ra_x_overlay_create(int fsfd, bool upper, const struct ra_cred_spec *cs, const char *what,
			struct rootasm_error *e)
{
	bool caps_dac = cs && (cs->caps & (1ULL << CAP_DAC_OVERRIDE));
	int r, mfd;

	if (cs) {
		r = ra_set_override_creds(fsfd, cs, e);
		if (r < 0)
			return r;
	}
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int err = errno;

		r = ra_err(e, err, fsfd, "create overlay", what, NULL);
		/*
		 * overlayfs makes its private work/work directory with mode 000 and
		 * sets it up under the recorded credential: without CAP_DAC_OVERRIDE
		 * that fails with EACCES and a message only in the kernel log.
		 */
		if (e && err == EACCES && cs && upper && !e->msg[0] && !caps_dac)
			snprintf(e->msg, sizeof(e->msg), "with an upper layer the override_creds credential "
				 "needs CAP_DAC_OVERRIDE: overlayfs sets up its mode-000 work directory under it");
		return r;
	}
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, upper ? 0 : MOUNT_ATTR_RDONLY);
	if (mfd < 0)
		return ra_err(e, errno, fsfd, "fsmount", "overlay", NULL);
	if (upper) {
		struct statfs sf;

		/*
		 * Some kernels (6.12) do not fail when the work directory cannot
		 * be set up: they mount read-only and say so only in the kernel
		 * log. A writable layout must not silently become read-only.
		 */
		r = fstatfs(mfd, &sf) < 0 ? errno : 0;
		if (r || (sf.f_flags & ST_RDONLY)) {
			close(mfd);
			if (r)
				return ra_err(e, r, -EBADF, "statfs", "overlay", NULL);
			return ra_err(e, EROFS, -EBADF, "create overlay", what,
				      "overlayfs could not set up its work directory and mounted read-only%s",
				      cs && !caps_dac ? "; the override_creds credential needs CAP_DAC_OVERRIDE" : "");
		}
	}
	return mfd;
}

struct rootasm_ctx *ra_x_ctx(struct xstate *x)
{
	return x->ctx;
}

/* The layout's attributes of a volume, with what the authorize stage forces (plan: attr_force). */
struct ra_attrs ra_x_attrs(const struct ra_op *op)
{
	struct ra_attrs a = op->mount->attrs;

	a.set |= op->attr_force;
	a.clr &= ~op->attr_force;
	return a;
}

int ra_x_finish(struct xstate *x, const struct ra_op *op, int fd, const struct ra_attrs *a, bool recursive,
		const char *what, struct rootasm_error *e)
{
	int r = op->to_userns ? ra_x_userns_apply(x, fd, recursive, what, e) :
				ra_idmap_apply(fd, &op->mount->idmap, recursive, what, e);

	if (r == 0)
		r = ra_x_setattr(fd, a, recursive, what, e);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int ra_x_nested(struct xstate *x, const struct ra_op *op, struct rootasm_error *e)
{
	return x->nested(x->ctx, op->sub, x->made, e);
}
