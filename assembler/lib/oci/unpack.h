/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One OCI layer blob -> a directory tree in overlayfs' format, beneath a
 * directory fd. libarchive reads (decompression, then tar); rootasm writes
 * each entry itself, relative to that fd, so that no entry can land outside
 * it. Both digests are computed while reading: the blob's (compressed) and
 * the diff-id (the uncompressed tar stream). The caller compares them before
 * it uses the tree.
 */
#ifndef ROOTASM_UNPACK_H
#define ROOTASM_UNPACK_H

#include <stdint.h>
#include <sys/types.h>

#include "oci.h"

struct ra_unpack_limits {
	uint64_t max_bytes;		/* sum of the entries' (apparent) file sizes */
	uint64_t max_entries;
	unsigned int expansion;		/* what max_bytes was made of (ra_unpack_cap()), for messages; 0: none */
	bool capped;			/* max_bytes is the import's max_layer_bytes, below the expansion's */
	/*
	 * The blob's size is only its descriptor's word until it has all been
	 * read (a registry's stream): what the layer stages may also be at most
	 * RA_UNPACK_BY_READ_SLACK more than @expansion times the blob bytes read
	 * so far (up_staged()), so that a size claimed and not sent does not
	 * fill the stage.
	 */
	bool by_read;
};

#define RA_UNPACK_MAX_BYTES	(64ull << 30)
#define RA_UNPACK_MAX_ENTRIES	(4u << 20)

/*
 * The limits of a layer of @blob_size bytes: it may unpack to @expansion
 * (0: ROOTASM_IMPORT_EXPANSION) times its size, at least the floor, at most
 * RA_UNPACK_MAX_BYTES, and at most @max_bytes when that is not 0.
 */
static inline struct ra_unpack_limits ra_unpack_limits_of(uint64_t blob_size, unsigned int expansion,
							  uint64_t max_bytes)
{
	unsigned int x = expansion ? expansion : ROOTASM_IMPORT_EXPANSION;
	uint64_t cap = blob_size > RA_UNPACK_MAX_BYTES / x ? RA_UNPACK_MAX_BYTES : blob_size * x;

	if (cap < ROOTASM_IMPORT_EXPANSION_FLOOR)
		cap = ROOTASM_IMPORT_EXPANSION_FLOOR;
	return (struct ra_unpack_limits){ .max_bytes = max_bytes && max_bytes < cap ? max_bytes : cap,
					  .max_entries = RA_UNPACK_MAX_ENTRIES, .expansion = x,
					  .capped = max_bytes && max_bytes < cap };
}

struct ra_unpack_stats {
	char blob_digest[RA_DIGEST_MAX];
	uint64_t blob_bytes;
	char diff_id[RA_DIGEST_MAX];
	uint64_t tar_bytes;
	uint64_t entries, whiteouts, opaques, file_bytes;
	uint64_t implied;		/* directories (the root too) made for a path, without an entry of their own */
	uint64_t lower_links;		/* hard links to a lower layer's file: that file copied up */
	uint64_t sparse_files;		/* regular files with holes (their data is less than their size) */
};

/*
 * The layers below the one unpacked, merged (a read-only tree): @open
 * returns an fd of its root (the caller of ra_unpack_layer() owns it and
 * closes it after), -ENOENT when there is none (the bottom layer), or an
 * error. Asked for when first needed: a directory the layer's paths imply
 * takes its owner, mode, xattrs and times from the same directory below
 * (as an unpack of every layer into one tree keeps them: umoci, containerd);
 * a hard link to a file below copies that file up into the layer (as
 * overlayfs' copy-up does) and links to the copy.
 */
struct ra_unpack_lower {
	int (*open)(void *userdata, struct rootasm_error *e);
	void *userdata;
};

/*
 * Unpack the layer read from @blob_fd (compressed as @comp) beneath @root
 * (a directory fd of an empty tree), over the layers @lower (may be NULL:
 * none). @what names the blob in errors. Refused: absolute names, "..", a
 * name through a symlink or a non-directory, a hard link to outside, to a
 * directory or to what neither this layer nor those below have, xattrs
 * trusted.overlay.* and user.overlay.*, entry types tar has no business carrying, and more
 * than @lim allows.
 */
int ra_unpack_layer(int blob_fd, enum ra_oci_comp comp, int root, const struct ra_unpack_limits *lim,
		    const struct ra_unpack_lower *lower, struct ra_unpack_stats *st, const char *what,
		    struct rootasm_error *e);

/*
 * Walk the tar archive @fd (plain, gzip or zstd): @fn gets each entry's name,
 * type ('f' file, 'l' symlink with its @target, 'd' directory, '?' other) and
 * size, and may read a file's data with ra_tar_read() (what it leaves unread
 * is skipped). @what names the archive in errors. @fn returns < 0 to stop
 * (its error already in @e). At most @max_entries entries.
 */
struct ra_tar;
typedef int (*ra_tar_entry_fn)(struct ra_tar *t, const char *name, char type, const char *target, uint64_t size,
			       void *ud);
int ra_tar_walk(int fd, const char *what, size_t max_entries, ra_tar_entry_fn fn, void *ud, struct rootasm_error *e);
/* Read up to @n bytes of the current entry's data: the count (0 at its end) or -errno. */
ssize_t ra_tar_read(struct ra_tar *t, void *buf, size_t n);

#endif
