/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The image cache (cache.c): one detached mount per image file, held by a
 * context and lent to assemblies, so that an image is mounted once (loop
 * device + fsmount, ~0.7 ms and a cold page cache each time) and then only
 * cloned (open_tree of a detached mount, Linux 6.15) or handed to overlayfs
 * as a layer fd (overlayfs clones it privately at create, Linux 6.15).
 *
 * Key: what fstat() says of the image fd the open stage holds: st_dev,
 * st_ino, st_size, st_mtim and st_ctim. A file changed in place (new size,
 * mtime or ctime: ctime cannot be set back from user space) or replaced under
 * the same name (new inode) misses; the old entry is dropped at once when the
 * same inode or the same path comes back with another key ("stale"). Images
 * from a content-addressed store are keyed by digest instead (a non-empty
 * @digest to ra_cache_get(); the OCI store passes it), so two paths of one
 * digest share one mount.
 *
 * Limits: entries and bytes (the images' st_size); least recently used
 * entries not lent out are evicted (closed: the mount dissolves, the loop
 * device's autoclear frees it). When every entry is lent out and the limit
 * is reached, the new mount serves the assemblies that asked for it and is
 * closed after them (a "bypass"). Assemblies missing the same image at once
 * share one mount. The cache never attaches anything. One mutex; mounting
 * happens outside it.
 */
#ifndef ROOTASM_CACHE_H
#define ROOTASM_CACHE_H

#include "layout.h"

struct ra_cache;
struct ra_cache_entry;

int ra_cache_new(const struct rootasm_cache_opts *o, struct ra_cache **ret);
/* Dissolves every entry; none may be lent out. */
void ra_cache_free(struct ra_cache *c);

/*
 * A detached read-only mount of the image @image_fd (@path names it): *ret
 * is its entry and the fd is the cache's, borrowed until ra_cache_put().
 * @digest may be NULL (key by fstat).
 */
int ra_cache_get(struct ra_cache *c, int image_fd, const char *path, const char *digest, enum ra_fstype type,
		 struct ra_cache_entry **ret, struct rootasm_error *e);
void ra_cache_put(struct ra_cache *c, struct ra_cache_entry *ent);

/*
 * rootasm_cache_stats(), _list() and _trim() of a context's cache @c
 * (context.c hands it over): -ENOENT when @c is NULL (no cache set).
 */
int ra_cache_stats(struct ra_cache *c, struct rootasm_cache_stats *st);
int ra_cache_list(struct ra_cache *c, void (*fn)(const struct rootasm_cache_entry_info *i, void *userdata),
		  void *userdata);
int ra_cache_trim(struct ra_cache *c);

#endif
