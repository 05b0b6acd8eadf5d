/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The store shared by store.c, import.c, catalog.c and catalog-gc.c (names,
 * images, rmi, gc, verify): where it is and its lock.
 *
 * STORE/lock orders what changes the store as a whole: an import holds it
 * shared while it runs (imports of each other need no lock: import.c), and
 * exclusive for the moment it names its image; rmi, gc and a name change hold
 * it exclusive. A lookup takes no lock (every file it reads is replaced whole).
 */
#ifndef ROOTASM_STORE_H
#define ROOTASM_STORE_H

#include <stdbool.h>

#include <jansson.h>

#include "digest.h"
#include "rootasm.h"

#define RA_STORE_DEFAULT	"/var/lib/rootasm/store"

/* @opt, else $ROOTASM_STORE, else the default. */
const char *ra_store_path(const char *opt);

/*
 * Whether this process may trust the store directory @fd (named @path): the
 * one rule of every store's open. It belongs to us (@root_ok, a store we only
 * read: or to root) and nobody else may write it (the layouts it gives name
 * layer images to mount); root's store: every directory above it root's too
 * (another user could move it away and put its own). Its absolute path into
 * @abs. 0, or -errno with @e set.
 */
int ra_store_trusted(int fd, const char *path, bool root_ok, char *abs, size_t size, struct rootasm_error *e);

/* flock(@how) on STORE/lock of the store directory @store_fd (made when missing); returns the fd, caller owns it. */
int ra_store_lock(int store_fd, int how, const char *store, struct rootasm_error *e);

/*
 * Name the image @manifest (a "sha256:" digest of a record) @ref (NAME[:TAG], checked; NULL: none), and
 * make @alias (a manifest digest of the same image; NULL: none) name it too. Under the store's lock held
 * exclusive.
 */
int ra_store_name(int store_fd, const char *store, const char *ref, const char *alias, const char *manifest,
		  struct rootasm_error *e);

/* Whether images/sha256/@hex.json (a record of 64 hex digits) is there, in @images (images/sha256). */
bool ra_store_has_image(int images, const char *hex);

/* The record of the image whose config is @config in images/sha256 (@images) as @hex: 1; none: 0; -errno. */
int ra_store_image_of_config(int images, const char *config, char hex[RA_DIGEST_HEX + 1]);

/*
 * An open store (store.c), as an import uses it: its directories, and the
 * files this import published, taken back when it fails.
 */
struct ra_store_pub {
	int dir;		/* s->layers or s->images (not owned) */
	char name[RA_DIGEST_HEX + 64];
	int fd;			/* the file itself (owned) */
	int with;		/* removed only if entry @with was (-1: on its own; -2: never) */
	bool removed;
};

struct ra_store {
	char *path;		/* absolute */
	int fd, layers, images;
	struct ra_store_pub *pubs;	/* what this import published, in order */
	size_t npubs;
};

/* The store at @path (made when missing), and its lock held shared in *ret_lock: with other imports. */
int ra_store_open_shared(const char *path, struct ra_store *s, int *ret_lock, struct rootasm_error *e);
void ra_store_close(struct ra_store *s);

/* Open and claim @dir/@name (store.c, "Taking back"): its fd, or -ENOENT when it is not (or no longer) there. */
int ra_store_claim(int dir, const char *name);
/* After a failure: remove what this import published and nobody claimed. */
void ra_store_take_back(struct ra_store *s);
/* After success: the files this import published are the store's. */
void ra_store_settle(struct ra_store *s);

/*
 * Write @fd (an O_TMPFILE), or @o as JSON (freed; @oom: building it failed),
 * as @dir/@name, complete or not at all, recorded for ra_store_take_back(),
 * removed with entry @with (-1: on its own, -2: never). 1: written, 0: the
 * name existed (published by another import: claimed).
 */
int ra_store_publish_fd(struct ra_store *s, int fd, int dir, const char *name, int with, const char *what,
			struct rootasm_error *e);
int ra_store_publish_json(struct ra_store *s, json_t *o, bool oom, int dir, const char *name, int with,
			  const char *what, struct rootasm_error *e);

/*
 * What a result of rootasm_import() owns, freed (import.c; compat.c's
 * older struct too): the @n layers' images (each at @image_off of an
 * element of @stride bytes), the layer array, @layout and @store.
 */
void ra_import_result_release(void *layers, size_t n, size_t stride, size_t image_off, char *layout, char *store);

#endif
