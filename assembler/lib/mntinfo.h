/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* statmount/listmount: what the kernel says about mounts, by 64-bit mount id. */
#ifndef ROOTASM_MNTINFO_H
#define ROOTASM_MNTINFO_H

#include <stdint.h>
#include <stddef.h>

#include "uapi.h"

/* statmount(@id, @mask) into a malloc'ed buffer, caller frees *ret; @mnt_ns_id 0 = ours. */
int ra_statmount(uint64_t id, uint64_t mask, uint64_t mnt_ns_id, struct ra_statmount **ret);
/* The unique mount id of the mount at @path (statx STATX_MNT_ID_UNIQUE). */
int ra_mount_id(int dfd, const char *path, uint64_t *ret);
/* Children of @id (direct), caller frees *ret. */
int ra_listmount(uint64_t id, uint64_t **ret, size_t *n);
/*
 * Whether a mount lies at or below the object @fd refers to (a child of the
 * mount holding it, mounted there or beneath): 1 with its mount point in
 * *ret_where (caller frees), 0 if none, or -errno.
 */
int ra_mounts_below(int fd, char **ret_where);
/*
 * The mount @want (a unique id) wherever it is in our namespace now (its
 * mount point moved by a rename: the owner of the directory it was attached
 * in can rename that from a mount namespace of its own, where it is no mount
 * point): an O_PATH fd of its root, checked to be that mount's, for the
 * caller to detach; -ENOENT when no such mount is left in our namespace;
 * -EBUSY when something else is on it there; or -errno.
 */
int ra_mount_find(uint64_t want);
/*
 * The mount @want, for the caller to detach: at the place it was attached,
 * as @reopen opens it (an O_PATH fd, or -errno), with what has been stacked
 * on @want there since detached, top first (mounts whose parents lead down
 * to @want: a delegate that bind-mounts the rootfs onto itself in our
 * namespace, as runc does for a container without a mount namespace of its
 * own); or, when the place cannot be opened or what is there does not stand
 * on @want, wherever it is now (ra_mount_find()). An fd of its root; -ENOENT
 * when no such mount is left (nothing to do); or -errno.
 */
int ra_mount_uncover(int (*reopen)(void *ud), void *ud, uint64_t want);
/* Format idmap strings "a b c\0a b c\0" as "a:b:c,a:b:c" into @buf. */
void ra_format_idmap(const char *s, uint32_t num, char *buf, size_t size);

#endif
