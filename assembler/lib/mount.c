// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Building blocks, each mapped to its syscalls:
 *
 *   tmpfs   fsopen("tmpfs") -> fsconfig(size/mode/nr_inodes) -> CMD_CREATE -> fsmount
 *   image   open(file) -> LOOP_CTL_GET_FREE -> open(/dev/loopN) -> LOOP_CONFIGURE(ro, autoclear)
 *           -> fsopen(squashfs|erofs) -> fsconfig(source=/dev/loopN, ro) -> CMD_CREATE -> fsmount
 *   creds   fork -> setgroups/setresgid/setresuid/capset -> fsconfig(SET_FLAG "override_creds")
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
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <grp.h>
#include <linux/loop.h>

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
		return ra_err(e, errno, -EBADF, "open", "/dev/loop-control", NULL);
	snprintf((char *)cfg.info.lo_file_name, LO_NAME_SIZE, "%s", path);
	/* Another process may take the free device between GET_FREE and CONFIGURE. */
	for (int tries = 0; tries < 64; tries++) {
		_cleanup_close_ int lfd = -EBADF;
		int nr = ioctl(ctl, LOOP_CTL_GET_FREE);

		if (nr < 0)
			return ra_err(e, errno, -EBADF, "LOOP_CTL_GET_FREE", path, NULL);
		snprintf(dev, size, "/dev/loop%d", nr);
		lfd = open(dev, O_RDONLY | O_CLOEXEC);
		if (lfd < 0 && errno == ENOENT) {
			usleep(1000);	/* the node may not be there yet */
			continue;
		}
		if (lfd < 0)
			return ra_err(e, errno, -EBADF, "open", dev, NULL);
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0)
			return take_fd(lfd);
		if (errno != EBUSY)
			return ra_err(e, errno, -EBADF, "LOOP_CONFIGURE", path, "%s", dev);
	}
	return ra_err(e, EBUSY, -EBADF, "LOOP_CONFIGURE", path, "no free loop device");
}

int ra_image_mount(const char *path, enum ra_fstype type, uint64_t attrs, struct rootasm_error *e)
{
	_cleanup_close_ int fd = -EBADF, lfd = -EBADF, fsfd = -EBADF;
	char dev[64];
	const char *fs;
	int mfd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return ra_err(e, errno, -EBADF, "open image", path, NULL);
	if (type == RA_FS_AUTO)
		type = detect(fd);
	if (type == RA_FS_AUTO)
		return ra_err(e, EINVAL, -EBADF, "open image", path, "neither squashfs nor erofs");
	fs = type == RA_FS_SQUASHFS ? "squashfs" : "erofs";
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

struct cred_report {
	int step;
	int err;
};

static const char *const cred_steps[] = {
	"setgroups", "prctl", "setresgid", "setresuid", "capset", "fsconfig override_creds",
};

static int become(const struct ra_cred_spec *c, int *step)
{
	cap_t caps;
	int r;

	*step = 0;
	if (setgroups(c->ngroups, c->groups) < 0)
		return -errno;
	*step = 1;
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return -errno;
	*step = 2;
	if (setresgid(c->gid, c->gid, c->gid) < 0)
		return -errno;
	*step = 3;
	if (setresuid(c->uid, c->uid, c->uid) < 0)
		return -errno;
	*step = 4;
	caps = cap_init();
	if (!caps)
		return -ENOMEM;
	for (cap_value_t v = 0; v < 64; v++) {
		if (!(c->caps & (1ULL << v)))
			continue;
		if (cap_set_flag(caps, CAP_EFFECTIVE, 1, &v, CAP_SET) < 0 ||
		    cap_set_flag(caps, CAP_PERMITTED, 1, &v, CAP_SET) < 0) {
			cap_free(caps);
			return -EINVAL;
		}
	}
	r = cap_set_proc(caps) < 0 ? -errno : 0;
	cap_free(caps);
	return r;
}

int ra_set_override_creds(int fsfd, const struct ra_cred_spec *c, struct rootasm_error *e)
{
	_cleanup_close_ int rd = -EBADF, wr = -EBADF;
	struct cred_report rep = { 0, 0 };
	int pipefd[2], status;
	pid_t pid;
	char what[96];

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return ra_err(e, errno, -EBADF, "pipe", NULL, NULL);
	rd = pipefd[0];
	wr = pipefd[1];
	pid = fork();
	if (pid < 0)
		return ra_err(e, errno, -EBADF, "fork", NULL, NULL);
	if (pid == 0) {
		int r = become(c, &rep.step);

		if (r == 0) {
			rep.step = 5;
			r = fsconfig(fsfd, FSCONFIG_SET_FLAG, "override_creds", NULL, 0) < 0 ? -errno : 0;
		}
		rep.err = -r;
		(void)!write(wr, &rep, sizeof(rep));
		_exit(r ? 1 : 0);
	}
	close_fdp(&wr);
	wr = -EBADF;
	if (read(rd, &rep, sizeof(rep)) != sizeof(rep))
		rep.err = EPIPE, rep.step = 5;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rep.err) {
		snprintf(what, sizeof(what), "override_creds %s", cred_steps[rep.step]);
		return ra_err(e, rep.err, rep.step == 5 ? fsfd : -EBADF, what, NULL,
			      "credential uid %u gid %u", (unsigned int)c->uid, (unsigned int)c->gid);
	}
	return 0;
}
