/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An image's user ("USER[:GROUP]", names or numbers: the image config's
 * `User`, the layout's exec.user) resolved in the tree's own /etc/passwd and
 * /etc/group, as runc and crun's callers (podman, umoci) resolve it:
 *
 *   USER     a name of /etc/passwd: its uid and gid; a number: that uid, and
 *            the gid of /etc/passwd's entry for it, else 0
 *   GROUP    a name of /etc/group, or a number
 *   groups   without GROUP: every group of /etc/group that lists the user's
 *            name (at most RA_USER_MAX_GROUPS)
 *   home     /etc/passwd's, for a HOME the environment does not set
 *
 * The files are opened from the tree's root fd with RESOLVE_IN_ROOT (a
 * symlink cannot lead out of the tree), must be regular files, and are read
 * with a size cap. A missing file is an empty one.
 */
#ifndef ROOTASM_PASSWD_H
#define ROOTASM_PASSWD_H

#include <stdbool.h>
#include <sys/types.h>

#include "rootasm.h"

#define RA_USER_MAX_GROUPS	64
#define RA_USER_FILE_MAX	(4u << 20)

struct ra_user {
	uid_t uid;
	gid_t gid;
	gid_t groups[RA_USER_MAX_GROUPS];
	size_t ngroups;
	char home[256];				/* "" when /etc/passwd has none */
};

/* "USER[:GROUP]": 1-255 bytes each of letters, digits, '_', '-', '.', '@', '$' (no '/', no control). */
bool ra_user_spec_ok(const char *spec);

/* Resolve @spec in the tree at @root_fd (any fd of its root directory, O_PATH will do). */
int ra_user_resolve(int root_fd, const char *spec, struct ra_user *ret, struct rootasm_error *e);

#endif
