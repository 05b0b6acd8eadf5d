/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* exec.c and seccomp.c: the sandbox of `rootasm exec`. */
#ifndef ROOTASM_EXEC_H
#define ROOTASM_EXEC_H

#include <stdbool.h>
#include <linux/filter.h>

#include "rootasm.h"

/* The profile, made at build time by seccomp.c (rootasm-seccomp-gen): with and without the mount API rules. */
extern const struct sock_filter ra_profile_deny_mount[];
extern const unsigned short ra_profile_deny_mount_len;
extern const struct sock_filter ra_profile_allow_mount[];
extern const unsigned short ra_profile_allow_mount_len;

/* The OCI default capability set (crun spec, runc spec). */
#define RA_OCI_DEFAULT_CAPS	((1ULL << 29) | (1ULL << 5) | (1ULL << 10))	/* AUDIT_WRITE, KILL, NET_BIND_SERVICE */

#endif
