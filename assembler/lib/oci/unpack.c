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
 *
 * Here: libarchive loaded, the two streams, each entry applied; where it
 * goes and what the layers below lend it: unpack-tree.c.
 */
#include <dirent.h>
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

#include "dl.h"
#include "unpack-tree.h"
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

RA_DL_TABLE(ar, RA_ARCHIVE_FUNCS, "libarchive.so.13", "load libarchive", "import needs the libarchive13 package");

int ra_archive_load(struct rootasm_error *e);
int ra_archive_load(struct rootasm_error *e)
{
	return ra_dl_load(&ar_dl, e);
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

/*
 * What the tar stream may be: what its entries may make (max_bytes: data,
 * link targets, xattrs), their headers and padding (pax ones with a path and a
 * link target of PATH_MAX each: at most 16 KiB an entry), a read ahead. Data
 * the tar skips (a FIFO's that its header says it has) counts here and
 * nowhere else: decompressing it is the only cost, and this bounds it.
 */
static uint64_t tar_cap(const struct up *u)
{
	return u->lim->max_bytes + (u->st->entries + 1) * (16u << 10) + BUFSZ + (1u << 20);
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
	if (u->tar_h.bytes > tar_cap(u)) {
		u->tar_too_big = true;
		archive_set_error(a, EFBIG, "the tar stream exceeds %llu bytes, more than its %llu entries so far may "
				  "hold (%llu bytes of files at most: a compression bomb?)",
				  (unsigned long long)tar_cap(u), (unsigned long long)u->st->entries,
				  (unsigned long long)u->lim->max_bytes);
		return -1;
	}
	*buf = u->tar_buf;
	return n;
}

static int arch_err(struct up *u, struct archive *a, const char *step)
{
	int err = archive_errno(a) > 0 ? archive_errno(a) : EINVAL;

	if (u->read_err)
		return ra_err(u->e, u->read_err, -EBADF, "read blob", u->what, NULL);
	if (u->tar_too_big)
		return ra_err_kind(u->e, ROOTASM_ERROR_USAGE, EFBIG, "unpack layer", u->what, "%s",
				   archive_error_string(u->tar));
	if (err == ENOMEM)
		return ra_oom(u->e, "unpack layer");
	return ra_err_kind(u->e, ROOTASM_ERROR_USAGE, EINVAL, "unpack layer", u->what, "%s: %s", step,
			   archive_error_string(a) ? archive_error_string(a) : "libarchive failed");
}

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
	int r;

	if (!archive_entry_atime_is_set(ae))
		ts[0] = ts[1];
	r = up_set_owner(u, name, dir, base, archive_entry_uid(ae), archive_entry_gid(ae), archive_entry_perm(ae),
			 type == AE_IFLNK, false);
	if (r < 0)
		return r;
	up_fd_path(p, sizeof(p), dir, base);
	archive_entry_xattr_reset(ae);
	while (archive_entry_xattr_next(ae, &xn, &xv, &xs) == ARCHIVE_OK) {
		/* overlayfs' own: trusted.overlay.*, and user.overlay.* under its userxattr option */
		if (up_is_overlay_xattr(xn))
			return up_ent_err(u, EPERM, name, "carries the xattr %s, which only overlayfs may set", xn);
		r = up_set_xattr(u, name, p, xn, xv, xs, false);
		if (r < 0)
			return r;
	}
	return up_set_times(u, name, dir, base, ts, false);
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
			return up_ent_err(u, EINVAL, name, "data beyond its size");
		for (size_t done = 0; done < len;) {
			ssize_t n = pwrite(fd, (const char *)buf + done, len - done, off + done);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return up_ent_err(u, errno, name, "write: %m");
			done += n;
		}
		got = (uint64_t)off + len > got ? (uint64_t)off + len : got;
		data += len;
		if ((r = up_staged(u, name, len)) < 0)
			return r;
	}
	if (ftruncate(fd, size) < 0)
		return up_ent_err(u, errno, name, "set size: %m");
	if (data < (uint64_t)size)
		u->st->sparse_files++;
	return 0;
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
		return up_ent_err(u, EINVAL, "?", "an entry without a name");
	if (++u->st->entries + u->st->implied > u->lim->max_entries)
		return up_ent_err(u, E2BIG, raw, "more than %llu entries (and directories their paths imply) in one layer",
			       (unsigned long long)u->lim->max_entries);
	/* every entry is an inode (or a name of one), whatever its size */
	r = up_charge(u, raw, RA_UNPACK_INODE_COST, true, "an entry");
	if (r < 0)
		return r;
	r = up_clean_name(u, raw, rel, sizeof(rel));
	if (r < 0)
		return r;
	if (!rel[0]) {
		/* the root itself ("./"): its metadata only */
		if (type != AE_IFDIR)
			return up_ent_err(u, EINVAL, raw, "the root is not a directory");
		u->root_seen = true;
		r = fchownat(u->root, "", archive_entry_uid(ae), archive_entry_gid(ae), AT_EMPTY_PATH);
		if (r == 0) {
			char p[64];

			snprintf(p, sizeof(p), "/proc/self/fd/%d", u->root);
			r = chmod(p, archive_entry_perm(ae) & 07777);
		}
		return r < 0 ? up_ent_err(u, errno, raw, "set the root's owner and mode: %m") : 0;
	}
	dir = up_open_parent(u, raw, rel, &base);
	if (dir < 0)
		return dir;

	/* whiteouts */
	if (!strncmp(base, WH_PREFIX, strlen(WH_PREFIX))) {
		char p[PATH_MAX + 64];

		if (!strcmp(base, WH_OPAQUE)) {
			up_fd_path(p, sizeof(p), dir, ".");
			if (lsetxattr(p, "trusted.overlay.opaque", "y", 1, 0) < 0)
				return up_ent_err(u, errno, raw, "mark the directory opaque: %m");
			u->st->opaques++;
			return 0;
		}
		if (!strncmp(base, WH_PREFIX WH_PREFIX, 2 * strlen(WH_PREFIX)))
			return up_ent_err(u, EINVAL, raw, "the prefix .wh..wh. is reserved");
		base += strlen(WH_PREFIX);
		if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
			return up_ent_err(u, EINVAL, raw, "a whiteout of nothing");
		/*
		 * A whiteout hides what the lower layers have (image-spec: "only
		 * apply to resources in lower/parent layers"); an entry of this
		 * layer of the same name stays, and hides the lower one itself.
		 */
		if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0)
			return 0;
		if (errno != ENOENT)
			return up_ent_err(u, errno, raw, "stat what it whites out: %m");
		if (mknodat(dir, base, S_IFCHR | 0, makedev(0, 0)) < 0)
			return up_ent_err(u, errno, raw, "make the whiteout: %m");
		u->st->whiteouts++;
		return 0;
	}

	/* what is there already: a directory over a directory stays, anything else goes */
	if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !(S_ISDIR(st.st_mode) && type == AE_IFDIR && !archive_entry_hardlink(ae))) {
		/* a directory over this layer's whiteout: the lower one stays hidden (an opaque directory) */
		opaque = type == AE_IFDIR && S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0);
		r = up_remove_at(dir, base);
		if (r < 0)
			return up_ent_err(u, -r, raw, "replace the earlier entry: %s", strerror(-r));
	}

	hl = archive_entry_hardlink_utf8(ae);
	if (!hl)
		hl = archive_entry_hardlink(ae);
	if (hl) {
		_cleanup_close_ int tdir = -EBADF;
		const char *tbase;

		r = up_clean_name(u, hl, hrel, sizeof(hrel));
		if (r < 0)
			return r;
		if (!hrel[0])
			return up_ent_err(u, EINVAL, raw, "a hard link to the root");
		tdir = up_link_target(u, raw, hl, hrel, &tbase, &st);
		if (tdir < 0)
			return tdir;
		if (linkat(tdir, tbase, dir, base, 0) < 0)
			return up_ent_err(u, errno, raw, "link to '%.200s': %m", hl);
		/* a pax hard link may carry data: it is the same inode's, counted as a file's */
		if (archive_entry_size(ae) > 0 && S_ISREG(st.st_mode)) {
			r = up_charge(u, raw, archive_entry_size(ae), false, "a hard link's data");
			if (r < 0)
				return r;
			fd = openat(dir, base, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				return up_ent_err(u, errno, raw, "open: %m");
			return write_data(u, raw, fd, archive_entry_size(ae));
		}
		return 0;
	}

	switch (type) {
	case AE_IFREG: {
		int64_t size = archive_entry_size(ae);

		if (size < 0)
			return up_ent_err(u, EINVAL, raw, "negative size");
		r = up_charge(u, raw, size, false, "a file");
		if (r < 0)
			return r;
		fd = openat(dir, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return up_ent_err(u, errno, raw, "create: %m");
		r = write_data(u, raw, fd, size);
		if (r < 0)
			return r;
		break;
	}
	case AE_IFDIR:
		if (mkdirat(dir, base, 0700) < 0) {
			char p[PATH_MAX + 64];

			if (errno != EEXIST)
				return up_ent_err(u, errno, raw, "mkdir: %m");
			/* over a directory (an implied one, say): the entry's xattrs replace its */
			up_fd_path(p, sizeof(p), dir, base);
			r = up_clear_xattrs(p);
			if (r < 0)
				return up_ent_err(u, -r, raw, "clear the xattrs of the directory: %s", strerror(-r));
		}
		if (opaque) {
			char p[PATH_MAX + 64];

			up_fd_path(p, sizeof(p), dir, base);
			if (lsetxattr(p, "trusted.overlay.opaque", "y", 1, 0) < 0)
				return up_ent_err(u, errno, raw, "mark the directory opaque: %m");
			u->st->opaques++;
		}
		break;
	case AE_IFLNK:
		ln = archive_entry_symlink_utf8(ae);
		if (!ln)
			ln = archive_entry_symlink(ae);
		if (!ln || !*ln)
			return up_ent_err(u, EINVAL, raw, "a symbolic link without a target");
		r = up_charge(u, raw, strlen(ln), true, "a symbolic link's target");
		if (r < 0)
			return r;
		if (symlinkat(ln, dir, base) < 0)
			return up_ent_err(u, errno, raw, "symlink: %m");
		break;
	case AE_IFCHR:
	case AE_IFBLK:
	case AE_IFIFO:
		if (mknodat(dir, base, type | 0600, type == AE_IFIFO ? 0 : archive_entry_rdev(ae)) < 0)
			return up_ent_err(u, errno, raw, "mknod: %m");
		break;
	default:
		return up_ent_err(u, EINVAL, raw, "an entry of type 0%o, which a layer does not carry", type);
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
	return u->root_seen ? 0 : up_implied_dir(u, "./", "", false, u->root, "");
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
	/*
	 * The rest of both streams (tar padding, trailing bytes) belongs to the
	 * digests too; read as the tar reader reads, within the same cap.
	 */
	for (;;) {
		const void *rest;
		la_ssize_t n = tar_read(u.tar, &u, &rest);

		if (n < 0) {
			r = arch_err(&u, u.tar, "decompress");
			goto out;
		}
		if (n == 0)
			break;
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
