// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Building blocks, each mapped to its syscalls:
 *
 *   tmpfs   fsopen("tmpfs") -> fsconfig(size/mode/nr_inodes) -> CMD_CREATE -> fsmount
 *   image   erofs: fsopen(erofs) -> fsconfig(source=/proc/thread-self/fd/N of the image fd, ro) -> CMD_CREATE
 *           -> fsmount (Linux 6.12: erofs on a regular file); where that fails, and for squashfs:
 *           (the image fd from the open stage) -> LOOP_CTL_GET_FREE -> open(/dev/loopN) -> LOOP_CONFIGURE(ro, autoclear)
 *           -> fsopen(squashfs|erofs) -> fsconfig(source=/dev/loopN, ro) -> CMD_CREATE -> fsmount
 *   creds   clone3 (child.h) -> setgroups/setresgid/setresuid/capset (raw) -> fsconfig(SET_FLAG "override_creds")
 *
 * The loop fd is closed as soon as the superblock holds the device: with
 * LO_FLAGS_AUTOCLEAR the device is released when the last mount goes, and
 * released at once when anything before that fails.
 */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/loop.h>

#include "child.h"
#include "sysmnt.h"
#include "util.h"

static int fs_create(int fsfd, const char *what, const char *path, struct rootasm_error *e)
{
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return ra_err(e, errno, fsfd, what, path, NULL);
	return 0;
}

int ra_tmpfs_mount(const struct ra_tmpfs *t, uint64_t attrs, struct rootasm_error *e)
{
	_cleanup_close_ int fsfd = -EBADF;
	char mode[16];
	int mfd;

	fsfd = fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return ra_err(e, errno, -EBADF, "fsopen", "tmpfs", NULL);
	if (t && t->size && fsconfig(fsfd, FSCONFIG_SET_STRING, "size", t->size, 0) < 0)
		return ra_err(e, errno, fsfd, "fsconfig size", t->size, NULL);
	if (t && t->nr_inodes && fsconfig(fsfd, FSCONFIG_SET_STRING, "nr_inodes", t->nr_inodes, 0) < 0)
		return ra_err(e, errno, fsfd, "fsconfig nr_inodes", t->nr_inodes, NULL);
	if (t && t->has_mode) {
		snprintf(mode, sizeof(mode), "%o", t->mode);
		if (fsconfig(fsfd, FSCONFIG_SET_STRING, "mode", mode, 0) < 0)
			return ra_err(e, errno, fsfd, "fsconfig mode", mode, NULL);
	}
	mfd = fs_create(fsfd, "create tmpfs", NULL, e);
	if (mfd < 0)
		return mfd;
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, attrs);
	if (mfd < 0)
		return ra_err(e, errno, fsfd, "fsmount", "tmpfs", NULL);
	return mfd;
}

static enum ra_fstype detect(int fd)
{
	unsigned char b[4];

	if (pread(fd, b, 4, 0) == 4 && !memcmp(b, "hsqs", 4))
		return RA_FS_SQUASHFS;
	/* EROFS_SUPER_MAGIC_V1 0xE0F5E1E2, little endian, at offset 1024 */
	if (pread(fd, b, 4, 1024) == 4 && b[0] == 0xe2 && b[1] == 0xe1 && b[2] == 0xf5 && b[3] == 0xe0)
		return RA_FS_EROFS;
	return RA_FS_AUTO;
}

/* Returns the loop device fd, caller owns it; its path is written to @dev. */
static int loop_attach(int backing, const char *path, char *dev, size_t size, struct rootasm_error *e)
{
	_cleanup_close_ int ctl = -EBADF;
	struct loop_config cfg = {
		.fd = backing,
		.block_size = 0,
		.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR,
	};

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return ra_err_kind(e, errno == EACCES || errno == EPERM ? ROOTASM_ERROR_PERMISSION : ROOTASM_ERROR_RUNTIME,
				   errno, "open", "/dev/loop-control", NULL);
	snprintf((char *)cfg.info.lo_file_name, LO_NAME_SIZE, "%s", path);
	/* Another process may take the free device between GET_FREE and CONFIGURE: ask again. */
	for (int tries = 0; tries < 64; tries++) {
		_cleanup_close_ int lfd = -EBADF;
		int nr = ioctl(ctl, LOOP_CTL_GET_FREE);

		if (nr < 0)
			return ra_err(e, errno, -EBADF, "LOOP_CTL_GET_FREE", path, NULL);
		snprintf(dev, size, "/dev/loop%d", nr);
		lfd = open(dev, O_RDONLY | O_CLOEXEC);
		if (lfd < 0 && errno == ENOENT)
			continue;	/* removed again by another process before we opened it */
		if (lfd < 0)
			return ra_err(e, errno, -EBADF, "open", dev, NULL);
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0)
			return take_fd(lfd);
		if (errno == EPERM)
			return ra_err_kind(e, ROOTASM_ERROR_PERMISSION, errno, "LOOP_CONFIGURE", path,
					   "loop devices need CAP_SYS_ADMIN in the initial user namespace");
		if (errno != EBUSY)
			return ra_err(e, errno, -EBADF, "LOOP_CONFIGURE", path, "%s", dev);
	}
	return ra_err(e, EBUSY, -EBADF, "LOOP_CONFIGURE", path, "no free loop device after 64 tries");
}

/*
 * An erofs image mounted on its file itself (Linux 6.12, EROFS_FS_BACKED_BY_FILE):
 * no loop device, and the superblock reads through the image file's page cache,
 * which every mount of the image shares. erofs opens "source" by name; the name
 * given is the already opened image's own (its /proc/thread-self/fd link), so
 * the file mounted is the one the open stage judged, never the path again.
 * Returns -ENOTBLK, saying nothing, wherever this does not work (a kernel
 * without it, an image on tmpfs, no /proc, no privilege): the caller takes a
 * loop device, and its errors are the ones reported.
 */
