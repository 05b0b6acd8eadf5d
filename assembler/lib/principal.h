/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Principals: who a tree is for (principal.c), and what they are given (authorize.c). */
#ifndef ROOTASM_PRINCIPAL_H
#define ROOTASM_PRINCIPAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "layout.h"

/* at most this many groups in a principal (a user database's answer with more: refused) */
#define RA_PRINCIPAL_MAX_GROUPS 65536

struct rootasm_principal {
	bool admin;
	bool self;		/* the calling process itself (rootasm_principal_self()): its own credentials already */
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t ngroups;
	int userns_fd;		/* -EBADF, or the user namespace the tree is for (ours) */
	/*
	 * What its front end limits it to (rootasm_principal_limit()), checked
	 * by the authorize stage on the fds the open stage holds: the layout
	 * file's directory, and every host object, must lie in (or below) one of
	 * these directories. Without the flag: no such limit.
	 */
	bool limit_layouts, limit_sources;
	bool limit_userns;	/* no tree in a user namespace (ROOTASM_LIMIT_USERNS) */
	char **layout_dirs, **source_dirs;
	size_t nlayout_dirs, nsource_dirs;
	char desc[320];
};

/* A copy of @p (NULL: the calling process, judged: rootasm_principal_self()); caller owns *ret. */
int ra_principal_dup(const struct rootasm_principal *p, struct rootasm_principal **ret);

/* No principal is no administrator: every load names one (NULL there is the caller, judged). */
static inline bool ra_principal_admin(const struct rootasm_principal *p)
{
	return p && p->admin;
}

/* How the tree is handed over: the request's word, judged by ra_grant(). */
struct ra_delivery {
	int userns_fd;		/* >= 0: the tree is for this user namespace (else the principal's, if any) */
	bool lock;		/* its receiver may not be an administrator (the caller's word: ROOTASM_ASSEMBLE_LOCK) */
	const uid_t *receivers;	/* the uids it goes to (--send-fd --peer-uid): judged by ra_grant() */
	size_t n_receivers;
};

/* The credential an overlay looks its layers up with (ra_grant_overlay_cred()). */
enum ra_cred {
	RA_CRED_MOUNTER,	/* the assembler's own */
	RA_CRED_LAYOUT,		/* the layout's override_creds (administrators only) */
	RA_CRED_LAYOUT_USERNS,	/* the layout's override_creds, inside the tree's user namespace */
	RA_CRED_USERNS_ROOT,	/* the tree's user namespace's root, every capability there */
	RA_CRED_PRINCIPAL,	/* the principal's uid, gid and groups with CAP_SYS_ADMIN only: its own view */
};

/*
 * The authorize stage's answer for a whole tree: what its principal is given
 * beyond what ra_authorize() recorded for each host object (ra_src.auth_*).
 * The plan is built from the model, this and the kernel's features only; the
 * engine carries the plan out and decides nothing.
 */
struct ra_grant {
	const struct rootasm_principal *who;	/* NULL: an administrator */
	bool admin;
	uint64_t tree_force;	/* MOUNT_ATTR_* set on every mount of the tree, whatever the layout says */
	bool lock;		/* the tree's attributes locked: its receiver cannot clear them (lock.c) */
	const char *why;	/* why tree_force and lock */
	long long receiver;	/* -1, or the receiver's uid that made it locked (ra_delivery.receivers) */
	/*
	 * The tree's user namespace (borrowed), or -EBADF: what is made for the
	 * tree (images, tmpfs, overlays, the upper) is idmapped into it, host
	 * directories never; its root owns upper/ and work/.
	 */
	int userns_fd;
	uid_t root_uid;
	gid_t root_gid;
};

/*
 * The grant for @l (authorized, or parsed only for a plan offline) handed
 * over as @dl says (NULL: to its principal, in the principal's user
 * namespace if it has one). Refuses what cannot be given that way (kind
 * usage: a layout's own idmaps into a user namespace). Asks the kernel only
 * who the user namespace's root is.
 */
int ra_grant(const struct rootasm_layout *l, const struct ra_delivery *dl, struct ra_grant *g,
	     struct rootasm_error *e);

/*
 * The credential @l's overlay (a nested layout's too) gets under @g;
 * @userns_cred: the kernel records a credential without CAP_SYS_ADMIN
 * (ROOTASM_FEAT_OVL_CREDS_NOADMIN), which one in a user namespace is.
 */
enum ra_cred ra_grant_overlay_cred(const struct ra_grant *g, const struct rootasm_layout *l, bool userns_cred);

/*
 * The authorize stage: what @l's principal (l->principal) is given of every
 * host object the open stage opened, recorded in the model (ra_src.auth_*);
 * refusals are errors with the layout's location (kind permission). For a
 * principal that is not an administrator it runs with the principal's
 * file-system credentials (rootasm_principal_run()), as the open stage did.
 */
int ra_authorize(struct rootasm_layout *l, struct ra_diag *d, struct rootasm_error *e);

/*
 * A layout file, by the fd the open found it at (@fd) and the directory's it
 * was found in (@dirfd), before a byte of it is read: for a principal limited
 * to layout directories (rootasm_principal_limit()), @dirfd must be one of
 * them or lie below one; an administrator so limited stands for someone
 * else's word (rootasm-runtime's annotations, a root client's "as"): the file
 * must be an administrator's under the one trust rule (ra_admin_trusted()).
 * No limit: nothing to judge. @shown names it in errors (kind permission).
 */
int ra_authorize_layout_file(const struct rootasm_principal *p, int dirfd, int fd, const char *shown,
			     struct rootasm_error *e);

#endif
