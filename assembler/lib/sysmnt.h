/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mount building blocks shared by the probe and the engine. Every function
 * that returns an fd says so; the caller owns it.
 */
#ifndef ROOTASM_SYSMNT_H
#define ROOTASM_SYSMNT_H

#include <stdint.h>
#include <sys/types.h>

#include "layout.h"

/* fsopen("tmpfs") + options + fsmount(@attrs): a detached tmpfs; caller owns the fd. */
int ra_tmpfs_mount(const struct ra_tmpfs *t, uint64_t attrs, struct rootasm_error *e);

/*
 * Attach @image_fd to a free loop device read-only with autoclear, create a
 * squashfs/erofs superblock on it and return a detached mount; caller owns
 * it. The loop device lives exactly as long as the mount. @path names the
 * image in messages and in the loop device's lo_file_name.
 */
int ra_image_mount(int image_fd, const char *path, enum ra_fstype type, uint64_t attrs,
		   struct rootasm_error *e);

struct ra_cred_spec {
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t ngroups;
	uint64_t caps;
	int userns_fd;		/* >= 0: the credential is one inside this user namespace (setns) */
};

/*
 * Set "override_creds" on the overlay fs_context @fsfd from a short-lived
 * child that holds @c; the calling process keeps its own credentials.
 */
int ra_set_override_creds(int fsfd, const struct ra_cred_spec *c, struct rootasm_error *e);

/* idmap.c: a user namespace for @m (caller owns the fd), and applying it to a detached mount. */
int ra_userns_open(const struct ra_idmap *m, struct rootasm_error *e);
/*
 * What uid 0 and gid 0 of the user namespace @userns_fd are outside it (in
 * ours), read from /proc/CHILD/{uid,gid}_map of a helper that joined it.
 * Refuses an fd that is no user namespace, our own, or one that maps no 0.
 */
int ra_userns_root(int userns_fd, uid_t *ret_uid, gid_t *ret_gid, struct rootasm_error *e);
int ra_idmap_apply(int mfd, const struct ra_idmap *m, bool recursive, const char *what,
		   struct rootasm_error *e);

#endif
