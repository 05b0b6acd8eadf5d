/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A tree whose attributes its receiver cannot clear (lock.c). */
#ifndef ROOTASM_LOCK_H
#define ROOTASM_LOCK_H

#include "rootasm.h"

/*
 * Replace the detached tree *@tree with a clone whose mounts are locked as in
 * a less privileged mount namespace (MNT_LOCK_READONLY/NODEV/NOSUID/NOEXEC/
 * ATIME, children MNT_LOCKED), with @ctx's lock namespace (made at its first
 * lock). On success *@tree is the clone (the tree it was is consumed); on
 * failure *@tree is untouched and @e says which step failed.
 */
int ra_tree_lock(struct rootasm_ctx *ctx, int *tree, struct rootasm_error *e);

#endif
