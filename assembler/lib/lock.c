// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A tree locked as the kernel locks the mounts it copies into a less
 * privileged mount namespace (fs/namespace.c, lock_mnt_tree()): every mount's
 * read-only, nodev, nosuid, noexec and atime flags become MNT_LOCK_*, which
 * mount_setattr() and mount -o remount refuse to clear (EPERM) whoever asks,
 * even a caller with every capability in its own user and mount namespace;
 * the mounts below the root become MNT_LOCKED (no umount reveals what they
 * cover). A detached mount is never copied that way, so we make it be.
 *
 * Once per context, a mount namespace of one private tmpfs (the host's mounts
 * are not copied for every tree: a node may have thousands), and a user
 * namespace for every locked copy:
 *
 *   helper (clone3 CLONE_NEWNS): its /proc/self/ns/mnt; "/" rprivate; a tmpfs
 *   with a directory t over "/"; pivot_root(".", "."); umount2(".",
 *   MNT_DETACH); the namespace's fd -> ctx->lock_ns
 *   (a root without a parent, as an initramfs is, cannot be pivoted: there the
 *   namespace keeps the copy under the tmpfs)
 *   helper (clone3): setns(lock_ns) (out of any chroot, which unshare of a
 *   user namespace refuses); unshare(CLONE_NEWUSER); its fd -> ctx->lock_userns
 *
 * Then for each tree:
 *
 *   helper (clone3, our fd table):
 *     setns(lock_ns); unshare(CLONE_NEWNS)           a copy of it, ours alone
 *     move_mount(tree) onto /t; fchdir(tree)       (over "/" the root would be
 *                                                   covered: a chroot, to unshare)
 *     setns(lock_userns); unshare(CLONE_NEWNS)       the copy, in a namespace of
 *                                                   another user namespace: lock_mnt_tree()
 *     open_tree(".", OPEN_TREE_CLONE | AT_RECURSIVE) a detached clone keeps the locks
 *     dup3() onto the slot the parent reserved
 *
 * One user namespace for all: each tree holds its namespace for as long as
 * the tree lives, and user namespaces are counted for their creator (root,
 * here) against a limit (user.max_user_namespaces): a user that kept every
 * tree rootasmd gave it would otherwise use up root's, for everyone.
 *
 * The helper's namespaces die with it; the clone is ours. The tree we were
 * given is consumed (it was moved into the helper's namespace): the caller
 * takes the locked clone in its place. A receiver may still add attributes,
 * never clear one; an idmap cannot be changed on an idmapped mount, and a
 * receiver that is not CAP_SYS_ADMIN over a superblock's user namespace
 * cannot idmap its mounts at all. setns() puts the helper at that
 * namespace's root, so a caller in a chroot can lock too (unshare of a user
 * namespace refuses a chrooted process).
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "child.h"
#include "context.h"
#include "lock.h"
#include "sysmnt.h"
#include "util.h"

struct lock_arg {
	int tree;	/* the tree (moved into the helper's namespace) */
	int ns;		/* the context's lock namespace */
	int userns;	/* the context's lock user namespace */
	int slot;	/* the fd number the result is dup3()ed onto */
};

enum { N_PRIVATE, N_TMPFS, N_PIVOT, N_NS };
static const char *const ns_steps[] = {
	"make / private", "mount a tmpfs over /", "pivot_root", "open its namespace", NULL,
};

/* @fd, a helper's result, dup3()ed onto the slot the parent reserved, and closed (our fd table is the parent's). */
static int give(const struct lock_arg *a, int fd)
{
	int r = dup3(fd, a->slot, O_CLOEXEC) < 0 ? -errno : 0;

	close(fd);
	return r;
}

