/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sandbox of `rootasm exec`, in three files: the parent (exec.c) makes
 * what allocates and clones the init; the init (execinit.c) sets the
 * container up around the tree it is sent; the mounts of /proc and /dev it
 * adds (execmnt.c). What they share is here.
 */
#ifndef ROOTASM_SANDBOX_H
#define ROOTASM_SANDBOX_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "passwd.h"

/* OCI's maskedPaths of /proc (execmnt.c): files (each masked by a clone of the host's /dev/null), directories */
#define RA_NMASK	6
#define RA_NMASK_DIRS	3

/* What the init needs, made by the parent: the init reads it from its copy of our memory. */
struct ra_exec_spec {
	int tree_fd;			/* received on tree_sock */
	int tree_sock;			/* the init's end: the tree and the user come on it */
	int home_slot;			/* envp's HOME from the tree's /etc/passwd, or -1 */
	char *const *argv;
	char **envp;
	const char *path;		/* PATH for the search, from envp */
	const char *hostname;
	const char *workdir;		/* NULL: "/" */
	bool privileged, netns, user_set, tty;
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t ngroups;
	uint64_t caps;
	unsigned int preserve_fds;
	bool deny_mount_api;
	int tty_sock;			/* tty: the init's end of the socketpair for the master */
	sigset_t fwd;			/* the signals the init passes on, and SIGCHLD */
};

/*
 * What the parent sends the init with the tree (SCM_RIGHTS): the layout's
 * exec.user as the tree's /etc/passwd and /etc/group resolve it, which only
 * the tree can say.
 */
struct ra_exec_tree_msg {
	bool resolved;
	uid_t uid;
	gid_t gid;
	uint32_t ngroups;
	gid_t groups[RA_USER_MAX_GROUPS];
	char home[sizeof(((struct ra_user *)0)->home) + 8];	/* "HOME=...", "" when passwd has none */
};

/* The names of the init's steps, for the report of the one that failed (ra_child_finish()). */
extern const char *const ra_exec_steps[];

/* The init (execinit.c): ra_child_start()'s function, @arg a struct ra_exec_spec. */
int ra_exec_init(void *arg, int *step);

/*
 * The mounts the sandbox adds to the tree, made before the tree arrives
 * (detached; -errno when one could not be made, reported where it is used):
 * /proc, the /proc mask directories, and a minimal /dev as crun's default
 * config has it (its tmpfs already filled), with its pts, shm and mqueue.
 */
struct ra_premade {
	int proc;
	/*
	 * What goes over each of /proc's masked files (a clone of the host's
	 * /dev/null) and directories (an empty tmpfs), or -errno when it could
	 * not be made (-ENOENT too: no /dev/null); -EBADF where that /proc has
	 * no such entry: only what is used is made (a detached mount closed
	 * unused costs its dissolution, ~0.1 ms).
	 */
	int file_masks[RA_NMASK];
	int dir_masks[RA_NMASK_DIRS];
	int dev, pts, shm, mqueue;
};

/* Every premade mount -EBADF; made (each: an fd, or -errno reported where it is used); closed. */
void ra_premade_init(struct ra_premade *m);
void ra_premake(struct ra_premade *m, bool privileged);
void ra_premade_close(struct ra_premade *m);
/* A premade mount moved to @where (an error it had is returned now). */
int ra_mount_premade(int *mfd, const char *where);
/* /proc's masked files and directories, over the new /proc. */
int ra_mask_proc(struct ra_premade *m);
/* /proc's OCI readonlyPaths: read-only binds of themselves. */
int ra_readonly_proc(void);
/* The tree's /dev/null works: a character device 1:3 that opens (a nodev mount refuses). */
bool ra_dev_usable(void);
/* The minimal /dev, attached. */
int ra_make_dev(struct ra_premade *m);

#endif
