/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* exec.c and tools/seccomp-gen.c: the sandbox of `rootasm exec`. */
#ifndef ROOTASM_EXEC_H
#define ROOTASM_EXEC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/*
 * The OCI default capability set (crun spec, runc spec): the one place it is
 * written. Its names: ra_caps_text(RA_OCI_DEFAULT_CAPS, ...).
 */
#define RA_OCI_DEFAULT_CAPS	((1ULL << 29) | (1ULL << 5) | (1ULL << 10))	/* AUDIT_WRITE, KILL, NET_BIND_SERVICE */

/* Each capability @v (an unsigned int) of the set @caps, lowest first: RA_CAP_FOREACH(v, caps) { ... } */
#define RA_CAP_FOREACH(v, caps) \
	for (unsigned int v = 0; v < 64; v++) \
		if (!((caps) & (1ULL << v))) {} else

/*
 * The names of @caps as libcap writes them (ra_cap_name()), joined with @sep
 * ("cap_kill+cap_net_bind_service"), cut to fit @buf; "" when none. Returns @buf.
 */
const char *ra_caps_text(uint64_t caps, const char *sep, char *buf, size_t size);

/*
 * The signals `rootasm exec` passes on to the container (the CLI to the init,
 * the init to the command), in @set.
 */
static inline void ra_exec_fwd_sigset(sigset_t *set)
{
	static const int fwd[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT };

	sigemptyset(set);
	for (size_t i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
		sigaddset(set, fwd[i]);
}

#endif
