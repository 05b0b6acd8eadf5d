// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading files rootasm is given (layouts, policies, OCI documents): whole,
 * with a size cap, only from regular files of real filesystems; and what an
 * fd is (its path, whether it is a user namespace, its mount). Shared by the
 * library and the private helper library of rootasmd and the CLI
 * (CMakeLists.txt, rootasm_io).
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <linux/nsfs.h>

#include "open.h"
#include "uapi.h"
#include "util.h"

/* ------------------------------------------------------- what an fd is (util.h) */

/* "/proc/self/fd/N" of @fd in @p */
#define PROC_FD(p, fd)	snprintf((p), sizeof(p), "/proc/self/fd/%d", (fd))

int ra_reopen(int fd, int flags)
{
	char p[32];

	PROC_FD(p, fd);
	return open(p, flags | O_CLOEXEC | O_NOCTTY);
}

ssize_t ra_fd_path(int fd, char *buf, size_t size)
{
	char p[32];
	ssize_t n;

	PROC_FD(p, fd);
	n = readlink(p, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

bool ra_is_userns(int fd)
{
	struct statfs sf;

	return fd >= 0 && fstatfs(fd, &sf) == 0 && sf.f_type == NSFS_MAGIC && ioctl(fd, NS_GET_NSTYPE) == CLONE_NEWUSER;
}

uint64_t ra_fd_mount_id(int fd, bool *is_root)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, RA_STATX_MNT_ID_UNIQUE, &sx) < 0 ||
	    !(sx.stx_mask & RA_STATX_MNT_ID_UNIQUE))
		return 0;
	if (is_root)
		*is_root = (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	return sx.stx_mnt_id;
}

/* ----------------------------------------------------------- reading files */

const char *ra_type_name(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFDIR:
		return "a directory";
	case S_IFREG:
		return "a regular file";
	case S_IFLNK:
		return "a symbolic link";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	default:
		return "of unknown type";
	}
}

/*
 * The one read loop: all of @fd into a new NUL-terminated buffer. More than
 * @max bytes: -EFBIG, or with @cut the first @max and no error.
 */
