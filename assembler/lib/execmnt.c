// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * exec: the mounts the container's init (execinit.c) adds to the tree (sandbox.h).
 *
 * Made before the tree arrives, detached (fsopen/fsmount): /proc, for each of
 * its OCI masked paths that it has a clone of the host's /dev/null (a file) or
 * a read-only empty tmpfs (a directory), and a minimal /dev as crun's default
 * config has it (a tmpfs with null zero full random urandom tty and its links,
 * devpts, shm, mqueue). Attached once the tree is "/": /proc (nosuid, nodev,
 * noexec) with those masks and the read-only paths (read-only binds of
 * themselves); /dev when the tree has no usable /dev/null. System calls only:
 * this runs in the init.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "sandbox.h"
#include "util.h"

/* OCI's maskedPaths and readonlyPaths (crun spec), the /proc part: rootasm mounts no /sys. */
static const char *const masked_files[] = {
	"/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
	"/proc/sched_debug",
};
static const char *const masked_dirs[] = { "/proc/acpi", "/proc/asound", "/proc/scsi" };
static const char *const readonly_paths[] = { "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger" };

_Static_assert(ARRAY_SIZE(masked_files) == RA_NMASK, "RA_NMASK in sandbox.h");
_Static_assert(ARRAY_SIZE(masked_dirs) == RA_NMASK_DIRS, "RA_NMASK_DIRS in sandbox.h");

static int mount_at(int mfd, const char *where)
{
	int r = move_mount(mfd, "", AT_FDCWD, where, MOVE_MOUNT_F_EMPTY_PATH);

	return r < 0 ? -errno : 0;
}

/* A fresh detached mount of @fs with @opts ("key=value" pairs or flags, NULL-terminated). */
static int fresh(const char *fs, const char *const *opts, unsigned int attrs)
{
	int fsfd = fsopen(fs, FSOPEN_CLOEXEC), mfd;

	if (fsfd < 0)
		return -errno;
	for (; opts && *opts; opts++) {
		char key[32];
		const char *eq = strchr(*opts, '=');
		size_t kl = eq ? (size_t)(eq - *opts) : strlen(*opts);
		int r;

		if (kl >= sizeof(key)) {
			close(fsfd);
			return -EINVAL;
		}
		memcpy(key, *opts, kl);
		key[kl] = '\0';
		r = eq ? fsconfig(fsfd, FSCONFIG_SET_STRING, key, eq + 1, 0) : fsconfig(fsfd, FSCONFIG_SET_FLAG, key, NULL, 0);
		if (r < 0) {
			r = -errno;
			close(fsfd);
			return r;
		}
	}
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int r = -errno;

		close(fsfd);
		return r;
	}
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, attrs);
	mfd = mfd < 0 ? -errno : mfd;
	close(fsfd);
	return mfd;
}

void ra_premade_init(struct ra_premade *m)
{
	m->proc = m->dev = m->pts = m->shm = m->mqueue = -EBADF;
	for (size_t i = 0; i < ARRAY_SIZE(m->file_masks); i++)
		m->file_masks[i] = -EBADF;
	for (size_t i = 0; i < ARRAY_SIZE(m->dir_masks); i++)
		m->dir_masks[i] = -EBADF;
}

void ra_premade_close(struct ra_premade *m)
{
	close_fdp(&m->proc);
	for (size_t i = 0; i < ARRAY_SIZE(m->file_masks); i++)
		close_fdp(&m->file_masks[i]);
	for (size_t i = 0; i < ARRAY_SIZE(m->dir_masks); i++)
		close_fdp(&m->dir_masks[i]);
	close_fdp(&m->dev);
	close_fdp(&m->pts);
	close_fdp(&m->shm);
	close_fdp(&m->mqueue);
	ra_premade_init(m);
}

/* The tmpfs of /dev, filled: its nodes, links and mount points. */
static int fresh_dev(void)
{
	static const struct {
		const char *name;
		unsigned int maj, min;
	} nodes[] = {
		{ "null", 1, 3 }, { "zero", 1, 5 }, { "full", 1, 7 }, { "random", 1, 8 }, { "urandom", 1, 9 },
		{ "tty", 5, 0 },
	};
	static const char *const links[][2] = {
		{ "/proc/self/fd", "fd" }, { "/proc/self/fd/0", "stdin" }, { "/proc/self/fd/1", "stdout" },
		{ "/proc/self/fd/2", "stderr" }, { "pts/ptmx", "ptmx" },
	};
	int dfd = fresh("tmpfs", (const char *const[]){ "mode=755", "size=65536k", NULL },
			MOUNT_ATTR_NOSUID | MOUNT_ATTR_STRICTATIME), r = 0;

	if (dfd < 0)
		return dfd;
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]) && r == 0; i++)
		if (mknodat(dfd, nodes[i].name, S_IFCHR | 0666, makedev(nodes[i].maj, nodes[i].min)) < 0 ||
		    fchmodat(dfd, nodes[i].name, 0666, 0) < 0)
			r = -errno;
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]) && r == 0; i++)
		if (symlinkat(links[i][0], dfd, links[i][1]) < 0)
			r = -errno;
	if (r == 0 && (mkdirat(dfd, "pts", 0755) < 0 || mkdirat(dfd, "shm", 01777) < 0 ||
		       mkdirat(dfd, "mqueue", 0755) < 0))
		r = -errno;
	if (r < 0) {
		close(dfd);
		return r;
	}
	return dfd;
}

