// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The tree side of ra_unpack_layer() (unpack.c): where an entry goes beneath
 * the root and what the layers below lend it. Its clean name, its parent
 * directory opened (or made) beneath the root, never through a symlink;
 * what the layers below have at a name and whether it shows through this
 * layer (whiteouts, opaque directories); the directories a layer implies
 * and the files a hard link copies up from below, with their owner, mode,
 * xattrs, times and holes; a whole tree removed for an entry that replaces it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <linux/limits.h>

#include "unpack-tree.h"
#include "util.h"

/* An error about entry @name: one line naming the blob and the entry. */
int up_ent_err(struct up *u, int err, const char *name, const char *fmt, ...)
{
	char msg[ROOTASM_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* what the layer says is the image's fault (2); a failing system is not (1) */
	return ra_err_kind(u->e, err == EINVAL || err == ELOOP || err == ENOTDIR || err == EXDEV || err == EFBIG ||
			   err == E2BIG || err == EPERM || err == ENAMETOOLONG ? ROOTASM_ERROR_USAGE :
			   ROOTASM_ERROR_RUNTIME, err, "unpack layer", u->what, "entry '%.200s': %s", name, msg);
}

int up_staged(struct up *u, const char *name, uint64_t n)
{
	u->data += n;
	if (u->lim->by_read && u->data > RA_UNPACK_BY_READ_SLACK &&
	    (u->data - RA_UNPACK_BY_READ_SLACK) / u->lim->expansion > u->blob_h.bytes)
		return up_ent_err(u, EFBIG, name, "the layer holds %llu bytes so far, more than 256 MiB and %u times the "
				  "%llu bytes of its blob received (a blob smaller than its descriptor says, or a "
				  "compression bomb?)", (unsigned long long)u->data, u->lim->expansion,
				  (unsigned long long)u->blob_h.bytes);
	return 0;
}

int up_charge(struct up *u, const char *name, uint64_t n, bool real, const char *what)
{
	if (n > u->lim->max_bytes - u->st->file_bytes)
		return up_ent_err(u, EFBIG, name, "%s of %llu bytes: the layer would exceed %llu bytes%s", what,
				  (unsigned long long)n, (unsigned long long)u->lim->max_bytes,
				  u->lim->capped ? " (the import's cap on a layer's tree, staged in memory: "
				  "rootasm-runtime's import_layer_max)" :
				  u->lim->expansion ? " (a layer unpacks to at most --max-expansion times its blob's size, "
				  "at least 64 MiB: a compression bomb?)" : "");
	u->st->file_bytes += n;
	return real ? up_staged(u, name, n) : 0;
}

/*
 * Split @name (from the tar) into a clean relative path: "./" prefixes
 * are dropped, "." components skipped; an absolute name (other than "/",
 * the root) and ".." are refused. @out gets "a/b/c" ("" for the root).
 */
int up_clean_name(struct up *u, const char *name, char *out, size_t size)
{
	size_t o = 0;
	const char *p = name;

	/* "/" alone is the root (umoci writes it so); any other absolute name is refused */
	if (name[0] == '/' && name[strspn(name, "/.")] != '\0')
		return up_ent_err(u, EINVAL, name, "an absolute name; layer entries are relative to the root");
	while (*p) {
		const char *s = p;
		size_t n;

		while (*p && *p != '/')
			p++;
		n = p - s;
		while (*p == '/')
			p++;
		if (n == 0 || (n == 1 && s[0] == '.'))
			continue;
		if (n == 2 && s[0] == '.' && s[1] == '.')
			return up_ent_err(u, EINVAL, name, "'..' in a name; layer entries stay beneath the root");
		if (n > NAME_MAX)
			return up_ent_err(u, ENAMETOOLONG, name, "a component longer than %d bytes", NAME_MAX);
		if (o + n + 2 > size)
			return up_ent_err(u, ENAMETOOLONG, name, "longer than %zu bytes", size - 1);
		if (o)
			out[o++] = '/';
		memcpy(out + o, s, n);
		o += n;
	}
	out[o] = '\0';
	return 0;
}

static const struct open_how beneath = {
	.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
	.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
};

/*
 * "/proc/self/fd/DIR/BASE" ("/proc/self/fd/DIR/." for an empty @base: the
 * directory itself, not the magic link): for the path-only l*() calls.
 */
void up_fd_path(char *buf, size_t size, int dir, const char *base)
{
	snprintf(buf, size, "/proc/self/fd/%d/%s", dir, *base ? base : ".");
}

bool up_is_overlay_xattr(const char *n)
{
	return !strncmp(n, "trusted.overlay.", 16) || !strncmp(n, "user.overlay.", 13);
}

/* Whether the directory @fd carries overlayfs' opaque mark (set by this layer). */
static bool is_opaque(int fd)
{
	char p[64], v;

	up_fd_path(p, sizeof(p), fd, "");
	return lgetxattr(p, "trusted.overlay.opaque", &v, 1) == 1 && v == 'y';
}

/* The merged lower layers' root fd, or -ENOENT (none), or an error (set in u->e). */
static int get_lower(struct up *u)
{
	if (u->lower_fd == -EBADF) {
		int r = u->lower ? u->lower->open(u->lower->userdata, u->e) : -ENOENT;

		if (r < 0 && r != -ENOENT)
			return r;
		u->lower_fd = r;
	}
	return u->lower_fd;
}

/* @rel beneath the lower layers (never through a symlink): an O_PATH fd, or -errno. */
static int open_lower(struct up *u, const char *rel, struct stat *st)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int lower = get_lower(u), fd;

	if (lower < 0)
		return lower;
	fd = *rel ? sys_openat2(lower, rel, &how) : fcntl(lower, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* Remove the xattrs of @p but overlayfs' own (a directory entry over a directory replaces them). */
int up_clear_xattrs(const char *p)
{
	_cleanup_free_ char *names = malloc(XATTR_LIST_MAX);
	ssize_t n;

	if (!names)
		return -ENOMEM;
	n = llistxattr(p, names, XATTR_LIST_MAX);
	if (n < 0)
		return errno == EOPNOTSUPP ? 0 : -errno;
	for (char *x = names; x < names + n; x += strlen(x) + 1)
		if (!up_is_overlay_xattr(x) && lremovexattr(p, x) < 0 && errno != ENODATA)
			return -errno;
	return 0;
}

int up_set_owner(struct up *u, const char *name, int dir, const char *base, uid_t uid, gid_t gid, mode_t mode,
		 bool link, bool below)
{
	if (fchownat(dir, *base ? base : ".", uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
		return up_ent_err(u, errno, name, "chown%s: %m", below ? " as below" : "");
	if (!link && fchmodat(dir, *base ? base : ".", mode & 07777, 0) < 0)
		return up_ent_err(u, errno, name, "chmod%s: %m", below ? " as below" : "");
	return 0;
}

/* (the xattr @x of @p, a path to @name's object) */
int up_set_xattr(struct up *u, const char *name, const char *p, const char *x, const void *v, size_t n, bool below)
{
	/* (a tmpfs keeps xattrs in kernel memory its size= does not bound) */
	int r = up_charge(u, name, strlen(x) + n, true, below ? "an xattr as below" : "an xattr");

	if (r < 0)
		return r;
	if (lsetxattr(p, x, v, n, 0) < 0)
		return up_ent_err(u, errno, name, "set xattr %s%s: %m", x, below ? " as below" : "");
	return 0;
}

int up_set_times(struct up *u, const char *name, int dir, const char *base, const struct timespec ts[2], bool below)
{
	if (utimensat(dir, *base ? base : ".", ts, AT_SYMLINK_NOFOLLOW) < 0)
		return up_ent_err(u, errno, name, "set times%s: %m", below ? " as below" : "");
	return 0;
}

/*
 * Owner, mode, xattrs (overlayfs' own left out) and times of @lfd (a lower
 * object, @lst its stat) onto @base in @dir (the directory itself for "").
 */
static int copy_meta(struct up *u, const char *name, int lfd, const struct stat *lst, int dir, const char *base)
{
	struct timespec ts[2] = { lst->st_atim, lst->st_mtim };
	char lp[64], p[PATH_MAX + 64];
	_cleanup_free_ char *names = malloc(XATTR_LIST_MAX), *val = malloc(XATTR_SIZE_MAX);
	ssize_t n;
	int r;

	if (!names || !val)
		return ra_oom(u->e, "unpack layer");
	/* the lower object through its fd's magic link (followed: getxattr, not lgetxattr) */
	snprintf(lp, sizeof(lp), "/proc/self/fd/%d", lfd);
	up_fd_path(p, sizeof(p), dir, base);
	r = up_set_owner(u, name, dir, base, lst->st_uid, lst->st_gid, lst->st_mode, S_ISLNK(lst->st_mode), true);
	if (r < 0)
		return r;
	/* a symbolic link's xattrs are not copied (user.* cannot be on one; through its fd, it would be followed) */
	n = S_ISLNK(lst->st_mode) ? 0 : listxattr(lp, names, XATTR_LIST_MAX);
	if (n < 0 && errno != EOPNOTSUPP)
		return up_ent_err(u, errno, name, "list the xattrs below: %m");
	for (char *x = names; n > 0 && x < names + n; x += strlen(x) + 1) {
		ssize_t vn;

		if (up_is_overlay_xattr(x))
			continue;
		vn = getxattr(lp, x, val, XATTR_SIZE_MAX);
		if (vn < 0)
			return up_ent_err(u, errno, name, "read the xattr %s below: %m", x);
		r = up_set_xattr(u, name, p, x, val, vn, true);
		if (r < 0)
			return r;
	}
	return up_set_times(u, name, dir, base, ts, true);
}

/*
 * A directory @base in @dir just made for a path (@rel, the directory's own
 * path, the root for ""): as the same directory below, if the layers below
 * have one and this layer does not hide it (@hidden: an opaque directory on
 * the way); else it stays 0755 root:root. Returns 1 if it was found below.
 */
int up_implied_dir(struct up *u, const char *name, const char *rel, bool hidden, int dir, const char *base)
{
	_cleanup_close_ int lfd = -EBADF;
	struct stat lst;
	int r;

	u->st->implied++;
	if (u->st->entries + u->st->implied > u->lim->max_entries)
		return up_ent_err(u, E2BIG, name, "more than %llu entries and directories its paths imply in one layer",
				  (unsigned long long)u->lim->max_entries);
	r = up_charge(u, name, RA_UNPACK_INODE_COST + strlen(rel), true, "a directory its path implies");
	if (r < 0)
		return r;
	if (hidden)
		return 0;
	r = get_lower(u);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	lfd = open_lower(u, rel, &lst);
	if (lfd == -ENOENT || lfd == -ELOOP || lfd == -ENOTDIR)
		return 0;
	if (lfd < 0)
		return up_ent_err(u, -lfd, name, "look up '%.200s' below: %s", rel, strerror(-lfd));
	if (!S_ISDIR(lst.st_mode))
		return 0;
	r = copy_meta(u, name, lfd, &lst, dir, base);
	return r < 0 ? r : 1;
}

/*
 * The directory that holds @rel (a clean path); @base gets the last
 * component. Missing directories are made as the same directories in the
 * layers below (implied_dir()), else 0755 root:root (as tar does). Caller
 * owns the fd.
 */
int up_open_parent(struct up *u, const char *name, char *rel, const char **base)
{
	char *slash = strrchr(rel, '/');
	struct open_how how = beneath;
	int fd;

	*base = slash ? slash + 1 : rel;
	if (!slash) {
		fd = fcntl(u->root, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? up_ent_err(u, errno, name, "dup: %m") : fd;
	}
	*slash = '\0';
	fd = sys_openat2(u->root, rel, &how);
	if (fd < 0 && errno == ENOENT) {
		/* make the missing directories, one component at a time, each beneath the last */
		int dir = fcntl(u->root, F_DUPFD_CLOEXEC, 3);
		bool hidden = dir >= 0 && is_opaque(dir);
		char *c = rel;

		while (dir >= 0 && c) {
			char *next = strchr(c, '/');
			bool made;
			int nd, r;

			if (next)
				*next = '\0';
			made = mkdirat(dir, c, 0755) == 0;
			if (!made && errno != EEXIST) {
				close(dir);
				dir = -1;
				break;
			}
			if (made) {
				/* rel is the new directory's path here: the components up to c */
				r = up_implied_dir(u, name, rel, hidden, dir, c);
				if (r < 0) {
					close(dir);
					*slash = '/';
					if (next)
						*next = '/';
					return r;
				}
				hidden = hidden || r == 0;
			}
			nd = sys_openat2(dir, c, &how);
			close(dir);
			dir = nd;
			if (dir >= 0 && !made)
				hidden = hidden || is_opaque(dir);
			if (next)
				*next = '/';
			c = next ? next + 1 : NULL;
		}
		fd = dir;
	}
	*slash = '/';
	if (fd < 0 && errno == ELOOP)
		return up_ent_err(u, ELOOP, name, "its path goes through a symbolic link");
	if (fd < 0 && errno == ENOTDIR)
		return up_ent_err(u, ENOTDIR, name, "its path goes through something that is not a directory");
	if (fd < 0)
		return up_ent_err(u, errno, name, "open its directory: %m");
	return fd;
}

/* Remove @base in @dir, a whole directory tree if it is one (private tree: no races). */
int up_remove_at(int dir, const char *base)
{
	struct open_how how = beneath;
	int fd, r = 0;
	DIR *d;
	struct dirent *de;

	if (unlinkat(dir, base, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR)
		return -errno;
	how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	fd = sys_openat2(dir, base, &how);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while (r == 0 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			r = up_remove_at(dirfd(d), de->d_name);
	closedir(d);
	if (r == 0 && unlinkat(dir, base, AT_REMOVEDIR) < 0)
		r = -errno;
	return r;
}

/* Owner, mode, xattrs, times of @base in @dir, in that order (chown clears setuid and file caps). */
/* Copy the data of the regular file @lfd (O_PATH, @size bytes) to @fd, holes kept. */
static int copy_data(struct up *u, const char *name, int lfd, int fd, off_t size)
{
	_cleanup_close_ int in = ra_reopen(lfd, O_RDONLY);
	_cleanup_free_ char *buf = malloc(BUFSZ);
	off_t off = 0, data_bytes = 0;

	if (in < 0)
		return up_ent_err(u, errno, name, "open the file below: %m");
	if (!buf)
		return ra_oom(u->e, "unpack layer");
	while (off < size) {
		off_t data = lseek(in, off, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break;
		if (data < 0)
			return up_ent_err(u, errno, name, "read the file below: %m");
		hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			return up_ent_err(u, errno, name, "read the file below: %m");
		for (off = data; off < hole;) {
			ssize_t n = pread(in, buf, hole - off < BUFSZ ? hole - off : BUFSZ, off), w;

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return up_ent_err(u, n < 0 ? errno : EIO, name, "read the file below: %s",
					       n < 0 ? strerror(errno) : "it shrank");
			for (ssize_t done = 0; done < n; done += w) {
				w = pwrite(fd, buf + done, n - done, off + done);
				if (w < 0 && errno == EINTR)
					w = 0;
				else if (w < 0)
					return up_ent_err(u, errno, name, "write: %m");
			}
			off += n;
			data_bytes += n;
		}
	}
	if (ftruncate(fd, size) < 0)
		return up_ent_err(u, errno, name, "set size: %m");
	if (data_bytes < size)
		u->st->sparse_files++;
	return 0;
}

/*
 * Whether what the layers below have at @rel (a clean path not in this
 * layer) shows through this layer: no directory on the way in this layer is
 * opaque, none is something else (a whiteout, a file).
 */
static bool shows_through(struct up *u, char *rel)
{
	struct open_how how = beneath;
	int dir = fcntl(u->root, F_DUPFD_CLOEXEC, 3);
	bool shows = dir >= 0 && !is_opaque(dir);
	char *c = rel;

	while (shows && c) {
		char *next = strchr(c, '/');
		int nd;

		if (!next)
			break;		/* the last component: not in this layer */
		*next = '\0';
		nd = sys_openat2(dir, c, &how);
		*next = '/';
		if (nd < 0) {
			shows = errno == ENOENT;	/* not in this layer: the rest is below */
			break;
		}
		close(dir);
		dir = nd;
		shows = !is_opaque(dir);
		c = next + 1;
	}
	if (dir >= 0)
		close(dir);
	return shows;
}

/*
 * The file a hard link entry @raw names (@hl, clean: @hrel): in this layer,
 * or else below, then copied up into this layer first (with its parents, as
 * overlayfs copies up; the link and the copy are one inode, as they would
 * be in the one tree of all layers). Returns its directory's fd, @tbase its
 * name, @st its stat.
 */
int up_link_target(struct up *u, const char *raw, const char *hl, char *hrel, const char **tbase, struct stat *st)
{
	_cleanup_close_ int tdir = -EBADF, lfd = -EBADF, fd = -EBADF;
	char *slash = strrchr(hrel, '/');
	struct open_how how = beneath;
	struct stat lst;
	char ln[PATH_MAX];
	ssize_t n;
	int r;

	/* in this layer? (nothing is made on the way) */
	*tbase = slash ? slash + 1 : hrel;
	if (slash)
		*slash = '\0';
	tdir = slash ? sys_openat2(u->root, hrel, &how) : fcntl(u->root, F_DUPFD_CLOEXEC, 3);
	if (slash)
		*slash = '/';
	if (tdir < 0 && errno == ELOOP)
		return up_ent_err(u, ELOOP, raw, "a hard link through a symbolic link ('%.200s')", hl);
	if (tdir < 0 && errno == ENOTDIR)
		return up_ent_err(u, ENOTDIR, raw, "a hard link to '%.200s', through something that is not a directory",
			       hl);
	if (tdir < 0 && errno != ENOENT)
		return up_ent_err(u, errno, raw, "open the directory of '%.200s': %m", hl);
	if (tdir >= 0 && fstatat(tdir, *tbase, st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(st->st_mode))
			return up_ent_err(u, EPERM, raw, "a hard link to a directory");
		if (S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0))
			return up_ent_err(u, EINVAL, raw, "a hard link to '%.200s', which this layer whites out", hl);
		return take_fd(tdir);
	}
	if (tdir >= 0 && errno != ENOENT)
		return up_ent_err(u, errno, raw, "stat '%.200s': %m", hl);
	close_fdp(&tdir);

	/* below, and not hidden by this layer? */
	r = get_lower(u);
	if (r < 0 && r != -ENOENT)
		return r;
	lfd = r < 0 || !shows_through(u, hrel) ? -ENOENT : open_lower(u, hrel, &lst);
	if (lfd == -ENOENT || lfd == -ELOOP || lfd == -ENOTDIR)
		return up_ent_err(u, EINVAL, raw, "a hard link to '%.200s', which is neither in this layer nor below", hl);
	if (lfd < 0)
		return up_ent_err(u, -lfd, raw, "look up '%.200s' below: %s", hl, strerror(-lfd));
	if (S_ISDIR(lst.st_mode))
		return up_ent_err(u, EPERM, raw, "a hard link to a directory");

	/* copy it up: its parents (made as the directories below), then the file, then its metadata */
	tdir = up_open_parent(u, raw, hrel, tbase);
	if (tdir < 0)
		return tdir;
	switch (lst.st_mode & S_IFMT) {
	case S_IFREG:
		r = up_charge(u, raw, lst.st_size, true, "a copy-up of the file below");
		if (r < 0)
			return r;
		fd = openat(tdir, *tbase, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return up_ent_err(u, errno, raw, "copy up '%.200s': %m", hl);
		r = copy_data(u, raw, lfd, fd, lst.st_size);
		if (r < 0)
			return r;
		break;
	case S_IFLNK:
		n = readlinkat(lfd, "", ln, sizeof(ln) - 1);
		if (n < 0)
			return up_ent_err(u, errno, raw, "read the symbolic link '%.200s' below: %m", hl);
		ln[n] = '\0';
		if (symlinkat(ln, tdir, *tbase) < 0)
			return up_ent_err(u, errno, raw, "copy up '%.200s': %m", hl);
		break;
	default:
		if (mknodat(tdir, *tbase, (lst.st_mode & S_IFMT) | 0600, lst.st_rdev) < 0)
			return up_ent_err(u, errno, raw, "copy up '%.200s': %m", hl);
		break;
	}
	r = copy_meta(u, raw, lfd, &lst, tdir, *tbase);
	if (r < 0)
		return r;
	u->st->lower_links++;
	if (fstatat(tdir, *tbase, st, AT_SYMLINK_NOFOLLOW) < 0)
		return up_ent_err(u, errno, raw, "stat '%.200s': %m", hl);
	return take_fd(tdir);
}
