/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The layout model: what a layout file says, validated, with source locations. */
#ifndef ROOTASM_LAYOUT_H
#define ROOTASM_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "rootasm.h"

#define RA_LAYOUT_MAX_BYTES	(1u << 20)	/* layout file size cap */
#define RA_MAX_LAYERS		500		/* overlayfs' own limit */
#define RA_MAX_MOUNTS		4096
#define RA_MAX_GROUPS		256
#define RA_MAX_DEPTH		8		/* nested layouts */
#define RA_PATH_MAX		4096

#define RA_MAX_IDRANGES		340		/* the kernel's own limit per map */

struct ra_idrange {
	uint32_t inside, outside, count;
};

/* An idmapped mount: a given user namespace, or one made from ranges. */
struct ra_idmap {
	bool set;
	char *userns;				/* path of an nsfs file, or NULL */
	struct ra_idrange *uids, *gids;
	size_t nuids, ngids;
};

struct ra_loc {
	unsigned int line, column;		/* 1-based */
};

enum ra_fstype {
	RA_FS_AUTO,
	RA_FS_SQUASHFS,
	RA_FS_EROFS,
};

/* Mount attributes and propagation, as mount_setattr() takes them. */
struct ra_attrs {
	uint64_t set, clr;
	uint64_t propagation;			/* MS_PRIVATE/MS_SHARED/MS_SLAVE/MS_UNBINDABLE or 0 */
	bool recursive;				/* bind: AT_RECURSIVE clone, recursive setattr */
};

enum ra_layer_kind {
	RA_LAYER_IMAGE,
	RA_LAYER_DIR,
};

struct ra_layer {
	enum ra_layer_kind kind;
	char *path;				/* absolute */
	enum ra_fstype fstype;
	struct ra_idmap idmap;
	struct ra_loc loc;
};

enum ra_upper_kind {
	RA_UPPER_NONE,
	RA_UPPER_TMPFS,
	RA_UPPER_DIR,
};

struct ra_tmpfs {
	char *size;				/* validated "123", "64M", "50%"; NULL = default */
	char *nr_inodes;
	unsigned int mode;			/* 0 = default */
	bool has_mode;
};

struct ra_upper {
	enum ra_upper_kind kind;
	char *path;				/* RA_UPPER_DIR */
	struct ra_tmpfs tmpfs;
	struct ra_loc loc;
};

struct ra_creds {
	bool set;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t ngroups;
	uint64_t caps;				/* bit per capability number */
	struct ra_loc loc;
};

enum ra_mount_kind {
	RA_MOUNT_BIND,
	RA_MOUNT_TMPFS,
	RA_MOUNT_IMAGE,
	RA_MOUNT_LAYOUT,
};

struct ra_mount {
	enum ra_mount_kind kind;
	char *source;				/* absolute; NULL for tmpfs */
	char *target;				/* absolute, normalized, inside the rootfs */
	enum ra_fstype fstype;
	struct ra_attrs attrs;
	struct ra_tmpfs tmpfs;
	struct rootasm_layout *nested;		/* RA_MOUNT_LAYOUT */
	struct ra_idmap idmap;
	struct ra_loc loc;
};

struct rootasm_layout {
	char *file;				/* the layout file as given */
	char *dir;				/* its directory, absolute */
	struct ra_layer *layers;
	size_t nlayers;
	struct ra_upper upper;
	struct ra_creds creds;
	struct ra_mount *mounts;
	size_t nmounts;
	struct ra_attrs attributes;		/* on the root mount */
	bool deny_mount_api;			/* exec: seccomp filter (default true) */
};

/* Parse from memory; @file names the source in diagnostics, @dir anchors relative paths. */
int ra_layout_parse(const char *buf, size_t len, const char *file, const char *dir, int depth,
		    struct rootasm_layout **ret, struct rootasm_error *e);

/* Normalize an absolute in-rootfs target: collapse "//" and "/./"; reject "..". */
int ra_normalize_target(const char *in, char *out, size_t size);

const char *ra_cap_name(unsigned int cap);

/* idmap.c: a user namespace for @m (caller owns the fd), and applying it to a detached mount. */
int ra_userns_open(const struct ra_idmap *m, struct rootasm_error *e);
int ra_idmap_apply(int mfd, const struct ra_idmap *m, bool recursive, const char *what,
		   struct rootasm_error *e);

/* Load a layout file nested @depth levels deep (0 = top). */
int rootasm_layout_load_depth(const char *path, int depth, struct rootasm_layout **ret,
			      struct rootasm_error *e);

#endif
