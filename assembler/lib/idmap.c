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
#include <sys/mount.h>
#include <sys/wait.h>

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
