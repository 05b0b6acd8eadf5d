/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The store's catalog, shared by catalog.c (names, lookup, images, rmi) and
 * catalog-gc.c (gc, verify): the store opened for one call, and its walks.
 */
#ifndef ROOTASM_CATALOG_H
#define ROOTASM_CATALOG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "digest.h"
#include "rootasm.h"

#define RECORD_MAX	(4u << 20)

#define RECORD_MAX	(4u << 20)
struct cat {
	char path[PATH_MAX];		/* absolute */
	int fd;				/* the store directory */
	int images, layers;		/* images/sha256, layers/sha256 (-EBADF when missing) */
	int lock;
};

bool cat_in(json_t *a, const char *s);
void cat_close(struct cat *c);
int cat_open(const char *opt, int lock, struct cat *c, struct rootasm_error *e);
int cat_layout_of(struct cat *c, const char *hex, char *out, size_t size);
int cat_load_json_at(int dir, const char *name, size_t max, json_t **ret);
int cat_each_image(struct cat *c, int (*fn)(struct cat *c, const char *hex, void *ud), void *ud,
		      struct rootasm_error *e);
void cat_layers_of(struct cat *c, const char *hex, json_t *paths);

#endif
