// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One layer blob -> a tree in overlayfs' format (unpack.h).
 *
 *   blob fd --read()+sha256--> libarchive #1 (gzip|zstd|none, format raw)
 *           --archive_read_data()+sha256 (the diff-id)--> libarchive #2 (tar)
 *           --each entry--> mkdirat/openat/symlinkat/mknodat/linkat beneath @root
 *
 * libarchive never writes: each entry is applied here, from @root, with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV) for its parent directory, and the last component created
 * with *at() calls that do not follow it (O_EXCL | O_NOFOLLOW, symlinkat,
 * mknodat, linkat without AT_SYMLINK_FOLLOW). A name through a symlink
 * fails (ELOOP) instead of leaving the tree. @root is expected to be private
 * (a detached tmpfs): nobody else can change the tree while it is written.
 *
 * OCI -> overlayfs: ".wh.NAME" becomes a 0/0 character device NAME,
 * ".wh..wh..opq" the xattr trusted.overlay.opaque=y on its directory.
 * Owner, mode (setuid/setgid/sticky too), xattrs (security.capability is set
 * after the chown that would clear it), times, holes of sparse files.
 * A later entry replaces an earlier one of the same name (a directory over a
 * directory only updates it).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <linux/limits.h>

#include <archive.h>
#include <archive_entry.h>

#include "unpack.h"
#include "util.h"

/*
 * libarchive, loaded when an import first needs it: linked into librootasm
 * it (with libxml2, ICU and libstdc++ behind it) cost every rootasm process
 * 1.6 ms at start (perf stat -r 200 of an empty program linked with and
 * without it: 2.20 against 0.61 ms), exec and check included.
 */
#define RA_ARCHIVE_FUNCS(X) \
	X(archive_entry_atime) \
	X(archive_entry_atime_is_set) \
	X(archive_entry_atime_nsec) \
	X(archive_entry_filetype) \
	X(archive_entry_gid) \
	X(archive_entry_hardlink) \
	X(archive_entry_hardlink_utf8) \
	X(archive_entry_mtime) \
	X(archive_entry_mtime_nsec) \
	X(archive_entry_pathname) \
	X(archive_entry_pathname_utf8) \
	X(archive_entry_perm) \
	X(archive_entry_rdev) \
	X(archive_entry_size) \
	X(archive_entry_symlink) \
	X(archive_entry_symlink_utf8) \
	X(archive_entry_uid) \
	X(archive_entry_xattr_next) \
	X(archive_entry_xattr_reset) \
	X(archive_errno) \
	X(archive_error_string) \
	X(archive_filter_code) \
	X(archive_filter_count) \
	X(archive_filter_name) \
	X(archive_read_data) \
	X(archive_read_data_block) \
	X(archive_read_free) \
	X(archive_read_new) \
	X(archive_read_next_header) \
	X(archive_read_open) \
	X(archive_read_open_fd) \
	X(archive_read_support_filter_gzip) \
	X(archive_read_support_filter_zstd) \
	X(archive_read_support_format_raw) \
	X(archive_read_support_format_tar) \
	X(archive_set_error)

static struct {
#define X(f) __typeof__(&f) f;
	RA_ARCHIVE_FUNCS(X)
#undef X
} ar;

static const struct {
	const char *name;
	size_t off;
} ar_syms[] = {
#define X(f) { #f, offsetof(__typeof__(ar), f) },
	RA_ARCHIVE_FUNCS(X)
#undef X
};

static pthread_once_t ar_once = PTHREAD_ONCE_INIT;

int ra_archive_load(struct rootasm_error *e);
static char ar_error[256];

static void ar_load(void)
{
	void *h = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(ar_error, sizeof(ar_error), "%s", dlerror());
		return;
	}
	for (size_t i = 0; i < sizeof(ar_syms) / sizeof(ar_syms[0]); i++) {
		void *p = dlsym(h, ar_syms[i].name);

		if (!p) {
			snprintf(ar_error, sizeof(ar_error), "%s", dlerror());
			return;
		}
		memcpy((char *)&ar + ar_syms[i].off, &p, sizeof(p));
	}
}

int ra_archive_load(struct rootasm_error *e)
{
	pthread_once(&ar_once, ar_load);
	if (ar_error[0])
		return ra_err(e, ELIBACC, -EBADF, "load libarchive", "libarchive.so.13", "%s (import needs the "
			      "libarchive13 package)", ar_error);
	return 0;
}

