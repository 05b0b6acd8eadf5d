/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* exec.c and tools/seccomp-gen.c: the sandbox of `rootasm exec`. */
#ifndef ROOTASM_EXEC_H
#define ROOTASM_EXEC_H

#include <stdbool.h>
#include <linux/filter.h>

#include "rootasm.h"

/* The profile, made at build time by tools/seccomp-gen.c (rootasm-seccomp-gen): with and without the mount API rules. */
extern const struct sock_filter ra_profile_deny_mount[];
extern const unsigned short ra_profile_deny_mount_len;
extern const struct sock_filter ra_profile_allow_mount[];
extern const unsigned short ra_profile_allow_mount_len;

struct ra_exec;

/*
 * The command's environment (caller frees the array, not the strings: they
 * are @x's, @extra's, @home or static): @x's env, @extra, then PATH, TERM and
 * HOME (@home "HOME=...", else /root) where not given. *ret_path: PATH's value.
 */
char **ra_exec_env(const struct ra_exec *x, const char *const *extra, const char *home, const char **ret_path);

/*
 * The command as `podman run IMAGE [CMD]` makes it: @x's entrypoint, then
 * @argv if it has any, else @x's cmd. An array of borrowed pointers (caller
 * frees the array only); NULL when out of memory.
 */
char **ra_exec_command(const struct ra_exec *x, char *const argv[]);

/* The OCI default capability set (crun spec, runc spec). */
#define RA_OCI_DEFAULT_CAPS	((1ULL << 29) | (1ULL << 5) | (1ULL << 10))	/* AUDIT_WRITE, KILL, NET_BIND_SERVICE */

#endif
