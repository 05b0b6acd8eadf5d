/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by unpack.c (the blob and tar streams, each entry applied) and
 * unpack-tree.c (names, parents, the layers below, copy-up): the state of one
 * ra_unpack_layer() and the tree helpers.
 */
#ifndef ROOTASM_UNPACK_TREE_H
#define ROOTASM_UNPACK_TREE_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "digest.h"
#include "unpack.h"

struct archive;

#define BUFSZ		(256 * 1024)
#define WH_PREFIX	".wh."
#define WH_OPAQUE	".wh..wh..opq"

/* One ra_unpack_layer(): its two streams, its tree, the layers below. */
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
	bool tar_too_big;		/* the tar stream outgrew its limit (tar_read()) */
	uint64_t data;			/* bytes staged so far (up_staged(): ra_unpack_limits.by_read) */
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


/*
 * What an inode costs, counted as bytes of the layer: kernel memory of the
 * stage's tmpfs (a tmpfs' size= bounds its data, not its inodes), and
 * mkfs.erofs's (about 5 KiB of its memory each). An empty file, a device, a
 * directory a path implies: each is this much of the layer's limit.
 */
#define RA_UNPACK_INODE_COST	1024u
/*
 * ra_unpack_limits.by_read: what a layer may hold beyond @expansion times the
 * blob bytes received so far. An honest layer may begin with a file that
 * compresses far better than the rest (a disk image of zeros): that much is
 * staged before the ratio is looked at.
 */
#define RA_UNPACK_BY_READ_SLACK	(256ull << 20)

/*
 * Count @n bytes of what the layer makes (a file's apparent size, a copy-up,
 * a symbolic link's target, an xattr's name and value, an inode) against its
 * limit (ra_unpack_limits.max_bytes): 0, or the error (EFBIG) about entry
 * @name, @what saying which. @real: the bytes are staged as they are (not a
 * file's apparent size, whose data up_staged() counts as it is written).
 */
int up_charge(struct up *u, const char *name, uint64_t n, bool real, const char *what);

/* @n bytes staged: what ra_unpack_limits.by_read bounds. 0, or the error (EFBIG) about entry @name. */
int up_staged(struct up *u, const char *name, uint64_t n);

/* An error about entry @name: one line naming the blob and the entry. */
int up_ent_err(struct up *u, int err, const char *name, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * The metadata of @base in @dir (the directory itself for ""), from the tar
 * or as the layers below have it (@below, said so in an error): owner and
 * mode (not a symbolic link's: @link), each xattr, times (last: the others
 * change ctime only).
 */
int up_set_owner(struct up *u, const char *name, int dir, const char *base, uid_t uid, gid_t gid, mode_t mode,
		 bool link, bool below);
int up_set_xattr(struct up *u, const char *name, const char *p, const char *x, const void *v, size_t n, bool below);
int up_set_times(struct up *u, const char *name, int dir, const char *base, const struct timespec ts[2], bool below);
int up_clean_name(struct up *u, const char *name, char *out, size_t size);
void up_fd_path(char *buf, size_t size, int dir, const char *base);
bool up_is_overlay_xattr(const char *n);
int up_clear_xattrs(const char *p);
int up_implied_dir(struct up *u, const char *name, const char *rel, bool hidden, int dir, const char *base);
int up_open_parent(struct up *u, const char *name, char *rel, const char **base);
int up_remove_at(int dir, const char *base);
int up_link_target(struct up *u, const char *raw, const char *hl, char *hrel, const char **tbase, struct stat *st);

#endif