static int ns_child(void *arg, int *step)
{
	const struct lock_arg *a = arg;
	int fs, m, fd;

	/* our new namespace (clone3 made it), while /proc is still in it */
	*step = N_NS;
	fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*step = N_PRIVATE;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	*step = N_TMPFS;
	fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	if (fsconfig(fs, FSCONFIG_SET_STRING, "size", "4k", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		close(fs);
		return -errno;
	}
	m = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	close(fs);	/* (our fd table is the caller's: what we open, we close) */
	if (m < 0 || mkdirat(m, "t", 0700) < 0 || move_mount(m, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH) < 0 ||
	    fchdir(m) < 0)
		return -errno;
	close(m);
	*step = N_PIVOT;
	if (syscall(SYS_pivot_root, ".", ".") == 0) {
		if (umount2(".", MNT_DETACH) < 0)
			return -errno;
	} else if (errno != EINVAL) {
		return -errno;
	}
	*step = N_NS;
	return give(a, fd);
}

/*
 * Run @fn(@a) in a helper (clone3 @clone_flags, our fd table) that dup3()s its
 * result onto a->slot, a /dev/null we open for it; the result's fd (the
 * caller's), once the helper reported success and the slot is /dev/null no
 * more. @what names the helper in errors.
 */
static int helper_result(uint64_t clone_flags, ra_child_fn fn, struct lock_arg *a, const char *what,
			 const char *const *steps, struct rootasm_error *e)
{
	_cleanup_close_ int slot = open("/dev/null", O_RDONLY | O_CLOEXEC);
	struct ra_child ch;
	struct stat st;
	char step_of[64];
	int r;

	if (slot < 0)
		return ra_err(e, errno, -EBADF, "open", "/dev/null", "a slot for the lock helper's result");
	a->slot = slot;
	snprintf(step_of, sizeof(step_of), "%s:", what);	/* "lock the tree: setns" */
	r = ra_child_start(&ch, clone_flags, RA_CHILD_FILES, fn, a, what, e);
	if (r == 0)
		r = ra_child_finish(&ch, step_of, steps, e);
	if (r < 0)
		return r;
	if (fstat(slot, &st) < 0 || S_ISCHR(st.st_mode))
		return ra_err(e, EIO, -EBADF, what, NULL, "the helper reported a result it did not give");
	return take_fd(slot);
}

enum { U_DIR, U_SETNS, U_USERNS, U_OPEN, U_SLOT };
static const char *const userns_steps[] = {
	"open /proc/self/ns", "setns", "unshare a user namespace", "open it", "dup3", NULL,
};

static int userns_child(void *arg, int *step)
{
	const struct lock_arg *a = arg;
	int dir, fd;

	/* (/proc is not in the lock namespace: its directory of ours, looked up in once we have the namespace) */
	*step = U_DIR;
	dir = open("/proc/self/ns", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	*step = U_SETNS;
	if (setns(a->ns, CLONE_NEWNS) < 0)
		return -errno;
	*step = U_USERNS;
	if (unshare(CLONE_NEWUSER) < 0)
		return -errno;
	*step = U_OPEN;
	fd = openat(dir, "user", O_RDONLY | O_CLOEXEC);
	close(dir);
	if (fd < 0)
		return -errno;
	*step = U_SLOT;
	return give(a, fd);
}

/* The context's lock namespace and user namespace (*userns), made once. */
static int lock_ns(struct rootasm_ctx *c, int *userns, struct rootasm_error *e)
{
	_cleanup_close_ int ns = -EBADF, uns = -EBADF;
	struct lock_arg a = { .tree = -EBADF, .ns = -EBADF };
	int r;

	pthread_mutex_lock(&c->lock);
	r = c->lock_ns;
	*userns = c->lock_userns;
	pthread_mutex_unlock(&c->lock);
	if (r >= 0 && *userns >= 0)
		return r;
	ns = helper_result(CLONE_NEWNS, ns_child, &a, "lock the tree: make its namespace", ns_steps, e);
	if (ns < 0)
		return ns;
	a.ns = ns;
	uns = helper_result(0, userns_child, &a, "lock the tree: make its user namespace", userns_steps, e);
	if (uns < 0)
		return uns;
	pthread_mutex_lock(&c->lock);
	if (c->lock_ns < 0 || c->lock_userns < 0) {
		close_fdp(&c->lock_ns);
		close_fdp(&c->lock_userns);
		c->lock_ns = take_fd(ns);
		c->lock_userns = take_fd(uns);
	}
	r = c->lock_ns;
	*userns = c->lock_userns;
	pthread_mutex_unlock(&c->lock);
	return r;
}

enum { L_SETNS, L_COPY, L_ATTACH, L_USERNS, L_LOCKED, L_CLONE, L_SLOT };
static const char *const lock_steps[] = {
	"setns", "unshare a mount namespace", "attach the tree on /t", "setns of its user namespace",
	"unshare a mount namespace there", "open_tree(OPEN_TREE_CLONE) of the copy", "dup3", NULL,
};

static int lock_child(void *arg, int *step)
{
	const struct lock_arg *a = arg;
	int fd;

	*step = L_SETNS;
	if (setns(a->ns, CLONE_NEWNS) < 0)
		return -errno;
	*step = L_COPY;
	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	/* on /t, not over "/": a root covered by another mount is a chroot to unshare() */
	*step = L_ATTACH;
	if (move_mount(a->tree, "", AT_FDCWD, "/t", MOVE_MOUNT_F_EMPTY_PATH) < 0 || fchdir(a->tree) < 0)
		return -errno;
	*step = L_USERNS;
	if (setns(a->userns, CLONE_NEWUSER) < 0)
		return -errno;
	*step = L_LOCKED;
	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	*step = L_CLONE;
	fd = open_tree(AT_FDCWD, ".", OPEN_TREE_CLONE | AT_RECURSIVE | OPEN_TREE_CLOEXEC);
	if (fd < 0)
		return -errno;
	*step = L_SLOT;
	return give(a, fd);
}

int ra_tree_lock(struct rootasm_ctx *ctx, int *tree, struct rootasm_error *e)
{
	struct lock_arg a = { .tree = *tree };
	struct stat st;
	int locked;

	a.ns = lock_ns(ra_ctx(ctx), &a.userns, e);
	if (a.ns < 0)
		return a.ns;
	locked = helper_result(0, lock_child, &a, "lock the tree", lock_steps, e);
	if (locked < 0)
		return locked;
	if (fstat(locked, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close(locked);
		return ra_err(e, EIO, -EBADF, "lock the tree", NULL, "the helper reported success without the tree");
	}
	/* the locked clone; the tree we had went to the helper */
	close(*tree);
	*tree = locked;
	return 0;
}

int rootasm_tree_lock(int tree_fd, struct rootasm_error *e)
{
	struct mount_attr a = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
	_cleanup_close_ int t = -EBADF;
	int r;

	t = fcntl(tree_fd, F_DUPFD_CLOEXEC, 3);
	if (t < 0)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, errno, "lock the tree", NULL, "fd %d", tree_fd);
	/* as a user's tree: nothing in it runs set-uid or opens a device node, and that is locked */
	if (mount_setattr(t, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0)
		return ra_err(e, errno, -EBADF, "mount_setattr", "the tree", "nosuid,nodev before the lock");
	r = ra_tree_lock(NULL, &t, e);
	return r < 0 ? r : take_fd(t);
}