/* Whether the detached @proc has @path ("/proc/NAME"; a directory when @dir), as stat() of it attached says. */
static bool proc_has(int proc, const char *path, bool dir)
{
	struct stat st;

	return fstatat(proc, path + strlen("/proc/"), &st, 0) == 0 && (!dir || S_ISDIR(st.st_mode));
}

void ra_premake(struct ra_premade *m, bool privileged)
{
	m->proc = fresh("proc", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	/* the masks of the entries this very /proc has (the one attached later); the others stay -EBADF */
	for (size_t i = 0; !privileged && m->proc >= 0 && i < ARRAY_SIZE(m->file_masks); i++) {
		if (!proc_has(m->proc, masked_files[i], false))
			continue;
		m->file_masks[i] = open_tree(AT_FDCWD, "/dev/null", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (m->file_masks[i] < 0)
			m->file_masks[i] = -errno;	/* reported where it is used, whatever it is */
	}
	for (size_t i = 0; !privileged && m->proc >= 0 && i < ARRAY_SIZE(m->dir_masks); i++)
		if (proc_has(m->proc, masked_dirs[i], true))
			m->dir_masks[i] = fresh("tmpfs", (const char *const[]){ "size=0", "mode=555", NULL },
						MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
						MOUNT_ATTR_NOEXEC);
	m->dev = fresh_dev();
	m->pts = fresh("devpts", (const char *const[]){ "newinstance", "ptmxmode=0666", "mode=0620", NULL },
		       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	m->shm = fresh("tmpfs", (const char *const[]){ "mode=1777", "size=65536k", NULL },
		       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	/* POSIX message queues: where the kernel has them (CONFIG_POSIX_MQUEUE) */
	m->mqueue = fresh("mqueue", NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
}

/* A premade mount moved to @where (an error it had is returned now). */
int ra_mount_premade(int *mfd, const char *where)
{
	int r = *mfd < 0 ? *mfd : mount_at(*mfd, where);

	close_fdp(mfd);
	*mfd = -EBADF;
	return r;
}

int ra_mask_proc(struct ra_premade *m)
{
	int r;

	for (size_t i = 0; i < RA_NMASK; i++) {
		if (m->file_masks[i] == -EBADF)	/* this /proc has no such entry: none made */
			continue;
		r = ra_mount_premade(&m->file_masks[i], masked_files[i]);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < RA_NMASK_DIRS; i++) {
		if (m->dir_masks[i] == -EBADF)
			continue;
		r = ra_mount_premade(&m->dir_masks[i], masked_dirs[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

int ra_readonly_proc(void)
{
	struct mount_attr ro = {
		.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
	};

	for (size_t i = 0; i < sizeof(readonly_paths) / sizeof(readonly_paths[0]); i++) {
		int fd = open_tree(AT_FDCWD, readonly_paths[i], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE), r;

		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0)
			return -errno;
		r = mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof(ro)) < 0 ? -errno : 0;
		if (r == 0)
			r = mount_at(fd, readonly_paths[i]);
		close(fd);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The tree's /dev/null works: a character device 1:3 that opens (a nodev mount refuses). */
bool ra_dev_usable(void)
{
	struct stat st;
	int fd;

	if (stat("/dev/null", &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
		return false;
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* The minimal /dev, attached. */
int ra_make_dev(struct ra_premade *m)
{
	int r;

	if (mkdir("/dev", 0755) < 0 && errno != EEXIST)
		return -errno;
	r = ra_mount_premade(&m->dev, "/dev");
	if (r == 0)
		r = ra_mount_premade(&m->pts, "/dev/pts");
	if (r == 0)
		r = ra_mount_premade(&m->shm, "/dev/shm");
	if (r == 0)
		r = m->mqueue == -ENODEV ? 0 : ra_mount_premade(&m->mqueue, "/dev/mqueue");
	return r;
}