static int read_loop(int fd, size_t max, bool cut, void (*feed)(void *ud, const void *p, size_t n), void *ud,
		     char **ret, size_t *ret_len)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap + 1);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (cut && len == max)
			break;
		if (len == cap) {
			char *b;

			if (cap > max) {
				free(buf);
				return -EFBIG;
			}
			cap *= 2;
			b = realloc(buf, cap + 1);
			if (!b) {
				free(buf);
				return -ENOMEM;
			}
			buf = b;
		}
		n = read(fd, buf + len, (cut && max - len < cap - len ? max : cap) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = -errno;

			free(buf);
			return r;
		}
		if (n == 0)
			break;
		if (feed)
			feed(ud, buf + len, n);
		len += n;
	}
	if (len > max) {
		free(buf);
		return -EFBIG;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

int ra_read_all(int fd, size_t max, void (*feed)(void *ud, const void *p, size_t n), void *ud, char **ret,
		size_t *ret_len)
{
	return read_loop(fd, max, false, feed, ud, ret, ret_len);
}

int ra_read_upto(int fd, size_t max, char **ret, size_t *ret_len)
{
	return read_loop(fd, max, true, NULL, NULL, ret, ret_len);
}

/*
 * Filesystems whose "regular files" are interfaces to the kernel, not data: a
 * read may block (/proc/kmsg), consume something (the kernel log) or trigger
 * an action. A layout or a policy is never read from one of them.
 */
static const struct {
	unsigned long magic;
	const char *name;
} pseudo_fs[] = {
	{ PROC_SUPER_MAGIC, "procfs" },		{ SYSFS_MAGIC, "sysfs" },
	{ DEBUGFS_MAGIC, "debugfs" },		{ TRACEFS_MAGIC, "tracefs" },
	{ SECURITYFS_MAGIC, "securityfs" },	{ CGROUP_SUPER_MAGIC, "cgroupfs" },
	{ CGROUP2_SUPER_MAGIC, "cgroup2" },	{ BPF_FS_MAGIC, "bpffs" },
	{ 0x62656570, "configfs" },		{ EFIVARFS_MAGIC, "efivarfs" },
	{ PSTOREFS_MAGIC, "pstore" },		{ SELINUX_MAGIC, "selinuxfs" },
	{ SMACK_MAGIC, "smackfs" },		{ AAFS_MAGIC, "apparmorfs" },
	{ 0x65735543, "fusectl" },		{ BINFMTFS_MAGIC, "binfmt_misc" },
	{ DEVPTS_SUPER_MAGIC, "devpts" },	{ NSFS_MAGIC, "nsfs" },
	{ PIPEFS_MAGIC, "pipefs" },		{ SOCKFS_MAGIC, "sockfs" },
	{ ANON_INODE_FS_MAGIC, "anon_inodefs" }, { BINDERFS_SUPER_MAGIC, "binderfs" },
	{ RDTGROUP_SUPER_MAGIC, "resctrl" },	{ XENFS_SUPER_MAGIC, "xenfs" },
	{ USBDEVICE_SUPER_MAGIC, "usbfs" },	{ OPENPROM_SUPER_MAGIC, "openpromfs" },
	{ BDEVFS_MAGIC, "bdev" },		{ DMA_BUF_MAGIC, "dmabuf" },
	{ SECRETMEM_MAGIC, "secretmem" },	{ DEVMEM_MAGIC, "devmem" },
};

int ra_check_readable_file(int fd, char *why, size_t size)
{
	struct statfs sf;
	struct stat sb;

	if (fstat(fd, &sb) < 0 || fstatfs(fd, &sf) < 0) {
		int r = errno;

		snprintf(why, size, "fstat: %s", strerror(r));
		return -r;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(why, size, "is %s, not a regular file", ra_type_name(sb.st_mode));
		return -EINVAL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(pseudo_fs); i++) {
		if ((unsigned long)sf.f_type != pseudo_fs[i].magic)
			continue;
		snprintf(why, size, "is a file of %s, a pseudo filesystem, not a regular file on a real filesystem",
			 pseudo_fs[i].name);
		return -EINVAL;
	}
	return 0;
}

/*
 * A directory as the walk sees it: its owner and mode, its inode and the
 * mount it was reached through (the walk's ".." from a mount's root leaves
 * that mount: the same directory through another mount has other directories
 * above it), in one statx() each.
 */
struct walk_dir {
	mode_t mode;
	uid_t uid;
	struct ra_trust_dir key;	/* .mnt 0 where the kernel has no unique mount id (the memo then skips it) */
	uint64_t mnt;			/* the mount's id, unique or not (Linux 5.8), 0 unknown */
};

static int walk_stat(int fd, struct walk_dir *d)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO |
		  RA_STATX_MNT_ID_UNIQUE, &sx) < 0)
		return -errno;
	if ((sx.stx_mask & (STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO)) !=
	    (STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO))
		return -EIO;
	d->mode = sx.stx_mode;
	d->uid = sx.stx_uid;
	d->key = (struct ra_trust_dir){ makedev(sx.stx_dev_major, sx.stx_dev_minor), sx.stx_ino,
					(sx.stx_mask & RA_STATX_MNT_ID_UNIQUE) ? sx.stx_mnt_id : 0 };
	d->mnt = (sx.stx_mask & (RA_STATX_MNT_ID_UNIQUE | STATX_MNT_ID)) ? sx.stx_mnt_id : 0;
	return 0;
}

static bool memo_has(const struct ra_trust_memo *m, const struct ra_trust_dir *k)
{
	for (size_t i = 0; m && k->mnt && i < m->n; i++)
		if (m->dir[i].dev == k->dev && m->dir[i].ino == k->ino && m->dir[i].mnt == k->mnt)
			return true;
	return false;
}

static void memo_add(struct ra_trust_memo *m, const struct ra_trust_dir *k)
{
	if (m && k->mnt && m->n < ARRAY_SIZE(m->dir) && !memo_has(m, k))
		m->dir[m->n++] = *k;
}

int ra_admin_trusted(int fd, int dirfd, char *why, size_t size)
{
	return ra_admin_trusted_memo(fd, dirfd, NULL, why, size);
}

