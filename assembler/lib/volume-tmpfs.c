// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The tmpfs volume: fsopen("tmpfs") + fsmount, its key naming the target.
 */
#include "sysmnt.h"
#include "volume.h"

static enum ra_route tmpfs_route(const struct ra_mount *m, uint64_t have, unsigned int flags, uint64_t *needs,
				 bool *to_userns)
{
	*to_userns = flags & RA_PLAN_USERNS;
	return RA_ROUTE_TMPFS;
}

static int tmpfs_volume(struct xstate *x, const struct ra_op *op, bool *dir, struct rootasm_error *e)
{
	const struct ra_mount *m = op->mount;
	struct ra_attrs prop = { .propagation = m->attrs.propagation };
	/* fsmount() takes the attribute flags; idmap and propagation come after */
	int fd = ra_tmpfs_mount(&m->tmpfs, m->attrs.set, e);

	*dir = true;
	if (fd < 0)
		return fd;
	return ra_x_finish(x, op, fd, &prop, false, m->target, e);
}

const struct ra_volume_kind ra_volume_tmpfs = {
	.name = "tmpfs",
	.keys = RA_VKEY_OPTIONS | RA_VKEY_TMPFS,
	.route = tmpfs_route,
	.mount = tmpfs_volume,
};
