/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The store's catalog, shared by catalog.c (names, lookup, images, rmi) and
 * catalog-gc.c (gc, verify): the store opened for one call, and its walks.
 */
#ifndef ROOTASM_CATALOG_H
#define ROOTASM_CATALOG_H

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "digest.h"
#include "rootasm.h"
#include "util.h"

#define RECORD_MAX	(4u << 20)	/* an image's or a layer's record */

/* A record or layer image in a store directory: read-only, never through a symlink. */
static const struct open_how beneath_how = {
	.flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC,
	.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
};

/* The store opened for one call (cat_open()), with its lock. */
struct cat {
	char path[PATH_MAX];		/* absolute */
	int fd;				/* the store directory */
	int images, layers;		/* images/sha256, layers/sha256 (-EBADF when missing) */
	int lock;
};

/* The store @opt (ra_store_path()), its lock taken @lock (LOCK_SH, LOCK_EX, 0: none). */
int cat_open(const char *opt, int lock, struct cat *c, struct rootasm_error *e);
void cat_close(struct cat *c);

/* The name of image @hex's layout in images/sha256 (@out), 0; or -errno. */
int cat_layout_of(struct cat *c, const char *hex, char *out, size_t size);
/* @dir/@name (at most @max bytes) as a JSON object. */
int cat_load_json_at(int dir, const char *name, size_t max, json_t **ret);
/* @fn for each entry of @fd (c->images or c->layers, @what in messages; none when missing), until one fails. */
int cat_each_entry(struct cat *c, int fd, const char *what, int (*fn)(struct cat *c, const char *name, void *ud),
		   void *ud, struct rootasm_error *e);
/* @fn for each image record, with its manifest hex. */
int cat_each_image(struct cat *c, int (*fn)(struct cat *c, const char *hex, void *ud), void *ud,
		   struct rootasm_error *e);
/* The layer images image @hex's layouts name, appended to @paths. */
void cat_layers_of(struct cat *c, const char *hex, json_t *paths);

/* rootasm_store_lookup(), which is a use of the image (its LAST USE) only with @use. */
int ra_store_lookup(const char *store, const char *ref, bool use, char **ret_layout, char **ret_manifest,
		    struct rootasm_error *e);

#endif
