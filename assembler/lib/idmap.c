// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Idmapped mounts: a user namespace from explicit ranges, then
 * mount_setattr(MOUNT_ATTR_IDMAP, userns_fd) on a detached mount.
 *
 *   userns   fork -> child: unshare(CLONE_NEWUSER), wait -> parent writes
 *            /proc/CHILD/{uid_map,gid_map}, opens /proc/CHILD/ns/user -> child exits
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

#include "layout.h"
#include "util.h"

static int write_map(pid_t pid, const char *file, const struct ra_idrange *r, size_t n)
{
	char path[64], buf[RA_MAX_IDRANGES * 40];
	size_t used = 0;
	_cleanup_close_ int fd = -EBADF;

	for (size_t i = 0; i < n; i++)
		used += snprintf(buf + used, sizeof(buf) - used, "%u %u %u\n", r[i].inside, r[i].outside, r[i].count);
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, used) != (ssize_t)used)
		return -errno;
	return 0;
}

/* A user namespace with @m's mappings; caller owns the fd. */
int ra_userns_open(const struct ra_idmap *m, struct rootasm_error *e)
{
	_cleanup_close_ int rd = -EBADF, wr = -EBADF;
	int p[2], r, nsfd = -EBADF, status;
	char path[64], c = 0;
	pid_t pid;

	if (m->userns) {
		nsfd = open(m->userns, O_RDONLY | O_CLOEXEC);
		return nsfd < 0 ? ra_err(e, errno, -EBADF, "open user namespace", m->userns, NULL) : nsfd;
	}
	if (pipe2(p, O_CLOEXEC) < 0)
		return ra_err(e, errno, -EBADF, "pipe", NULL, NULL);
	rd = p[0];
	wr = p[1];
	pid = fork();
	if (pid < 0)
		return ra_err(e, errno, -EBADF, "fork", NULL, NULL);
	if (pid == 0) {
		close(wr);
		if (unshare(CLONE_NEWUSER) < 0)
			_exit(1);
		/* hold the namespace until the parent has it open */
		(void)!read(rd, &c, 1);
		_exit(0);
	}
	close_fdp(&rd);
	rd = -EBADF;
	/* the child's unshare() happens at its own pace: wait for its ns to differ */
	for (int i = 0; i < 2000; i++) {
		char a[64], b[64];
		ssize_t la, lb;

		snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
		la = readlink(path, a, sizeof(a));
		lb = readlink("/proc/self/ns/user", b, sizeof(b));
		if (la > 0 && lb > 0 && (la != lb || memcmp(a, b, la)))
			break;
		usleep(50);
	}
	r = write_map(pid, "uid_map", m->uids, m->nuids);
	if (r == 0)
		r = write_map(pid, "gid_map", m->gids, m->ngids);
	if (r < 0) {
		r = ra_err(e, r, -EBADF, "write id map", path, "uid/gid ranges");
	} else {
		nsfd = open(path, O_RDONLY | O_CLOEXEC);
		if (nsfd < 0)
			r = ra_err(e, errno, -EBADF, "open", path, NULL);
	}
	close_fdp(&wr);
	wr = -EBADF;
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return r < 0 ? r : nsfd;
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
