// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The static rootasm-runtime (runtime.h: rt_static): linked -static-pie with
 * libjansson.a and libyaml.a, and with this file, whose ra_dl_load() and
 * rootasm_principal_of_uid() stand for the library's (dl.c and
 * principal-nss.c are then not linked: their objects define nothing else).
 *
 * Every call goes through it (an engine runs its runtime for create, start,
 * state, kill and delete of every container, a pod's pause container too), so
 * its start is its cost: without a dynamic loader and libc.so to map and
 * relocate, a pass-through took 3.63 ms against 4.10 ms linked dynamically
 * (README, "Engines": a machine where a bare /bin/true took 2.30 ms). glibc's
 * static dlopen() is never used:
 * it would map a second libc.so into the process (NSS modules and the
 * import's libraries do). What needs them is handed to rootasm-runtime-full
 * before anything is done (rt_exec_full()): a user's bundle, an import.
 */
#include <errno.h>
#include <string.h>
#include <yaml.h>

#include "dl.h"
#include "runtime.h"
#include "util.h"

const bool rt_static = true;

#define RA_ADDR(f) (void *)&f,
static void *const yaml_funcs[] = { RA_YAML_FUNCS(RA_ADDR) };

/* libyaml: linked in; anything else is rootasm-runtime-full's, never reached here */
int ra_dl_load(struct ra_dl *d, struct rootasm_error *e)
{
	if (!strcmp(d->soname, "libyaml-0.so.2") && d->n == ARRAY_SIZE(yaml_funcs) && !d->init) {
		memcpy(d->table, yaml_funcs, sizeof(yaml_funcs));
		return 0;
	}
	return ra_err(e, ELIBACC, -EBADF, d->op, d->soname, "not in the static " RT_NAME " (" RT_FULL " loads it)");
}

/* the user database's principal: rootasm-runtime-full's (main.c hands it a user's bundle first) */
int rootasm_principal_of_uid(uid_t uid, int userns_fd, struct rootasm_principal **ret, struct rootasm_error *e)
{
	(void)userns_fd;
	*ret = NULL;
	return ra_err(e, ELIBACC, -EBADF, "principal", NULL, "uid %u: the user database is " RT_FULL "'s",
		      (unsigned)uid);
}
