// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Idmapped mounts: a user namespace from explicit ranges, then
 * mount_setattr(MOUNT_ATTR_IDMAP, userns_fd) on a detached mount.
 *
 *   userns   clone3(CLONE_NEWUSER) (child.h; the child holds the namespace) -> parent
 *            writes /proc/CHILD/{uid_map,gid_map}, opens /proc/CHILD/ns/user -> child exits
 *
 * A range "inside:outside:count" means what a uid_map line means: on-disk id
 * `inside` is seen through the mount as host id `outside`.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/nsfs.h>

#include "child.h"
#include "layout.h"
#include "util.h"

static int write_map(pid_t pid, const char *file, const struct ra_idrange *r, size_t n)
{
	char path[64], buf[RA_IDMAP_TEXT_MAX + 1];
	size_t used = 0;
	_cleanup_close_ int fd = -EBADF;

	for (size_t i = 0; i < n; i++) {
		int w = snprintf(buf + used, sizeof(buf) - used, "%u %u %u\n", r[i].inside, r[i].outside, r[i].count);

		/* the parser checked the size; this is only a guard */
		if (w < 0 || (size_t)w >= sizeof(buf) - used)
			return -E2BIG;
		used += w;
	}
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, used) != (ssize_t)used)
		return errno ? -errno : -EIO;
	return 0;
}

/* The user namespace child: clone3(CLONE_NEWUSER) made the namespace; it only has to live. */
static int userns_child(void *arg, int *step)
{
	return 0;
}

/* A user namespace with @m's mappings; caller owns the fd. */
int ra_userns_open(const struct ra_idmap *m, struct rootasm_error *e)
{
	static const char *const steps[] = { "hold", NULL };
	struct ra_child ch;
	char path[64];
	int r, nsfd = -EBADF;

	if (m->userns.path) {
		/* opened (and checked to be a user namespace) by the open stage */
		nsfd = m->userns.fd >= 0 ? fcntl(m->userns.fd, F_DUPFD_CLOEXEC, 3) : -1;
		if (nsfd < 0)
			return ra_err(e, m->userns.fd >= 0 ? errno : EBADF, -EBADF, "user namespace", m->userns.display,
				      m->userns.fd >= 0 ? NULL : "not opened");
		return nsfd;
	}
	r = ra_child_start(&ch, CLONE_NEWUSER, RA_CHILD_HOLD | RA_CHILD_FILES, userns_child, NULL, "user namespace", e);
	if (r < 0)
		return r;
	/* clone3 returned: the child's namespace exists; it waits until we let go */
	r = write_map(ch.pid, "uid_map", m->uids, m->nuids);
	if (r == 0)
		r = write_map(ch.pid, "gid_map", m->gids, m->ngids);
	if (r < 0) {
		snprintf(path, sizeof(path), "/proc/%d/%s", ch.pid, "{uid,gid}_map");
		r = ra_err(e, r, -EBADF, "write id map", path, NULL);
	} else {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", ch.pid);
		nsfd = open(path, O_RDONLY | O_CLOEXEC);
		if (nsfd < 0)
			r = ra_err(e, errno, -EBADF, "open", path, NULL);
	}
	if (r < 0) {
		ra_child_kill(&ch);
		return r;
	}
	r = ra_child_finish(&ch, "user namespace", steps, e);
	if (r < 0) {
		close(nsfd);
		return r;
	}
	return nsfd;
}

static int join_child(void *arg, int *step)
{
	*step = 0;
	return syscall(SYS_setns, *(int *)arg, CLONE_NEWUSER) < 0 ? -errno : 0;
}

/* The outside id of inside id 0 in the map file @path; -ENOENT when 0 is not mapped. */
static int map_zero(const char *path, unsigned int *ret)
{
	char buf[RA_IDMAP_TEXT_MAX + 1], *line, *save = NULL;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned int in, out, count;

		if (sscanf(line, "%u %u %u", &in, &out, &count) == 3 && in == 0 && count > 0) {
			*ret = out;
			return 0;
		}
	}
	return -ENOENT;
}

int ra_userns_root(int userns_fd, uid_t *ret_uid, gid_t *ret_gid, struct rootasm_error *e)
{
	struct ra_child_report rep = { 0, 0 };
	struct stat a, b;
	struct ra_child ch;
	unsigned int uid = 0, gid = 0;
	char path[64] = "";
	int r = 0, got, fd = userns_fd;

	if (!ra_is_userns(userns_fd))
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "user namespace", NULL, "the fd is not a user namespace");
	if (fstat(userns_fd, &a) < 0 || stat("/proc/self/ns/user", &b) < 0)
		return ra_err(e, errno, -EBADF, "stat", "user namespace", NULL);
	if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "user namespace", NULL,
				   "it is the assembler's own user namespace, not one of the caller's");
	r = ra_child_start(&ch, 0, RA_CHILD_HOLD | RA_CHILD_FILES, join_child, &fd, "join user namespace", e);
	if (r < 0)
		return r;
	/* the child reports once it is inside (or has failed), then waits for us: read its maps meanwhile */
	got = ra_child_read_report(&ch, &rep);
	if (got > 0 && rep.err == 0) {
		snprintf(path, sizeof(path), "/proc/%d/uid_map", ch.pid);
		r = map_zero(path, &uid);
		if (r == 0) {
			snprintf(path, sizeof(path), "/proc/%d/gid_map", ch.pid);
			r = map_zero(path, &gid);
		}
	}
	ra_child_kill(&ch);	/* it has nothing left to do */
	if (got < 0)
		return ra_err(e, got, -EBADF, "join user namespace", NULL, "reading the helper's report");
	if (got == 0)
		return ra_err(e, EIO, -EBADF, "join user namespace", NULL, "the helper ended without a report");
	if (rep.err)
		return ra_err_kind(e, rep.err == EPERM ? ROOTASM_ERROR_PERMISSION : ROOTASM_ERROR_RUNTIME, rep.err,
				   "join user namespace", NULL, "setns(CLONE_NEWUSER)");
	if (r < 0)
		return ra_err_kind(e, r == -ENOENT ? ROOTASM_ERROR_USAGE : ROOTASM_ERROR_RUNTIME, -r, "user namespace", path,
				   r == -ENOENT ? "it does not map id 0 (make it with uid 0 mapped, as unshare -r does)" : NULL);
	*ret_uid = uid;
	*ret_gid = gid;
	return 0;
}

int ra_idmap_apply(int mfd, const struct ra_idmap *m, bool recursive, const char *what,
		   struct rootasm_error *e)
{
	_cleanup_close_ int ns = -EBADF;
	struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP };

	if (!m->set)
		return 0;
	ns = ra_userns_open(m, e);
	if (ns < 0)
		return ns;
	a.userns_fd = ns;
	if (mount_setattr(mfd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a, sizeof(a)) < 0)
		return ra_err(e, errno, -EBADF, "mount_setattr MOUNT_ATTR_IDMAP", what,
			      errno == EPERM ? "an idmapped mount can be idmapped again only through "
					       "open_tree_attr() on Linux 6.15 or the kernel/ series" :
			      errno == EINVAL ? "the filesystem may not support idmapped mounts" : NULL);
	return 0;
}
