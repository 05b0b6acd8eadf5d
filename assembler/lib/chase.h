/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host paths resolved safely, one component at a time (chase.c). */
#ifndef ROOTASM_CHASE_H
#define ROOTASM_CHASE_H

#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>

struct ra_chase {
	int fd;			/* O_PATH | O_NOFOLLOW fd of the object (the last component is never followed) */
	struct stat st;		/* its stat, taken on that fd */
	bool has_parent;	/* parent_st is the directory holding it (false: the path named a directory itself) */
	struct stat parent_st;
	int parent_fd;		/* with RA_CHASE_PARENT: the directory holding it (owned; -EBADF without one) */
	char why[320];		/* with -EXDEV: the transition that was refused */
};

#define RA_CHASE_NO_OWNERS	0x1u	/* only the symlink-count and procfs rules */
#define RA_CHASE_PARENT		0x2u	/* keep the directory holding the object in c->parent_fd */

/*
 * Resolve @path from @dirfd (absolute: from "/"). 0 with c->fd set, which the
 * caller owns; -EXDEV for an unsafe transition (c->why says
 * which); -ELOOP, -ENOENT, -ENOTDIR, -ENOMEM and the like otherwise.
 */
int ra_chase(int dirfd, const char *path, unsigned int flags, struct ra_chase *c);

/*
 * The directory of the last path resolved through it, kept for the next path
 * in the same directory (one openat() + fstat() instead of one per component:
 * a layout's sources often share a directory). Only a path walked literally
 * (absolute, no "." or "..", no symlink followed) leaves its directory here; it
 * holds the same fd and stat a fresh walk took on its way. A memo serves one
 * load: ra_chase_memo_done() when it ends.
 */
struct ra_chase_memo {
	char *dir;		/* "/a/b" for "/a/b/c" ("" for "/c"), or NULL: nothing kept */
	size_t len;
	int fd;
	struct stat st;
	unsigned int flags;
};

#define RA_CHASE_MEMO_INIT { .dir = NULL, .fd = -EBADF }

/* ra_chase(), starting from @m's directory when @path lies directly in it (@m may be NULL). */
int ra_chase_with(struct ra_chase_memo *m, int dirfd, const char *path, unsigned int flags, struct ra_chase *c);
void ra_chase_memo_done(struct ra_chase_memo *m);

/* Whether this process sees host ids (the initial user namespace, or one mapping every id). */
bool ra_host_ids(void);

#endif
