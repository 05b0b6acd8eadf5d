/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Principals: who a tree is for (principal.c), and what they are given (authorize.c). */
#ifndef ROOTASM_PRINCIPAL_H
#define ROOTASM_PRINCIPAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "layout.h"

struct rootasm_principal {
	bool admin;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t ngroups;
	int userns_fd;		/* -EBADF, or the user namespace the tree is for (ours) */
	char desc[320];
};

/* A copy of @p (NULL: an administrator); caller owns *ret. */
int ra_principal_dup(const struct rootasm_principal *p, struct rootasm_principal **ret);

static inline bool ra_principal_admin(const struct rootasm_principal *p)
{
	return !p || p->admin;
}

/*
 * The authorize stage: what @l's principal (l->principal) is given of every
 * host object the open stage opened, recorded in the model (ra_src.auth_*);
 * refusals are errors with the layout's location (kind permission). For a
 * principal that is not an administrator it runs with the principal's
 * file-system credentials (rootasm_principal_run()), as the open stage did.
 */
int ra_authorize(struct rootasm_layout *l, struct ra_diag *d, struct rootasm_error *e);

#endif
