/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The engine's state while it executes one plan, shared by engine.c (which
 * walks the ops) and engine-x.c (the services it and the volume kinds call).
 * The kinds see it only through those services (volume.h).
 */
#ifndef ROOTASM_XSTATE_H
#define ROOTASM_XSTATE_H

#include <stdbool.h>
#include <sys/stat.h>

#include "plan.h"

struct ra_made;
struct ra_cache_entry;

struct xstate {
	struct rootasm_ctx *ctx;
	const struct ra_plan *p;
	struct ra_made *made;	/* what the engine creates on the way to targets, nested plans too */
	/* the engine's own: a nested plan executed into a tree (ra_x_nested()) */
	int (*nested)(struct rootasm_ctx *ctx, const struct ra_plan *p, struct ra_made *made, struct rootasm_error *e);
	int *slots;			/* layer fds, top first; LAYER_FD slots are borrowed */
	bool *own;			/* whether slots[i] is ours to close */
	struct ra_cache_entry **ents;	/* cache entries lent to slots[i] (RA_ROUTE_CACHED) */
	int ubase, ufd, wfd;		/* the upper's base (tmpfs: ours; dir: borrowed), upper/, work/ */
	bool own_ubase;
	int root;
	struct stat root_st;		/* the root's device and inode, for the volume targets */
};

/* mount_setattr() of @fd (AT_RECURSIVE with @recursive): @a's flags and propagation, if any. */
int ra_x_setattr(int fd, const struct ra_attrs *a, bool recursive, const char *what, struct rootasm_error *e);
/* Idmap the detached mount @fd into the grant's user namespace. */
int ra_x_userns_apply(struct xstate *x, int fd, bool recursive, const char *what, struct rootasm_error *e);

#endif