int ra_admin_trusted_memo(int fd, int dirfd, struct ra_trust_memo *m, char *why, size_t size)
{
	_cleanup_close_ int cur = -EBADF;
	struct ra_trust_memo seen = { 0 };
	struct walk_dir d, up;
	int r;

	if ((r = walk_stat(fd, &d)) < 0) {
		snprintf(why, size, "statx: %s", strerror(-r));
		return r;
	}
	if (d.uid != 0 || (d.mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, size, "is not an administrator's (root's, writable by nobody else): %s (mode %04o, "
			 "owner uid %u)", d.uid != 0 ? "not root's" : "writable by group or others",
			 (unsigned int)(d.mode & 07777), (unsigned int)d.uid);
		return -EPERM;
	}
	if (!S_ISDIR(d.mode) && dirfd < 0) {
		snprintf(why, size, "its directory is not known");
		return -EINVAL;
	}
	/* a directory was checked above: from its parent on ("/" is its own) */
	cur = S_ISDIR(d.mode) ? openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC) : fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0 || (r = walk_stat(cur, &d)) < 0) {
		r = cur < 0 ? -errno : r;
		snprintf(why, size, "its directory: %s", strerror(-r));
		return r;
	}
	/*
	 * every directory above it: root's, not writable by group or others
	 * unless sticky (sshd's StrictModes); each looked at once (its statx is
	 * the step's up of the one below)
	 */
	for (int depth = 0; depth < 256; depth++) {
		int next;

		/* a directory this memo's walks found trusted, with all above it: so is the rest of the way */
		if (memo_has(m, &d.key))
			break;
		if (d.uid != 0 || ((d.mode & (S_IWGRP | S_IWOTH)) && !(d.mode & S_ISVTX))) {
			char p[256] = "";

			ra_fd_path(cur, p, sizeof(p));
			snprintf(why, size, "the directory %s above it is %s (mode %04o, owner uid %u): another user could "
				 "replace what it holds", p[0] ? p : "(unknown)", d.uid != 0 ? "not root's" :
				 "writable by group or others without the sticky bit", (unsigned int)(d.mode & 07777),
				 (unsigned int)d.uid);
			return -EPERM;
		}
		next = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (next < 0 || (r = walk_stat(next, &up)) < 0) {
			r = next < 0 ? -errno : r;
			if (next >= 0)
				close(next);
			snprintf(why, size, "a directory above it: %s", strerror(-r));
			return r;
		}
		if (m)
			memo_add(&seen, &d.key);
		/*
		 * the root: ".." is where we are, in the same mount (a bind mount
		 * of a directory onto a directory below it has its own ".." the
		 * same directory through the mount underneath, whose way up goes on)
		 */
		if (up.key.dev == d.key.dev && up.key.ino == d.key.ino && up.mnt == d.mnt) {
			close(next);
			break;
		}
		close(cur);
		cur = next;
		d = up;
		if (depth == 255) {
			snprintf(why, size, "more than 256 directories above it");
			return -ELOOP;
		}
	}
	/* every directory passed on the way is trusted from there up (only root could move one since) */
	for (size_t i = 0; i < seen.n; i++)
		memo_add(m, &seen.dir[i]);
	return 0;
}

int ra_admin_trusted_path(int fd, int at, const char *path, uint64_t resolve, char *why, size_t size)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = resolve };
	_cleanup_close_ int dfd = -EBADF;
	const char *slash = strrchr(path, '/');
	char dir[4096];
	struct stat a, b;

	if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if (slash)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		snprintf(dir, sizeof(dir), ".");
	dfd = sys_openat2(at, dir, &how);
	/* the directory we hold is the one @fd is in: the same name there is the same inode */
	if (dfd < 0 || fstat(fd, &a) < 0 || fstatat(dfd, slash ? slash + 1 : path, &b, AT_SYMLINK_NOFOLLOW) < 0 ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		snprintf(why, size, "its directory %s: %s", dir, dfd < 0 ? strerror(errno) : "it was replaced meanwhile");
		return -EBUSY;
	}
	return ra_admin_trusted(fd, dfd, why, size);
}

bool ra_path_clean(const char *p)
{
	if (!p || p[0] != '/' || strlen(p) >= 4096)
		return false;
	if (!strcmp(p, "/"))
		return true;
	for (const char *s = p; *s;) {
		const char *c = ++s;	/* past '/' */
		size_t len;

		while (*s && *s != '/')
			s++;
		len = s - c;
		if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
	}
	return true;
}

bool ra_chrooted(void)
{
	struct statx sx;

	return statx(AT_FDCWD, "/", AT_SYMLINK_NOFOLLOW, 0, &sx) == 0 && (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	       !(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}
