/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writing a layout: the parts of a layout document of format version 1
 * (layouts/FORMAT.md) as JSON, for the code that makes one rather than
 * reading it (layout.c): an import's layouts in the store (oci/import.c)
 * and the layout a bundle's tree is assembled from (bundle-prepare.c,
 * bundle-mounts.c). Each returns a new object with its keys in the
 * document's order, or NULL when it could not be made (out of memory, a
 * string that is not UTF-8); those taking a json_t steal it.
 */
#ifndef ROOTASM_LAYOUT_WRITE_H
#define ROOTASM_LAYOUT_WRITE_H

#include <jansson.h>

#include "json.h"

/* {"version": 1}, the rest to be set in order; @jb (or NULL) marked when it fails. */
json_t *ra_layout_json_doc(struct ra_jb *jb);

/* A layer: {"image": @image, "type": @type}. */
json_t *ra_layout_json_image(const char *image, const char *type);

/* An upper: {"tmpfs": {}}, {"dir": @dir}, or {"upperdir": @upperdir, "workdir": @workdir}. */
json_t *ra_layout_json_upper_tmpfs(void);
json_t *ra_layout_json_upper_dir(const char *dir);
json_t *ra_layout_json_upper_dirs(const char *upperdir, const char *workdir);

/* A layer's idmap: {"uids": @uids, "gids": @gids} (arrays of ranges). */
json_t *ra_layout_json_idmap(json_t *uids, json_t *gids);

/* A mount: {"bind": @src, "target": @target, "options": @options} (@src NULL: none), or {"tmpfs": @target, ...}. */
json_t *ra_layout_json_bind(const char *src, const char *target, json_t *options);
json_t *ra_layout_json_tmpfs(const char *target, json_t *options);

#endif
