// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The principal of a uid, from the user database (NSS: getpwuid_r() and
 * getgrouplist(), whose modules glibc loads with dlopen()). A file of its
 * own: the static rootasm-runtime (assembler/runtime/static.c) links
 * without it and hands a bundle that needs it to rootasm-runtime-full.
 */
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>

#include "principal.h"
#include "util.h"

int rootasm_principal_of_uid(uid_t uid, int userns_fd, struct rootasm_principal **ret, struct rootasm_error *e)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_free_ gid_t *groups = NULL;
	struct passwd pw, *pwp = NULL;
	size_t size = 4096;
	gid_t gid = (gid_t)uid;
	int n = 0, err;

	/* the user database's entry: its primary gid and every group it is in (getgrouplist() grown until all fit) */
	for (;;) {
		free(buf);
		buf = malloc(size);
		if (!buf)
			return ra_oom(e, "principal");
		err = getpwuid_r(uid, &pw, buf, size, &pwp);
		if (err != ERANGE || size >= (1u << 20))
			break;
		size *= 2;
	}
	if (err == 0 && pwp) {
		gid = pw.pw_gid;
		for (n = 64; n <= RA_PRINCIPAL_MAX_GROUPS;) {
			int want = n;

			free(groups);
			groups = malloc((size_t)want * sizeof(*groups));
			if (!groups)
				return ra_oom(e, "principal");
			if (getgrouplist(pw.pw_name, gid, groups, &n) >= 0)
				break;
			if (n <= want)	/* glibc says how many it needs; grow at least */
				n = want * 2;
		}
		if (n > RA_PRINCIPAL_MAX_GROUPS)
			return ra_err_kind(e, ROOTASM_ERROR_USAGE, E2BIG, "principal", pw.pw_name, "in more than %d groups",
					   RA_PRINCIPAL_MAX_GROUPS);
	}
	return rootasm_principal_user(uid, gid, groups, (size_t)n, userns_fd, ret, e);
}