/* From here on, a libarchive call goes through the table. */
#define archive_entry_atime ar.archive_entry_atime
#define archive_entry_atime_is_set ar.archive_entry_atime_is_set
#define archive_entry_atime_nsec ar.archive_entry_atime_nsec
#define archive_entry_filetype ar.archive_entry_filetype
#define archive_entry_gid ar.archive_entry_gid
#define archive_entry_hardlink ar.archive_entry_hardlink
#define archive_entry_hardlink_utf8 ar.archive_entry_hardlink_utf8
#define archive_entry_mtime ar.archive_entry_mtime
#define archive_entry_mtime_nsec ar.archive_entry_mtime_nsec
#define archive_entry_pathname ar.archive_entry_pathname
#define archive_entry_pathname_utf8 ar.archive_entry_pathname_utf8
#define archive_entry_perm ar.archive_entry_perm
#define archive_entry_rdev ar.archive_entry_rdev
#define archive_entry_size ar.archive_entry_size
#define archive_entry_symlink ar.archive_entry_symlink
#define archive_entry_symlink_utf8 ar.archive_entry_symlink_utf8
#define archive_entry_uid ar.archive_entry_uid
#define archive_entry_xattr_next ar.archive_entry_xattr_next
#define archive_entry_xattr_reset ar.archive_entry_xattr_reset
#define archive_errno ar.archive_errno
#define archive_error_string ar.archive_error_string
#define archive_filter_code ar.archive_filter_code
#define archive_filter_count ar.archive_filter_count
#define archive_filter_name ar.archive_filter_name
#define archive_read_data ar.archive_read_data
#define archive_read_data_block ar.archive_read_data_block
#define archive_read_free ar.archive_read_free
#define archive_read_new ar.archive_read_new
#define archive_read_next_header ar.archive_read_next_header
#define archive_read_open ar.archive_read_open
#define archive_read_open_fd ar.archive_read_open_fd
#define archive_read_support_filter_gzip ar.archive_read_support_filter_gzip
#define archive_read_support_filter_zstd ar.archive_read_support_filter_zstd
#define archive_read_support_format_raw ar.archive_read_support_format_raw
#define archive_read_support_format_tar ar.archive_read_support_format_tar
#define archive_set_error ar.archive_set_error

#define BUFSZ		(256 * 1024)
#define WH_PREFIX	".wh."
#define WH_OPAQUE	".wh..wh..opq"

struct up {
	/* stage 1: the blob */
	int blob_fd;
	struct ra_sha256 blob_h;
	struct archive *dec;
	char *blob_buf;
	/* stage 2: the tar stream */
	struct ra_sha256 tar_h;
	struct archive *tar;
	char *tar_buf;
	int read_err;			/* errno of a failed read of the blob */
	bool cut_short;			/* the stream ended in the last entry's padding */
	/* the tree */
	int root;
	const struct ra_unpack_limits *lim;
	struct ra_unpack_stats *st;
	const char *what;
	struct rootasm_error *e;
	/* the layers below */
	const struct ra_unpack_lower *lower;
	int lower_fd;			/* -EBADF: not asked yet; -ENOENT: none */
	bool root_seen;			/* the tar has an entry for the root */
};

static la_ssize_t blob_read(struct archive *a, void *ud, const void **buf)
{
	struct up *u = ud;
	ssize_t n;

	do
		n = read(u->blob_fd, u->blob_buf, BUFSZ);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		u->read_err = errno;
		archive_set_error(a, errno, "read blob: %s", strerror(errno));
		return -1;
	}
	ra_sha256_update(&u->blob_h, u->blob_buf, n);
	*buf = u->blob_buf;
	return n;
}

static la_ssize_t tar_read(struct archive *a, void *ud, const void **buf)
{
	struct up *u = ud;
	la_ssize_t n = archive_read_data(u->dec, u->tar_buf, BUFSZ);

	if (n < 0) {
		archive_set_error(a, archive_errno(u->dec), "%s", archive_error_string(u->dec));
		return -1;
	}
	ra_sha256_update(&u->tar_h, u->tar_buf, n);
	*buf = u->tar_buf;
	return n;
}

