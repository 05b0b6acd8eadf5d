/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host paths resolved safely, one component at a time (chase.c). */
#ifndef ROOTASM_CHASE_H
#define ROOTASM_CHASE_H

#include <stdbool.h>
#include <sys/stat.h>

struct ra_chase {
	int fd;			/* O_PATH | O_NOFOLLOW fd of the object (the last component is never followed) */
	int parent;		/* the directory holding it, or -EBADF when the path named a directory itself */
	struct stat parent_st;
	char why[320];		/* with -EXDEV: the transition that was refused */
};

#define RA_CHASE_NO_OWNERS	0x1u	/* only the symlink-count and procfs rules */

/*
 * Resolve @path from @dirfd (absolute: from "/"). 0 with c->fd (and c->parent)
 * set, which the caller owns; -EXDEV for an unsafe transition (c->why says
 * which); -ELOOP, -ENOENT, -ENOTDIR, -ENOMEM and the like otherwise.
 */
int ra_chase(int dirfd, const char *path, unsigned int flags, struct ra_chase *c);

/* Whether this process sees host ids (the initial user namespace, or one mapping every id). */
bool ra_host_ids(void);

#endif