static int erofs_file_mount(int fd, const char *path, uint64_t attrs, struct rootasm_error *e)
{
	_cleanup_close_ int fsfd = -EBADF;
	char src[64];
	int mfd;

	fsfd = fsopen("erofs", FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return -ENOTBLK;
	snprintf(src, sizeof(src), "/proc/thread-self/fd/%d", fd);
	if (fsconfig(fsfd, FSCONFIG_SET_STRING, "source", src, 0) < 0 ||
	    fsconfig(fsfd, FSCONFIG_SET_FLAG, "ro", NULL, 0) < 0 ||
	    fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -ENOTBLK;
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, attrs | MOUNT_ATTR_RDONLY);
	if (mfd < 0)
		return ra_err(e, errno, fsfd, "fsmount", path, NULL);
	return mfd;
}

int ra_image_mount(int fd, const char *path, enum ra_fstype type, uint64_t attrs, struct rootasm_error *e)
{
	_cleanup_close_ int lfd = -EBADF, fsfd = -EBADF;
	char dev[64];
	const char *fs;
	int mfd;

	if (type == RA_FS_AUTO)
		type = detect(fd);
	if (type == RA_FS_AUTO)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "open image", path, "neither squashfs nor erofs");
	fs = type == RA_FS_SQUASHFS ? "squashfs" : "erofs";
	if (type == RA_FS_EROFS) {
		mfd = erofs_file_mount(fd, path, attrs, e);
		if (mfd != -ENOTBLK)
			return mfd;
	}
	fsfd = fsopen(fs, FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return ra_err(e, errno, -EBADF, "fsopen", fs, NULL);
	lfd = loop_attach(fd, path, dev, sizeof(dev), e);
	if (lfd < 0)
		return lfd;
	if (fsconfig(fsfd, FSCONFIG_SET_STRING, "source", dev, 0) < 0)
		return ra_err(e, errno, fsfd, "fsconfig source", path, NULL);
	if (fsconfig(fsfd, FSCONFIG_SET_FLAG, "ro", NULL, 0) < 0)
		return ra_err(e, errno, fsfd, "fsconfig ro", path, NULL);
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return ra_err(e, errno, fsfd, fs, path, NULL);
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, attrs | MOUNT_ATTR_RDONLY);
	if (mfd < 0)
		return ra_err(e, errno, fsfd, "fsmount", path, NULL);
	return mfd;
}

/*
 * The override_creds child: it becomes the credential with raw system calls
 * only (it runs right after clone3, see child.h), then sets the flag on the
 * fs_context it shares with us. overlayfs records the credential of the task
 * that sets the option.
 */
struct creds_arg {
	int fsfd;
	const struct ra_cred_spec *c;
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];
};

static const char *const cred_steps[] = {
	"setgroups", "prctl", "setresgid", "setresuid", "capset", "fsconfig", "setns", "setgroups in the user namespace",
	NULL,
};

static int creds_child(void *p, int *step)
{
	struct creds_arg *a = p;
	bool ns = a->c->userns_fd >= 0;

	*step = 0;
	/* in a caller's namespace: none of ours go along; its own are set once inside */
	if (syscall(SYS_setgroups, ns ? 0 : a->c->ngroups, a->c->groups) < 0)
		return -errno;
	*step = 1;
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return -errno;
	if (ns) {
		/* joining a user namespace gives every capability in it; the ids below are its ids */
		*step = 6;
		if (syscall(SYS_setns, a->c->userns_fd, CLONE_NEWUSER) < 0)
			return -errno;
		*step = 7;
		if (a->c->ngroups && syscall(SYS_setgroups, a->c->ngroups, a->c->groups) < 0)
			return -errno;
	}
	*step = 2;
	if (syscall(SYS_setresgid, a->c->gid, a->c->gid, a->c->gid) < 0)
		return -errno;
	*step = 3;
	if (syscall(SYS_setresuid, a->c->uid, a->c->uid, a->c->uid) < 0)
		return -errno;
	*step = 4;
	if (syscall(SYS_capset, &a->hdr, a->data) < 0)
		return -errno;
	*step = 5;
	if (fsconfig(a->fsfd, FSCONFIG_SET_FLAG, "override_creds", NULL, 0) < 0)
		return -errno;
	return 0;
}

int ra_set_override_creds(int fsfd, const struct ra_cred_spec *c, struct rootasm_error *e)
{
	struct creds_arg a = {
		.fsfd = fsfd,
		.c = c,
		.hdr = { .version = _LINUX_CAPABILITY_VERSION_3 },
		.data = {
			{ .effective = (uint32_t)c->caps, .permitted = (uint32_t)c->caps },
			{ .effective = (uint32_t)(c->caps >> 32), .permitted = (uint32_t)(c->caps >> 32) },
		},
	};
	struct ra_child ch;
	int r;

	r = ra_child_start(&ch, 0, RA_CHILD_FILES, creds_child, &a, "override_creds", e);
	if (r < 0)
		return r;
	r = ra_child_finish(&ch, "override_creds", cred_steps, e);
	if (r < 0 && e) {
		/* the kernel's own message, when it was fsconfig that refused */
		if (!strcmp(e->op, "override_creds fsconfig"))
			ra_fs_messages(fsfd, e->msg, sizeof(e->msg));
		if (!e->msg[0])
			snprintf(e->msg, sizeof(e->msg), "credential uid %u gid %u", (unsigned int)c->uid,
				 (unsigned int)c->gid);
	}
	return r;
}
