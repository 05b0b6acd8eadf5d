// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The layout volume: a nested layout, opened from its own directory by the
 * open stage, planned on its own and assembled into a tree of its own.
 */
#include "volume.h"

static enum ra_route layout_route(const struct ra_mount *m, uint64_t have, unsigned int flags, uint64_t *needs,
				  bool *to_userns)
{
	return RA_ROUTE_NESTED;
}

static int layout_volume(struct xstate *x, const struct ra_op *op, bool *dir, struct rootasm_error *e)
{
	*dir = true;
	return ra_x_nested(x, op, e);
}

const struct ra_volume_kind ra_volume_layout = {
	.name = "layout",
	.src = RA_SRC_LAYOUT,
	.keys = RA_VKEY_TARGET,
	.no_options = "a nested layout sets its own 'attributes'; 'options' does not apply",
	.route = layout_route,
	.mount = layout_volume,
};
