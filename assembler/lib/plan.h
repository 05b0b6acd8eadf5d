/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plan stage: a layout (opened, or parsed only) -> the ordered operations
 * the engine carries out. No system calls: which route an operation takes
 * (e.g. open_tree_attr() or open_tree() + mount_setattr() for an idmapped
 * bind) is decided from the features the caller says the kernel has.
 */
#ifndef ROOTASM_PLAN_H
#define ROOTASM_PLAN_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "layout.h"
#include "principal.h"

/* The bit of kernel feature ROOTASM_FEAT_@x in a needs/have mask. */
#define RA_F(x) (1ULL << ROOTASM_FEAT_##x)

enum ra_op_kind {
	RA_OP_LAYER,		/* one lower layer -> a layer slot */
	RA_OP_UPPER,		/* the upper: upper/ and work/ inside a tmpfs or a host directory */
	RA_OP_OVERLAY,		/* the overlay of the slots (top first) and the upper -> the root */
	RA_OP_ROOT_LAYER,	/* the one layer is the root itself, read-only */
	RA_OP_VOLUME,		/* a mount moved onto the detached root */
	RA_OP_ROOT_ATTRS,	/* mount_setattr() of the root */
	RA_OP_TREE_ATTRS,	/* mount_setattr(AT_RECURSIVE) of the whole tree: what the principal may not have */
	RA_OP_TREE_LOCK,	/* the tree's attributes locked: its receiver cannot clear them (lock.c) */
};

enum ra_route {
	RA_ROUTE_NONE,
	RA_ROUTE_LAYER_FD,	/* dir layer: its O_PATH fd goes to overlayfs as is */
	RA_ROUTE_LAYER_CLONE,	/* dir layer: open_tree(OPEN_TREE_CLONE) of its fd */
	RA_ROUTE_IMAGE,		/* image: erofs on its file, else a loop device (LOOP_CONFIGURE); fsopen/fsmount */
	RA_ROUTE_UPPER_TMPFS,	/* fsopen("tmpfs") + fsmount, mkdirat upper/ work/ */
	RA_ROUTE_UPPER_DIR,	/* mkdirat upper/ work/ in the host directory's fd */
	RA_ROUTE_UPPER_DIRS,	/* the upperdir's and workdir's O_PATH fds as they are: nothing made */
	RA_ROUTE_OVERLAY,	/* fsopen("overlay"), FSCONFIG_SET_FD lowerdir+/upperdir/workdir, CMD_CREATE, fsmount */
	RA_ROUTE_BIND_CLONE,	/* open_tree(OPEN_TREE_CLONE) of the source fd, then mount_setattr() */
	RA_ROUTE_BIND_ATTR,	/* open_tree_attr(): clone, attributes and idmap in one call (6.15) */
	RA_ROUTE_TMPFS,		/* fsopen("tmpfs") + fsmount */
	RA_ROUTE_NESTED,	/* the nested layout's own plan, assembled into a tree */
	RA_ROUTE_SETATTR,	/* mount_setattr() */
	RA_ROUTE_CACHED,	/* image: the context's cached detached mount (cache.h): as a layer fd, or cloned */
	RA_ROUTE_LOCK,		/* a user and mount namespace's copy of the tree, cloned (lock_mnt_tree()) */
};

struct ra_plan;

struct ra_op {
	enum ra_op_kind kind;
	enum ra_route route;
	const struct rootasm_layout *l;		/* the layout it comes from (file, for messages) */
	struct ra_loc loc;
	char key[32];				/* "layers[2]", "mounts[0]", "upper", "attributes" */
	const struct ra_layer *layer;		/* RA_OP_LAYER */
	const struct ra_mount *mount;		/* RA_OP_VOLUME */
	size_t slot;				/* RA_OP_LAYER: index of its fd (top layer = 0) */
	struct ra_plan *sub;			/* RA_ROUTE_NESTED */
	uint64_t needs;				/* features this operation needs */
	/* the authorize stage's word on it (authorize.c: ra_authorize(), ra_grant()) */
	uint64_t attr_force;			/* mount attributes set whatever the layout says (MOUNT_ATTR_*) */
	bool to_userns;				/* idmapped into the tree's user namespace (ra_grant.userns_fd) */
	bool lend;				/* RA_ROUTE_CACHED layer: the cached mount itself, lent to overlayfs */
	/*
	 * RA_OP_OVERLAY: the credential it looks its layers up with. With
	 * RA_CRED_PRINCIPAL: a read-only overlay of the layers whose
	 * override_creds is the principal's uid, gid and groups with
	 * CAP_SYS_ADMIN only (no DAC capability), under the overlay with the
	 * upper if there is one.
	 */
	enum ra_cred cred;
	const char *why;			/* why attr_force (or NULL) */
};

struct ra_plan {
	const struct rootasm_layout *l;
	struct ra_op *ops;
	size_t n;
	size_t nslots;				/* layer fds the overlay (or root layer) takes */
	uint64_t needs;				/* the fold of the ops' needs, sub-plans included */
	unsigned int flags;			/* RA_PLAN_* it was built with */
	const struct ra_grant *g;		/* the grant it carries out (borrowed: the caller's) */
};

#define RA_PLAN_CACHE	0x1u	/* the context has an image cache: images take RA_ROUTE_CACHED */
#define RA_PLAN_USERNS	0x2u	/* (plan.c's, from the grant) the tree is for a user namespace */
#define RA_PLAN_NESTED	0x8u	/* a nested layout's plan (the tree-wide steps are the top plan's) */

/* The features whose presence decides a route of @l's plan under @g: the caller probes these, once. */
uint64_t ra_plan_consults(const struct rootasm_layout *l, const struct ra_grant *g);

/*
 * The plan of @l (opened and authorized, or parsed only) carrying out the
 * grant @g (ra_grant(); it must outlive the plan), for the features in @have
 * (a mask of 1 << enum rootasm_feature, covering ra_plan_consults()), with
 * RA_PLAN_* @flags (the context's). No system calls.
 */
int ra_plan_build(const struct rootasm_layout *l, const struct ra_grant *g, uint64_t have, unsigned int flags,
		  struct ra_plan **ret, struct rootasm_error *e);
void ra_plan_free(struct ra_plan *p);

const char *ra_route_name(enum ra_route r);

/* @p as `rootasm check` prints it: text, or JSON with ROOTASM_PLAN_JSON (| ROOTASM_PLAN_PRETTY). plan-print.c */
int ra_plan_print(const struct ra_plan *p, FILE *out, unsigned int flags);

/*
 * The answers a plan is built with, asked of the context and the kernel in
 * needs.c (the plan stage asks nothing): the context's plan flags; the mask
 * of the features ra_plan_consults(@l, @g) names that the kernel has.
 */
unsigned int ra_plan_flags(struct rootasm_ctx *ctx);
uint64_t ra_plan_have(struct rootasm_ctx *ctx, const struct rootasm_layout *l, const struct ra_grant *g);

#endif
