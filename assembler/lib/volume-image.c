// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The image volume: a squashfs or erofs image (erofs on its file, else a loop
 * device: mount.c) + fsmount, or a clone of the context's cached detached
 * mount of it (cache.h).
 */
#include <sys/mount.h>

#include "cache.h"
#include "context.h"
#include "sysmnt.h"
#include "volume.h"

static enum ra_route image_route(const struct ra_mount *m, uint64_t have, unsigned int flags, uint64_t *needs,
				 bool *to_userns)
{
	enum ra_route route = flags & RA_PLAN_CACHE ? RA_ROUTE_CACHED : RA_ROUTE_IMAGE;

	*needs |= RA_F(LOOP_CONFIGURE) | (route == RA_ROUTE_CACHED ? RA_F(OPEN_TREE_DETACHED) : 0);
	*to_userns = flags & RA_PLAN_USERNS;
	return route;
}

static int image_volume(struct xstate *x, const struct ra_op *op, bool *dir, struct rootasm_error *e)
{
	const struct ra_mount *m = op->mount;
	struct ra_attrs prop = { .propagation = m->attrs.propagation };
	int fd;

	*dir = true;
	if (op->route == RA_ROUTE_CACHED) {
		struct ra_cache_entry *ent = NULL;
		int cfd = ra_cache_get(ra_x_ctx(x)->images, m->src.fd, m->src.display, NULL, m->fstype, &ent, e);

		if (cfd < 0)
			return cfd;
		if (ent) {
			fd = ra_x_clone_cached(cfd, m->src.display, e);
			ra_cache_put(ra_x_ctx(x)->images, ent);
			if (fd < 0)
				return fd;
		} else {
			fd = cfd;	/* a bypass: a fresh mount of our own */
		}
		/* the clone has the cache's flags (read-only); the volume's own come now, and stay read-only */
		prop = m->attrs;
		prop.clr &= ~(uint64_t)MOUNT_ATTR_RDONLY;
	} else {
		/* fsmount() takes the attribute flags; idmap and propagation come after */
		fd = ra_image_mount(m->src.fd, m->src.display, m->fstype, m->attrs.set, e);
		if (fd < 0)
			return fd;
	}
	return ra_x_finish(x, op, fd, &prop, false, m->target, e);
}

const struct ra_volume_kind ra_volume_image = {
	.name = "image",
	.src = RA_SRC_IMAGE,
	.keys = RA_VKEY_TARGET | RA_VKEY_OPTIONS | RA_VKEY_TYPE | RA_VKEY_TRUSTED | RA_VKEY_IDMAP,
	.image = true,
	.route = image_route,
	.mount = image_volume,
};
