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
 * rootasm_layout_load_mem() of the text of a file its caller opened and
 * judged (ra_authorize_layout_file()) before reading it: what a principal
 * limited to layout directories needs (the bundle code's layout).
 */
int ra_layout_load_judged(struct rootasm_ctx *ctx, const void *buf, size_t len, const struct rootasm_load_opts *o,
			  struct rootasm_layout **ret, struct rootasm_error *e);

/* A layout file as ra_layout_file_read() read it. */
struct ra_layout_file {
	char *buf;		/* its text, NUL-terminated */
	size_t len;
	int dir_fd;		/* its directory (O_PATH): the anchor of its relative paths */
	struct stat st;		/* the file's */
};

/*
 * The one reader of a layout file (open-file.c), for every front end: @path
 * (named @shown in messages) for @p, resolved beneath @at (named @at_name)
 * when @at is a directory fd and @path relative, else from the working
 * directory; a principal limited to layout directories reads only beneath
 * one of them, through no symlink. Judged (ra_authorize_layout_file()) before
 * it is read. 0 and *f filled (ra_layout_file_done() frees it), or -errno
 * with @e set.
 */
int ra_layout_file_read(const struct rootasm_principal *p, int at, const char *at_name, const char *path,
			const char *shown, struct ra_layout_file *f, struct rootasm_error *e);
void ra_layout_file_done(struct ra_layout_file *f);

/*
 * Whether @fd (O_PATH too) may be read as a layout or a policy: a regular file
 * of a real filesystem. Files of procfs, sysfs, debugfs, tracefs, securityfs,
 * cgroupfs, bpffs, configfs, efivarfs, pstore and other pseudo filesystems
 * are refused (a read of /proc/kmsg blocks and drains the kernel log), as are
 * FIFOs, devices, sockets and directories. 0, or -errno (-EINVAL: what it is,
 * -other: fstat failed) with one phrase in @why ("is a FIFO, not a regular
 * file"). Open it for reading with O_NONBLOCK all the same.
 */
int ra_check_readable_file(int fd, char *why, size_t size);

/*
 * Read all of @fd into a new NUL-terminated buffer (caller frees *ret): at
 * most @max bytes, one more is -EFBIG. Each chunk read goes to @feed too (a hash).
 */
int ra_read_all(int fd, size_t max, void (*feed)(void *ud, const void *p, size_t n), void *ud, char **ret,
		size_t *ret_len);

/* "a directory", "a FIFO", ... for messages. */
const char *ra_type_name(mode_t m);

#endif
