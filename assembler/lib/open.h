/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The open stage (open.c): every host object of a layout as an fd, opened once. */
#ifndef ROOTASM_OPEN_H
#define ROOTASM_OPEN_H

#include <sys/stat.h>

#include "layout.h"

/*
 * Open every host object of @l (and its nested layouts) relative to @dirfd.
 * @top is the layout file itself (for cycle detection), or NULL.
 */
int ra_layout_open(struct rootasm_ctx *ctx, struct rootasm_layout *l, int dirfd, struct stat *top,
		   bool absolute_only, struct ra_diag *d, struct rootasm_error *e);

/*
 * Read all of @fd into a new NUL-terminated buffer (caller frees *ret): at
 * most @max bytes, one more is -EFBIG. Each chunk read goes to @feed too (a hash).
 */
int ra_read_all(int fd, size_t max, void (*feed)(void *ud, const void *p, size_t n), void *ud, char **ret,
		size_t *ret_len);

#endif
