// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A tree locked as the kernel locks the mounts it copies into a less
 * privileged mount namespace (fs/namespace.c, lock_mnt_tree()): every mount's
 * read-only, nodev, nosuid, noexec and atime flags become MNT_LOCK_*, which
 * mount_setattr() and mount -o remount refuse to clear (EPERM) whoever asks,
 * even a caller with every capability in its own user and mount namespace;
 * the mounts below the root become MNT_LOCKED (no umount reveals what they
 * cover). A detached mount is never copied that way, so we make it be:
 *
 *   helper (clone3 CLONE_NEWNS, our fd table):
 *     "/" rprivate (nothing we do here propagates to the host)
 *     move_mount(tree) over "/"; fchdir(tree)
 *     pivot_root(".", "."); umount2(".", MNT_DETACH)   (the namespace is the tree alone,
 *                                                        so the copy below copies only it;
 *                                                        a root without a parent, as an
 *                                                        initramfs is, stays: then the
 *                                                        copy takes the whole namespace)
 *     unshare(CLONE_NEWUSER | CLONE_NEWNS)              the copy: lock_mnt_tree()
 *     open_tree(".", OPEN_TREE_CLONE | AT_RECURSIVE)    a detached clone keeps the locks
 *     dup3() onto the slot the parent reserved
 *
 * The helper's namespaces die with it; the clone is ours. The tree we were
 * given is consumed (it was moved into the helper's namespace): the caller
 * takes the locked clone in its place. A receiver may still add attributes,
 * never clear one; an idmap cannot be changed on an idmapped mount, and a
 * receiver that is not CAP_SYS_ADMIN over a superblock's user namespace
 * cannot idmap its mounts at all.
 */
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "child.h"
#include "lock.h"
#include "sysmnt.h"
#include "util.h"

struct lock_arg {
	int tree;	/* the tree (moved into the helper's namespace) */
	int slot;	/* the fd number the locked clone is dup3()ed onto */
};

enum { L_PRIVATE, L_ATTACH, L_PIVOT, L_USERNS, L_CLONE, L_SLOT };
static const char *const lock_steps[] = {
	"make / private", "attach the tree over /", "pivot_root", "unshare a user and mount namespace",
	"open_tree(OPEN_TREE_CLONE) of the copy", "dup3", NULL,
};

static int lock_child(void *arg, int *step)
{
	const struct lock_arg *a = arg;
	int fd;

	*step = L_PRIVATE;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	*step = L_ATTACH;
	if (move_mount(a->tree, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH) < 0 || fchdir(a->tree) < 0)
		return -errno;
	*step = L_PIVOT;
	if (syscall(SYS_pivot_root, ".", ".") == 0) {
		if (umount2(".", MNT_DETACH) < 0)
			return -errno;
	} else if (errno != EINVAL) {
		/* EINVAL: a root without a parent (an initramfs), or a shared tree: copy it all */
		return -errno;
	}
	*step = L_USERNS;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return -errno;
	*step = L_CLONE;
	fd = open_tree(AT_FDCWD, ".", OPEN_TREE_CLONE | AT_RECURSIVE | OPEN_TREE_CLOEXEC);
	if (fd < 0)
		return -errno;
	*step = L_SLOT;
	if (dup3(fd, a->slot, O_CLOEXEC) < 0)
		return -errno;
	close(fd);
	return 0;
}

int ra_tree_lock(int *tree, struct rootasm_error *e)
{
	_cleanup_close_ int slot = -EBADF;
	struct lock_arg a = { .tree = *tree };
	struct ra_child ch;
	struct stat st;
	int r;

	/* a number in our fd table for the helper to put the clone at (it shares the table) */
	slot = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (slot < 0)
		return ra_err(e, errno, -EBADF, "open", "/dev/null", "a slot for the locked tree");
	a.slot = slot;
	r = ra_child_start(&ch, CLONE_NEWNS, RA_CHILD_FILES, lock_child, &a, "lock the tree", e);
	if (r < 0)
		return r;
	r = ra_child_finish(&ch, "lock the tree:", lock_steps, e);
	if (r < 0)
		return r;
	/* the slot is the locked clone now (a directory, not /dev/null); the tree we had went to the helper */
	if (fstat(slot, &st) < 0 || !S_ISDIR(st.st_mode))
		return ra_err(e, EIO, -EBADF, "lock the tree", NULL, "the helper reported success without the tree");
	close(*tree);
	*tree = take_fd(slot);
	return 0;
}

int rootasm_tree_lock(int tree_fd, struct rootasm_error *e)
{
	_cleanup_close_ int t = -EBADF;
	int r;

	t = fcntl(tree_fd, F_DUPFD_CLOEXEC, 3);
	if (t < 0)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, errno, "lock the tree", NULL, "fd %d", tree_fd);
	r = ra_tree_lock(&t, e);
	return r < 0 ? r : take_fd(t);
}
