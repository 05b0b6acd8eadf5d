// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The bind volume: a clone of a host object (open_tree(OPEN_TREE_CLONE) of
 * the open stage's fd), its idmap and attributes set, or all of it in one
 * open_tree_attr() call (Linux 6.15).
 */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "sysmnt.h"
#include "uapi.h"
#include "util.h"
#include "volume.h"

static enum ra_route bind_route(const struct ra_mount *m, uint64_t have, unsigned int flags, uint64_t *needs,
				bool *to_userns)
{
	/* one call clones, sets attributes and the idmap (and may replace an idmap) */
	if (m->idmap.set && !(flags & RA_PLAN_USERNS) && (have & RA_F(OPEN_TREE_ATTR))) {
		*needs |= RA_F(OPEN_TREE_ATTR);
		return RA_ROUTE_BIND_ATTR;
	}
	return RA_ROUTE_BIND_CLONE;
}

static uint64_t bind_consults(const struct ra_mount *m)
{
	return m->idmap.set ? RA_F(OPEN_TREE_ATTR) : 0;
}

/* The clone (of the source fd) with its idmap (or the caller's user namespace) and attributes set. */
static int clone_bind(struct xstate *x, const struct ra_op *op, struct rootasm_error *e)
{
	const struct ra_mount *m = op->mount;
	const struct ra_attrs at = ra_x_attrs(op);
	unsigned int flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
			     (m->attrs.recursive ? AT_RECURSIVE : 0);
	int fd;

	if (op->route == RA_ROUTE_BIND_ATTR) {
		/*
		 * One call clones, sets the attributes and the idmapping; unlike
		 * mount_setattr() it may also change the mapping of a source that
		 * is idmapped already (Linux 6.15).
		 */
		_cleanup_close_ int ns = ra_userns_open(&m->idmap, e);
		struct mount_attr a = {
			.attr_set = at.set | MOUNT_ATTR_IDMAP,
			.attr_clr = at.clr,
			.propagation = at.propagation,
		};

		if (ns < 0)
			return ns;
		a.userns_fd = ns;
		fd = syscall(__NR_open_tree_attr, m->src.fd, "", flags, &a, sizeof(a));
		return fd < 0 ? ra_err(e, errno, -EBADF, "open_tree_attr", m->src.display, NULL) : fd;
	}
	fd = open_tree(m->src.fd, "", flags);
	if (fd < 0)
		return ra_err(e, errno, -EBADF, "open_tree", m->src.display, NULL);
	return ra_x_finish(x, op, fd, &at, m->attrs.recursive, m->src.display, e);
}

static int bind_mount(struct xstate *x, const struct ra_op *op, bool *dir, struct rootasm_error *e)
{
	/* the source's type was seen by the open stage, on this very fd */
	*dir = S_ISDIR(op->mount->src.mode);
	return clone_bind(x, op, e);
}

const struct ra_volume_kind ra_volume_bind = {
	.name = "bind",
	.src = RA_SRC_BIND,
	.keys = RA_VKEY_TARGET | RA_VKEY_OPTIONS | RA_VKEY_IDMAP | RA_VKEY_RECURSIVE,
	.auth = RA_VAUTH_BIND,
	.route = bind_route,
	.consults = bind_consults,
	.mount = bind_mount,
};