/* An error about entry @name: one line naming the blob and the entry. */
static int ent_err(struct up *u, int err, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int ent_err(struct up *u, int err, const char *name, const char *fmt, ...)
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

static int arch_err(struct up *u, struct archive *a, const char *step)
{
	int err = archive_errno(a) > 0 ? archive_errno(a) : EINVAL;

	if (u->read_err)
		return ra_err(u->e, u->read_err, -EBADF, "read blob", u->what, NULL);
	if (err == ENOMEM)
		return ra_oom(u->e, "unpack layer");
	return ra_err_kind(u->e, ROOTASM_ERROR_USAGE, EINVAL, "unpack layer", u->what, "%s: %s", step,
			   archive_error_string(a) ? archive_error_string(a) : "libarchive failed");
}

/*
 * Split @name (from the tar) into a clean relative path: "./" prefixes
 * are dropped, "." components skipped; an absolute name (other than "/",
 * the root) and ".." are refused. @out gets "a/b/c" ("" for the root).
 */
static int clean_name(struct up *u, const char *name, char *out, size_t size)
{
	size_t o = 0;
	const char *p = name;

	/* "/" alone is the root (umoci writes it so); any other absolute name is refused */
	if (name[0] == '/' && name[strspn(name, "/.")] != '\0')
		return ent_err(u, EINVAL, name, "an absolute name; layer entries are relative to the root");
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
			return ent_err(u, EINVAL, name, "'..' in a name; layer entries stay beneath the root");
		if (n > NAME_MAX)
			return ent_err(u, ENAMETOOLONG, name, "a component longer than %d bytes", NAME_MAX);
		if (o + n + 2 > size)
			return ent_err(u, ENAMETOOLONG, name, "longer than %zu bytes", size - 1);
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
static void fd_path(char *buf, size_t size, int dir, const char *base)
{
	snprintf(buf, size, "/proc/self/fd/%d/%s", dir, *base ? base : ".");
}

static bool is_overlay_xattr(const char *n)
{
	return !strncmp(n, "trusted.overlay.", 16) || !strncmp(n, "user.overlay.", 13);
}

/* Whether the directory @fd carries overlayfs' opaque mark (set by this layer). */
static bool is_opaque(int fd)
{
	char p[64], v;

	fd_path(p, sizeof(p), fd, "");
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
static int clear_xattrs(const char *p)
{
	_cleanup_free_ char *names = malloc(XATTR_LIST_MAX);
	ssize_t n;

	if (!names)
		return -ENOMEM;
	n = llistxattr(p, names, XATTR_LIST_MAX);
	if (n < 0)
		return errno == EOPNOTSUPP ? 0 : -errno;
	for (char *x = names; x < names + n; x += strlen(x) + 1)
		if (!is_overlay_xattr(x) && lremovexattr(p, x) < 0 && errno != ENODATA)
			return -errno;
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

	if (!names || !val)
		return ra_oom(u->e, "unpack layer");
	/* the lower object through its fd's magic link (followed: getxattr, not lgetxattr) */
	snprintf(lp, sizeof(lp), "/proc/self/fd/%d", lfd);
	fd_path(p, sizeof(p), dir, base);
	if (lchown(p, lst->st_uid, lst->st_gid) < 0)
		return ent_err(u, errno, name, "chown as below: %m");
	if (!S_ISLNK(lst->st_mode) && chmod(p, lst->st_mode & 07777) < 0)
		return ent_err(u, errno, name, "chmod as below: %m");
	/* a symbolic link's xattrs are not copied (user.* cannot be on one; through its fd, it would be followed) */
	n = S_ISLNK(lst->st_mode) ? 0 : listxattr(lp, names, XATTR_LIST_MAX);
	if (n < 0 && errno != EOPNOTSUPP)
		return ent_err(u, errno, name, "list the xattrs below: %m");
	for (char *x = names; n > 0 && x < names + n; x += strlen(x) + 1) {
		ssize_t vn;

		if (is_overlay_xattr(x))
			continue;
		vn = getxattr(lp, x, val, XATTR_SIZE_MAX);
		if (vn < 0)
			return ent_err(u, errno, name, "read the xattr %s below: %m", x);
		if (lsetxattr(p, x, val, vn, 0) < 0)
			return ent_err(u, errno, name, "set xattr %s as below: %m", x);
	}
	if (utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW) < 0)
		return ent_err(u, errno, name, "set times as below: %m");
	return 0;
}

/*
 * A directory @base in @dir just made for a path (@rel, the directory's own
 * path, the root for ""): as the same directory below, if the layers below
 * have one and this layer does not hide it (@hidden: an opaque directory on
 * the way); else it stays 0755 root:root. Returns 1 if it was found below.
 */
static int implied_dir(struct up *u, const char *name, const char *rel, bool hidden, int dir, const char *base)
{
	_cleanup_close_ int lfd = -EBADF;
	struct stat lst;
	int r;

	u->st->implied++;
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
		return ent_err(u, -lfd, name, "look up '%.200s' below: %s", rel, strerror(-lfd));
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
static int open_parent(struct up *u, const char *name, char *rel, const char **base)
{
	char *slash = strrchr(rel, '/');
	struct open_how how = beneath;
	int fd;

	*base = slash ? slash + 1 : rel;
	if (!slash) {
		fd = fcntl(u->root, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? ent_err(u, errno, name, "dup: %m") : fd;
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
				r = implied_dir(u, name, rel, hidden, dir, c);
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
		return ent_err(u, ELOOP, name, "its path goes through a symbolic link");
	if (fd < 0 && errno == ENOTDIR)
		return ent_err(u, ENOTDIR, name, "its path goes through something that is not a directory");
	if (fd < 0)
		return ent_err(u, errno, name, "open its directory: %m");
	return fd;
}

/* Remove @base in @dir, a whole directory tree if it is one (private tree: no races). */
static int remove_at(int dir, const char *base)
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
			r = remove_at(dirfd(d), de->d_name);
	closedir(d);
	if (r == 0 && unlinkat(dir, base, AT_REMOVEDIR) < 0)
		r = -errno;
	return r;
}

/* Owner, mode, xattrs, times of @base in @dir, in that order (chown clears setuid and file caps). */
static int set_meta(struct up *u, struct archive_entry *ae, const char *name, int dir, const char *base,
		    mode_t type)
{
	struct timespec ts[2] = {
		{ archive_entry_atime(ae), archive_entry_atime_nsec(ae) },
		{ archive_entry_mtime(ae), archive_entry_mtime_nsec(ae) },
	};
	char p[PATH_MAX + 64];
	const char *xn;
	const void *xv;
	size_t xs;

	if (!archive_entry_atime_is_set(ae))
		ts[0] = ts[1];
	if (fchownat(dir, base, archive_entry_uid(ae), archive_entry_gid(ae), AT_SYMLINK_NOFOLLOW) < 0)
		return ent_err(u, errno, name, "chown: %m");
	if (type != AE_IFLNK && fchmodat(dir, base, archive_entry_perm(ae) & 07777, 0) < 0)
		return ent_err(u, errno, name, "chmod: %m");
	fd_path(p, sizeof(p), dir, base);
	archive_entry_xattr_reset(ae);
	while (archive_entry_xattr_next(ae, &xn, &xv, &xs) == ARCHIVE_OK) {
		/* overlayfs' own: trusted.overlay.*, and user.overlay.* under its userxattr option */
		if (is_overlay_xattr(xn))
			return ent_err(u, EPERM, name, "carries the xattr %s, which only overlayfs may set", xn);
		if (lsetxattr(p, xn, xv, xs, 0) < 0)
			return ent_err(u, errno, name, "set xattr %s: %m", xn);
	}
	if (utimensat(dir, base, ts, AT_SYMLINK_NOFOLLOW) < 0)
		return ent_err(u, errno, name, "set times: %m");
	return 0;
}

/*
 * Whether the tar stream ended right after the data of its last entry, in
 * the padding to 512 bytes (umoci 0.4.7 writes layers so: no padding, no
 * end-of-archive blocks; Go's tar reader takes them). All of the entry's data
 * was there; the stream must be at its end.
 */
static bool ended_in_padding(struct up *u, uint64_t got, int64_t size)
{
	char b;

	return got == (uint64_t)size && archive_read_data(u->dec, &b, 1) == 0;
}

/* The data of a regular file, holes kept: pwrite at each block's offset, then the full size. */
static int write_data(struct up *u, const char *name, int fd, int64_t size)
{
	uint64_t got = 0, data = 0;

	for (;;) {
		const void *buf;
		size_t len;
		la_int64_t off;
		int r = archive_read_data_block(u->tar, &buf, &len, &off);

		if (r == ARCHIVE_EOF)
			break;
		if (r == ARCHIVE_FATAL && ended_in_padding(u, got, size)) {
			u->cut_short = true;
			break;
		}
		if (r < ARCHIVE_WARN)
			return arch_err(u, u->tar, "read file data");
		if (off < 0 || (uint64_t)off + len > (uint64_t)size)
			return ent_err(u, EINVAL, name, "data beyond its size");
		for (size_t done = 0; done < len;) {
			ssize_t n = pwrite(fd, (const char *)buf + done, len - done, off + done);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return ent_err(u, errno, name, "write: %m");
			done += n;
		}
		got = (uint64_t)off + len > got ? (uint64_t)off + len : got;
		data += len;
	}
	if (ftruncate(fd, size) < 0)
		return ent_err(u, errno, name, "set size: %m");
	if (data < (uint64_t)size)
		u->st->sparse_files++;
	return 0;
}

/* Copy the data of the regular file @lfd (O_PATH, @size bytes) to @fd, holes kept. */
static int copy_data(struct up *u, const char *name, int lfd, int fd, off_t size)
{
	_cleanup_close_ int in = ra_reopen(lfd, O_RDONLY);
	_cleanup_free_ char *buf = malloc(BUFSZ);
	off_t off = 0, data_bytes = 0;

	if (in < 0)
		return ent_err(u, errno, name, "open the file below: %m");
	if (!buf)
		return ra_oom(u->e, "unpack layer");
	while (off < size) {
		off_t data = lseek(in, off, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break;
		if (data < 0)
			return ent_err(u, errno, name, "read the file below: %m");
		hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			return ent_err(u, errno, name, "read the file below: %m");
		for (off = data; off < hole;) {
			ssize_t n = pread(in, buf, hole - off < BUFSZ ? hole - off : BUFSZ, off), w;

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return ent_err(u, n < 0 ? errno : EIO, name, "read the file below: %s",
					       n < 0 ? strerror(errno) : "it shrank");
			for (ssize_t done = 0; done < n; done += w) {
				w = pwrite(fd, buf + done, n - done, off + done);
				if (w < 0 && errno == EINTR)
					w = 0;
				else if (w < 0)
					return ent_err(u, errno, name, "write: %m");
			}
			off += n;
			data_bytes += n;
		}
	}
	if (ftruncate(fd, size) < 0)
		return ent_err(u, errno, name, "set size: %m");
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
static int link_target(struct up *u, const char *raw, const char *hl, char *hrel, const char **tbase, struct stat *st)
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
		return ent_err(u, ELOOP, raw, "a hard link through a symbolic link ('%.200s')", hl);
	if (tdir < 0 && errno == ENOTDIR)
		return ent_err(u, ENOTDIR, raw, "a hard link to '%.200s', through something that is not a directory",
			       hl);
	if (tdir < 0 && errno != ENOENT)
		return ent_err(u, errno, raw, "open the directory of '%.200s': %m", hl);
	if (tdir >= 0 && fstatat(tdir, *tbase, st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(st->st_mode))
			return ent_err(u, EPERM, raw, "a hard link to a directory");
		if (S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0))
			return ent_err(u, EINVAL, raw, "a hard link to '%.200s', which this layer whites out", hl);
		return take_fd(tdir);
	}
	if (tdir >= 0 && errno != ENOENT)
		return ent_err(u, errno, raw, "stat '%.200s': %m", hl);
	close_fdp(&tdir);

	/* below, and not hidden by this layer? */
	r = get_lower(u);
	if (r < 0 && r != -ENOENT)
		return r;
	lfd = r < 0 || !shows_through(u, hrel) ? -ENOENT : open_lower(u, hrel, &lst);
	if (lfd == -ENOENT || lfd == -ELOOP || lfd == -ENOTDIR)
		return ent_err(u, EINVAL, raw, "a hard link to '%.200s', which is neither in this layer nor below", hl);
	if (lfd < 0)
		return ent_err(u, -lfd, raw, "look up '%.200s' below: %s", hl, strerror(-lfd));
	if (S_ISDIR(lst.st_mode))
		return ent_err(u, EPERM, raw, "a hard link to a directory");

	/* copy it up: its parents (made as the directories below), then the file, then its metadata */
	tdir = open_parent(u, raw, hrel, tbase);
	if (tdir < 0)
		return tdir;
	switch (lst.st_mode & S_IFMT) {
	case S_IFREG:
		if ((uint64_t)lst.st_size > u->lim->max_bytes - u->st->file_bytes)
			return ent_err(u, EFBIG, raw, "copying up '%.200s' (%lld bytes) would exceed %llu bytes", hl,
				       (long long)lst.st_size, (unsigned long long)u->lim->max_bytes);
		u->st->file_bytes += lst.st_size;
		fd = openat(tdir, *tbase, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return ent_err(u, errno, raw, "copy up '%.200s': %m", hl);
		r = copy_data(u, raw, lfd, fd, lst.st_size);
		if (r < 0)
			return r;
		break;
	case S_IFLNK:
		n = readlinkat(lfd, "", ln, sizeof(ln) - 1);
		if (n < 0)
			return ent_err(u, errno, raw, "read the symbolic link '%.200s' below: %m", hl);
		ln[n] = '\0';
		if (symlinkat(ln, tdir, *tbase) < 0)
			return ent_err(u, errno, raw, "copy up '%.200s': %m", hl);
		break;
	default:
		if (mknodat(tdir, *tbase, (lst.st_mode & S_IFMT) | 0600, lst.st_rdev) < 0)
			return ent_err(u, errno, raw, "copy up '%.200s': %m", hl);
		break;
	}
	r = copy_meta(u, raw, lfd, &lst, tdir, *tbase);
	if (r < 0)
		return r;
	u->st->lower_links++;
	if (fstatat(tdir, *tbase, st, AT_SYMLINK_NOFOLLOW) < 0)
		return ent_err(u, errno, raw, "stat '%.200s': %m", hl);
	return take_fd(tdir);
}

static int apply(struct up *u, struct archive_entry *ae)
{
	const char *raw = archive_entry_pathname_utf8(ae), *base, *hl, *ln;
	char rel[PATH_MAX], hrel[PATH_MAX];
	_cleanup_close_ int dir = -EBADF, fd = -EBADF;
	mode_t type = archive_entry_filetype(ae);
	bool opaque = false;
	struct stat st;
	int r;

	if (!raw)
		raw = archive_entry_pathname(ae);
	if (!raw)
		return ent_err(u, EINVAL, "?", "an entry without a name");
	if (++u->st->entries > u->lim->max_entries)
		return ent_err(u, E2BIG, raw, "more than %llu entries in one layer",
			       (unsigned long long)u->lim->max_entries);
	r = clean_name(u, raw, rel, sizeof(rel));
	if (r < 0)
		return r;
	if (!rel[0]) {
		/* the root itself ("./"): its metadata only */
		if (type != AE_IFDIR)
			return ent_err(u, EINVAL, raw, "the root is not a directory");
		u->root_seen = true;
		r = fchownat(u->root, "", archive_entry_uid(ae), archive_entry_gid(ae), AT_EMPTY_PATH);
		if (r == 0) {
			char p[64];

			snprintf(p, sizeof(p), "/proc/self/fd/%d", u->root);
			r = chmod(p, archive_entry_perm(ae) & 07777);
		}
		return r < 0 ? ent_err(u, errno, raw, "set the root's owner and mode: %m") : 0;
	}
	dir = open_parent(u, raw, rel, &base);
	if (dir < 0)
		return dir;

	/* whiteouts */
	if (!strncmp(base, WH_PREFIX, strlen(WH_PREFIX))) {
		char p[PATH_MAX + 64];

		if (!strcmp(base, WH_OPAQUE)) {
			fd_path(p, sizeof(p), dir, ".");
			if (lsetxattr(p, "trusted.overlay.opaque", "y", 1, 0) < 0)
				return ent_err(u, errno, raw, "mark the directory opaque: %m");
			u->st->opaques++;
			return 0;
		}
		if (!strncmp(base, WH_PREFIX WH_PREFIX, 2 * strlen(WH_PREFIX)))
			return ent_err(u, EINVAL, raw, "the prefix .wh..wh. is reserved");
		base += strlen(WH_PREFIX);
		if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
			return ent_err(u, EINVAL, raw, "a whiteout of nothing");
		/*
		 * A whiteout hides what the lower layers have (image-spec: "only
		 * apply to resources in lower/parent layers"); an entry of this
		 * layer of the same name stays, and hides the lower one itself.
		 */
		if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0)
			return 0;
		if (errno != ENOENT)
			return ent_err(u, errno, raw, "stat what it whites out: %m");
		if (mknodat(dir, base, S_IFCHR | 0, makedev(0, 0)) < 0)
			return ent_err(u, errno, raw, "make the whiteout: %m");
		u->st->whiteouts++;
		return 0;
	}

	/* what is there already: a directory over a directory stays, anything else goes */
	if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !(S_ISDIR(st.st_mode) && type == AE_IFDIR && !archive_entry_hardlink(ae))) {
		/* a directory over this layer's whiteout: the lower one stays hidden (an opaque directory) */
		opaque = type == AE_IFDIR && S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0);
		r = remove_at(dir, base);
		if (r < 0)
			return ent_err(u, -r, raw, "replace the earlier entry: %s", strerror(-r));
	}

	hl = archive_entry_hardlink_utf8(ae);
	if (!hl)
		hl = archive_entry_hardlink(ae);
	if (hl) {
		_cleanup_close_ int tdir = -EBADF;
		const char *tbase;

		r = clean_name(u, hl, hrel, sizeof(hrel));
		if (r < 0)
			return r;
		if (!hrel[0])
			return ent_err(u, EINVAL, raw, "a hard link to the root");
		tdir = link_target(u, raw, hl, hrel, &tbase, &st);
		if (tdir < 0)
			return tdir;
		if (linkat(tdir, tbase, dir, base, 0) < 0)
			return ent_err(u, errno, raw, "link to '%.200s': %m", hl);
		/* a pax hard link may carry data: it is the same inode's */
		if (archive_entry_size(ae) > 0 && S_ISREG(st.st_mode)) {
			fd = openat(dir, base, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				return ent_err(u, errno, raw, "open: %m");
			return write_data(u, raw, fd, archive_entry_size(ae));
		}
		return 0;
	}

	switch (type) {
	case AE_IFREG: {
		int64_t size = archive_entry_size(ae);

		if (size < 0)
			return ent_err(u, EINVAL, raw, "negative size");
		if ((uint64_t)size > u->lim->max_bytes - u->st->file_bytes)
			return ent_err(u, EFBIG, raw, "%lld bytes: the layer's files would exceed %llu bytes",
				       (long long)size, (unsigned long long)u->lim->max_bytes);
		u->st->file_bytes += size;
		fd = openat(dir, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return ent_err(u, errno, raw, "create: %m");
		r = write_data(u, raw, fd, size);
		if (r < 0)
			return r;
		break;
	}
	case AE_IFDIR:
		if (mkdirat(dir, base, 0700) < 0) {
			char p[PATH_MAX + 64];

			if (errno != EEXIST)
				return ent_err(u, errno, raw, "mkdir: %m");
			/* over a directory (an implied one, say): the entry's xattrs replace its */
			fd_path(p, sizeof(p), dir, base);
			r = clear_xattrs(p);
			if (r < 0)
				return ent_err(u, -r, raw, "clear the xattrs of the directory: %s", strerror(-r));
		}
		if (opaque) {
			char p[PATH_MAX + 64];

			fd_path(p, sizeof(p), dir, base);
			if (lsetxattr(p, "trusted.overlay.opaque", "y", 1, 0) < 0)
				return ent_err(u, errno, raw, "mark the directory opaque: %m");
			u->st->opaques++;
		}
		break;
	case AE_IFLNK:
		ln = archive_entry_symlink_utf8(ae);
		if (!ln)
			ln = archive_entry_symlink(ae);
		if (!ln || !*ln)
			return ent_err(u, EINVAL, raw, "a symbolic link without a target");
		if (symlinkat(ln, dir, base) < 0)
			return ent_err(u, errno, raw, "symlink: %m");
		break;
	case AE_IFCHR:
	case AE_IFBLK:
	case AE_IFIFO:
		if (mknodat(dir, base, type | 0600, type == AE_IFIFO ? 0 : archive_entry_rdev(ae)) < 0)
			return ent_err(u, errno, raw, "mknod: %m");
		break;
	default:
		return ent_err(u, EINVAL, raw, "an entry of type 0%o, which a layer does not carry", type);
	}
	return set_meta(u, ae, raw, dir, base, type);
}

static void up_free(struct up *u)
{
	if (u->tar)
		archive_read_free(u->tar);
	if (u->dec)
		archive_read_free(u->dec);
	ra_sha256_free(&u->blob_h);
	ra_sha256_free(&u->tar_h);
	free(u->blob_buf);
	free(u->tar_buf);
}

static const int want_filter[] = {
	[RA_OCI_TAR] = ARCHIVE_FILTER_NONE,
	[RA_OCI_GZIP] = ARCHIVE_FILTER_GZIP,
	[RA_OCI_ZSTD] = ARCHIVE_FILTER_ZSTD,
};

/* No entry for the root: it is an implied directory too (umoci and containerd keep the one below). */
static int implied_root(struct up *u)
{
	return u->root_seen ? 0 : implied_dir(u, "./", "", false, u->root, "");
}

int ra_unpack_layer(int blob_fd, enum ra_oci_comp comp, int root, const struct ra_unpack_limits *lim,
		    const struct ra_unpack_lower *lower, struct ra_unpack_stats *st, const char *what,
		    struct rootasm_error *e)
{
	struct up u = { .blob_fd = blob_fd, .root = root, .lim = lim, .st = st, .what = what, .e = e,
			.lower = lower, .lower_fd = -EBADF };
	struct archive_entry *ae;
	int r;

	memset(st, 0, sizeof(*st));
	r = ra_archive_load(e);
	if (r < 0)
		return r;
	u.blob_buf = malloc(BUFSZ);
	u.tar_buf = malloc(BUFSZ);
	if (!u.blob_buf || !u.tar_buf || (r = ra_sha256_init(&u.blob_h)) < 0 || (r = ra_sha256_init(&u.tar_h)) < 0) {
		up_free(&u);
		if (r == -ELIBACC)
			return ra_err(e, ELIBACC, -EBADF, "sha256", "libcrypto.so.3", "import needs the libssl3 package");
		return ra_oom(e, "unpack layer");
	}
	/*
	 * Stage 1: only the decompressor the media type names, built in (an
	 * ARCHIVE_WARN would mean an external program: refused), and the raw
	 * format: the tar stream comes out as one entry's data.
	 */
	u.dec = archive_read_new();
	u.tar = archive_read_new();
	if (!u.dec || !u.tar) {
		up_free(&u);
		return ra_oom(e, "unpack layer");
	}
	r = comp == RA_OCI_GZIP ? archive_read_support_filter_gzip(u.dec) :
	    comp == RA_OCI_ZSTD ? archive_read_support_filter_zstd(u.dec) : ARCHIVE_OK;
	if (r != ARCHIVE_OK) {
		up_free(&u);
		return ra_err_kind(e, ROOTASM_ERROR_UNSUPPORTED, EOPNOTSUPP, "unpack layer", what,
				   "this libarchive has no built-in %s decompressor", comp == RA_OCI_GZIP ? "gzip" : "zstd");
	}
	if (archive_read_support_format_raw(u.dec) != ARCHIVE_OK ||
	    archive_read_open(u.dec, &u, NULL, blob_read, NULL) != ARCHIVE_OK ||
	    archive_read_next_header(u.dec, &ae) != ARCHIVE_OK) {
		r = arch_err(&u, u.dec, "decompress");
		goto out;
	}
	if (archive_filter_count(u.dec) != (comp == RA_OCI_TAR ? 1 : 2) ||
	    archive_filter_code(u.dec, 0) != want_filter[comp]) {
		r = ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "unpack layer", what,
				"its data is compressed as '%s', its media type says otherwise",
				archive_filter_name(u.dec, 0) ? archive_filter_name(u.dec, 0) : "?");
		goto out;
	}
	/* stage 2: tar (ustar, pax, GNU) from stage 1's data, no filter */
	if (archive_read_support_format_tar(u.tar) != ARCHIVE_OK ||
	    archive_read_open(u.tar, &u, NULL, tar_read, NULL) != ARCHIVE_OK) {
		r = arch_err(&u, u.tar, "read tar");
		goto out;
	}
	while (!u.cut_short) {
		r = archive_read_next_header(u.tar, &ae);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			r = arch_err(&u, u.tar, "read tar");
			goto out;
		}
		r = apply(&u, ae);
		if (r < 0)
			goto out;
	}
	r = implied_root(&u);
	if (r < 0)
		goto out;
	if (archive_filter_code(u.tar, 0) != ARCHIVE_FILTER_NONE) {
		r = ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "unpack layer", what, "a compressed tar inside the layer");
		goto out;
	}
	/* the rest of both streams (tar padding, trailing bytes) belongs to the digests too */
	for (;;) {
		la_ssize_t n = archive_read_data(u.dec, u.tar_buf, BUFSZ);

		if (n < 0) {
			r = arch_err(&u, u.dec, "decompress");
			goto out;
		}
		if (n == 0)
			break;
		ra_sha256_update(&u.tar_h, u.tar_buf, n);
	}
	for (;;) {
		ssize_t n = read(blob_fd, u.blob_buf, BUFSZ);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = ra_err(e, errno, -EBADF, "read blob", what, NULL);
			goto out;
		}
		if (n == 0)
			break;
		ra_sha256_update(&u.blob_h, u.blob_buf, n);
	}
	st->blob_bytes = u.blob_h.bytes;
	st->tar_bytes = u.tar_h.bytes;
	if (ra_sha256_final(&u.blob_h, st->blob_digest) < 0 || ra_sha256_final(&u.tar_h, st->diff_id) < 0) {
		r = ra_err(e, EIO, -EBADF, "sha256", what, NULL);
		goto out;
	}
	r = 0;
out:
	up_free(&u);
	return r;
}

/* ------------------------------------------------------------- tar walking */

struct ra_tar {
	struct archive *a;
};

ssize_t ra_tar_read(struct ra_tar *t, void *buf, size_t n)
{
	la_ssize_t r = archive_read_data(t->a, buf, n);

	return r < 0 ? -(archive_errno(t->a) > 0 ? archive_errno(t->a) : EIO) : r;
}

int ra_tar_walk(int fd, const char *what, size_t max_entries, ra_tar_entry_fn fn, void *ud, struct rootasm_error *e)
{
	struct ra_tar t = { 0 };
	struct archive_entry *ent;
	size_t n = 0;
	int r;

	r = ra_archive_load(e);
	if (r < 0)
		return r;
	t.a = archive_read_new();
	if (!t.a)
		return ra_oom(e, "read archive");
	archive_read_support_filter_gzip(t.a);
	archive_read_support_filter_zstd(t.a);
	archive_read_support_format_tar(t.a);
	if (archive_read_open_fd(t.a, fd, BUFSZ) != ARCHIVE_OK) {
		r = ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "read archive", what, "%s",
				archive_error_string(t.a) ?: "not a tar archive");
		goto out;
	}
	for (;;) {
		const char *name;
		char type;

		r = archive_read_next_header(t.a, &ent);
		if (r == ARCHIVE_EOF) {
			r = 0;
			break;
		}
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			r = ra_err_kind(e, ROOTASM_ERROR_USAGE, EINVAL, "read archive", what, "%s",
					archive_error_string(t.a) ?: "a bad tar header");
			break;
		}
		if (++n > max_entries) {
			r = ra_err_kind(e, ROOTASM_ERROR_USAGE, E2BIG, "read archive", what, "more than %zu entries",
					max_entries);
			break;
		}
		name = archive_entry_pathname(ent);
		switch (archive_entry_filetype(ent)) {
		case AE_IFREG:
			type = 'f';
			break;
		case AE_IFLNK:
			type = 'l';
			break;
		case AE_IFDIR:
			type = 'd';
			break;
		default:
			type = '?';
		}
		r = fn(&t, name ? name : "", type, type == 'l' ? archive_entry_symlink(ent) : NULL,
		       archive_entry_size(ent) > 0 ? (uint64_t)archive_entry_size(ent) : 0, ud);
		if (r < 0)
			break;
	}
out:
	archive_read_free(t.a);
	return r;
}
